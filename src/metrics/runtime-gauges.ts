// What the two runtime verdict gauges read, from the relist ledger's judgement and how long
// the agent has been up. A pure function, so the gauges follow the same split as the Node
// condition (condition/desired-condition.ts): a runtime fault is 0, the agent's own blindness is
// no sample at all, never a 0 that an alert on a sick runtime would take for one.
//
// | the ledger's judgement | agent up for more than the threshold | nodepulse_runtime_healthy | nodepulse_runtime_observable |
// |------------------------|--------------------------------------|---------------------------|------------------------------|
// | Healthy                | any                                  | 1                         | 1                            |
// | Unhealthy              | any                                  | 0                         | 1                            |
// | NotYetObserved         | no                                   | no sample                 | no sample                    |
// | NotYetObserved         | yes                                  | 0                         | 1                            |
// | CannotObserve          | any                                  | no sample                 | 0                            |
//
// - runtime_healthy is 0 only for a runtime-caused verdict past the threshold (what the
//   condition calls True: RelistStale, RelistNeverSucceeded), so NodePulseRuntimeUnhealthy fires
//   for nothing else. It has no sample while nothing is judged yet (a restarting agent) and while
//   the agent cannot observe.
// - runtime_observable is 0 from the first relist that fails for a reason of the agent's own
//   (no threshold: the same moment /readyz turns 503), and 1 whenever the runtime was reached,
//   sick or not. NodePulseAgentCannotObserve fires on its 0.
// - NotYetObserved past the threshold is a runtime that was reached and never answered (a
//   relist that hangs or fails for the runtime's reasons): observable, and not healthy.
import type { RuntimeHealthState } from '../relist/relist-ledger.ts';

export interface RuntimeGaugeValues {
  /** nodepulse_runtime_healthy, or undefined for no sample. */
  readonly healthy: 0 | 1 | undefined;
  /** nodepulse_runtime_observable, or undefined for no sample. */
  readonly observable: 0 | 1 | undefined;
}

/** The two gauges' values (the table in the header). "More than" is strict, as the condition's. */
export function runtimeGaugeValues(state: RuntimeHealthState, sinceStartMs: number, thresholdMs: number): RuntimeGaugeValues {
  switch (state) {
    case 'Healthy':
      return { healthy: 1, observable: 1 };
    case 'Unhealthy':
      return { healthy: 0, observable: 1 };
    case 'NotYetObserved':
      return sinceStartMs > thresholdMs ? { healthy: 0, observable: 1 } : { healthy: undefined, observable: undefined };
    case 'CannotObserve':
      return { healthy: undefined, observable: 0 };
  }
}
