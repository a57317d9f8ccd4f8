// How long a loop waits before its next attempt after a run of failures: the one retry module
// of the product. The lease writer and the list-watch informer each keep their own schedule and
// get their policy from here; the Node condition loop uses the lease's.
//
// A policy is a pure function of the failures in a row and a random source, so a caller can
// replace it (tests pass a recording one) and a table can test it. Each schedule doubles from
// `initialMs` and stops at `maxMs`, as apimachinery's wait.Backoff does with factor 2 and a cap,
// then adds up to `jitter` × that at random, as wait.Jitter does:
//
// | failures in a row | delay                                                     |
// |-------------------|-----------------------------------------------------------|
// | 0                 | 0 (no failure, no wait)                                   |
// | n ≥ 1             | min(initialMs × 2^(n−1), maxMs) × (1 + random() × jitter) |
//
// The jitter is added after the cap, as wait.Backoff's Step() adds it, so a jittered wait can
// pass maxMs by up to `jitter` × maxMs. With jitter 0 the random source is never called.
//
// Failure modes: a schedule that cannot work (initialMs not above 0, maxMs below initialMs,
// jitter below 0) throws a RangeError naming the value when the policy is made, never later.
import { jittered } from './run-loop.ts';

/** The wait in ms before the next attempt, after `failures` failures in a row. */
export type RetryPolicy = (failures: number, random: () => number) => number;

export interface BackoffSchedule {
  /** The wait after the first failure. */
  readonly initialMs: number;
  /** The most the doubling reaches. */
  readonly maxMs: number;
  /** Up to this fraction of the wait is added at random (0 = none). */
  readonly jitter: number;
}

/** Doubling stops mattering long before this exponent; bounding it keeps huge counts finite. */
const MAX_EXPONENT = 52;

/** A policy that doubles from initialMs to maxMs, with jitter on top. */
export function exponentialBackoff(schedule: BackoffSchedule): RetryPolicy {
  const { initialMs, maxMs, jitter } = schedule;
  if (!(initialMs > 0) || !Number.isFinite(initialMs)) throw new RangeError(`initialMs: ${initialMs} must be a finite number of milliseconds above 0`);
  if (!(maxMs >= initialMs) || !Number.isFinite(maxMs)) throw new RangeError(`maxMs: ${maxMs} must be finite and at least initialMs (${initialMs})`);
  if (!(jitter >= 0) || !Number.isFinite(jitter)) throw new RangeError(`jitter: ${jitter} must be a finite fraction of at least 0`);
  return (failures, random) => {
    if (!(failures >= 1)) return 0;
    const exponent = Math.min(failures - 1, MAX_EXPONENT);
    return jittered(Math.min(initialMs * 2 ** exponent, maxMs), jitter, random);
  };
}
