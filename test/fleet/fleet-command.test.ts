// `nodepulse fleet` against the API stand-in: a single listing, --observe on a manual clock,
// flag errors, and the kubectl plugin through the real kubectl.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { KUBECONFIG_CONTEXT, kubeconfigDocument, writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { EXIT_API_FAILED, EXIT_BAD_INPUT } from '../../src/cli/command-io.ts';
import { EXIT_ALL_FRESH, EXIT_NOT_FRESH, runFleet } from '../../src/cli/fleet-command.ts';
import { k8sTools } from '../support/k8s-tools.ts';
import { agentLease, LEASE_NAMESPACE, realisticNode } from './fleet-fixtures.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const real = new SystemClock();

interface Fixture {
  readonly server: ApiServerHandle;
  readonly kubeconfig: string;
  readonly dir: string;
}

async function fixture(t: TestContext, nowMicros: number, options: { readonly watchList?: boolean } = {}): Promise<Fixture> {
  const server = await startApiServer({ clock: real, ...options });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-fleet-'));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: server.url });
  const day = 86_400_000_000;
  const old = nowMicros - 30 * day;
  const put = (o: Record<string, unknown>): void => {
    server.store.put(o as Parameters<typeof server.store.put>[0]);
  };
  put(realisticNode('node-fresh', 1, { createdMicros: old, condition: { status: 'False', reason: 'RelistHealthy' } }));
  put(realisticNode('node-silent', 2, { createdMicros: old, condition: { status: 'False', reason: 'RelistHealthy' } }));
  put(realisticNode('node-sick', 3, { createdMicros: old, condition: { status: 'True', reason: 'RelistStale' } }));
  put(realisticNode('node-cordoned', 4, { createdMicros: old, unschedulable: true }));
  put(realisticNode('node-nolease', 5, { createdMicros: old }));
  put(realisticNode('node-windows', 6, { createdMicros: old, os: 'windows' }));
  put(realisticNode('node-young', 7, { createdMicros: nowMicros - 10_000_000 }));
  put(agentLease('node-fresh', nowMicros - 3_000_000));
  put(agentLease('node-silent', nowMicros - 3_600_000_000));
  put(agentLease('node-sick', nowMicros - 3_600_000_000));
  put(agentLease('node-cordoned', nowMicros - 3_600_000_000));
  return { server, kubeconfig, dir };
}

function capture(): { out: string[]; err: string[]; io: { stdout: { write(s: string): void }; stderr: { write(s: string): void }; clock: SystemClock } } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: { write: (s) => void out.push(s) }, stderr: { write: (s) => void err.push(s) }, clock: real } };
}

interface JsonNode {
  node: string;
  verdict: string;
  judged: boolean;
  notJudged?: string;
  cordoned: boolean;
  condition: { status: string; reason: string } | null;
  leaseAgeSeconds: number | null;
}

test('fleet: a single listing judges by wall-clock age, says so, and exits 1 when a judged node is not Fresh', async (t) => {
  const f = await fixture(t, real.wallMicros());
  const c = capture();
  const code = await runFleet(['--kubeconfig', f.kubeconfig, '-o', 'json'], { ...c.io, env: {} });
  assert.equal(code, 1, c.err.join(''));
  const doc = JSON.parse(c.out.join('')) as { basis: string; note: string; nodes: JsonNode[]; summary: Record<string, number> };
  assert.equal(doc.basis, 'wall-clock');
  assert.match(doc.note, /single listing cannot see a lease advance/);
  const by = new Map(doc.nodes.map((n) => [n.node, n]));
  assert.deepEqual(
    doc.nodes.map((n) => [n.node, n.verdict, n.judged, n.notJudged ?? '']),
    [
      ['node-cordoned', 'Stale', true, ''],
      ['node-fresh', 'Fresh', true, ''],
      ['node-nolease', 'Missing', true, ''],
      ['node-sick', 'Stale', true, ''],
      ['node-silent', 'Stale', true, ''],
      ['node-windows', 'Missing', false, 'selector'],
      ['node-young', 'Missing', false, 'too-young'],
    ],
  );
  assert.equal(by.get('node-cordoned')?.cordoned, true);
  assert.deepEqual(by.get('node-sick')?.condition, { status: 'True', reason: 'RelistStale', message: '' });
  assert.ok(Math.abs((by.get('node-silent')?.leaseAgeSeconds ?? 0) - 3600) < 5);
  assert.deepEqual(doc.summary, { judged: 5, fresh: 1, stale: 3, missing: 1, notJudged: 2, allFresh: false });
});

test('fleet: the table shows verdict, lease age and condition per node, and the rule that judged them', async (t) => {
  const f = await fixture(t, real.wallMicros());
  const c = capture();
  const code = await runFleet(['--kubeconfig', f.kubeconfig], { ...c.io, env: {} });
  assert.equal(code, 1);
  const text = c.out.join('');
  assert.match(text, /^NODE\s+VERDICT\s+JUDGED\s+LEASE AGE\s+MOVED\s+CONDITION\s+REASON$/m);
  assert.match(text, /^node-sick\s+Stale\s+yes\s+1h0m\ds\s+-\s+True\s+RelistStale$/m);
  assert.match(text, /^node-windows\s+Missing\s+no \(selector\)/m);
  assert.match(text, /Judged by wall-clock age/);
});

test('fleet: exits 0 when every judged node is Fresh (a selector can narrow the fleet)', async (t) => {
  const f = await fixture(t, real.wallMicros());
  const c = capture();
  const code = await runFleet(['--kubeconfig', f.kubeconfig, '--node-selector', 'kubernetes.io/hostname=node-fresh', '-o', 'json'], { ...c.io, env: {} });
  assert.equal(code, 0, c.err.join(''));
});

test('fleet: --help documents every exit code, each telling a verdict apart from a failure to get one', async () => {
  const c = capture();
  assert.equal(await runFleet(['--help'], { ...c.io, env: {} }), 0);
  const help = c.out.join('');
  assert.deepEqual([EXIT_ALL_FRESH, EXIT_NOT_FRESH, EXIT_BAD_INPUT, EXIT_API_FAILED], [0, 1, 2, 3]);
  assert.match(help, /^ {2}0 {2}every judged node is Fresh$/m);
  assert.match(help, /^ {2}1 {2}some judged node is Stale or Missing$/m);
  assert.match(help, /^ {2}2 {2}a flag or the kubeconfig is wrong$/m);
  assert.match(help, /^ {2}3 {2}could not ask the API \(unreachable, timed out, credentials refused, an error answer\)$/m);
  assert.match(help, /^ +--context NAME\n +the kubeconfig context to use/m);
});

test('fleet: a --context the kubeconfig does not define exits 2 naming the contexts it does', async (t) => {
  const f = await fixture(t, real.wallMicros());
  const c = capture();
  const code = await runFleet(['--kubeconfig', f.kubeconfig, '--context', 'prod'], { ...c.io, env: {} });
  assert.equal(code, EXIT_BAD_INPUT);
  assert.equal(c.err.join(''), `nodepulse fleet: context: "prod" must name a context of ${f.kubeconfig} (nodepulse-stand-in)\n`);
  assert.equal(f.server.requests.all().length, 0, 'nothing was asked of the API');
});

test('fleet: a single listing reads a streaming list where served, and pages where refused, to the same verdicts', async (t) => {
  const outputs: string[] = [];
  for (const watchList of [true, false]) {
    const now = real.wallMicros();
    const f = await fixture(t, now, { watchList });
    const c = capture();
    assert.equal(await runFleet(['--kubeconfig', f.kubeconfig, '-o', 'json'], { ...c.io, env: {} }), EXIT_NOT_FRESH, c.err.join(''));
    const asked = f.server.requests.all().map((r) => `${r.status ?? 0} ${r.path}${r.query['watch'] === 'true' ? ' watch' : ''}${r.query['sendInitialEvents'] === 'true' ? ' streaming' : ''}${r.query['limit'] === undefined ? '' : ' limit'}`).sort();
    assert.deepEqual(asked, watchList
      ? [`200 /api/v1/nodes watch streaming`, `200 /apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases watch streaming`]
      : [`200 /api/v1/nodes limit`, `200 /apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases limit`,
          `422 /api/v1/nodes watch streaming`, `422 /apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases watch streaming`]);
    const doc = JSON.parse(c.out.join('')) as { nodes: JsonNode[] };
    outputs.push(JSON.stringify(doc.nodes.map((n) => [n.node, n.verdict, n.judged, n.notJudged ?? '', n.cordoned, n.condition?.reason ?? ''])));
  }
  assert.equal(outputs[0], outputs[1]);
  assert.equal(JSON.parse(outputs[0] ?? '[]').length, 7, 'precondition: every node of the fixture is reported');
});

test('fleet: an API that answers with an error is exit 3, not a verdict', async (t) => {
  const f = await fixture(t, real.wallMicros());
  f.server.auth.setTokens({ 'some-other-token': 'someone' });
  const c = capture();
  const code = await runFleet(['--kubeconfig', f.kubeconfig], { ...c.io, env: {} });
  assert.equal(code, EXIT_API_FAILED);
  assert.match(c.err.join(''), /^nodepulse fleet: LIST \/\S+: HTTP 401 Unauthorized: Unauthorized\n$/, 'refused on the streaming list, then on the pages it falls back to');
  assert.deepEqual(c.out, []);
});

test('fleet: --observe shorter than the grace period exits 2 with that error', async () => {
  const c = capture();
  const code = await runFleet(['--observe', '10s', '--grace', '50s'], { ...c.io, env: {} });
  assert.equal(code, 2);
  assert.equal(c.err.join(''), 'observe: 10s must be at least grace (50s): a shorter watch cannot tell a silent lease from a live one\n');
});

test('fleet: --context picks the kubeconfig context; without it, the current-context is read', async (t) => {
  const f = await fixture(t, real.wallMicros());
  const doc = kubeconfigDocument({ server: f.server.url }) as { clusters: unknown[]; users: unknown[]; contexts: unknown[] } & Record<string, unknown>;
  doc.clusters.push({ name: 'gone', cluster: { server: 'http://127.0.0.1:1', 'insecure-skip-tls-verify': true } });
  doc.contexts.push({ name: 'gone', context: { cluster: 'gone', user: KUBECONFIG_CONTEXT } });
  doc['current-context'] = 'gone';
  const path = join(f.dir, 'two-contexts');
  writeFileSync(path, stringify(doc));

  const current = capture();
  assert.equal(await runFleet(['--kubeconfig', path, '-o', 'json'], { ...current.io, env: {} }), EXIT_API_FAILED);
  assert.equal(current.out.join(''), '', 'precondition: the current-context\'s cluster cannot be read');
  assert.match(current.err.join(''), /ECONNREFUSED/);

  const picked = capture();
  assert.equal(await runFleet(['--kubeconfig', path, '--context', KUBECONFIG_CONTEXT, '-o', 'json'], { ...picked.io, env: {} }), 1, picked.err.join(''));
  const read = JSON.parse(picked.out.join('')) as { nodes: JsonNode[] };
  assert.equal(read.nodes.length, 7, 'the stand-in was read through the named context');

  const missing = capture();
  assert.equal(await runFleet(['--kubeconfig', path, '--context', 'nope'], { ...missing.io, env: {} }), EXIT_BAD_INPUT);
  assert.match(missing.err.join(''), /^nodepulse fleet: context: "nope" must name a context of /);
});

test('fleet: --observe judges on the reader\'s clock: a lease that moves is Fresh, one an hour old but seen first is Stale only after grace', async (t) => {
  const clock = new ManualClock({ startWallMs: Math.floor(real.wallMicros() / 1000) });
  const f = await fixture(t, clock.wallMicros());
  // The reader's wall clock is an hour off: under the reader's-clock rule it changes nothing.
  clock.wallOffsetMs = 3_600_000;
  const c = capture();
  const run = runFleet(['--kubeconfig', f.kubeconfig, '--observe', '1m', '-o', 'json'], { ...c.io, env: {}, clock });
  let done = false;
  void run.finally(() => {
    done = true;
  });
  // The informers list and watch over real HTTP; move the reader's clock 1 s at a time and let
  // the events in between. node-fresh's agent renews every 10 s of that clock.
  for (let i = 0; i < 200 && !done; i++) {
    await real.sleep(5);
    if (i < 5) continue; // let the informers list first
    if (i % 10 === 0) {
      f.server.store.put(agentLease('node-fresh', clock.wallMicros() - 3_600_000_000) as Parameters<typeof f.server.store.put>[0]);
    }
    await clock.advance(1_000);
  }
  const code = await run;
  assert.equal(code, 1, c.err.join(''));
  const doc = JSON.parse(c.out.join('')) as { basis: string; nodes: Array<JsonNode & { seenMoving?: boolean }> };
  assert.equal(doc.basis, 'reader-clock');
  const by = new Map(doc.nodes.map((n) => [n.node, n]));
  assert.equal(by.get('node-fresh')?.verdict, 'Fresh');
  assert.equal(by.get('node-fresh')?.seenMoving, true);
  assert.equal(by.get('node-silent')?.verdict, 'Stale');
  assert.equal(by.get('node-nolease')?.verdict, 'Missing');
});

test('fleet: runs as a kubectl plugin through the real kubectl', async (t) => {
  const main = join(ROOT, 'dist', 'src', 'cli', 'main.js');
  const fleetJs = join(ROOT, 'dist', 'src', 'cli', 'fleet-command.js');
  if (!existsSync(main) || !existsSync(fleetJs)) {
    if (process.env['CI'] === 'true') throw new Error(`precondition: ${main} must be built (npm run build) before the tests`);
    t.skip('needs npm run build (dist/src/cli/main.js)');
    return;
  }
  const { kubectl } = k8sTools();
  const f = await fixture(t, real.wallMicros());
  const bin = join(f.dir, 'bin');
  mkdirSync(bin);
  const plugin = join(bin, 'kubectl-nodepulse');
  writeFileSync(plugin, `#!/bin/sh\nexec ${join(ROOT, 'node_modules', '.bin', 'node')} ${main} "$@"\n`);
  chmodSync(plugin, 0o755);
  const env = { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, KUBECONFIG: f.kubeconfig, HOME: f.dir };
  const list = await promisify(execFile)(kubectl, ['plugin', 'list'], { env }).catch((e: { stdout: string }) => e);
  assert.match(list.stdout, /kubectl-nodepulse/, 'precondition: kubectl finds the plugin');
  const result = await promisify(execFile)(kubectl, ['nodepulse', 'fleet', '-o', 'json', '--lease-namespace', LEASE_NAMESPACE], { env, timeout: 30_000 })
    .then((r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }))
    .catch((e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }));
  assert.equal(result.code, 1, result.stderr);
  const doc = JSON.parse(result.stdout) as { basis: string; nodes: JsonNode[] };
  assert.equal(doc.basis, 'wall-clock');
  assert.equal(doc.nodes.find((n) => n.node === 'node-fresh')?.verdict, 'Fresh');
});
