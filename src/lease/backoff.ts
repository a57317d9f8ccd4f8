// The delay before the next write attempt after a run of failures, as kubelet's lease
// controller backs off (component-helpers/apimachinery/lease/controller.go, backoffEnsureLease:
// the sleep starts at 100 ms and doubles before each wait, capped at maxBackoff = 7 s), so the
// first retry comes 200 ms after the first failure.
//
// | failures in a row | delay   |
// |-------------------|---------|
// | 1                 | 200 ms  |
// | 2                 | 400 ms  |
// | 3                 | 800 ms  |
// | 4                 | 1.6 s   |
// | 5                 | 3.2 s   |
// | 6                 | 6.4 s   |
// | 7 and more        | 7 s     |

export const INITIAL_BACKOFF_MS = 200;
/** Upstream maxBackoff: a node is retried at least every 7 s, well inside a 40 s lease. */
export const MAX_BACKOFF_MS = 7_000;
/** A Retry-After longer than this is cut to it: the lease would have expired long before. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The delay after `failures` failures in a row (failures ≥ 1). */
export function backoffMs(failures: number): number {
  if (failures < 1) return 0;
  // 2 ** 6 × 200 already passes the cap; bounding the exponent keeps huge counts finite.
  const exponent = Math.min(failures - 1, 16);
  return Math.min(INITIAL_BACKOFF_MS * 2 ** exponent, MAX_BACKOFF_MS);
}

/**
 * The delay after a failure that may carry a server's Retry-After (a 429 or a 503): the server's
 * wish is honoured (never retried sooner), bounded by MAX_RETRY_AFTER_MS, and never shorter than
 * the backoff itself.
 */
export function retryDelayMs(failures: number, retryAfterMs: number | undefined): number {
  const backoff = backoffMs(failures);
  if (retryAfterMs === undefined) return backoff;
  return Math.max(backoff, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}
