// What the controller does about one node, from its reading and the condition the Node carries.
// A pure function: the controller is level-triggered, so it asks this again whenever anything
// about the node changes and whenever the monitor period passes.
//
// | reading                      | RuntimeRelistUnhealthy on the Node      | action        |
// |------------------------------|-----------------------------------------|---------------|
// | not markable (not judged, or cordoned) | any                           | none          |
// | Stale or Missing             | True (the agent's own word)             | none          |
// | Stale or Missing             | Unknown/AgentCannotObserve (the agent's | none          |
// |                              | own, more specific word)                |               |
// | Stale or Missing             | Unknown/AgentLeaseStale (already ours)  | none          |
// | Stale or Missing             | changed by another writer ≤ grace ago   | none (spoke)  |
// | Stale or Missing             | anything else, marking not paused       | mark-stale    |
// | Stale or Missing             | anything else, marking paused           | none (paused) |
// | Fresh, seen to move          | Unknown/AgentLeaseStale                 | mark-healthy  |
// | Fresh, only first sighting   | Unknown/AgentLeaseStale                 | none          |
// | Fresh                        | anything else                           | none          |
//
// - An agent that cannot observe its runtime withholds its lease and says so itself
//   (Unknown/AgentCannotObserve): it is alive, and knows why its lease stopped, so the
//   controller leaves its word standing, as it leaves the agent's True. Both are Unknown, so
//   tooling that reads the status sees the same; the reason keeps what the agent knows. An
//   agent that dies while in that state keeps the condition as it was (AgentCannotObserve), with
//   NodePulseAgentDown to say the rest.
// - "A lease it marked moves again" is read from the Node itself (Unknown/AgentLeaseStale), so a
//   new leader after a handover clears marks its predecessor made.
// - A change of the condition's state by another writer (the agent), seen on the reader's clock
//   within the grace period, is a sign of life. Upstream's node lifecycle controller counts a
//   status heartbeat as well as a renewed lease (tryUpdateNodeHealth moves its probeTimestamp
//   when the Ready condition's lastHeartbeatTime changes). The Node and the lease come on two
//   watches with no order between them: a restarted agent writes its condition and renews its
//   lease a millisecond apart, and without this row a leader that happens to see the Node first
//   would overwrite the agent's fresh False/RelistHealthy with Unknown, then clear it again when
//   the lease event lands (four transitions and four Events for one restart). An agent that
//   writes its condition but never its lease is still marked, one grace period later.
// - A first sighting is Fresh by the reader's rule but proves no movement; clearing a mark
//   needs an observed advance, or a new leader would clear every mark at start-up.
// - Marking pauses when more than half the judged fleet is Stale or Missing at once, as the node
//   lifecycle controller stops evicting in full disruption: that is more likely the reader's
//   own partition, or the API server's, than half the agents dying together. Clearing marks
//   never pauses.
import type { NodeRecord } from '../fleet/fleet-view.ts';
import { summarizeFleet, type NodeReadiness } from '../fleet/readiness.ts';

export const MARK_REASON = 'AgentLeaseStale';
export const HEALTHY_REASON = 'RelistHealthy';
/** The agent's own Unknown (condition/desired-condition.ts): the controller never writes over it. */
export const AGENT_CANNOT_OBSERVE_REASON = 'AgentCannotObserve';

export type MarkAction = 'none' | 'mark-stale' | 'mark-healthy';

export interface MarkDecision {
  readonly action: MarkAction;
  /** Why nothing is done, when that is worth saying ("paused", "agent says True"). */
  readonly why: string | undefined;
}

export function isOurMark(reading: Pick<NodeReadiness, 'condition'>): boolean {
  return reading.condition?.status === 'Unknown' && reading.condition.reason === MARK_REASON;
}

/**
 * Whether a Node update shows another writer changing the condition's state: from none, or from
 * another (status, reason), to anything but our own mark. The first sighting of a Node is no
 * change (nothing was seen before it).
 */
export function conditionChangedByOther(prev: Pick<NodeRecord, 'condition'> | undefined, next: Pick<NodeRecord, 'condition'>): boolean {
  if (prev === undefined || next.condition === undefined || isOurMark(next)) return false;
  return prev.condition === undefined || prev.condition.status !== next.condition.status || prev.condition.reason !== next.condition.reason;
}

/**
 * `otherWroteWithinGrace`: another writer changed the condition's state within the grace period,
 * on the reader's clock (see conditionChangedByOther).
 */
export function decideMark(reading: NodeReadiness, paused: boolean, otherWroteWithinGrace = false): MarkDecision {
  if (!reading.markable) return { action: 'none', why: reading.cordoned ? 'cordoned' : 'not judged' };
  if (reading.verdict === 'Stale' || reading.verdict === 'Missing') {
    if (reading.condition?.status === 'True') return { action: 'none', why: 'the agent reports True itself' };
    if (reading.condition?.status === 'Unknown' && reading.condition.reason === AGENT_CANNOT_OBSERVE_REASON) {
      return { action: 'none', why: 'the agent reports it cannot observe the runtime' };
    }
    if (isOurMark(reading)) return { action: 'none', why: undefined };
    if (otherWroteWithinGrace) return { action: 'none', why: 'the agent wrote its condition within the grace period' };
    if (paused) return { action: 'none', why: 'paused' };
    return { action: 'mark-stale', why: undefined };
  }
  if (isOurMark(reading) && reading.seenMoving) return { action: 'mark-healthy', why: undefined };
  return { action: 'none', why: undefined };
}

/** More than half the judged fleet Stale or Missing: marking pauses. */
export function shouldPause(readings: readonly NodeReadiness[]): { paused: boolean; judged: number; silent: number } {
  const { judged, fresh } = summarizeFleet(readings);
  const silent = judged - fresh;
  return { paused: judged > 0 && silent * 2 > judged, judged, silent };
}
