// The real-containerd harness itself: before any agent test trusts it, it must create real
// pods and containers, list them back, survive its own faults, and leave nothing behind.
// One containerd for the whole file (CI budget); the close test starts a second, small one.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { requireContainerd, startContainerd } from '../fixtures/containerd.ts';
import { FixtureCriClient } from '../fixtures/fixture-cri-client.ts';
import { endShims, findShimPids, isAlive, mountsUnder } from '../fixtures/host-cleanup.ts';
import { SystemClock } from '../../src/clock/clock.ts';

test('the containerd harness', async (t) => {
  if (!requireContainerd(t)) return;
  const cd = await startContainerd();
  t.after(() => cd.close());

  /** pod id → its name and its containers' ids, as the fixture made them. */
  const made = new Map<string, { name: string; containers: string[] }>();

  await t.test('creates 2 pods with 2 running containers each, and lists exactly those', async () => {
    for (const name of ['alpha', 'beta']) {
      const podId = await cd.cri.runPod(name);
      const containers: string[] = [];
      for (const container of ['app', 'sidecar']) containers.push(await cd.cri.runContainer(podId, container));
      made.set(podId, { name, containers });
    }
    assert.deepEqual(
      (await cd.cri.listPods()).map((p) => [p.id, p.name, p.state]).sort(),
      [...made].map(([id, pod]) => [id, pod.name, 'SANDBOX_READY']).sort(),
    );
    assert.deepEqual(
      (await cd.cri.listContainers()).map((c) => [c.podSandboxId, c.id, c.state]).sort(),
      [...made].flatMap(([podId, pod]) => pod.containers.map((id) => [podId, id, 'CONTAINER_RUNNING'])).sort(),
    );
    assert.equal(cd.shimPids().length, 2, 'one shim per pod sandbox');
  });

  await t.test('Status reports the runtime ready and the network not ready (no CNI)', async () => {
    const conditions = await cd.cri.status();
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status]).sort(),
      [['NetworkReady', false], ['RuntimeReady', true]],
    );
    assert.equal(conditions.find((c) => c.type === 'NetworkReady')?.reason, 'NetworkPluginNotReady');
  });

  await t.test('a container with a short command runs to its exit code', async () => {
    const podId = [...made.keys()][0] ?? assert.fail('precondition: a pod exists');
    const id = await cd.cri.runContainer(podId, 'oneshot', ['sh', '-c', 'exit 7']);
    const status = await cd.cri.waitForContainerState(id, 'CONTAINER_EXITED');
    assert.equal(status.exitCode, 7);
    await cd.cri.removeContainer(id);
    assert.equal((await cd.cri.listContainers()).some((c) => c.id === id), false);
  });

  await t.test('a paused containerd answers nothing until resumed', async () => {
    await cd.pause();
    try {
      await assert.rejects(cd.cri.listPods({ deadlineMs: 500 }), (err: { code?: string }) => err.code === 'DEADLINE_EXCEEDED');
    } finally {
      cd.resume();
    }
    assert.equal((await cd.cri.listPods()).length, 2);
  });

  await t.test('a killed containerd refuses, and a restarted one brings the same state back', async () => {
    const before = (await cd.cri.listContainers()).map((c) => [c.id, c.state]).sort();
    const shimsBefore = cd.shimPids().sort();
    const oldPid = cd.pid;
    await cd.kill();
    assert.equal(cd.running, false);
    assert.equal(oldPid !== undefined && isAlive(oldPid), false, 'the killed pid is gone');
    await assert.rejects(cd.cri.listPods(), (err: { code?: string }) => err.code === 'UNAVAILABLE');
    assert.deepEqual(cd.shimPids().sort(), shimsBefore, 'shims outlive containerd');
    await cd.restart();
    assert.notEqual(cd.pid, oldPid);
    assert.deepEqual((await cd.cri.listContainers()).map((c) => [c.id, c.state]).sort(), before);
  });

  await t.test('a removed socket refuses new connections while containerd runs on', async () => {
    cd.removeSocket();
    assert.equal(existsSync(cd.socketPath), false);
    assert.equal(cd.running, true);
    const fresh = new FixtureCriClient({ endpoint: cd.endpoint, image: cd.image });
    try {
      await assert.rejects(fresh.version({ deadlineMs: 1_000 }), (err: { code?: string }) => err.code === 'UNAVAILABLE');
    } finally {
      fresh.close();
    }
    await cd.restart();
    assert.equal(existsSync(cd.socketPath), true);
    assert.equal((await cd.cri.listPods()).length, 2);
  });
});

test('close() removes every pod, ends every shim of its socket, and leaves no dir or mount', async (t) => {
  if (!requireContainerd(t)) return;
  const cd = await startContainerd();
  let closed = false;
  t.after(async () => {
    if (!closed) await cd.close();
  });
  for (const pod of ['one', 'two']) {
    const podId = await cd.cri.runPod(pod);
    await cd.cri.runContainer(podId, 'app');
  }
  // The hardest case: containerd killed with pods in it, so their shims are orphans.
  await cd.kill();
  const shims = cd.shimPids();
  assert.equal(shims.length, 2, 'precondition: two pods, two shims, outliving containerd');

  const report = await cd.close();
  closed = true;
  assert.equal(report.podsRemoved, 2);
  assert.deepEqual(findShimPids(cd.socketPath), []);
  assert.equal(cd.running, false);
  assert.deepEqual(mountsUnder(cd.dir), []);
  assert.equal(existsSync(cd.dir), false);
  // A second close is the same promise: safe from a test and from its t.after.
  assert.deepEqual(await cd.close(), report);
});

test('the shim backstop kills orphaned shims and their containers by pid', async (t) => {
  if (!requireContainerd(t)) return;
  const cd = await startContainerd();
  t.after(() => cd.close());
  const podId = await cd.cri.runPod('orphan');
  await cd.cri.runContainer(podId, 'app');
  await cd.kill();
  const shims = cd.shimPids();
  assert.equal(shims.length, 1, 'precondition: the shim of the pod outlives containerd');

  const sweep = await endShims(cd.socketPath, new SystemClock());
  assert.deepEqual(sweep.shims, shims);
  assert.equal(sweep.descendants.length, 2, 'the pause process and the app container');
  assert.deepEqual(sweep.survivors, []);
  assert.deepEqual(findShimPids(cd.socketPath), []);
  for (const pid of sweep.descendants) assert.equal(isAlive(pid), false, `container process ${pid} is reaped`);
  for (const path of sweep.sockets) assert.equal(existsSync(path), false, `shim socket ${path} is removed`);
});
