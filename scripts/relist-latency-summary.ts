// The summary of a relist-latency run (relist-latency.ts): what the default threshold and
// deadline are chosen from.
//
// | figure            | from                                                                  |
// |-------------------|-----------------------------------------------------------------------|
// | p50 … p99.9, max  | the durations of the relists that succeeded (nearest rank, bench/stats)|
// | failed, byResult  | the relists that did not succeed, counted by their fault code          |
// | longestGapMs      | the longest time between the starts of two successive successful      |
// |                   | relists: the runtime is judged Unhealthy only when this exceeds the    |
// |                   | threshold, so it is the figure the threshold must stay above           |
// | over1s, over5s    | successful relists longer than 1 s and 5 s                             |
// | load              | the 1-minute load average sampled during the run: mean and maximum     |
//
// An empty run summarizes to zeros rather than throwing, so that an interrupted run still
// prints what it saw.
import { percentile } from '../bench/stats.ts';

export interface RelistSample {
  /** When the relist began, ms since the run started. */
  readonly beganMs: number;
  readonly durationMs: number;
  /** `success`, or the fault's code. */
  readonly result: string;
  /** Sandboxes and containers of the last successful relist. */
  readonly pods: number;
  readonly containers: number;
}

export interface RelistSummary {
  readonly relists: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly byResult: Readonly<Record<string, number>>;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  readonly over1s: number;
  readonly over5s: number;
  readonly longestGapMs: number;
  readonly containersMax: number;
  readonly podsMax: number;
  readonly loadMean: number;
  readonly loadMax: number;
}

export function summarizeRelists(samples: readonly RelistSample[], loads: readonly number[]): RelistSummary {
  const ok = samples.filter((s) => s.result === 'success');
  const durations = ok.map((s) => s.durationMs);
  const byResult: Record<string, number> = {};
  for (const s of samples) byResult[s.result] = (byResult[s.result] ?? 0) + 1;
  let longestGapMs = 0;
  for (let i = 1; i < ok.length; i++) longestGapMs = Math.max(longestGapMs, (ok[i] as RelistSample).beganMs - (ok[i - 1] as RelistSample).beganMs);
  const p = (q: number): number => (durations.length === 0 ? 0 : percentile(durations, q));
  return {
    relists: samples.length,
    succeeded: ok.length,
    failed: samples.length - ok.length,
    byResult,
    p50Ms: p(0.5),
    p90Ms: p(0.9),
    p99Ms: p(0.99),
    p999Ms: p(0.999),
    maxMs: durations.reduce((a, b) => Math.max(a, b), 0),
    over1s: durations.filter((d) => d > 1_000).length,
    over5s: durations.filter((d) => d > 5_000).length,
    longestGapMs,
    containersMax: samples.reduce((a, s) => Math.max(a, s.containers), 0),
    podsMax: samples.reduce((a, s) => Math.max(a, s.pods), 0),
    loadMean: loads.length === 0 ? 0 : loads.reduce((a, b) => a + b, 0) / loads.length,
    loadMax: loads.reduce((a, b) => Math.max(a, b), 0),
  };
}
