import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { SystemClock } from '../../clock/clock.ts';
import { createRuntimeClient } from '../../cri/runtime-client.ts';
import { startSimControl } from './sim-control.ts';
import { startSimRuntime, type SimRuntime } from './sim-runtime.ts';

const real = new SystemClock();

async function setUp(t: TestContext): Promise<{ runtime: SimRuntime; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'np-ctl-'));
  const runtime = await startSimRuntime({ socketPath: join(dir, 'cri.sock'), pods: 2, containersPerPod: 2, clock: real });
  const control = await startSimControl(runtime);
  t.after(async () => {
    await control.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { runtime, url: control.url };
}

function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

describe('simulated runtime control API', () => {
  test('listens on loopback only', async () => {
    const fake = {} as SimRuntime;
    await assert.rejects(startSimControl(fake, { host: '0.0.0.0' }), /must be a loopback address/);
  });

  test('scripts faults, pods, churn, conditions and oversize, and reports calls and state', async (t) => {
    const { runtime, url } = await setUp(t);
    assert.deepEqual((await call(url, 'POST', '/pods', { pods: 4, containersPerPod: 3 })).body['containers'], 12);
    assert.equal(runtime.counts().sandboxes, 4);

    const fault = await call(url, 'POST', '/faults', { method: 'ListContainers', code: 14, count: 1, message: 'down' });
    assert.equal(fault.status, 200);
    const client = createRuntimeClient({ endpoint: runtime.endpoint, clock: real });
    t.after(() => client.close());
    await assert.rejects(client.relist({ deadlineMs: 5000 }), { code: 'unavailable', detail: 'down' });
    const calls = (await call(url, 'GET', '/calls')).body as { received: Record<string, number>; failed: Record<string, number> };
    assert.equal(calls.received['ListContainers'], 1);
    assert.equal(calls.failed['ListContainers'], 1);

    await call(url, 'POST', '/step', { count: 2 });
    const state = (await call(url, 'GET', '/state')).body as { containersByState: Record<string, number> };
    assert.equal(state.containersByState['CONTAINER_EXITED'], 2);

    await call(url, 'POST', '/conditions', { runtimeReady: false });
    assert.equal((await client.status({ deadlineMs: 5000 })).conditions[0]?.status, false);

    await call(url, 'POST', '/faults', { oversizeBytes: 100_000 });
    assert.ok((await client.listPodSandbox({ deadlineMs: 5000 })).bytes > 100_000);
    await call(url, 'POST', '/faults', { method: '*', hang: true });
    assert.equal(((await call(url, 'GET', '/faults')).body as unknown as unknown[]).length, 1);
    await call(url, 'POST', '/clear');
    assert.deepEqual(runtime.activeFaults(), []);
    assert.ok((await client.listPodSandbox({ deadlineMs: 5000 })).bytes < 100_000, 'padding cleared');
  });

  test('answers bad requests with 400 and one line per problem, and unknown routes with 404', async (t) => {
    const { url } = await setUp(t);
    const bad = await call(url, 'POST', '/faults', { method: 'Nope', code: 99 });
    assert.equal(bad.status, 400);
    assert.match(String(bad.body['error']), /method: "Nope" must be/);
    assert.match(String(bad.body['error']), /code: 99 must be a gRPC status from 1 to 16/);
    assert.equal((await call(url, 'POST', '/pods', '{not json')).status, 400);
    assert.equal((await call(url, 'POST', '/pods', { pods: -1, containersPerPod: 1 })).status, 400);
    assert.equal((await call(url, 'GET', '/nope')).status, 404);
    assert.equal((await call(url, 'POST', '/faults', 'x'.repeat(70 * 1024))).status, 400);
  });
});
