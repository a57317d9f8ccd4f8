// `npm run bench -- --quick` in CI, so the harness cannot rot: it must finish, print its report
// and write well-formed JSON with every size and both sides. No timing is asserted here: speed
// claims live in the benchmark's output and docs/bench.md, never in tests.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** --quick takes under a minute here; the bound only stops a hung run. */
const RUN_TIMEOUT_MS = 240_000;
const SIDE_FIELDS = ['cpuMsPerRelist', 'p50Ms', 'p99Ms', 'bytes', 'rssMiB'] as const;

interface Side {
  readonly [key: string]: unknown;
}

test('npm run bench -- --quick completes and writes JSON with every size, both sides and every section', { timeout: RUN_TIMEOUT_MS + 10_000 }, (t) => {
  assert.ok(existsSync(join(ROOT, 'dist/src/cli/main.js')), 'precondition: the agent is built (npm test builds it first)');
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-bench-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const jsonPath = join(dir, 'bench.json');

  const run = spawnSync(process.execPath, ['bench/run.ts', '--quick', '--json', jsonPath], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  assert.equal(run.status, 0, `bench exited ${run.status ?? run.signal}: ${run.stderr}`);
  assert.match(run.stdout, /^## nodepulse benchmark \(--quick/m, 'the report says it is quick');
  assert.match(run.stdout, /\| containers \| side \| CPU ms \/ relist \| p50 ms \| p99 ms \| bytes received \| RSS MiB \|/);

  const result = JSON.parse(readFileSync(jsonPath, 'utf8')) as {
    quick: boolean;
    sizes: Array<{ containers: number; floor: Side; nodepulse: Side }>;
    steadyState: Record<string, unknown>;
    lease: Record<string, unknown>;
    latencies: Record<string, Record<string, unknown>>;
    rssBreakdown: Array<{ what: string; rssMiB: number }>;
  };
  assert.equal(result.quick, true);
  assert.deepEqual(result.sizes.map((s) => s.containers), [0, 330, 1_000, 10_000]);
  for (const size of result.sizes) {
    for (const side of ['floor', 'nodepulse'] as const) {
      for (const field of SIDE_FIELDS) {
        const value = size[side][field];
        assert.ok(typeof value === 'number' && Number.isFinite(value) && value >= 0, `${size.containers} ${side}.${field}: ${String(value)} must be a finite number ≥ 0`);
      }
    }
    assert.equal(size.floor['bytes'], size.nodepulse['bytes'], `${size.containers}: both sides received the same answers`);
    assert.equal(size.nodepulse['bytes'] === 0, size.containers === 0, `${size.containers}: bytes received are 0 only for an empty runtime`);
  }
  for (const field of ['cpuPercentOfOneCore', 'rssMiB', 'heapUsedMiB', 'eventLoopLagP99Ms']) {
    assert.equal(typeof result.steadyState[field], 'number', `steadyState.${field}`);
  }
  assert.equal(typeof result.lease['requestsPerRenewal'], 'number');
  assert.ok(Object.keys(result.latencies).includes('simulated runtime'), 'latencies against the simulated runtime');
  assert.deepEqual(result.rssBreakdown[0]?.what, 'bare node');
  assert.ok(result.rssBreakdown.some((line) => line.what.startsWith('every agent module')), 'the whole agent is in the RSS breakdown');
});
