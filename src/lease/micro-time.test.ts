import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMicroTime, formatTime, nextRenewMicros } from './micro-time.ts';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5) * 1000; // µs

test('a MicroTime has exactly six fractional digits', () => {
  assert.equal(formatMicroTime(T0), '2026-01-02T03:04:05.000000Z');
  assert.equal(formatMicroTime(T0 + 123_456), '2026-01-02T03:04:05.123456Z');
  assert.equal(formatMicroTime(T0 + 1), '2026-01-02T03:04:05.000001Z');
  assert.equal(formatMicroTime(T0 + 999_999), '2026-01-02T03:04:05.999999Z');
  assert.match(formatMicroTime(T0 + 7_000_042.9), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
});

test('a metav1.Time is whole seconds', () => {
  assert.equal(formatTime(T0 + 999_999), '2026-01-02T03:04:05Z');
});

const NEXT: ReadonlyArray<[string, number, number | undefined, number]> = [
  ['the first stamp is the wall clock', T0, undefined, T0],
  ['a later wall clock is used as it is', T0 + 5_000_000, T0, T0 + 5_000_000],
  ['the same microsecond moves on by one', T0, T0, T0 + 1],
  ['a wall clock stepped back an hour still moves on by one', T0 - 3_600_000_000, T0, T0 + 1],
];

for (const [name, now, last, expected] of NEXT) {
  test(`renewTime: ${name}`, () => {
    assert.equal(nextRenewMicros(now, last), expected);
  });
}
