// What the Node condition loop does on one pass: none, read, heartbeat, change or repair. A pure
// function of the agent's verdict (the condition desired-condition.ts gives, or none yet), what
// the loop remembers of the Node or what a read of it just found, and the time. The loop
// (node-condition.ts) asks it with what it remembers; told to read, it reads the Node and asks
// again with what the read found. The I/O is the ConditionWriter's (condition-writer.ts).
//
// The table is docs/design.md's "How it is written" (under "The Node condition the agent
// writes"); condition-step.test.ts reads it from there. Why its rows are what they are:
// - State = (status, reason). A change and a repair write the whole condition with a new
//   lastTransitionTime and send an Event; a heartbeat moves lastHeartbeatTime alone, and is not
//   a change.
// - "none" after a read at start keeps a restarting agent from writing over a condition already
//   in its verdict's state: lastTransitionTime stays where it was.
// - Refresh due is `≥`: the refresh period is a floor. The last refresh is the last read (or
//   change) whose step was done, so a change written between refreshes counts as one.
import { sameState, type ConditionState } from './desired-condition.ts';

export type ConditionStep = 'none' | 'read' | 'heartbeat' | 'change' | 'repair';

/** What the loop knows without asking: whether it read the Node since start, and when it last refreshed. */
export interface ConditionMemory {
  readonly via: 'memory';
  /** The Node has been read since start. */
  readonly read: boolean;
  /** When the last read or write that set `known` happened, monotonic ms. */
  readonly lastRefreshMs: number;
  /** The condition's state as the loop last read or wrote it; undefined when the Node had none. */
  readonly known: ConditionState | undefined;
}

/** What a read of the Node just found, and whether it was the first since start. */
export interface ConditionRead {
  readonly via: 'read';
  readonly atStart: boolean;
  /** The condition on the Node; undefined when it carries none. */
  readonly onNode: ConditionState | undefined;
}

export function decideConditionStep(
  desired: ConditionState | undefined,
  seen: ConditionMemory | ConditionRead,
  nowMs: number,
  refreshMs: number,
): ConditionStep {
  if (desired === undefined) return 'none';
  if (seen.via === 'read') {
    if (seen.onNode === undefined || !sameState(seen.onNode, desired)) return 'repair';
    return seen.atStart ? 'none' : 'heartbeat';
  }
  if (!seen.read || nowMs - seen.lastRefreshMs >= refreshMs) return 'read';
  return seen.known !== undefined && sameState(seen.known, desired) ? 'none' : 'change';
}
