// `nodepulse check -o json` against a real containerd (issue 2, acceptance 5): the built CLI,
// run as users run it, must count exactly what the runtime holds. Its numbers are cross-checked
// with two independent readings: the fixture's own CRI client, and containerd's own metadata
// through `ctr containers ls`, split by the CRI plugin's `io.cri-containerd.kind` label.
//
// The CLI is the built one (dist/, by `npm run build`, which `npm test` runs first), started
// with the project's Node 24. One containerd for the whole file.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { requireContainerd, startContainerd, type ContainerdFixture } from '../fixtures/containerd.ts';

const execFileAsync = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** Bound on one CLI run: Node start-up plus one relist, Status and Version. */
const CLI_TIMEOUT_MS = 30_000;

interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function runCli(args: readonly string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await execFileAsync(NODE, [CLI, ...args], { timeout: CLI_TIMEOUT_MS });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string; killed?: boolean };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Skips (outside CI) or fails (under CI) when dist/ has not been built. */
function requireBuiltCli(t: TestContext): boolean {
  if (existsSync(CLI)) return true;
  const why = `needs the built CLI at ${CLI} (npm run build)`;
  if (process.env['CI'] === 'true') throw new Error(`precondition: this test ${why}`);
  t.skip(why);
  return false;
}

/** Ids of containerd's own containers in the CRI namespace that carry kind=sandbox|container. */
async function ctrIds(cd: ContainerdFixture, kind: 'sandbox' | 'container'): Promise<string[]> {
  const { stdout } = await execFileAsync(
    'ctr',
    ['-a', cd.socketPath, '-n', 'k8s.io', 'containers', 'ls', '-q', `labels."io.cri-containerd.kind"==${kind}`],
    { timeout: CLI_TIMEOUT_MS },
  );
  return stdout.split('\n').filter((line) => line !== '').sort();
}

function nonZero(counts: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
}

test('nodepulse check against a real containerd', async (t) => {
  if (!requireContainerd(t) || !requireBuiltCli(t)) return;
  const cd = await startContainerd();
  t.after(() => cd.close());

  await t.test('-o json reports exactly N sandboxes (some stopped) and M containers (some exited)', async () => {
    // 3 ready pods, each with a running and an exited container; one of them also holds a
    // created, never-started container; and a stopped pod whose container the stop ended.
    const ready: string[] = [];
    for (const name of ['api', 'db', 'cache']) {
      const podId = await cd.cri.runPod(name);
      await cd.cri.runContainer(podId, 'main');
      const oneshot = await cd.cri.runContainer(podId, 'migrate', ['sh', '-c', 'exit 0']);
      await cd.cri.waitForContainerState(oneshot, 'CONTAINER_EXITED');
      ready.push(podId);
    }
    await cd.cri.createContainer(ready[0] ?? assert.fail('precondition: a ready pod'), 'idle');
    const gone = await cd.cri.runPod('done');
    await cd.cri.runContainer(gone, 'main');
    await cd.cri.stopPod(gone);

    const pods = await cd.cri.listPods();
    const containers = await cd.cri.listContainers();
    const N = 4;
    const M = 8;
    assert.equal(pods.length, N, 'precondition: the fixture reads its N pods');
    assert.equal(containers.length, M, 'precondition: the fixture reads its M containers');
    assert.deepEqual(await ctrIds(cd, 'sandbox'), pods.map((p) => p.id).sort(), 'containerd metadata agrees on the sandboxes');
    assert.deepEqual(await ctrIds(cd, 'container'), containers.map((c) => c.id).sort(), 'containerd metadata agrees on the containers');

    const run = await runCli(['check', '--cri-endpoint', cd.endpoint, '-o', 'json']);
    assert.equal(run.code, 0, `exit 0 when the relist answered; stderr: ${run.stderr}`);
    const report = JSON.parse(run.stdout) as {
      endpoint: string;
      endpointRule: string;
      endpointReason: string;
      probed: unknown[];
      runtime: { name: string; version: string };
      pods: number;
      podsReady: number;
      containers: { total: number; byState: Record<string, number> };
      conditions: { type: string; status: boolean; reason: string }[];
    };
    assert.deepEqual(
      [report.endpoint, report.endpointRule, report.endpointReason, report.probed],
      [cd.endpoint, 'configured', 'given by --cri-endpoint', []],
      'the report says which socket and why: given, so nothing was probed',
    );
    assert.equal(report.pods, N);
    assert.equal(report.containers.total, M);
    assert.equal(report.podsReady, pods.filter((p) => p.state === 'SANDBOX_READY').length);
    assert.equal(report.podsReady, 3);
    const fixtureByState: Record<string, number> = {};
    for (const c of containers) fixtureByState[c.state] = (fixtureByState[c.state] ?? 0) + 1;
    assert.deepEqual(nonZero(report.containers.byState), fixtureByState);
    assert.deepEqual(fixtureByState, { CONTAINER_RUNNING: 3, CONTAINER_EXITED: 4, CONTAINER_CREATED: 1 });

    const version = await cd.cri.version();
    assert.equal(report.runtime.name, version.runtimeName);
    assert.equal(report.runtime.version, version.runtimeVersion);
    assert.deepEqual(
      report.conditions.map((c) => [c.type, c.status, c.reason]).sort(),
      (await cd.cri.status()).map((c) => [c.type, c.status, c.reason]).sort(),
    );
  });

  await t.test('with no socket at the given path it exits 1 and names the path', async () => {
    const missing = join(cd.dir, 'no-such-runtime.sock');
    const run = await runCli(['check', '--cri-endpoint', `unix://${missing}`, '-o', 'json']);
    assert.equal(run.code, 1);
    assert.ok(`${run.stdout}${run.stderr}`.includes(missing), `the output names ${missing}: ${run.stdout}${run.stderr}`);
  });

  await t.test('against a killed containerd (its socket refuses) it exits 1 and says the fault is the runtime\'s', async () => {
    await cd.kill();
    const run = await runCli(['check', '--cri-endpoint', cd.endpoint]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^relist: +FAILED: unavailable \(refused, the runtime's fault\): .*connect ECONNREFUSED/m);
  });
});
