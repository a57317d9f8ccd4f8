// What the controller does about one node, from its reading and the condition the Node carries.
// A pure function: the controller is level-triggered, so it asks this again whenever anything
// about the node changes and whenever the monitor period passes.
//
// | reading                      | RuntimeRelistUnhealthy on the Node      | action        |
// |------------------------------|-----------------------------------------|---------------|
// | not markable (not judged, or cordoned) | any                           | none          |
// | Stale or Missing             | True (the agent's own word)             | none          |
// | Stale or Missing             | Unknown/AgentLeaseStale (already ours)  | none          |
// | Stale or Missing             | anything else, marking not paused       | mark-stale    |
// | Stale or Missing             | anything else, marking paused           | none (paused) |
// | Fresh, seen to move          | Unknown/AgentLeaseStale                 | mark-healthy  |
// | Fresh, only first sighting   | Unknown/AgentLeaseStale                 | none          |
// | Fresh                        | anything else                           | none          |
//
// - "A lease it marked moves again" is read from the Node itself (Unknown/AgentLeaseStale), so a
//   new leader after a handover clears marks its predecessor made.
// - A first sighting is Fresh by the reader's rule but proves no movement; clearing a mark
//   needs an observed advance, or a new leader would clear every mark at start-up.
// - Marking pauses when more than half the judged fleet is Stale or Missing at once, as the node
//   lifecycle controller stops evicting in full disruption: that is more likely the reader's
//   own partition, or the API server's, than half the agents dying together. Clearing marks
//   never pauses.
import type { NodeReadiness } from '../fleet/readiness.ts';

export const MARK_REASON = 'AgentLeaseStale';
export const HEALTHY_REASON = 'RelistHealthy';

export type MarkAction = 'none' | 'mark-stale' | 'mark-healthy';

export interface MarkDecision {
  readonly action: MarkAction;
  /** Why nothing is done, when that is worth saying ("paused", "agent says True"). */
  readonly why: string | undefined;
}

export function isOurMark(reading: Pick<NodeReadiness, 'condition'>): boolean {
  return reading.condition?.status === 'Unknown' && reading.condition.reason === MARK_REASON;
}

export function decideMark(reading: NodeReadiness, paused: boolean): MarkDecision {
  if (!reading.markable) return { action: 'none', why: reading.cordoned ? 'cordoned' : 'not judged' };
  if (reading.verdict === 'Stale' || reading.verdict === 'Missing') {
    if (reading.condition?.status === 'True') return { action: 'none', why: 'the agent reports True itself' };
    if (isOurMark(reading)) return { action: 'none', why: undefined };
    if (paused) return { action: 'none', why: 'paused' };
    return { action: 'mark-stale', why: undefined };
  }
  if (isOurMark(reading) && reading.seenMoving) return { action: 'mark-healthy', why: undefined };
  return { action: 'none', why: undefined };
}

/** More than half the judged fleet Stale or Missing: marking pauses. */
export function shouldPause(readings: readonly NodeReadiness[]): { paused: boolean; judged: number; silent: number } {
  let judged = 0;
  let silent = 0;
  for (const r of readings) {
    if (!r.judged) continue;
    judged++;
    if (r.verdict !== 'Fresh') silent++;
  }
  return { paused: judged > 0 && silent * 2 > judged, judged, silent };
}
