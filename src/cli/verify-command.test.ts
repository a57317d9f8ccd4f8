// `nodepulse verify` end to end over real HTTP on loopback: its flags, the kubeconfig, the pod
// listing and the Lease read through the reader's API client, and /readyz through its own GET,
// against a strict loopback API (it answers only the two requests the check may make, and
// counts them) and a loopback agent port. Time is a manual clock. The stand-in API server serves
// no pods, so this API is the test's own; the real cluster's run is `helm test`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { writeKubeconfig } from '../stand-ins/api-server/kubeconfig.ts';
import { EXIT_BAD_INPUT } from './command-io.ts';
import { EXIT_FAILED, EXIT_PASSED, httpReadyz, runVerify } from './verify-command.ts';

const SELECTOR = 'app.kubernetes.io/component=agent,app.kubernetes.io/name=np';

async function listen(t: TestContext, handler: (req: IncomingMessage, res: ServerResponse) => void, host = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return { server, port: (server.address() as AddressInfo).port };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Runs a command on the manual clock: advances it in small steps while real I/O completes. */
async function onManualClock(clock: ManualClock, run: Promise<number>): Promise<number> {
  let code: number | undefined;
  void run.then((c) => { code = c; });
  for (let i = 0; i < 400 && code === undefined; i++) await clock.advance(50);
  assert.ok(code !== undefined, 'precondition: the command ends within 20 s of the manual clock');
  return code;
}

test('verify, end to end: lists the agent pods, GETs /readyz on the metrics port, sees the Lease move, exits 0', async (t) => {
  const agent = await listen(t, (req, res) => {
    assert.equal(req.url, '/readyz');
    res.end('ok\n');
  });
  const requests: string[] = [];
  let leaseReads = 0;
  const api = await listen(t, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '', 'http://x');
    if (url.pathname === '/api/v1/namespaces/ops/pods') {
      assert.deepEqual(Object.fromEntries(url.searchParams), { labelSelector: SELECTOR, limit: '500' });
      json(res, 200, {
        kind: 'PodList',
        items: [{
          metadata: { name: 'np-x7k2q' },
          spec: { nodeName: 'node-a', containers: [{ name: 'agent', ports: [{ name: 'metrics', containerPort: agent.port }] }] },
          status: { phase: 'Running', podIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
        }],
      });
      return;
    }
    if (url.pathname === '/apis/coordination.k8s.io/v1/namespaces/node-leases/leases/node-a') {
      leaseReads++;
      json(res, 200, { kind: 'Lease', metadata: { name: 'node-a' }, spec: { renewTime: leaseReads < 2 ? '2026-01-02T03:04:00.000000Z' : '2026-01-02T03:04:10.000000Z' } });
      return;
    }
    json(res, 404, { kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404, message: 'not served here' });
  });
  const dir = mkdtempSync(join(tmpdir(), 'chart-verify-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: `http://127.0.0.1:${api.port}`, token: 'test-token' });
  const out: string[] = [];
  const err: string[] = [];
  const clock = new ManualClock();
  const code = await onManualClock(clock, runVerify(
    ['--kubeconfig', kubeconfig, '--agent-namespace=ops', `--agent-selector=${SELECTOR}`, '--lease-namespace=node-leases', '--timeout=30s'],
    { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {}, clock },
  ));
  assert.equal(code, EXIT_PASSED, err.join(''));
  assert.deepEqual(out.join('').split('\n'), [
    `agent pod np-x7k2q on node node-a at 127.0.0.1:${agent.port} (Ready; 1 usable of the listed agent pods)`,
    `/readyz of pod np-x7k2q (127.0.0.1:${agent.port}) answered 200: ok`,
    'lease node-leases/node-a renewed: renewTime 2026-01-02T03:04:00.000000Z, then 2026-01-02T03:04:10.000000Z 1s later',
    'verify passed',
    '',
  ]);
  assert.deepEqual(requests, [
    `GET /api/v1/namespaces/ops/pods?labelSelector=${encodeURIComponent(SELECTOR)}&limit=500`,
    'GET /apis/coordination.k8s.io/v1/namespaces/node-leases/leases/node-a',
    'GET /apis/coordination.k8s.io/v1/namespaces/node-leases/leases/node-a',
  ]);
});

test('verify refuses bad flags with one line each and exit 2, and prints its help with exit 0', async () => {
  const err: string[] = [];
  const io = { stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) }, env: {}, clock: new ManualClock() };
  assert.equal(await runVerify(['--agent-selector=a b', '--timeout=0s', '--agent-namespace=Ops'], io), EXIT_BAD_INPUT);
  assert.deepEqual(err.join('').trim().split('\n').map((l) => l.split(' must be ')[0]), ['agentNamespace: Ops', 'agentSelector: "a b"', 'timeout: 0s']);
  let help = '';
  assert.equal(await runVerify(['--help'], { ...io, stdout: { write: (s: string) => (help += s) } }), EXIT_PASSED);
  assert.match(help, /--agent-selector SELECTOR/);
});

test('verify exits 1 naming /readyz when the agent answers 503 until --timeout', async (t) => {
  const agent = await listen(t, (_req, res) => {
    res.writeHead(503);
    res.end('not ready: config not loaded\n');
  });
  const api = await listen(t, (req, res) => {
    json(res, 200, {
      kind: 'PodList',
      items: [{
        metadata: { name: 'np-a' },
        spec: { nodeName: 'node-a', containers: [{ ports: [{ name: 'metrics', containerPort: agent.port }] }] },
        status: { phase: 'Running', podIP: '127.0.0.1' },
      }],
    });
    assert.match(req.url ?? '', /^\/api\/v1\/namespaces\/nodepulse\/pods\?/, 'only the listing is asked for');
  });
  const dir = mkdtempSync(join(tmpdir(), 'chart-verify-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: `http://127.0.0.1:${api.port}`, token: 'test-token' });
  const err: string[] = [];
  const clock = new ManualClock();
  const code = await onManualClock(clock, runVerify(['--kubeconfig', kubeconfig, '--timeout=3s'], { stdout: { write: () => true }, stderr: { write: (s: string) => err.push(s) }, env: {}, clock }));
  assert.equal(code, EXIT_FAILED);
  assert.equal(err.join(''), `nodepulse verify: /readyz of pod np-a (127.0.0.1:${agent.port}) answered 503: not ready: config not loaded (checked for 3s)\n`);
});

test('httpReadyz: the status and body over IPv6 loopback, the body cut at 4 KiB, and no answer ended by the clock\'s timeout', async (t) => {
  const big = await listen(t, (_req, res) => res.end('x'.repeat(10_000)), '::1');
  const clock = new ManualClock();
  const get = httpReadyz(clock);
  const signal = new AbortController().signal;
  const answer = await get(`[::1]:${big.port}`, { signal, timeoutMs: 5_000 });
  assert.deepEqual([answer.status, answer.body.length], [200, 4096]);

  const silent = await listen(t, () => undefined);
  const pending = get(`127.0.0.1:${silent.port}`, { signal, timeoutMs: 2_000 });
  let failed: unknown;
  pending.catch((e: unknown) => { failed = e; });
  for (let i = 0; i < 10 && failed === undefined; i++) await clock.advance(100);
  assert.equal(failed, undefined, 'precondition: nothing ends it before the timeout');
  await clock.advance(1_500);
  for (let i = 0; i < 20 && failed === undefined; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.match(String(failed), /no answer within 2s/, 'the clock\'s timeout ended the request');
});
