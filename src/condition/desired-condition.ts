// The agent's verdict on its Node, as the Node condition that lifecycle tooling reads (medik8s
// NodeHealthCheck, Cluster API MachineHealthCheck, draino, cluster-autoscaler all filter Node
// conditions by type, status and age). A pure function of the relist ledger's judgement and
// how long the agent has been up: no second threshold, the ledger's own is reused.
//
// | runtime (the ledger's judgement)                        | condition RuntimeRelistUnhealthy |
// |---------------------------------------------------------|----------------------------------|
// | Healthy                                                 | False / RelistHealthy            |
// | Unhealthy                                               | True / RelistStale (the ledger's |
// |                                                         | message: upstream's shape)       |
// | NotYetObserved, agent up for more than the threshold    | True / RelistNeverSucceeded      |
// | NotYetObserved, agent up for no more than the threshold | nothing written                  |
// | CannotObserve, agent up for more than the threshold     | Unknown / AgentCannotObserve     |
// | CannotObserve, agent up for no more than the threshold  | nothing written                  |
//
// The rows "nothing written" are what keep a restarting agent from flapping the condition:
// until its first relist answers (or the threshold passes without one) it has no verdict, and
// says nothing. "More than" is strict, as the ledger's own threshold is.
//
// CannotObserve is never True: the agent could not see the runtime (a socket it may not open,
// an answer it cannot decode, no socket at all, ...), so it has no word on the runtime's health,
// and remediation acts on True. Unknown is the condition's own word for that; the reason says
// it is the agent's, and the message what it could not observe, with the runtime's own words.
//
// The state of the condition is (status, reason). The message goes with a change of state and
// is not a state of its own, so the Healthy message carries no age that would go stale.
import { formatDuration } from '../clock/duration.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';

/** Not NPD's ContainerRuntimeUnhealthy: NPD writes that type on many clusters. */
export const CONDITION_TYPE = 'RuntimeRelistUnhealthy';

export type ConditionReason = 'RelistHealthy' | 'RelistStale' | 'RelistNeverSucceeded' | 'AgentCannotObserve';

/** The reason of the agent's own Unknown: it cannot observe the runtime. */
export const CANNOT_OBSERVE_REASON = 'AgentCannotObserve';

/** A condition's state: its status and reason (its message goes with a change, and is no state). */
export interface ConditionState {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string | undefined;
}

export interface DesiredCondition {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: ConditionReason;
  readonly message: string;
}

export function desiredCondition(health: RuntimeHealth, sinceStartMs: number, thresholdMs: number): DesiredCondition | undefined {
  switch (health.state) {
    case 'Healthy':
      return { status: 'False', reason: 'RelistHealthy', message: `relist succeeded within the threshold of ${formatDuration(thresholdMs)}` };
    case 'Unhealthy':
      return { status: 'True', reason: 'RelistStale', message: health.message };
    case 'NotYetObserved':
      if (sinceStartMs > thresholdMs) {
        return {
          status: 'True',
          reason: 'RelistNeverSucceeded',
          message: `${health.message}; agent started ${formatDuration(sinceStartMs)} ago; threshold is ${formatDuration(thresholdMs)}`,
        };
      }
      return undefined;
    case 'CannotObserve':
      if (sinceStartMs > thresholdMs) return { status: 'Unknown', reason: CANNOT_OBSERVE_REASON, message: health.message };
      return undefined;
  }
}

/** Whether two conditions are in the same state: same status and reason. */
export function sameState(a: ConditionState, b: ConditionState): boolean {
  return a.status === b.status && a.reason === b.reason;
}
