// The soak: its judgement as a table (scripts/soak-verdict.ts), and its 1-minute form run for
// real, as `npm run soak -- --minutes 1` runs it (after the build, which `npm test` does first).
//
// Why the 1-minute form passes reliably (see soakLimitsFor): the agent's RSS climbs for its first
// ~30–36 s (old generation, code space and gRPC/HTTP buffers growing to their working size) and is
// flat to within ~1 % after. The run compares the median RSS of 30–42 s against that of 48–60 s,
// so the climb is outside both windows, and medians ignore the GC saw-tooth; handles fail only
// when the final window's floor is above the baseline's ceiling. A real leak at 10 Hz (say one
// listing kept per relist, ~10 KiB × 10/s) adds ~2 MiB between the windows and still passes in
// one minute; the 30-minute form, with 3-minute windows 24 minutes apart, is the one that catches
// slow leaks, and its result is in docs/reliability.md.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { judgeSoak, median, soakLimitsFor, type SoakSample } from '../../scripts/soak-verdict.ts';
import { AGENT_MAIN, NODE_24, REPO_ROOT } from '../support/agent-process.ts';
import { clock } from '../faults/api-world.ts';

const MIB = 1024 * 1024;
/** The 1-minute soak plus start-up and the summary; 2 minutes before it is killed. */
const SOAK_TIMEOUT_MS = 120_000;

function samples(seconds: number, at: (s: number) => Partial<SoakSample>): SoakSample[] {
  return Array.from({ length: seconds }, (_, i) => ({ atS: i + 1, rssBytes: 100 * MIB, heapUsedBytes: 20 * MIB, handles: 4, lagP99S: 0.01, ...at(i + 1) }));
}

describe('judgeSoak', () => {
  const limits = soakLimitsFor(60);

  test('the 1-minute limits: 30 s of warm-up, 12-s windows that do not overlap', () => {
    assert.deepEqual(limits, { warmupS: 30, windowS: 12, maxRssGrowth: 0.1 });
    assert.deepEqual(soakLimitsFor(30 * 60), { warmupS: 180, windowS: 180, maxRssGrowth: 0.1 });
  });

  const rows: ReadonlyArray<{ what: string; at: (s: number) => Partial<SoakSample>; ok: boolean; problem?: RegExp }> = [
    { what: 'flat', at: () => ({}), ok: true },
    { what: 'growth during the warm-up only', at: (s) => ({ rssBytes: (80 + Math.min(s, 30) * (2 / 3)) * MIB }), ok: true },
    { what: 'a GC saw-tooth of ±15 %', at: (s) => ({ rssBytes: (s % 3 === 0 ? 115 : s % 3 === 1 ? 85 : 100) * MIB }), ok: true },
    { what: '9 % growth', at: (s) => ({ rssBytes: (s > 45 ? 109 : 100) * MIB }), ok: true },
    { what: '11 % growth', at: (s) => ({ rssBytes: (s > 45 ? 111 : 100) * MIB }), ok: false, problem: /^rss: 111\.0 MiB \(final median\) must be at most 10% above 100\.0 MiB \(baseline median\); it grew 11\.0%$/ },
    { what: 'a steady climb of 1 MiB/s', at: (s) => ({ rssBytes: (100 + s) * MIB }), ok: false, problem: /^rss: / },
    { what: 'handles that come and go', at: (s) => ({ handles: s % 2 === 0 ? 6 : 4 }), ok: true },
    { what: 'a handle leak', at: (s) => ({ handles: 4 + Math.floor(s / 5) }), ok: false, problem: /^handles: 13 \(final minimum\) must not be above 12 \(baseline maximum\)$/ },
  ];
  for (const row of rows) {
    test(`${row.what} → ${row.ok ? 'pass' : 'fail'}`, () => {
      const verdict = judgeSoak(samples(60, row.at), limits);
      assert.equal(verdict.ok, row.ok, verdict.problems.join('\n'));
      if (row.problem !== undefined) assert.match(verdict.problems[0] ?? '', row.problem);
    });
  }

  test('a run shorter than warm-up + two windows fails as a run', () => {
    const verdict = judgeSoak(samples(40, () => ({})), limits);
    assert.equal(verdict.ok, false);
    assert.deepEqual(verdict.problems, ['run: 40s must be at least warm-up + 2 windows (54s) long']);
  });

  test('median of odd and even lists', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });
});

describe('npm run soak -- --minutes 1', () => {
  test('the built agent at 10 Hz with churn and API faults keeps RSS and handles flat, and keeps working', { timeout: SOAK_TIMEOUT_MS + 10_000 }, async (t) => {
    assert.ok(AGENT_MAIN.length > 0);
    const dir = mkdtempSync(join(tmpdir(), 'np-soak-test-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const json = join(dir, 'soak.json');
    const child = spawn(NODE_24, [join(REPO_ROOT, 'scripts', 'soak.ts'), '--minutes', '1', '--json', json], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const killer = clock.after(SOAK_TIMEOUT_MS, () => child.kill('SIGKILL'));
    t.after(() => {
      killer.cancel();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    t.diagnostic(out.split('\n').filter((l) => /^(baseline|final|RSS growth|relists|lease renewals|API requests|soak:)/.test(l)).join(' | '));
    assert.equal(code, 0, `the soak failed:\n${out}`);
    const result = JSON.parse(readFileSync(json, 'utf8')) as {
      samples: SoakSample[];
      relists: { perSecond: number };
      lease: { success: number; error: number };
      apiRequests: number;
      faultsArmed: Record<string, number>;
      agentExit: unknown;
    };
    assert.equal(result.agentExit, 'running', 'the agent ran to the end');
    assert.ok(result.samples.length >= 50, `sampled every second (${result.samples.length})`);
    assert.ok(result.relists.perSecond >= 5, `relisted at about 10 Hz (${result.relists.perSecond.toFixed(1)}/s)`);
    assert.ok(result.lease.success >= 30, `renewed about once a second (${result.lease.success})`);
    assert.ok(result.apiRequests >= 60, 'precondition: the API was used');
  });
});
