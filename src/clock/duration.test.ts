// Go's duration syntax, held to Go itself: the `go` column is what time.ParseDuration answered
// (Go 1.19, as nanoseconds, or its error) for each input, and parseGoDurationNs must answer the
// same. The `ours` column is what nodepulse accepts (parseDuration, in ms); where it refuses
// something Go reads, the row says why. The agent's config then refuses more of what it parses
// (0s for most keys, a fraction of a millisecond, more than 24h: agent-config-schema.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, parseDuration, parseGoDurationNs } from './duration.ts';

type GoAnswer = bigint | `error: ${string}`;

interface Row {
  readonly input: string;
  readonly go: GoAnswer;
  /** Milliseconds, or 'refused'. */
  readonly ours: number | 'refused';
  /** Why nodepulse refuses what Go reads. */
  readonly deliberately?: string;
}

const NEGATIVE = 'a duration nodepulse takes is a length of time: a minus sign is a mistake, even on zero';

const TABLE: readonly Row[] = [
  { input: '0', go: 0n, ours: 0 },
  { input: '+0', go: 0n, ours: 0 },
  { input: '-0', go: 0n, ours: 'refused', deliberately: NEGATIVE },
  { input: '', go: 'error: time: invalid duration ""', ours: 'refused' },
  { input: '5', go: 'error: time: missing unit in duration "5"', ours: 'refused' },
  { input: '0.5', go: 'error: time: missing unit in duration "0.5"', ours: 'refused' },
  { input: '1h2m3.5s', go: 3_723_500_000_000n, ours: 3_723_500 },
  { input: '+5s', go: 5_000_000_000n, ours: 5_000 },
  { input: '-5s', go: -5_000_000_000n, ours: 'refused', deliberately: NEGATIVE },
  { input: '-0s', go: 0n, ours: 'refused', deliberately: NEGATIVE },
  { input: '+0s', go: 0n, ours: 0 },
  { input: '.5s', go: 500_000_000n, ours: 500 },
  { input: '5.s', go: 5_000_000_000n, ours: 5_000 },
  { input: '.s', go: 'error: time: invalid duration ".s"', ours: 'refused' },
  { input: '-.s', go: 'error: time: invalid duration "-.s"', ours: 'refused' },
  { input: '1.h', go: 3_600_000_000_000n, ours: 3_600_000 },
  { input: '1.5h', go: 5_400_000_000_000n, ours: 5_400_000 },
  { input: '500ms', go: 500_000_000n, ours: 500 },
  { input: '1.25ms', go: 1_250_000n, ours: 1.25 },
  { input: '10s', go: 10_000_000_000n, ours: 10_000 },
  { input: '3m', go: 180_000_000_000n, ours: 180_000 },
  { input: '5m0s', go: 300_000_000_000n, ours: 300_000 },
  { input: '1h30m', go: 5_400_000_000_000n, ours: 5_400_000 },
  { input: '24h', go: 86_400_000_000_000n, ours: 86_400_000 },
  { input: '1s1s', go: 2_000_000_000n, ours: 2_000 },
  { input: '1m1h', go: 3_660_000_000_000n, ours: 3_660_000 },
  { input: '1.0000000001s', go: 1_000_000_000n, ours: 1_000 },
  { input: '1ns', go: 1n, ours: 0.000_001 },
  { input: '0.5ns', go: 0n, ours: 0 },
  { input: '1us', go: 1_000n, ours: 0.001 },
  { input: '1\u00b5s', go: 1_000n, ours: 0.001 },
  { input: '1\u03bcs', go: 1_000n, ours: 0.001 },
  { input: '9223372036854775807ns', go: 9_223_372_036_854_775_807n, ours: 9_223_372_036_854.775 },
  { input: '9223372036854775808ns', go: 'error: time: invalid duration "9223372036854775808ns"', ours: 'refused' },
  { input: '-9223372036854775808ns', go: -9_223_372_036_854_775_808n, ours: 'refused', deliberately: NEGATIVE },
  { input: '2562047h', go: 9_223_369_200_000_000_000n, ours: 9_223_369_200_000 },
  { input: '2562048h', go: 'error: time: invalid duration "2562048h"', ours: 'refused' },
  { input: '2562047h47m16.854775807s', go: 9_223_372_036_854_775_807n, ours: 9_223_372_036_854.775 },
  { input: '2562047h47m16.854775808s', go: 'error: time: invalid duration "2562047h47m16.854775808s"', ours: 'refused' },
  { input: '99999999999999999999ns', go: 'error: time: invalid duration "99999999999999999999ns"', ours: 'refused' },
  { input: '1d', go: 'error: time: unknown unit "d" in duration "1d"', ours: 'refused' },
  { input: '1S', go: 'error: time: unknown unit "S" in duration "1S"', ours: 'refused' },
  { input: '1sec', go: 'error: time: unknown unit "sec" in duration "1sec"', ours: 'refused' },
  { input: '1e3s', go: 'error: time: unknown unit "e" in duration "1e3s"', ours: 'refused' },
  { input: ' 1s', go: 'error: time: invalid duration " 1s"', ours: 'refused' },
  { input: '1s ', go: 'error: time: unknown unit "s " in duration "1s "', ours: 'refused' },
  { input: '1h 2m', go: 'error: time: unknown unit "h " in duration "1h 2m"', ours: 'refused' },
  { input: '1h-2m', go: 'error: time: unknown unit "h-" in duration "1h-2m"', ours: 'refused' },
  { input: '--1s', go: 'error: time: invalid duration "--1s"', ours: 'refused' },
  { input: '+-1s', go: 'error: time: invalid duration "+-1s"', ours: 'refused' },
  { input: '1.5.5s', go: 'error: time: missing unit in duration "1.5.5s"', ours: 'refused' },
  { input: '0x10s', go: 'error: time: unknown unit "x" in duration "0x10s"', ours: 'refused' },
  { input: '1_000ms', go: 'error: time: unknown unit "_" in duration "1_000ms"', ours: 'refused' },
  { input: '1m5', go: 'error: time: missing unit in duration "1m5"', ours: 'refused' },
];

for (const row of TABLE) {
  const name = JSON.stringify(row.input);
  test(`Go reads ${name} as ${typeof row.go === 'bigint' ? `${row.go}ns` : row.go.slice('error: '.length)}`, () => {
    assert.equal(parseGoDurationNs(row.input), typeof row.go === 'bigint' ? row.go : undefined);
  });
  test(`nodepulse reads ${name} as ${row.ours === 'refused' ? `refused${row.deliberately === undefined ? '' : ` (deliberately: ${row.deliberately})`}` : `${row.ours} ms`}`, () => {
    const ms = parseDuration(row.input);
    if (row.ours === 'refused') assert.equal(ms, undefined);
    else if (Math.abs(row.ours) >= 1e9) assert.ok(ms !== undefined && Math.abs(ms - row.ours) < 0.01, `${ms} ≈ ${row.ours}`);
    else assert.equal(ms, row.ours);
  });
}

test('nodepulse refuses only where Go refuses, except the negatives the table marks', () => {
  for (const row of TABLE) {
    const goRefuses = typeof row.go !== 'bigint';
    const weRefuse = row.ours === 'refused';
    assert.equal(weRefuse, goRefuses || row.deliberately !== undefined, `${JSON.stringify(row.input)}: refused only as Go does, or deliberately`);
  }
});

test('what formatDuration prints reads back to the same milliseconds', () => {
  for (const ms of [0, 1, 250, 999, 1_000, 1_500, 10_000, 59_999, 60_000, 185_000, 3_600_000, 3_723_500, 86_400_000]) {
    assert.equal(parseDuration(formatDuration(ms)), ms, formatDuration(ms));
  }
});
