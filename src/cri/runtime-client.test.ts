// The runtime client against the simulated runtime, over a real unix socket and real gRPC
// (grpc-js on both ends). Deadlines are timed on a ManualClock where the test is about the
// deadline; elsewhere they are long real ones, which only a broken transport reaches.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SystemClock } from '../clock/clock.ts';
import { ManualClock } from '../clock/manual-clock.ts';
import { startSimRuntime, type SimRuntime, type SimRuntimeOptions } from '../stand-ins/cri-runtime/sim-runtime.ts';
import { CriError } from './cri-error.ts';
import { status as GRPC_STATUS } from '@grpc/grpc-js';
import { LeanDecodeError } from './lean-decode.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, RECONNECT_BACKOFF_MS, runtimeChannelOptions } from './runtime-channel.ts';
import { createRuntimeClient, type RuntimeClientOptions } from './runtime-client.ts';
import type { RuntimeClient } from './types.ts';

const clock = new SystemClock();
const LONG = { deadlineMs: 10_000 };
/** docs/design.md's default relist period (upstream relistPeriod). */
const DEFAULT_RELIST_PERIOD_MS = 1000;

async function setUp(
  t: TestContext,
  simOptions: Partial<Omit<SimRuntimeOptions, 'socketPath'>> = {},
  clientOptions: Partial<Omit<RuntimeClientOptions, 'endpoint'>> = {},
): Promise<{ sim: SimRuntime; client: RuntimeClient; socketPath: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'np-cri-'));
  const socketPath = join(dir, 'cri.sock');
  const sim = await startSimRuntime({ socketPath, clock, ...simOptions });
  const client = createRuntimeClient({ endpoint: `unix://${socketPath}`, clock, ...clientOptions });
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
  test('a relist goes through grpc-js: Client.makeUnaryRequest with the lean encoder and decoder as serialize and deserialize', async (t) => {
    const { sim, client } = await setUp(t, { pods: 3, containersPerPod: 2 });
    const seen: Array<{ path: string; request: number; answer: number; decoded: string }> = [];
    const original = grpc.Client.prototype.makeUnaryRequest;
    // Records each call, and what its deserialize made of the bytes grpc-js received.
    const spy = t.mock.method(grpc.Client.prototype, 'makeUnaryRequest', function (this: grpc.Client, ...args: unknown[]) {
      const [path, serialize, deserialize, argument] = args as [string, (a: unknown) => Buffer, (b: Buffer) => unknown, unknown];
      const row = { path, request: serialize(argument).length, answer: -1, decoded: '' };
      seen.push(row);
      args[2] = (bytes: Buffer): unknown => {
        const value = deserialize(bytes);
        row.answer = bytes.length;
        const first = (value as { items?: unknown[] }).items?.[0] as Record<string, unknown> | undefined;
        row.decoded = Object.entries(first ?? {}).map(([k, v]) => `${k}:${typeof v}`).join(',');
        return value;
      };
      return (original as (...a: unknown[]) => grpc.ClientUnaryCall).apply(this, args);
    });
    const listing = await client.relist(LONG);
    assert.equal(spy.mock.callCount(), 2, 'one grpc-js call per listing');
    assert.ok(spy.mock.calls.every((c) => c.this instanceof grpc.Client), 'on a grpc-js Client');
    assert.deepEqual(seen.map((r) => r.path).sort(), ['/runtime.v1.RuntimeService/ListContainers', '/runtime.v1.RuntimeService/ListPodSandbox']);
    assert.deepEqual(seen.map((r) => r.request), [0, 0], 'the lean encoder: an empty request, no filter');
    assert.equal((seen[0]?.answer ?? 0) + (seen[1]?.answer ?? 0), listing.bytes, 'the answers came through grpc-js\'s deserialize');
    assert.deepEqual(
      seen.map((r) => r.decoded).sort(),
      [
        'id:string,name:string,namespace:string,uid:string,attempt:number,state:string,createdAtNs:bigint',
        'id:string,podSandboxId:string,name:string,attempt:number,state:string,createdAtNs:bigint',
      ],
      'the lean decoder\'s records (the full decode has metadata, labels and createdAt as a string)',
    );
    assert.equal(listing.sandboxes.length, 3);
    assert.equal(sim.calls().received['ListContainers'], 1);
  });

  test('the channel: the receive limit, and a reconnect backoff capped at the relist period', () => {
    assert.equal(DEFAULT_MAX_MESSAGE_BYTES, 16_777_216, 'kubelet\'s 16 MiB');
    const options = runtimeChannelOptions(DEFAULT_MAX_MESSAGE_BYTES);
    assert.equal(options['grpc.max_receive_message_length'], DEFAULT_MAX_MESSAGE_BYTES);
    assert.equal(options['grpc.initial_reconnect_backoff_ms'], RECONNECT_BACKOFF_MS.initial);
    assert.equal(options['grpc.max_reconnect_backoff_ms'], RECONNECT_BACKOFF_MS.max);
    assert.ok(RECONNECT_BACKOFF_MS.initial <= RECONNECT_BACKOFF_MS.max, 'the backoff starts below its cap');
    assert.ok(RECONNECT_BACKOFF_MS.max <= DEFAULT_RELIST_PERIOD_MS, `backoff cap ${RECONNECT_BACKOFF_MS.max} ms must be at most the relist period`);
    assert.equal(options['grpc-node.flow_control_window'], 2 * DEFAULT_MAX_MESSAGE_BYTES);
    assert.equal(runtimeChannelOptions(1)['grpc-node.flow_control_window'], 65_535, 'never below the HTTP/2 default window');
    assert.equal(runtimeChannelOptions(2 ** 31 - 1)['grpc-node.flow_control_window'], 2 ** 31 - 1, 'never above the HTTP/2 maximum');
    assert.equal(options['grpc.use_local_subchannel_pool'], 1, 'a connection of its own');
    assert.match(String(options['grpc.primary_user_agent']), /^nodepulse\/\d+\.\d+\.\d+/);
  });

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

    const raised = createRuntimeClient({ endpoint: socketPath, maxMessageBytes: 1024 * 1024, clock });
    t.after(() => raised.close());
    const listing = await raised.relist(LONG);
    assert.equal(listing.sandboxes.length, 2);
    assert.ok(listing.bytes > 2 * 100 * 1024, `both answers are oversized (${listing.bytes} bytes)`);
  });

  test('a receive limit outside gRPC\'s range is refused', () => {
    assert.throws(() => createRuntimeClient({ endpoint: '/x.sock', maxMessageBytes: 0, clock }), /^RangeError: maxMessageBytes: 0 must be/);
  });

  test('the deadline is the Clock\'s: a hung relist ends when the clock passes it, naming both calls and the socket', async (t) => {
    const manual = new ManualClock();
    const { sim, client, socketPath } = await setUp(t, { pods: 1 }, { clock: manual });
    sim.addFault({ method: '*', hang: true });
    let settled = false;
    const pending = client.relist({ deadlineMs: 60_000 });
    void pending.then(() => (settled = true), () => (settled = true));
    await until(() => sim.hangingCalls() === 2, 'both calls to reach the runtime');
    await manual.advance(59_999);
    assert.equal(settled, false, 'pending 1 ms before the deadline');
    await manual.advance(1);
    const err = await criRejection(pending);
    assert.equal(err.code, 'deadline_exceeded');
    assert.equal(
      err.message,
      `RuntimeService/ListPodSandbox+ListContainers: rpc error: code = DeadlineExceeded desc = deadline of 60000ms exceeded (socket ${socketPath})`,
    );
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

  test('a stopped runtime gives unavailable naming the socket, and the same client reaches it once it returns', async (t) => {
    const { sim, client, socketPath } = await setUp(t, { pods: 3 });
    assert.equal((await client.relist(LONG)).sandboxes.length, 3, 'precondition: the channel is up');
    await sim.close();
    const err = await criRejection(client.relist({ deadlineMs: 2000 }));
    assert.equal(err.code, 'unavailable');
    assert.ok(err.message.includes(socketPath), `names the socket: ${err.message}`);

    const back = await startSimRuntime({ socketPath, pods: 5, clock });
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
    assert.equal(sandboxes, 5, 'the same client reaches the returned runtime (how soon is a bench figure)');
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
    await until(() => (sim.calls().cancelled['ListContainers'] ?? 0) === 1 && (sim.calls().cancelled['ListPodSandbox'] ?? 0) === 1, 'the runtime to see both calls cancelled');

    const before = sim.calls().received['Version'] ?? 0;
    assert.equal(await rejection(client.version({ deadlineMs: 1000, signal: AbortSignal.abort(reason) })), reason);
    assert.equal(sim.calls().received['Version'] ?? 0, before, 'an aborted call never reaches the runtime');
  });

  test('close() fails the calls in flight and every later call with unavailable, and the runtime sees them cancelled', async (t) => {
    const { sim, client, socketPath } = await setUp(t, { pods: 1 });
    sim.addFault({ method: '*', hang: true });
    const pending = client.relist({ deadlineMs: 10_000 });
    await until(() => sim.hangingCalls() === 2, 'both calls to reach the runtime');
    client.close();
    const err = await criRejection(pending);
    assert.equal(err.code, 'unavailable');
    assert.equal(err.message, `RuntimeService/*: rpc error: code = Unavailable desc = client closed (socket ${socketPath})`);
    await until(() => (sim.calls().cancelled['ListContainers'] ?? 0) === 1 && (sim.calls().cancelled['ListPodSandbox'] ?? 0) === 1, 'the runtime to see both calls cancelled');
    assert.equal((await criRejection(client.relist(LONG))).code, 'unavailable');
  });

  test('no runtime at the socket: unavailable, naming the socket', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'np-cri-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const socketPath = join(dir, 'absent.sock');
    const client = createRuntimeClient({ endpoint: socketPath, clock });
    t.after(() => client.close());
    for (const call of [client.relist(LONG), client.version(LONG)]) {
      const err = await criRejection(call);
      assert.equal(err.code, 'unavailable');
      assert.ok(err.message.includes(socketPath), `names the socket: ${err.message}`);
    }
  });

  test('an answer the lean decoder refuses is other, "could not be decoded", with the decoder\'s error as cause and undecodable as its failure mode', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'np-cri-'));
    const socketPath = join(dir, 'bad.sock');
    const server = new grpc.Server();
    const truncated = Buffer.from([0x0a, 0x05, 0x0a, 0x03, 0x61]); // items { id: "a… (two bytes short)
    const answer = (_call: unknown, done: grpc.sendUnaryData<Buffer>): void => done(null, truncated);
    const raw = (b: Buffer): Buffer => b;
    server.register('/runtime.v1.RuntimeService/ListPodSandbox', answer, raw, raw, 'unary');
    server.register('/runtime.v1.RuntimeService/ListContainers', answer, raw, raw, 'unary');
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (e) => (e === null ? resolve() : reject(e))));
    const client = createRuntimeClient({ endpoint: socketPath, clock });
    t.after(() => {
      client.close();
      server.forceShutdown();
      rmSync(dir, { recursive: true, force: true });
    });
    const err = await criRejection(client.listPodSandbox(LONG));
    assert.equal(err.code, 'other');
    assert.ok(err.cause instanceof LeanDecodeError, `the decoder's error is the cause: ${String(err.cause)}`);
    assert.equal(err.message, `RuntimeService/ListPodSandbox: answer could not be decoded: ${err.cause.message}`);
    assert.equal(err.knownCause, 'undecodable', 'the runtime answered; the agent could not read it');
  });
});
