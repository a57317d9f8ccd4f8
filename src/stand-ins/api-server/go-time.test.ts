import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goParseTime, RFC3339, RFC3339_MICRO } from './go-time.ts';

const LAYOUT = '"2006-01-02T15:04:05.000000Z07:00"';

describe('goParseTime follows Go time.Parse for RFC3339Micro', () => {
  const table: [string, string][] = [
    ['2026-01-02T03:04:05.123456Z', 'ok 2026-01-02T03:04:05.123456Z'],
    ['2026-01-02T05:04:05.123456+02:00', 'ok 2026-01-02T03:04:05.123456Z'],
    ['2026-01-02T03:04:05.123Z', `parsing time "2026-01-02T03:04:05.123Z" as ${LAYOUT}: cannot parse ".123Z" as ".000000"`],
    ['2026-01-02T03:04:05Z', `parsing time "2026-01-02T03:04:05Z" as ${LAYOUT}: cannot parse "Z" as ".000000"`],
    ['2026-01-02T03:04:05.1234567Z', `parsing time "2026-01-02T03:04:05.1234567Z" as ${LAYOUT}: cannot parse "7Z" as "Z07:00"`],
    ['2026-01-02 03:04:05.123456Z', `parsing time "2026-01-02 03:04:05.123456Z" as ${LAYOUT}: cannot parse " 03:04:05.123456Z" as "T"`],
    ['2026-13-02T03:04:05.123456Z', 'parsing time "2026-13-02T03:04:05.123456Z": month out of range'],
    ['2026-02-30T03:04:05.123456Z', 'parsing time "2026-02-30T03:04:05.123456Z": day out of range'],
    ['2026-01-02T03:04:05.123456Zjunk', 'parsing time "2026-01-02T03:04:05.123456Zjunk": extra text: "junk"'],
  ];
  for (const [input, want] of table) {
    it(`${input} → ${want}`, () => {
      const r = goParseTime(RFC3339_MICRO, input);
      assert.equal(r.ok ? `ok ${r.text}` : r.message, want);
    });
  }

  it('RFC3339 accepts a fraction and prints whole seconds in UTC, as metav1.Time does', () => {
    const r = goParseTime(RFC3339, '2026-01-02T04:04:05.5+01:00');
    assert.equal(r.ok ? r.text : r.message, '2026-01-02T03:04:05Z');
  });
});
