// `npm run bench -- --quick` in CI, so the harness cannot rot: it must finish, print its report
// and write well-formed JSON with every row, every side and every section. No speed is asserted
// here: speed claims live in the benchmark's output and docs/bench.md, never in tests.
//
// The real parts are part of what is checked: rows on a real containerd and the kubelet side
// (kubelet's own CRI client, built with Go). Under CI=true a missing one fails this test (the
// bench itself exits 1 then); outside CI the test checks what the machine can run and says what
// it left out.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { REQUIRED_EXECUTABLES } from '../fixtures/containerd.ts';
import { findExecutable, isRoot } from '../support/require.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** --quick takes about two minutes here with the containerd rows; the bound only stops a hung run. */
const RUN_TIMEOUT_MS = 420_000;
const SIDE_FIELDS = ['cpuMsPerRelist', 'p50Ms', 'p99Ms', 'rssMiB'] as const;
const ONE_HZ_FIELDS = ['cpuMsPerSecond', 'percentOfOneCore', 'p50Ms', 'rssMiB'] as const;
const SIMULATED_SIZES = [0, 330, 1_000, 10_000];

interface Side {
  readonly [key: string]: unknown;
}

interface Row {
  readonly runtime: string;
  readonly containers: number;
  readonly floor: Side;
  readonly nodepulse: Side;
  readonly kubelet?: Side;
  readonly transport: Side;
}

/** Each field a finite number ≥ 0. */
function assertFigures(values: Side, fields: readonly string[], where: string): void {
  for (const field of fields) {
    const value = values[field];
    assert.ok(typeof value === 'number' && Number.isFinite(value) && value >= 0, `${where}.${field}: ${String(value)} must be a finite number ≥ 0`);
  }
}

test('npm run bench -- --quick completes and writes JSON with every row, every side and every section', { timeout: RUN_TIMEOUT_MS + 10_000 }, (t) => {
  assert.ok(existsSync(join(ROOT, 'dist/src/cli/main.js')), 'precondition: the agent is built (npm test builds it first)');
  const ci = process.env['CI'] === 'true';
  const containerd = REQUIRED_EXECUTABLES.every((tool) => findExecutable(tool) !== undefined) && isRoot();
  const go = findExecutable('go') !== undefined;
  if (ci) {
    assert.ok(containerd, `precondition: CI runs as root with ${REQUIRED_EXECUTABLES.join(', ')} on PATH`);
    assert.ok(go, 'precondition: CI has Go on PATH for the kubelet side');
  }
  if (!containerd) t.diagnostic('no real containerd here (needs root and containerd, ctr, runc, busybox): its rows are not checked');
  if (!go) t.diagnostic('no Go on PATH: the kubelet side is not checked');
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
  assert.match(run.stdout, /\| runtime \| containers \| side \| CPU ms \/ relist \| p50 ms \| p99 ms \| bytes received \| RSS MiB \|/);

  const result = JSON.parse(readFileSync(jsonPath, 'utf8')) as {
    quick: boolean;
    sizes: Row[];
    containerd?: { pods: number; containers: number };
    steadyState: Record<string, unknown>;
    lease: Record<string, unknown>;
    latencies: Record<string, Record<string, unknown>>;
    oneHz?: { runtime: string; containers: number; seconds: number } & Record<'floor' | 'nodepulse' | 'transport' | 'kubelet', Side | undefined>;
    rssBreakdown: Array<{ what: string; rssMiB: number }>;
  };
  assert.equal(result.quick, true);
  const simulated = result.sizes.filter((s) => s.runtime === 'simulated');
  const real = result.sizes.filter((s) => s.runtime === 'containerd');
  assert.deepEqual(simulated.map((s) => s.containers), SIMULATED_SIZES);
  if (containerd) {
    assert.equal(real.length, 2, 'two rows on the real containerd');
    assert.equal(real[0]?.containers, 0);
    assert.equal(real[1]?.containers, result.containerd?.containers, 'the second row has every container the node was filled with');
    assert.ok((real[1]?.containers ?? 0) > 0);
  }
  assert.deepEqual([...new Set(result.sizes.map((s) => s.runtime))].sort(), containerd ? ['containerd', 'simulated'] : ['simulated']);
  for (const size of result.sizes) {
    const where = `${size.runtime} ${size.containers}`;
    const sides = go ? (['floor', 'nodepulse', 'kubelet', 'transport'] as const) : (['floor', 'nodepulse', 'transport'] as const);
    for (const side of sides) {
      const values = size[side];
      assert.ok(values !== undefined, `${where}: the ${side} side ran`);
      assertFigures(values, SIDE_FIELDS, `${where} ${side}`);
      // The transport side never decodes, so it has no items to count; its bytes are checked below.
      if (side !== 'transport') {
        assertFigures(values, ['items'], `${where} ${side}`);
        assert.equal(values['items'], size.floor['items'], `${where}: ${side} received the floor's items`);
      }
    }
    assert.equal(size.transport['items'], undefined, `${where}: the transport side counts no items`);
    assert.equal(size.floor['bytes'], size.nodepulse['bytes'], `${where}: floor and nodepulse received the same answers`);
    assert.equal(size.transport['bytes'], size.floor['bytes'], `${where}: transport received the floor's answers`);
    assert.equal(size.nodepulse['bytes'] === 0, size.containers === 0, `${where}: bytes received are 0 only for an empty runtime`);
  }
  if (containerd) {
    const oneHz = result.oneHz;
    assert.ok(oneHz !== undefined, 'the relist at 1 Hz ran on the real containerd');
    assert.equal(oneHz.runtime, 'containerd');
    assert.equal(oneHz.containers, result.containerd?.containers, 'the relist at 1 Hz lists every container the node was filled with');
    assert.equal(oneHz.seconds, 8, '--quick measures 8 s at 1 Hz');
    for (const side of go ? (['floor', 'nodepulse', 'kubelet', 'transport'] as const) : (['floor', 'nodepulse', 'transport'] as const)) {
      const values: Side | undefined = oneHz[side];
      assert.ok(values !== undefined, `1 Hz: the ${side} side ran`);
      assertFigures(values, ONE_HZ_FIELDS, `1 Hz ${side}`);
      assert.equal(values['relists'], oneHz.seconds, `1 Hz ${side}: one measured relist a second`);
    }
    assert.match(run.stdout, /^### Relist at the agent's rate: every side once a second, together/m, 'the report has the 1 Hz section');
  } else {
    assert.equal(result.oneHz, undefined, 'no relist at 1 Hz without a real containerd');
  }
  for (const field of ['cpuPercentOfOneCore', 'rssMiB', 'rssAnonMiB', 'rssFileMiB', 'heapUsedMiB', 'eventLoopLagP99Ms']) {
    assert.equal(typeof result.steadyState[field], 'number', `steadyState.${field}`);
  }
  assert.equal(result.steadyState['runtime'], containerd ? 'containerd' : 'simulated', 'the steady state runs on the real containerd where there is one');
  assert.equal(typeof result.lease['requestsPerRenewal'], 'number');
  assert.ok(Object.keys(result.latencies).includes('simulated runtime'), 'latencies against the simulated runtime');
  assert.deepEqual(result.rssBreakdown[0]?.what, 'bare node');
  assert.ok(result.rssBreakdown.some((line) => line.what.startsWith('every agent module')), 'the whole agent is in the RSS breakdown');
});
