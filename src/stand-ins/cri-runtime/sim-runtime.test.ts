// The simulated runtime as a gRPC server, over a real unix socket. Delays and churn run on a
// ManualClock here, so their timing is stepped by hand.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SystemClock } from '../../clock/clock.ts';
import { flushMicrotasks, ManualClock } from '../../clock/manual-clock.ts';
import { loadCriService } from '../../cri/cri-proto.ts';
import { CriError } from '../../cri/cri-error.ts';
import { createRuntimeClient } from '../../cri/runtime-client.ts';
import { startSimRuntime, type SimRuntime, type SimRuntimeOptions } from './sim-runtime.ts';

const real = new SystemClock();

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'np-sim-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function sim(t: TestContext, options: Partial<Omit<SimRuntimeOptions, 'socketPath'>> = {}): Promise<SimRuntime> {
  const runtime = await startSimRuntime({ socketPath: join(tempDir(t), 'cri.sock'), clock: real, ...options });
  t.after(() => runtime.close());
  return runtime;
}

/** A raw gRPC call with the full proto, as any CRI client (crictl, kubelet) would make it. */
async function rawCall(t: TestContext, runtime: SimRuntime, method: string, request: object): Promise<{ err: grpc.ServiceError | null; value: unknown }> {
  const service = await loadCriService();
  const client = new grpc.Client(runtime.endpoint, grpc.credentials.createInsecure());
  t.after(() => client.close());
  const definition = service[method];
  const serialize = definition?.requestSerialize ?? ((): Buffer => Buffer.alloc(0));
  const deserialize = definition?.responseDeserialize ?? ((b: Buffer): Buffer => b);
  const path = definition?.path ?? `/runtime.v1.RuntimeService/${method}`;
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, serialize as (v: object) => Buffer, deserialize, request, { deadline: Infinity }, (err, value) =>
      resolve({ err: err ?? null, value }),
    );
  });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const start = real.monotonicMs();
  while (!cond()) {
    if (real.monotonicMs() - start > 3000) assert.fail(`timed out waiting for ${what}`);
    await real.sleep(5);
  }
}

describe('simulated CRI runtime', () => {
  test('answers calls outside the six UNIMPLEMENTED and counts them as unexpected', async (t) => {
    const runtime = await sim(t, { pods: 1 });
    for (const method of ['StopContainer', 'RemovePodSandbox', 'ExecSync']) {
      const { err } = await rawCall(t, runtime, method, {});
      assert.equal(err?.code, grpc.status.UNIMPLEMENTED, method);
      assert.match(err?.details ?? '', /is not served: only the six read-only calls are/);
    }
    assert.equal(runtime.calls().unexpected, 3);
    assert.deepEqual(runtime.calls().received, { StopContainer: 1, RemovePodSandbox: 1, ExecSync: 1 });
    assert.equal(runtime.counts().containers, 1, 'nothing was stopped or removed');
  });

  test('supports id, state and sandbox filters, and refuses label selectors as INVALID_ARGUMENT', async (t) => {
    const runtime = await sim(t, { pods: 3, containersPerPod: 2 });
    runtime.step(1);
    const [sandbox] = runtime.sandboxes();
    assert.ok(sandbox !== undefined);
    const bySandbox = await rawCall(t, runtime, 'ListContainers', { filter: { podSandboxId: sandbox.id } });
    const inSandbox = runtime.containers().filter((c) => c.podSandboxId === sandbox.id).map((c) => c.id).sort();
    assert.deepEqual((bySandbox.value as { containers: Array<{ id: string }> }).containers.map((c) => c.id).sort(), inSandbox);
    const exited = await rawCall(t, runtime, 'ListContainers', { filter: { state: { state: 'CONTAINER_EXITED' } } });
    assert.equal((exited.value as { containers: unknown[] }).containers.length, 1);
    const byPrefix = await rawCall(t, runtime, 'ListPodSandbox', { filter: { id: sandbox.id.slice(0, 12) } });
    assert.deepEqual((byPrefix.value as { items: Array<{ id: string }> }).items.map((s) => s.id), [sandbox.id]);

    const before = runtime.calls().unexpected;
    const { err } = await rawCall(t, runtime, 'ListPodSandbox', { filter: { labelSelector: { app: 'x' } } });
    assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
    assert.equal(runtime.calls().unexpected, before + 1);
  });

  test('a delayed answer comes when the clock reaches the delay, not before', async (t) => {
    const clock = new ManualClock();
    const runtime = await sim(t, { pods: 1, clock });
    runtime.addFault({ method: 'Version', delayMs: 5000, count: 1 });
    let answered = false;
    const call = rawCall(t, runtime, 'Version', {}).then((r) => {
      answered = true;
      return r;
    });
    await until(() => runtime.calls().received['Version'] === 1, 'the call to arrive');
    await clock.advance(4999);
    await real.sleep(20);
    assert.equal(answered, false, 'not answered 1 ms before the delay');
    await clock.advance(1);
    const { err, value } = await call;
    assert.equal(err, null);
    assert.equal((value as { runtimeName: string }).runtimeName, 'nodepulse-sim');
  });

  test('churns once per second on its clock with churnPerSecond', async (t) => {
    const clock = new ManualClock();
    const runtime = await sim(t, { pods: 5, containersPerPod: 2, churnPerSecond: 3, clock });
    assert.deepEqual(runtime.counts().containersByState, { CONTAINER_RUNNING: 10 });
    await clock.advance(999);
    assert.deepEqual(runtime.counts().containersByState, { CONTAINER_RUNNING: 10 }, 'nothing before a second');
    await clock.advance(1);
    await flushMicrotasks();
    assert.deepEqual(runtime.counts().containersByState, { CONTAINER_RUNNING: 7, CONTAINER_EXITED: 3, CONTAINER_CREATED: 3 });
  });

  test('a failing fault answers with its code and message, then the runtime answers normally', async (t) => {
    const runtime = await sim(t, { pods: 2 });
    runtime.addFault({ method: 'ListPodSandbox', code: grpc.status.UNAVAILABLE, message: 'scripted outage', count: 1 });
    const first = await rawCall(t, runtime, 'ListPodSandbox', {});
    assert.equal(first.err?.code, grpc.status.UNAVAILABLE);
    assert.equal(first.err?.details, 'scripted outage');
    const second = await rawCall(t, runtime, 'ListPodSandbox', {});
    assert.equal((second.value as { items: unknown[] }).items.length, 2);
    assert.deepEqual(runtime.calls().failed, { ListPodSandbox: 1 });
    assert.deepEqual(runtime.calls().answered, { ListPodSandbox: 1 });
  });

  test('a malformed fault answers bytes the full decode and the agent\'s client both refuse, then the runtime answers normally', async (t) => {
    const runtime = await sim(t, { pods: 2, containersPerPod: 1 });
    runtime.addFault({ method: 'ListContainers', malformed: true, count: 1 });
    runtime.addFault({ method: 'Version', malformed: true, count: 1 });
    const client = createRuntimeClient({ endpoint: runtime.endpoint, clock: real });
    t.after(() => client.close());
    await assert.rejects(client.relist({ deadlineMs: 5000 }), (err: unknown) => {
      assert.ok(err instanceof CriError);
      assert.equal(err.knownCause, 'undecodable');
      assert.match(err.message, /^RuntimeService\/ListContainers: answer could not be decoded: field 1 has wire type 0, not its own/);
      return true;
    });
    await assert.rejects(client.version({ deadlineMs: 5000 }), /RuntimeService\/Version: answer could not be decoded: field 1 has wire type 0/);
    const full = await rawCall(t, runtime, 'ListPodSandbox', {});
    assert.equal(full.err, null, 'a method with no fault is answered');
    assert.equal((await client.relist({ deadlineMs: 5000 })).containers.length, 2, 'the fault was used up: the next listing decodes');
    assert.equal(runtime.calls().answered['ListContainers'], 2, 'a malformed answer counts as answered');
  });

  test('clearing the faults answers the calls that were hanging', async (t) => {
    const runtime = await sim(t, { pods: 1 });
    runtime.addFault({ method: 'Status', hang: true });
    const call = rawCall(t, runtime, 'Status', {});
    await until(() => runtime.hangingCalls() === 1, 'the call to hang');
    runtime.clearFaults();
    const { err } = await call;
    assert.equal(err, null);
    assert.equal(runtime.hangingCalls(), 0);
  });

  test('pads listings past the oversize, on the first item only', async (t) => {
    const runtime = await sim(t, { pods: 3, containersPerPod: 1 });
    runtime.setOversize(200_000);
    const client = createRuntimeClient({ endpoint: runtime.endpoint, maxMessageBytes: 1 << 20, clock: real });
    t.after(() => client.close());
    const listing = await client.listContainers({ deadlineMs: 5000 });
    assert.ok(listing.bytes > 200_000 && listing.bytes < 210_000, String(listing.bytes));
    runtime.setOversize(undefined);
    assert.ok((await client.listContainers({ deadlineMs: 5000 })).bytes < 10_000);
  });

  test('close() stops serving and removes its socket', async (t) => {
    const socketPath = join(tempDir(t), 'cri.sock');
    const runtime = await startSimRuntime({ socketPath, pods: 1, clock: real });
    assert.ok(statSync(socketPath).isSocket(), 'precondition: it listens on the socket');
    const client = createRuntimeClient({ endpoint: socketPath, clock: real });
    t.after(() => client.close());
    await client.version({ deadlineMs: 5000 });
    await runtime.close();
    assert.equal(existsSync(socketPath), false, 'socket removed');
    await assert.rejects(client.version({ deadlineMs: 5000 }), { code: 'unavailable' });
  });

  test('refuses a socket path that is a regular file, relative, or too long', async (t) => {
    const dir = tempDir(t);
    const file = join(dir, 'not-a-socket');
    writeFileSync(file, 'x');
    await assert.rejects(startSimRuntime({ socketPath: file, clock: real }), /must not be an existing file that is not a socket/);
    await assert.rejects(startSimRuntime({ socketPath: 'relative.sock', clock: real }), /must be an absolute path/);
    await assert.rejects(startSimRuntime({ socketPath: `/tmp/${'x'.repeat(120)}`, clock: real }), /must be at most 107 bytes long/);
  });
});
