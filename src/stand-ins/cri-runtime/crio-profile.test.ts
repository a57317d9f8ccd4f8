// The simulated runtime's CRI-O profile, over a real unix socket: what the agent's own client
// reads from it, and the full messages as any CRI client decodes them, against the facts taken
// from CRI-O's source (crio-profile.ts lists them).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SystemClock, wallMs } from '../../clock/clock.ts';
import { ManualClock } from '../../clock/manual-clock.ts';
import { loadCriService } from '../../cri/cri-proto.ts';
import { createRuntimeClient } from '../../cri/runtime-client.ts';
import { CRIO_NO_CNI_MESSAGE, CRIO_PROFILE, CRIO_RUNTIME_VERSION } from './crio-profile.ts';
import { SIM_PROFILE } from './sim-profile.ts';
import { startSimRuntime, type SimRuntime } from './sim-runtime.ts';
import { SimState } from './sim-state.ts';

const real = new SystemClock();

async function crio(t: TestContext, options: { networkReady?: boolean } = {}): Promise<SimRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'np-crio-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const runtime = await startSimRuntime({ socketPath: join(dir, 'crio.sock'), profile: 'cri-o', pods: 2, containersPerPod: 2, clock: real, ...options });
  t.after(() => runtime.close());
  return runtime;
}

/** A unary call decoded with the full proto, as crictl or the kubelet would decode it. */
async function fullCall(t: TestContext, runtime: SimRuntime, method: string, request: object): Promise<Record<string, unknown>> {
  const service = await loadCriService();
  const definition = service[method];
  assert.ok(definition, `precondition: proto/ declares ${method}`);
  const client = new grpc.Client(runtime.endpoint, grpc.credentials.createInsecure());
  t.after(() => client.close());
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(definition.path, definition.requestSerialize, definition.responseDeserialize, request, { deadline: wallMs(real) + 5_000 }, (err, value) =>
      err ? reject(err) : resolve(value as Record<string, unknown>),
    );
  });
}

describe('the CRI-O profile', () => {
  test('the agent\'s client reads CRI-O\'s Version and Status, and relists it', async (t) => {
    const runtime = await crio(t, { networkReady: false });
    assert.equal(runtime.profile, 'cri-o');
    const client = createRuntimeClient({ endpoint: runtime.endpoint, clock: real });
    t.after(() => client.close());
    assert.deepEqual(await client.version({ deadlineMs: 5_000 }), { version: '0.1.0', runtimeName: 'cri-o', runtimeVersion: CRIO_RUNTIME_VERSION, runtimeApiVersion: 'v1' });
    assert.deepEqual((await client.status({ deadlineMs: 5_000 })).conditions, [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: CRIO_NO_CNI_MESSAGE },
    ]);
    const listing = await client.relist({ deadlineMs: 5_000 });
    assert.equal(listing.sandboxes.length, 2);
    assert.equal(listing.containers.length, 4);
  });

  test('Status, decoded in full: runtime handlers (the default again under the empty name), features, and verbose info', async (t) => {
    const runtime = await crio(t);
    const answer = await fullCall(t, runtime, 'Status', { verbose: true });
    const features = { recursiveReadOnlyMounts: true, userNamespaces: true };
    assert.deepEqual(answer['runtimeHandlers'], [{ name: 'runc', features }, { name: '', features }]);
    assert.deepEqual(answer['features'], { supplementalGroupsPolicy: true, userNamespacesHostNetwork: false });
    assert.deepEqual(answer['info'], { config: '{"sandboxImage":"registry.k8s.io/pause:3.10"}' });
    assert.deepEqual((answer['status'] as { conditions: unknown[] }).conditions.length, 2);
  });

  test('listed sandboxes carry the kubelet\'s labels only; containers carry the bare image id, the repo digest and image_id', async (t) => {
    const runtime = await crio(t);
    const state = runtime.sandboxes()[0];
    assert.ok(state, 'precondition: the runtime holds a sandbox');
    const pods = (await fullCall(t, runtime, 'ListPodSandbox', {}))['items'] as Array<Record<string, unknown>>;
    const pod = pods.find((p) => p['id'] === state.id);
    assert.ok(pod, 'the sandbox is listed');
    const kubeletLabels = Object.fromEntries(Object.entries(state.labels).filter(([k]) => k !== 'io.cri-containerd.kind'));
    assert.deepEqual(pod['labels'], kubeletLabels);
    assert.equal(pod['runtimeHandler'], '');
    const sim = runtime.containers().find((c) => c.podSandboxId === state.id);
    assert.ok(sim, 'precondition: the sandbox has a container');
    const containers = (await fullCall(t, runtime, 'ListContainers', {}))['containers'] as Array<Record<string, unknown>>;
    const container = containers.find((c) => c['id'] === sim.id);
    assert.ok(container, 'the container is listed');
    const bareId = sim.image.replace(/^sha256:/, '');
    assert.match(bareId, /^[0-9a-f]{64}$/, 'CRI-O writes image ids as bare hex');
    assert.deepEqual(container['image'], { image: bareId, annotations: {}, userSpecifiedImage: '', runtimeHandler: '', imageRef: '' });
    assert.equal(container['imageRef'], sim.imageRef);
    assert.match(String(container['imageRef']), /@sha256:[0-9a-f]{64}$/, 'image_ref is the repo digest');
    assert.equal(container['imageId'], bareId);
  });

  test('a listed sandbox never carries a runtime handler, unlike the default (containerd-shaped) profile', () => {
    const state = new SimState({ clock: new ManualClock() });
    state.setPods(1, 1);
    const sandbox = { ...state.sandboxes()[0], runtimeHandler: 'kata' } as ReturnType<SimState['sandboxes']>[number];
    assert.equal(SIM_PROFILE.sandbox(sandbox)['runtimeHandler'], 'kata', 'precondition: the default profile passes the handler on');
    assert.equal('runtimeHandler' in CRIO_PROFILE.sandbox(sandbox), false);
  });

  test('RuntimeReady=false cannot be scripted: CRI-O never reports it', async (t) => {
    const runtime = await crio(t);
    assert.throws(() => runtime.setConditions({ runtimeReady: false }), /^RangeError: runtimeReady: false must be true for the cri-o profile: CRI-O always reports RuntimeReady=true/);
    runtime.setConditions({ networkReady: false });
    const dir = mkdtempSync(join(tmpdir(), 'np-crio-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    await assert.rejects(startSimRuntime({ socketPath: join(dir, 'crio.sock'), profile: 'cri-o', runtimeReady: false, clock: real }), RangeError);
  });
});
