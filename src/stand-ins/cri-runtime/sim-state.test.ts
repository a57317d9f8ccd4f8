import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../clock/manual-clock.ts';
import { POD_CHURN_EVERY, SimState } from './sim-state.ts';

const HEX64 = /^[0-9a-f]{64}$/;

function state(seed = 1): SimState {
  return new SimState({ clock: new ManualClock(), seed });
}

describe('simulated runtime state', () => {
  test('setPods makes N ready sandboxes of M running containers, shaped like containerd records', () => {
    const s = state();
    s.setPods(4, 3);
    assert.deepEqual(s.counts(), {
      sandboxes: 4,
      containers: 12,
      sandboxesByState: { SANDBOX_READY: 4 },
      containersByState: { CONTAINER_RUNNING: 12 },
    });
    const ids = new Set<string>();
    for (const sandbox of s.sandboxes()) {
      assert.match(sandbox.id, HEX64);
      ids.add(sandbox.id);
      assert.equal(sandbox.labels['io.cri-containerd.kind'], 'sandbox');
      assert.equal(sandbox.labels['io.kubernetes.pod.name'], sandbox.name);
      assert.equal(sandbox.labels['io.kubernetes.pod.namespace'], sandbox.namespace);
      assert.equal(sandbox.labels['io.kubernetes.pod.uid'], sandbox.uid);
      assert.equal(sandbox.annotations['kubernetes.io/config.source'], 'api');
      assert.match(sandbox.annotations['kubernetes.io/config.seen'] ?? '', /^2026-01-02T03:04:05\.\d{9}Z$/);
      // ManualClock's default wall time, in nanoseconds, plus a sub-microsecond part.
      assert.ok(sandbox.createdAtNs >= 1767323045000000000n && sandbox.createdAtNs < 1767323045000001000n, String(sandbox.createdAtNs));
    }
    for (const c of s.containers()) {
      assert.match(c.id, HEX64);
      ids.add(c.id);
      assert.ok(s.sandbox(c.podSandboxId) !== undefined, 'every container is in a sandbox');
      assert.match(c.image, /^sha256:[0-9a-f]{64}$/);
      assert.match(c.imageRef, /@sha256:[0-9a-f]{64}$/);
      assert.equal(c.labels['io.kubernetes.container.name'], c.name);
      for (const key of [
        'io.kubernetes.container.hash',
        'io.kubernetes.container.restartCount',
        'io.kubernetes.container.terminationMessagePath',
        'io.kubernetes.container.terminationMessagePolicy',
        'io.kubernetes.pod.terminationGracePeriod',
      ]) {
        assert.ok(key in c.annotations, `container annotation ${key}`);
      }
    }
    assert.equal(ids.size, 16, 'ids are unique');
  });

  test('the same seed gives the same ids and the same churn', () => {
    const a = state(42);
    const b = state(42);
    for (const s of [a, b]) {
      s.setPods(5, 2);
      s.step(3);
      s.step(3);
    }
    assert.deepEqual(
      a.containers().map((c) => [c.id, c.state]),
      b.containers().map((c) => [c.id, c.state]),
    );
    const c = state(43);
    c.setPods(5, 2);
    assert.notEqual(c.sandboxes()[0]?.id, a.sandboxes()[0]?.id);
  });

  test('a container runs, exits, and is removed a step later, while its replacement is created then runs', () => {
    const s = state();
    s.setPods(1, 1);
    const [first] = s.containers();
    assert.ok(first !== undefined);
    s.step(1);
    assert.equal(s.container(first.id)?.state, 'CONTAINER_EXITED');
    const replacement = s.containers().find((c) => c.id !== first.id);
    assert.ok(replacement !== undefined);
    assert.deepEqual([replacement.name, replacement.attempt, replacement.state], [first.name, 1, 'CONTAINER_CREATED']);
    assert.equal(replacement.annotations['io.kubernetes.container.restartCount'], '1');

    s.step(0);
    assert.equal(s.container(first.id), undefined, 'the exited container is removed a step later');
    assert.equal(s.container(replacement.id)?.state, 'CONTAINER_RUNNING');
    assert.deepEqual(s.counts().containersByState, { CONTAINER_RUNNING: 1 });
  });

  test(`every ${POD_CHURN_EVERY}th churn action stops a whole sandbox, which is replaced a step later`, () => {
    const s = state();
    s.setPods(20, 2);
    s.step(POD_CHURN_EVERY - 1);
    assert.deepEqual(s.counts().sandboxesByState, { SANDBOX_READY: 20 });
    s.step(1);
    const stopped = s.sandboxes().filter((x) => x.state === 'SANDBOX_NOTREADY');
    assert.equal(stopped.length, 1);
    const victim = stopped[0];
    assert.ok(victim !== undefined);
    assert.ok(
      s.containers().filter((c) => c.podSandboxId === victim.id).every((c) => c.state === 'CONTAINER_EXITED'),
      'its containers exited',
    );
    s.step(0);
    assert.equal(s.sandbox(victim.id), undefined);
    assert.equal(s.containers().filter((c) => c.podSandboxId === victim.id).length, 0);
    assert.deepEqual(s.counts().sandboxesByState, { SANDBOX_READY: 20 }, 'a fresh sandbox took its place');
    s.step(0);
    assert.deepEqual(s.counts().containersByState, { CONTAINER_RUNNING: 40 });
  });

  test('churn keeps the node at about N × M and bumps the generation on every change', () => {
    const s = state(7);
    s.setPods(10, 3);
    let generation = s.generation;
    for (let i = 0; i < 30; i++) {
      s.step(2);
      assert.ok(s.generation > generation);
      generation = s.generation;
      const running = s.counts().containersByState['CONTAINER_RUNNING'] ?? 0;
      assert.ok(running >= 30 - 3 * 3 && s.counts().containers <= 30 + 3 * 3, `step ${i}: ${JSON.stringify(s.counts())}`);
    }
    assert.equal(s.steps, 30);
  });

  test('refuses counts that are not whole numbers', () => {
    const s = state();
    assert.throws(() => s.setPods(-1, 1), /^RangeError: pods: -1 must be a whole number ≥ 0$/);
    assert.throws(() => s.setPods(1, 1.5), /^RangeError: containersPerPod: 1.5 must be/);
    assert.throws(() => s.step(-2), /^RangeError: count: -2 must be/);
  });
});
