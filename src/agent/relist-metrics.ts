// What one relist outcome does to the agent's metrics: the relist histograms and failure
// counter, the last-success timestamp, the pod and container gauges by state, and the
// lifecycle-event counters.
//
// Shared by the agent (agent.ts, on every relist) and the benchmark (bench/relist-child.ts), so
// that the benchmark's "full relist tick" is exactly the work the agent does per relist: relist,
// ledger, lifecycle diff, and this.
//
// The outcome carries everything recorded here (its counts, its events and how many older events
// it pushed out of the bounded buffer); nothing is read back from the relister. Never throws for
// a well-formed outcome: label values are the bounded sets the metrics module types.
import { CONTAINER_STATES, POD_STATES, type AgentMetrics } from '../metrics/metrics.ts';
import type { RelistOutcome } from '../relist/relister.ts';

/** What the recorder remembers between outcomes. */
export interface RelistMetricsState {
  /** When the previous relist began (monotonic ms), for the interval histogram. */
  lastBeganMs: number | undefined;
}

export function createRelistMetricsState(): RelistMetricsState {
  return { lastBeganMs: undefined };
}

/**
 * The label for every state enum value this version does not know (a runtime newer than its
 * proto, or a broken one): they are summed under this one value, because a state label taken
 * verbatim would let a runtime create a series per int32 (`UNKNOWN_7`, `UNKNOWN_8`, …) that
 * never goes away. /status still shows each value as the runtime sent it.
 */
export const UNRECOGNIZED_STATE = 'unrecognized';

/** Counts by state, with every state not in `known` summed under UNRECOGNIZED_STATE (always present). */
function boundedCounts(byState: Readonly<Record<string, number>>, known: readonly string[]): Map<string, number> {
  const out = new Map<string, number>([[UNRECOGNIZED_STATE, 0]]);
  for (const [state, n] of Object.entries(byState)) {
    const label = known.includes(state) ? state : UNRECOGNIZED_STATE;
    out.set(label, (out.get(label) ?? 0) + n);
  }
  return out;
}

/** Records one relist outcome on the metrics. */
export function recordRelistOutcome(m: AgentMetrics, memo: RelistMetricsState, outcome: RelistOutcome): void {
  m.relistDuration.observe({ result: outcome.result }, outcome.durationMs / 1000);
  if (memo.lastBeganMs !== undefined) m.relistInterval.observe((outcome.began.monotonicMs - memo.lastBeganMs) / 1000);
  memo.lastBeganMs = outcome.began.monotonicMs;
  if (outcome.fault !== undefined) {
    m.relistFailures.inc({ reason: outcome.fault.code });
    return;
  }
  m.relistLastSuccessTimestamp.set(outcome.began.wallMicros / 1e6);
  const counts = outcome.counts;
  if (counts !== undefined) {
    for (const [state, n] of boundedCounts(counts.podsByState, POD_STATES)) m.pods.set({ state }, n);
    for (const [state, n] of boundedCounts(counts.containersByState, CONTAINER_STATES)) m.containers.set({ state }, n);
  }
  for (const event of outcome.events) m.lifecycleEvents.inc({ type: event.type });
  if (outcome.eventsDropped > 0) m.lifecycleEventsDropped.inc(outcome.eventsDropped);
}
