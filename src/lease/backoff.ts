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
//
// The schedule is LEASE_RETRY, a policy of the product's one retry module (loop/retry-policy.ts),
// and the Node condition loop's too. What is the lease's own is here: its delay after a failure
// (retryDelayMs) is that backoff, or a server's Retry-After (429, 503) when it asks for longer,
// and never longer than the renew interval:
//
// | failures | Retry-After | renew interval | delay  | why                                        |
// |----------|-------------|----------------|--------|--------------------------------------------|
// | 1        | none        | 10 s           | 200 ms | the backoff                                |
// | 1        | 3 s         | 10 s           | 3 s    | never retried sooner than the server asked |
// | 6        | 1 s         | 10 s           | 6.4 s  | nor sooner than the backoff                |
// | 1        | 45 s        | 10 s           | 10 s   | cut to the renew interval                  |
// | 7        | none        | 1 s            | 1 s    | cut to the renew interval                  |
//
// Why the cut: a wait longer than the renew interval lets the lease run out while the agent is
// only being polite, and a loop that waits longer than its idle window reads as Stalled, so
// /livez would get a healthy agent restarted. With the cut, the lease moves again within one
// renew interval of the API answering, whatever it answered before. The config keeps the idle
// window above the renew interval (agent-config-schema.ts), so the wait never reads as a stall.
import { exponentialBackoff, type RetryPolicy } from '../loop/retry-policy.ts';

export const INITIAL_BACKOFF_MS = 200;
/** Upstream maxBackoff: a node is retried at least every 7 s, well inside a 40 s lease. */
export const MAX_BACKOFF_MS = 7_000;

/** The lease's schedule (loop/retry-policy.ts): upstream's, without jitter. */
export const LEASE_RETRY: RetryPolicy = exponentialBackoff({ initialMs: INITIAL_BACKOFF_MS, maxMs: MAX_BACKOFF_MS, jitter: 0 });

/** The schedule has no jitter, so it never draws. */
const NO_DRAW = (): number => 0;

/** The delay after `failures` failures in a row (failures ≥ 1). */
export function backoffMs(failures: number): number {
  return LEASE_RETRY(failures, NO_DRAW);
}

/**
 * The lease loop's delay after a failure that may carry a server's Retry-After (a 429 or a
 * 503): the longer of the backoff and the server's wish, cut to capMs (the renew interval).
 */
export function retryDelayMs(failures: number, retryAfterMs: number | undefined, capMs: number): number {
  return Math.min(Math.max(backoffMs(failures), retryAfterMs ?? 0), capMs);
}
