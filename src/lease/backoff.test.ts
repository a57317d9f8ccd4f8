import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMs, MAX_BACKOFF_MS, retryDelayMs } from './backoff.ts';

// The table in backoff.ts.
const TABLE: ReadonlyArray<[number, number]> = [
  [0, 0],
  [1, 200],
  [2, 400],
  [3, 800],
  [4, 1_600],
  [5, 3_200],
  [6, 6_400],
  [7, 7_000],
  [8, 7_000],
  [1_000_000, 7_000],
];

for (const [failures, expected] of TABLE) {
  test(`after ${failures} failures in a row the next attempt waits ${expected} ms`, () => {
    assert.equal(backoffMs(failures), expected);
  });
}

test('the backoff never exceeds the cap, however long the run', () => {
  for (let n = 1; n < 5_000; n++) assert.ok(backoffMs(n) <= MAX_BACKOFF_MS, `failure ${n}`);
});

// The second table in backoff.ts, and its edges.
const RETRY_AFTER: ReadonlyArray<[string, number, number | undefined, number, number]> = [
  ['no Retry-After: the backoff', 1, undefined, 10_000, 200],
  ['Retry-After longer than the backoff wins', 1, 3_000, 10_000, 3_000],
  ['Retry-After shorter than the backoff: the backoff', 6, 1_000, 10_000, 6_400],
  ['Retry-After 0: the backoff', 2, 0, 10_000, 400],
  ['Retry-After 45 s is cut to the renew interval', 1, 45_000, 10_000, 10_000],
  ['Retry-After of an hour is cut to the renew interval', 1, 3_600_000, 10_000, 10_000],
  ['Retry-After exactly the renew interval is honoured', 1, 10_000, 10_000, 10_000],
  ['Retry-After 45 s with a 5 s renew interval: 5 s', 9, 45_000, 5_000, 5_000],
  ['the capped backoff is cut to a 1 s renew interval', 7, undefined, 1_000, 1_000],
];

for (const [name, failures, retryAfter, cap, expected] of RETRY_AFTER) {
  test(`retry delay: ${name}`, () => {
    assert.equal(retryDelayMs(failures, retryAfter, cap), expected);
  });
}
