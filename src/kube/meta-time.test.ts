import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMicroTime, formatTime, parseMetaTime } from './meta-time.ts';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5) * 1000; // µs

// µs since the epoch → [MicroTime, Time]
const FORMAT: ReadonlyArray<[string, number, string, string]> = [
  ['a whole second', T0, '2026-01-02T03:04:05.000000Z', '2026-01-02T03:04:05Z'],
  ['one microsecond', T0 + 1, '2026-01-02T03:04:05.000001Z', '2026-01-02T03:04:05Z'],
  ['microseconds past the milliseconds', T0 + 123_456, '2026-01-02T03:04:05.123456Z', '2026-01-02T03:04:05Z'],
  ['the last microsecond of a second: Time floors', T0 + 999_999, '2026-01-02T03:04:05.999999Z', '2026-01-02T03:04:05Z'],
  ['a fraction of a microsecond is floored', T0 + 7_000_042.5, '2026-01-02T03:04:12.000042Z', '2026-01-02T03:04:12Z'],
  ['the epoch', 0, '1970-01-01T00:00:00.000000Z', '1970-01-01T00:00:00Z'],
  ['before the epoch, still six digits and floored', -1, '1969-12-31T23:59:59.999999Z', '1969-12-31T23:59:59Z'],
];

for (const [name, micros, micro, time] of FORMAT) {
  test(`format: ${name}`, () => {
    assert.equal(formatMicroTime(micros), micro, 'MicroTime');
    assert.equal(formatTime(micros), time, 'Time');
  });
}

// text → µs since the epoch, or undefined
const PARSE: ReadonlyArray<[string, string | undefined | null, number | undefined]> = [
  ['a MicroTime', '2026-01-02T03:04:05.123456Z', T0 + 123_456],
  ['a Time', '2026-01-02T03:04:05Z', T0],
  ['a fraction of one digit', '2026-01-02T03:04:05.5Z', T0 + 500_000],
  ['nanoseconds are cut to microseconds', '2026-01-02T03:04:05.123456789Z', T0 + 123_456],
  ['a numeric offset', '2026-01-02T04:04:05.5+01:00', T0 + 500_000],
  ['a negative offset', '2026-01-01T22:04:05-05:00', T0],
  ['no zone', '2026-01-02T03:04:05.123456', undefined],
  ['a date alone', '2026-01-02', undefined],
  ['a space for T', '2026-01-02 03:04:05Z', undefined],
  ['ten fractional digits', '2026-01-02T03:04:05.1234567891Z', undefined],
  ['a month out of range', '2026-13-02T03:04:05Z', undefined],
  ['words', 'yesterday', undefined],
  ['empty', '', undefined],
  ['absent', undefined, undefined],
  ['null', null, undefined],
];

for (const [name, text, micros] of PARSE) {
  test(`parse: ${name}`, () => {
    assert.equal(parseMetaTime(text), micros);
  });
}

test('what is formatted parses back to the same microsecond', () => {
  for (const [, micros] of FORMAT) {
    if (!Number.isInteger(micros)) continue;
    assert.equal(parseMetaTime(formatMicroTime(micros)), micros, `MicroTime of ${micros}`);
    assert.equal(parseMetaTime(formatTime(micros)), Math.floor(micros / 1_000_000) * 1_000_000, `Time of ${micros}`);
  }
});
