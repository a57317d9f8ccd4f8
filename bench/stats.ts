// Small statistics for the benchmark: percentiles by the nearest-rank method, and medians.
//
// Nearest rank: the p-th percentile of n sorted samples is the ⌈p·n⌉-th smallest. With 100
// samples, p99 is the 99th smallest, so one outlier in a hundred does not move it; with fewer
// than 100, p99 is the largest sample. Empty input is an error, not NaN.

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) throw new RangeError('samples: [] must hold at least one value');
  if (!(p > 0 && p <= 1)) throw new RangeError(`p: ${p} must be in (0, 1]`);
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function median(samples: readonly number[]): number {
  return percentile(samples, 0.5);
}
