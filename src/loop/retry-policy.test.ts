import assert from 'node:assert/strict';
import { test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { exponentialBackoff, type BackoffSchedule } from './retry-policy.ts';

const SCHEDULE: BackoffSchedule = { initialMs: 100, maxMs: 1_000, jitter: 0.5 };

// docs/design.md's table ("Retries"), on SCHEDULE: each row's [failures, random draw, delay],
// by the row's first cell. The delays are the row's formula worked out by hand.
const CASES: Readonly<Record<string, ReadonlyArray<readonly [number, number, number]>>> = {
  '0': [
    [0, 0.9, 0],
    [-1, 0.9, 0],
  ],
  'n ≥ 1': [
    [1, 0, 100],
    [1, 0.5, 125],
    [1, 0.999, 149.95],
    [2, 0, 200],
    [3, 0, 400],
    [4, 0, 800],
    [5, 0, 1_000],
    [5, 0.5, 1_250],
    [6, 0.999, 1_499.5],
    [1_000_000, 0, 1_000],
    [Number.MAX_SAFE_INTEGER, 0.5, 1_250],
  ],
};

for (const { key, expected, case: rows } of casesOf(designTable('Retries'), 1, CASES)) {
  test(`retry policy, docs/design.md's table: ${key} failures → ${expected[0]}`, () => {
    for (const [failures, draw, delay] of rows) {
      assert.equal(exponentialBackoff(SCHEDULE)(failures, () => draw), delay, `after ${failures} failures with a draw of ${draw}`);
    }
  });
}

test('retry policy: without jitter the random source is never drawn', () => {
  const policy = exponentialBackoff({ initialMs: 200, maxMs: 7_000, jitter: 0 });
  const never = (): number => assert.fail('drew a random number');
  assert.deepEqual([1, 2, 6, 7, 100].map((n) => policy(n, never)), [200, 400, 6_400, 7_000, 7_000]);
});

const REFUSED: ReadonlyArray<[string, BackoffSchedule, RegExp]> = [
  ['an initial wait of 0', { initialMs: 0, maxMs: 1_000, jitter: 0 }, /^initialMs: 0 must be a finite number of milliseconds above 0$/],
  ['an infinite initial wait', { initialMs: Infinity, maxMs: Infinity, jitter: 0 }, /^initialMs: Infinity must be/],
  ['a cap below the initial wait', { initialMs: 500, maxMs: 100, jitter: 0 }, /^maxMs: 100 must be finite and at least initialMs \(500\)$/],
  ['a NaN cap', { initialMs: 500, maxMs: Number.NaN, jitter: 0 }, /^maxMs: NaN must be/],
  ['a negative jitter', { initialMs: 100, maxMs: 1_000, jitter: -0.1 }, /^jitter: -0.1 must be a finite fraction of at least 0$/],
];

for (const [name, schedule, message] of REFUSED) {
  test(`retry policy: ${name} is refused when the policy is made`, () => {
    assert.throws(() => exponentialBackoff(schedule), (err: unknown) => err instanceof RangeError && message.test(err.message));
  });
}
