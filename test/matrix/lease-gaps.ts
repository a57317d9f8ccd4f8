// Where a Lease stood still, from the renewTimes a watcher saw: the fault matrix's "the lease
// stops" and "the lease moves again", and the soak's longest gap.
//
// Input: every renewTime seen, as ms on one timeline (the matrix: since the fault's onset), in
// any order, duplicates allowed (a watch may show one renewal twice: the object's other fields
// changed). A gap is the time between two successive distinct renewals.
//
// | function     | gives                                                                        |
// |--------------|------------------------------------------------------------------------------|
// | leaseStop    | the first gap longer than `allowedMs` that ends after `fromMs` (or never      |
// |              | ends): `stoppedAtMs`, the renewal before it; `movedAtMs`, the one after it     |
// |              | (undefined while it has not moved again)                                     |
// | longestGap   | the longest gap, with the renewals at its two ends                            |
//
// A lease renewed every interval R with jitter j has gaps of at most R·(1 + j) plus the time a
// renewal's request takes; the matrix passes that (plus its slack) as `allowedMs`, and the soak's
// pass rule is longestGap ≤ R + 1 s.

export interface LeaseStop {
  /** The last renewal before the lease stood still. */
  readonly stoppedAtMs: number;
  /** The first renewal after it, or undefined. */
  readonly movedAtMs: number | undefined;
}

function distinctSorted(renewalsMs: readonly number[]): number[] {
  return [...new Set(renewalsMs)].sort((a, b) => a - b);
}

/**
 * The first stop that ends after fromMs, or undefined when every gap ending after fromMs is
 * within allowedMs and the lease was renewed within allowedMs of `nowMs`.
 */
export function leaseStop(renewalsMs: readonly number[], allowedMs: number, fromMs: number, nowMs: number): LeaseStop | undefined {
  const r = distinctSorted(renewalsMs);
  for (let i = 0; i < r.length; i++) {
    const at = r[i] as number;
    const next = r[i + 1];
    const end = next ?? nowMs;
    if (end <= fromMs) continue;
    if (end - at > allowedMs) return { stoppedAtMs: at, movedAtMs: next };
  }
  return undefined;
}

export interface Gap {
  readonly fromMs: number;
  readonly toMs: number;
  readonly lengthMs: number;
}

/** The longest gap between successive distinct renewals; undefined with fewer than two. */
export function longestGap(renewalsMs: readonly number[]): Gap | undefined {
  const r = distinctSorted(renewalsMs);
  let best: Gap | undefined;
  for (let i = 1; i < r.length; i++) {
    const fromMs = r[i - 1] as number;
    const toMs = r[i] as number;
    if (best === undefined || toMs - fromMs > best.lengthMs) best = { fromMs, toMs, lengthMs: toMs - fromMs };
  }
  return best;
}
