// The runtime client against the simulated runtime, over a real unix socket and real gRPC.
// Deadlines here are short real ones: these tests check the transport, not timing semantics.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { SystemClock } from '../clock/clock.ts';
import { startSimRuntime, type SimRuntime, type SimRuntimeOptions } from '../cri-sim/sim-runtime.ts';
import { CriError } from './cri-error.ts';
import { GRPC_STATUS } from './grpc-fault.ts';
import { createRuntimeClient, DEFAULT_MAX_MESSAGE_BYTES, type RuntimeClientOptions } from './runtime-client.ts';
import type { RuntimeClient } from './types.ts';

const clock = new SystemClock();
const LONG = { deadlineMs: 10_000 };

async function setUp(
  t: TestContext,
  simOptions: Omit<SimRuntimeOptions, 'socketPath'> = {},
  clientOptions: Omit<RuntimeClientOptions, 'endpoint'> = {},
): Promise<{ sim: SimRuntime; client: RuntimeClient; socketPath: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'np-cri-'));
  const socketPath = join(dir, 'cri.sock');
  const sim = await startSimRuntime({ socketPath, ...simOptions });
  const client = createRuntimeClient({ endpoint: `unix://${socketPath}`, ...clientOptions });
  t.after(async () => {
    client.close();
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { sim, client, socketPath };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

async function criRejection(promise: Promise<unknown>): Promise<CriError> {
  const err = await rejection(promise);
  assert.ok(err instanceof CriError, `expected a CriError, got ${String(err)}`);
  return err;
}

/** Polls (bounded) until cond() holds; for waiting on a real socket or process. */
async function until(cond: () => boolean, what: string, timeoutMs = 3000): Promise<void> {
  const start = clock.monotonicMs();
  while (!cond()) {
    if (clock.monotonicMs() - start > timeoutMs) assert.fail(`timed out waiting for ${what}`);
    await clock.sleep(10);
  }
}

describe('runtime client on the simulated runtime', () => {
  test('a relist returns exactly the sandboxes and containers the runtime holds', async (t) => {
    const { sim, client } = await setUp(t, { pods: 7, containersPerPod: 3 });
    sim.step(4); // some exited and created containers, too
    const listing = await client.relist(LONG);
    const bySandboxId = (a: { id: string }, b: { id: string }): number => a.id.localeCompare(b.id);
    assert.deepEqual(
      [...listing.sandboxes].sort(bySandboxId),
      sim
        .sandboxes()
        .map((s) => ({ id: s.id, name: s.name, namespace: s.namespace, uid: s.uid, attempt: s.attempt, state: s.state, createdAtNs: s.createdAtNs }))
        .sort(bySandboxId),
    );
    assert.deepEqual(
      [...listing.containers].sort(bySandboxId),
      sim
        .containers()
        .map((c) => ({ id: c.id, podSandboxId: c.podSandboxId, name: c.name, attempt: c.attempt, state: c.state, createdAtNs: c.createdAtNs }))
        .sort(bySandboxId),
    );
    const states = new Set(listing.containers.map((c) => c.state));
    assert.ok(states.has('CONTAINER_EXITED') && states.has('CONTAINER_CREATED'), 'precondition: churn made several states');
    const pods = await client.listPodSandbox(LONG);
    const containers = await client.listContainers(LONG);
    assert.equal(listing.bytes, pods.bytes + containers.bytes, 'bytes are the received message sizes');
    assert.ok(pods.bytes > 7 * 500, `realistic sandbox records (${pods.bytes} bytes for 7)`);
  });

  test('Version names the runtime and Status reports its conditions', async (t) => {
    const { sim, client } = await setUp(t);
    assert.deepEqual(await client.version(LONG), {
      version: '0.1.0',
      runtimeName: 'nodepulse-sim',
      runtimeVersion: '1.0.0',
      runtimeApiVersion: 'v1',
    });
    assert.deepEqual(await client.status(LONG), {
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: true, reason: '', message: '' },
      ],
    });
    sim.setConditions({ networkReady: false });
    const status = await client.status(LONG);
    assert.deepEqual(status.conditions[1], {
      type: 'NetworkReady',
      status: false,
      reason: 'NetworkPluginNotReady',
      message: 'Network plugin returns error: cni plugin not initialized',
    });
  });

  test('PodSandboxStatus and ContainerStatus read one record; a missing one carries the runtime message', async (t) => {
    const { sim, client } = await setUp(t, { pods: 1, containersPerPod: 1 });
    const [sandbox] = sim.sandboxes();
    const [container] = sim.containers();
    assert.ok(sandbox !== undefined && container !== undefined);
    assert.deepEqual(await client.podSandboxStatus(sandbox.id, LONG), { id: sandbox.id, state: 'SANDBOX_READY' });
    assert.deepEqual(await client.containerStatus(container.id, LONG), { id: container.id, state: 'CONTAINER_RUNNING' });
    const err = await criRejection(client.containerStatus('missing', LONG));
    assert.equal(err.code, 'other');
    assert.equal(err.grpcCode, GRPC_STATUS.NOT_FOUND);
    assert.equal(err.detail, 'an error occurred when try to find container "missing": not found');
  });

  test('UNIMPLEMENTED says the runtime lacks CRI v1, with the runtime message', async (t) => {
    const { sim, client } = await setUp(t, { pods: 1 });
    sim.addFault({ method: 'ListContainers', code: GRPC_STATUS.UNIMPLEMENTED, message: 'unknown service runtime.v1.RuntimeService', count: 1 });
    const err = await criRejection(client.relist(LONG));
    assert.equal(err.code, 'unimplemented');
    assert.equal(
      err.message,
      'runtime does not implement CRI runtime.v1 (RuntimeService/ListContainers): unknown service runtime.v1.RuntimeService',
    );
    assert.equal(err.detail, 'unknown service runtime.v1.RuntimeService');
    assert.ok(err.cause instanceof Error, 'the gRPC error is kept as the cause');
  });

  test('the runtime message reaches the CriError for any status', async (t) => {
    const { sim, client } = await setUp(t);
    sim.addFault({ method: 'Status', code: GRPC_STATUS.INTERNAL, message: 'failed to get status: disk on fire', count: 1 });
    const err = await criRejection(client.status(LONG));
    assert.equal(err.code, 'other');
    assert.equal(err.detail, 'failed to get status: disk on fire');
    assert.equal(err.message, 'RuntimeService/Status: rpc error: code = Internal desc = failed to get status: disk on fire');
  });

  test('an answer over the receive limit is resource_exhausted; a raised limit receives it', async (t) => {
    const { sim, client, socketPath } = await setUp(t, { pods: 2, containersPerPod: 1 }, { maxMessageBytes: 64 * 1024 });
    sim.setOversize(100 * 1024);
    const err = await criRejection(client.relist(LONG));
    assert.equal(err.code, 'resource_exhausted');
    assert.match(err.detail, /larger than max/);

    const raised = createRuntimeClient({ endpoint: socketPath, maxMessageBytes: 1024 * 1024 });
    t.after(() => raised.close());
    const listing = await raised.relist(LONG);
    assert.equal(listing.sandboxes.length, 2);
    assert.ok(listing.bytes > 2 * 100 * 1024, `both answers are oversized (${listing.bytes} bytes)`);
  });

  test('the default receive limit is 16 MiB', () => {
    assert.equal(DEFAULT_MAX_MESSAGE_BYTES, 16_777_216);
    assert.throws(() => createRuntimeClient({ endpoint: '/x.sock', maxMessageBytes: 0 }), /^RangeError: maxMessageBytes: 0 must be/);
  });

  test('a hung runtime gives deadline_exceeded at the deadline, naming both calls of the relist', async (t) => {
    const { sim, client } = await setUp(t, { pods: 1 });
    sim.addFault({ method: '*', hang: true });
    const start = clock.monotonicMs();
    const err = await criRejection(client.relist({ deadlineMs: 200 }));
    const elapsed = clock.monotonicMs() - start;
    assert.equal(err.code, 'deadline_exceeded');
    assert.equal(err.message, 'RuntimeService/ListPodSandbox+ListContainers: rpc error: code = DeadlineExceeded desc = deadline of 200ms exceeded');
    assert.ok(elapsed >= 195 && elapsed < 2000, `rejected after ${elapsed} ms`);
    await until(() => (sim.calls().cancelled['ListContainers'] ?? 0) === 1 && (sim.calls().cancelled['ListPodSandbox'] ?? 0) === 1, 'the runtime to see both calls cancelled');
  });

  test('relist issues both calls together: the runtime sees both before it answers either', async (t) => {
    const { sim, client } = await setUp(t, { pods: 2 });
    sim.addFault({ method: 'ListPodSandbox', delayMs: 150, count: 1 });
    sim.addFault({ method: 'ListContainers', delayMs: 150, count: 1 });
    await client.relist(LONG);
    const events = sim.callLog().filter((e) => e.method.startsWith('List'));
    assert.deepEqual(
      events.map((e) => e.event),
      ['received', 'received', 'answered', 'answered'],
      JSON.stringify(events),
    );
  });

  test('when one call of a relist fails, the other is cancelled and the first fault is the result', async (t) => {
    const { sim, client } = await setUp(t, { pods: 1 });
    sim.addFault({ method: 'ListContainers', hang: true });
    sim.addFault({ method: 'ListPodSandbox', code: GRPC_STATUS.UNAVAILABLE, message: 'runtime going down' });
    const start = clock.monotonicMs();
    const err = await criRejection(client.relist({ deadlineMs: 5000 }));
    assert.equal(err.code, 'unavailable');
    assert.equal(err.detail, 'runtime going down');
    assert.ok(clock.monotonicMs() - start < 2000, 'did not wait for the deadline');
    await until(() => (sim.calls().cancelled['ListContainers'] ?? 0) === 1, 'the hung call to be cancelled');
  });

  test('a stopped runtime gives unavailable, and the client is back soon after it returns', async (t) => {
    const { sim, client, socketPath } = await setUp(t, { pods: 3 });
    assert.equal((await client.relist(LONG)).sandboxes.length, 3, 'precondition: the channel is up');
    await sim.close();
    const err = await criRejection(client.relist({ deadlineMs: 2000 }));
    assert.equal(err.code, 'unavailable');

    const back = await startSimRuntime({ socketPath, pods: 5 });
    t.after(() => back.close());
    const returned = clock.monotonicMs();
    let sandboxes = -1;
    while (sandboxes < 0) {
      try {
        sandboxes = (await client.relist({ deadlineMs: 500 })).sandboxes.length;
      } catch (e) {
        assert.ok(e instanceof CriError && e.code !== 'other', `only transport faults while reconnecting: ${String(e)}`);
        if (clock.monotonicMs() - returned > 3000) throw e;
        await clock.sleep(50);
      }
    }
    assert.equal(sandboxes, 5);
    const took = clock.monotonicMs() - returned;
    assert.ok(took < 2500, `reconnected ${took} ms after the runtime returned`);
  });

  test('an aborted signal cancels the relist and rejects with its reason', async (t) => {
    const { sim, client } = await setUp(t, { pods: 1 });
    sim.addFault({ method: '*', hang: true });
    const controller = new AbortController();
    const pending = client.relist({ deadlineMs: 10_000, signal: controller.signal });
    await until(() => sim.hangingCalls() === 2, 'both calls to reach the runtime');
    const reason = new Error('agent stopping');
    controller.abort(reason);
    assert.equal(await rejection(pending), reason);

    const before = sim.calls().received['Version'] ?? 0;
    assert.equal(await rejection(client.version({ deadlineMs: 1000, signal: AbortSignal.abort(reason) })), reason);
    assert.equal(sim.calls().received['Version'] ?? 0, before, 'an aborted call never reaches the runtime');
  });

  test('close() fails the calls in flight and every later call with unavailable', async (t) => {
    const { sim, client } = await setUp(t, { pods: 1 });
    sim.addFault({ method: 'ListContainers', hang: true });
    const pending = client.listContainers({ deadlineMs: 10_000 });
    await until(() => sim.hangingCalls() === 1, 'the call to reach the runtime');
    client.close();
    assert.equal((await criRejection(pending)).code, 'unavailable');
    assert.equal((await criRejection(client.relist(LONG))).code, 'unavailable');
  });
});
