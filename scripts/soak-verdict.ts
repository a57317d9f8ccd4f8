// The soak's judgement: does the agent's memory or its open handles grow over a run?
//
// Input: samples taken every second or so of the agent's RSS (from /proc/PID/status), its V8
// heap in use, its open handles and its event-loop lag (from its own /metrics). Output: pass or
// fail, with one line per problem, and the two windows that were compared.
//
// | windows (t = seconds since the agent started)  | what is compared                             |
// |------------------------------------------------|----------------------------------------------|
// | warm-up: t < warmupS                           | nothing: V8 grows its old generation, the     |
// |                                                | JIT compiles, gRPC and HTTP pools fill        |
// | baseline: warmupS ≤ t < warmupS + windowS      | median RSS, highest handle count              |
// | final: the last windowS seconds of the run     | median RSS, lowest handle count               |
//
// - RSS fails when the final median is more than maxRssGrowth (10 %) above the baseline median.
//   Medians, not single samples: RSS saws up and down with every major GC, and one sample taken
//   just before a collection would read as growth that is not there.
// - Handles fail when the LOWEST count of the final window is above the HIGHEST count of the
//   baseline window. Handles come and go with each request in flight (an API call, a scrape),
//   so single samples differ by a few; a leak raises the floor, and only a raised floor is a
//   leak.
// - A run too short to hold both windows apart is a failure of the run, not a pass.
// - Heap and event-loop lag are reported, not judged: heap is a part of RSS (already judged)
//   and lag depends on the machine's load.

export interface SoakSample {
  /** Seconds since the agent started. */
  readonly atS: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** Open handles: the sum of nodejs_active_handles{type}. */
  readonly handles: number;
  /** nodejs_eventloop_lag_p99_seconds. */
  readonly lagP99S: number;
}

export interface SoakLimits {
  readonly warmupS: number;
  readonly windowS: number;
  /** 0.10: the final median RSS may be at most 10 % above the baseline median. */
  readonly maxRssGrowth: number;
}

export interface WindowSummary {
  readonly fromS: number;
  readonly toS: number;
  readonly samples: number;
  readonly rssMedianBytes: number;
  readonly heapMedianBytes: number;
  readonly handlesMin: number;
  readonly handlesMax: number;
  readonly lagP99MaxS: number;
}

export interface SoakVerdict {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly baseline: WindowSummary | undefined;
  readonly final: WindowSummary | undefined;
  /** final / baseline − 1, or undefined when a window is empty. */
  readonly rssGrowth: number | undefined;
}

/**
 * Warm-up and window lengths for a run of `totalS` seconds: 30 s and 12 s, or a tenth of the run
 * each when that is longer (a 30-minute run: 3 min of warm-up, 3-min windows).
 *
 * Why 30 s: measured on the project's 2-core machine at 10 Hz, the agent's RSS climbs from about
 * 100 MiB to 121 MiB over its first 30–36 s (old generation and code space growing to their
 * working size, gRPC and HTTP buffers reaching their high-water marks) and is flat after that to
 * within 1 %. A 20-s warm-up put that climb inside the baseline and read as 6 % growth in one
 * minute; 30 s leaves it out, with the windows still apart (30–42 s against 48–60 s).
 */
export function soakLimitsFor(totalS: number): SoakLimits {
  return {
    warmupS: Math.max(30, Math.round(totalS * 0.1)),
    windowS: Math.max(12, Math.round(totalS * 0.1)),
    maxRssGrowth: 0.1,
  };
}

export function judgeSoak(samples: readonly SoakSample[], limits: SoakLimits): SoakVerdict {
  const problems: string[] = [];
  const endS = samples.reduce((max, s) => Math.max(max, s.atS), 0);
  const baseFrom = limits.warmupS;
  const baseTo = limits.warmupS + limits.windowS;
  const finalFrom = endS - limits.windowS;
  if (finalFrom < baseTo) {
    problems.push(`run: ${round(endS)}s must be at least warm-up + 2 windows (${limits.warmupS + 2 * limits.windowS}s) long`);
    return { ok: false, problems, baseline: undefined, final: undefined, rssGrowth: undefined };
  }
  const baseline = summarise(samples.filter((s) => s.atS >= baseFrom && s.atS < baseTo), baseFrom, baseTo);
  const final = summarise(samples.filter((s) => s.atS > finalFrom), finalFrom, endS);
  if (baseline === undefined) problems.push(`baseline: no samples between ${baseFrom}s and ${baseTo}s`);
  if (final === undefined) problems.push(`final: no samples in the last ${limits.windowS}s`);
  if (baseline === undefined || final === undefined) return { ok: false, problems, baseline, final, rssGrowth: undefined };

  const rssGrowth = final.rssMedianBytes / baseline.rssMedianBytes - 1;
  if (rssGrowth > limits.maxRssGrowth) {
    problems.push(
      `rss: ${mib(final.rssMedianBytes)} (final median) must be at most ${Math.round(limits.maxRssGrowth * 100)}% above ${mib(baseline.rssMedianBytes)} (baseline median); it grew ${pct(rssGrowth)}`,
    );
  }
  if (final.handlesMin > baseline.handlesMax) {
    problems.push(`handles: ${final.handlesMin} (final minimum) must not be above ${baseline.handlesMax} (baseline maximum)`);
  }
  return { ok: problems.length === 0, problems, baseline, final, rssGrowth };
}

function summarise(samples: readonly SoakSample[], fromS: number, toS: number): WindowSummary | undefined {
  if (samples.length === 0) return undefined;
  const handles = samples.map((s) => s.handles);
  return {
    fromS,
    toS,
    samples: samples.length,
    rssMedianBytes: median(samples.map((s) => s.rssBytes)),
    heapMedianBytes: median(samples.map((s) => s.heapUsedBytes)),
    handlesMin: Math.min(...handles),
    handlesMax: Math.max(...handles),
    lagP99MaxS: Math.max(...samples.map((s) => s.lagP99S)),
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`;
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
