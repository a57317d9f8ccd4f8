// leaseStop and longestGap, row by row of lease-gaps.ts's table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { leaseStop, longestGap } from './lease-gaps.ts';

test('leaseStop: the first gap past the allowance that ends after the onset', () => {
  const every10 = [-30_000, -20_000, -10_000, 0, 10_000];
  const rows: Array<[string, number[], number, number, number, { stoppedAtMs: number; movedAtMs: number | undefined } | undefined]> = [
    // name, renewals, allowedMs, fromMs, nowMs, expected
    ['renewing steadily', [...every10, 20_000], 11_000, 0, 25_000, undefined],
    ['stopped at 10 s, never moved again', every10, 11_000, 0, 40_000, { stoppedAtMs: 10_000, movedAtMs: undefined }],
    ['stopped at 10 s, now within the allowance: not yet a stop', every10, 11_000, 0, 20_500, undefined],
    ['stopped, then moved at 70 s', [...every10, 70_000, 80_000], 11_000, 0, 90_000, { stoppedAtMs: 10_000, movedAtMs: 70_000 }],
    ['a gap that ended before fromMs is not this stop', [-60_000, -10_000, 0, 10_000], 11_000, 0, 15_000, undefined],
    ['the gap spanning the onset counts', [-60_000, 5_000, 15_000], 11_000, 0, 20_000, { stoppedAtMs: -60_000, movedAtMs: 5_000 }],
    ['duplicates are one renewal', [0, 0, 10_000, 10_000], 11_000, 0, 30_000, { stoppedAtMs: 10_000, movedAtMs: undefined }],
    ['a gap of exactly the allowance is no stop', [0, 11_000], 11_000, 0, 22_000, undefined],
    ['no renewal at all since before the onset', [-5_000], 11_000, 0, 7_000, { stoppedAtMs: -5_000, movedAtMs: undefined }],
  ];
  for (const [name, renewals, allowed, from, now, expected] of rows) {
    assert.deepEqual(leaseStop(renewals, allowed, from, now), expected, name);
  }
});

test('longestGap: the longest distance between successive distinct renewals', () => {
  assert.equal(longestGap([]), undefined);
  assert.equal(longestGap([5]), undefined);
  assert.deepEqual(longestGap([30, 0, 10, 10, 22]), { fromMs: 10, toMs: 22, lengthMs: 12 });
  assert.deepEqual(longestGap([0, 10, 20]), { fromMs: 0, toMs: 10, lengthMs: 10 });
});
