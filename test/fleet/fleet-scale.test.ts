// 5,000 agent leases and 5,000 realistic Nodes in the API stand-in, for what the stand-in's request
// record can show exactly at that size:
// - `nodepulse fleet -o json` as a process judges all 5,000 from one streaming list per collection;
// - the controller as a process, over TLS as in a cluster, judges all 5,000 from one streaming
//   list per informer, and in steady state (500 lease renewals a second) sends nothing but its
//   election renewals: no LIST, no second watch, the streams it opened still the only ones.
// How long fleet takes and how much memory the controller holds at 5,000 Nodes are measured on a
// real API server (`npm run scale:cluster`, test/scale/, docs/bench.md): this test prints its
// own readings as diagnostics only, because a stand-in's timings and a process's RSS beside it say
// nothing about a cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { createTestPki } from '../../src/stand-ins/api-server/test-pki.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { agentLease, realisticNode } from './fleet-fixtures.ts';
import { AGENT_MAIN as MAIN, NODE_24 as NODE } from '../support/agent-process.ts';

/** The built CLI, as users run it: TypeScript through Node's type stripper would add ~19 MiB to the RSS measured. */
const real = new SystemClock();
const FLEET = 5_000;

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

async function waitFor(what: string, ok: () => boolean, withinMs: number): Promise<void> {
  const start = real.monotonicMs();
  while (real.monotonicMs() - start <= withinMs) {
    if (ok()) return;
    await real.sleep(50);
  }
  assert.fail(`${what}: not within ${withinMs} ms`);
}

test(`fleet at scale: ${FLEET} leases and realistic Nodes — fleet -o json time, controller RSS, steady-state requests`, { timeout: 300_000 }, async (t) => {
  assert.ok(existsSync(MAIN), `precondition: ${MAIN} must be built (npm run build) before the tests`);
  const pki = createTestPki();
  // The real server's watch cache is kept per resource; the stand-in's history is shared, and 500
  // lease writes a second would expire a nodes watch that starts 2 s (1,000 events) after its
  // list, which a loaded machine sees after a 31 MiB list. 40 s of history keeps the watch valid.
  const server = await startApiServer({ clock: real, tls: pki.server, tokens: { 'token-ctl': 'controller', 'token-cli': 'cli' }, historySize: 20_000 });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-scale-'));
  const running: { controller?: ChildProcess; renewer?: Promise<void> } = {};
  let renewing = true;
  t.after(async () => {
    renewing = false;
    await running.renewer;
    if (running.controller !== undefined && running.controller.exitCode === null) running.controller.kill('SIGKILL');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const put = (o: Record<string, unknown>): void => {
    server.store.put(o as Parameters<ApiServerHandle['store']['put']>[0]);
  };
  const now = real.wallMicros();
  for (let i = 0; i < FLEET; i++) {
    const name = `node-${String(i).padStart(5, '0')}`;
    put(realisticNode(name, i, { createdMicros: now - 86_400_000_000, condition: { status: 'False', reason: 'RelistHealthy' } }));
    put(agentLease(name, now));
  }
  const nodeBytes = JSON.stringify(server.store.get('nodes', undefined, 'node-00000')).length;
  t.diagnostic(`one Node is ${nodeBytes} bytes of JSON; ${FLEET} Nodes ≈ ${((nodeBytes * FLEET) / 1024 / 1024).toFixed(1)} MiB`);

  const cliConfig = join(dir, 'cli.kubeconfig');
  const ctlConfig = join(dir, 'ctl.kubeconfig');
  writeKubeconfig(cliConfig, { server: server.url, ca: pki.ca, token: 'token-cli' });
  writeKubeconfig(ctlConfig, { server: server.url, ca: pki.ca, token: 'token-ctl' });

  // 1. nodepulse fleet -o json, as a user runs it.
  const started = real.monotonicMs();
  const fleet = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(NODE, [MAIN, 'fleet', '--kubeconfig', cliConfig, '-o', 'json'], { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) => {
      done({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), stdout, stderr });
    });
  });
  const fleetMs = real.monotonicMs() - started;
  assert.equal(fleet.code, 0, fleet.stderr);
  const doc = JSON.parse(fleet.stdout) as { summary: { judged: number; fresh: number } };
  assert.deepEqual([doc.summary.judged, doc.summary.fresh], [FLEET, FLEET]);
  t.diagnostic(`nodepulse fleet -o json over ${FLEET} nodes: ${fleetMs.toFixed(0)} ms wall (process start included)`);
  const fleetAsked = server.requests.all().filter((r) => r.user === 'cli').map((r) => `${r.method} ${r.path}${r.query['sendInitialEvents'] === 'true' ? ' (streaming list)' : ''}`).sort();
  assert.deepEqual(fleetAsked, ['GET /api/v1/nodes (streaming list)', 'GET /apis/coordination.k8s.io/v1/namespaces/nodepulse/leases (streaming list)'], 'one streaming list per collection');

  // 2. The agents renew every 10 s, spread evenly: 500 lease writes a second.
  running.renewer = (async () => {
    let i = 0;
    while (renewing) {
      const stamp = real.wallMicros();
      for (let k = 0; k < 50; k++, i = (i + 1) % FLEET) put(agentLease(`node-${String(i).padStart(5, '0')}`, stamp));
      await real.sleep(100);
    }
  })();

  // 3. The controller, leading alone.
  const logs: string[] = [];
  const controller = spawn(NODE, [MAIN, 'controller', '--kubeconfig', ctlConfig, '--namespace', 'nodepulse-system', '--identity', 'ctl', '--http-address', '127.0.0.1:0', '--monitor-period', '5s'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.controller = controller;
  controller.stdout?.on('data', (d: Buffer) => logs.push(d.toString('utf8')));
  controller.stderr?.on('data', (d: Buffer) => logs.push(d.toString('utf8')));
  await waitFor('controller started', () => /"msg":"Controller started"/.test(logs.join('')), 30_000);
  const port = Number(/"http":"127\.0\.0\.1:(\d+)"/.exec(logs.join(''))?.[1]);
  let metrics = '';
  await waitFor(
    'the controller judged the whole fleet',
    () => new RegExp(`^nodepulse_controller_nodes\\{verdict="fresh"\\} ${FLEET}$`, 'm').test(metrics) || (void refresh(), false),
    90_000,
  );
  async function refresh(): Promise<void> {
    try {
      metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    } catch {
      // not up yet
    }
  }
  assert.match(metrics, /^nodepulse_controller_leading 1$/m);
  const rssSynced = rssMiB(controller.pid ?? 0);

  // 4. Steady state: a 20 s window (10 election retry periods, 4 monitor periods). It opens once
  // both informers' streaming lists are recorded (a precondition of this test, not a request of
  // the steady state).
  const watching = (resource: string): boolean =>
    server.requests.all().some((r) => r.user === 'controller' && r.query['watch'] === 'true' && r.path.endsWith(`/${resource}`));
  await waitFor('both informers watching (leases and nodes)', () => watching('leases') && watching('nodes'), 60_000);
  const before = server.requests.all().length;
  await real.sleep(20_000);
  const window = server.requests.all().slice(before - server.requests.all().length).filter((r) => r.user === 'controller');
  const summary = new Map<string, number>();
  for (const r of window) {
    const key = `${r.method} ${r.path}${r.query['watch'] === 'true' ? ' (watch)' : ''}`;
    summary.set(key, (summary.get(key) ?? 0) + 1);
  }
  const rssSteady = rssMiB(controller.pid ?? 0);
  t.diagnostic(`controller RSS: ${rssSynced.toFixed(1)} MiB once synced, ${rssSteady.toFixed(1)} MiB after 20 s of 500 lease renewals/s`);
  t.diagnostic(`controller requests in the 20 s window: ${JSON.stringify(Object.fromEntries(summary))}`);
  for (const r of window) {
    assert.equal(`${r.method} ${r.path}`, 'PUT /apis/coordination.k8s.io/v1/namespaces/nodepulse-system/leases/nodepulse-controller', 'only election renewals in steady state');
  }
  // About one renewal per 2 s retry period; a loaded machine may delay a few.
  assert.ok(window.length >= 5 && window.length <= 11, `about one renewal per retry period (${window.length})`);
  // The streams opened at start are still the only reads of either collection: no LIST, no re-watch.
  const all = server.requests.all().filter((r) => r.user === 'controller' && r.method === 'GET' && r.path.endsWith('/leases') || r.user === 'controller' && r.path === '/api/v1/nodes');
  t.diagnostic(`controller list/watch requests since start: ${all.length}`);
  assert.deepEqual(all.map((r) => `${r.path} ${r.query['watch'] === 'true' && r.query['sendInitialEvents'] === 'true' ? 'streaming list' : 'other'}`).sort(), [
    '/api/v1/nodes streaming list',
    '/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases streaming list',
  ], 'one streaming list per informer, and nothing else');

  controller.kill('SIGTERM');
  await waitFor('controller exits', () => controller.exitCode !== null, 15_000);
});
