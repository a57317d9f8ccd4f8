import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Container, PodSandbox } from '../cri/types.ts';
import { testContainer, testSandbox } from '../stand-ins/doubles/scripted-runtime-client.ts';
import { mulberry32 } from '../stand-ins/cri-runtime/sim-state.ts';
import { diffSnapshots, EMPTY_SNAPSHOT, snapshotOf, type Snapshot } from './lifecycle-diff.ts';
import { LifecycleTracker } from './lifecycle-tracker.ts';

const SANDBOX_STATES: PodSandbox['state'][] = ['SANDBOX_READY', 'SANDBOX_NOTREADY', 'UNKNOWN_3'];
const CONTAINER_STATES: Container['state'][] = ['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN', 'UNKNOWN_9'];

/** A random relist over a small pool of ids, so ids come, go, move, repeat and are shared by a sandbox and a container. */
function randomListing(next: () => number): { sandboxes: PodSandbox[]; containers: Container[] } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  const names = ['x', 'y'];
  const sandboxes: PodSandbox[] = [];
  const containers: Container[] = [];
  const count = Math.floor(next() * 7);
  for (let i = 0; i < count; i++) sandboxes.push(testSandbox(pick(ids), pick(SANDBOX_STATES), pick(names)));
  for (let i = 0; i < count + 2; i++) containers.push(testContainer(pick(ids), pick(CONTAINER_STATES), pick(ids), pick(names)));
  return { sandboxes, containers };
}

test('the tracker yields exactly the pure diff of consecutive snapshots, relist after relist', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const next = mulberry32(seed);
    const tracker = new LifecycleTracker();
    let previous: Snapshot = EMPTY_SNAPSHOT;
    let moves = 0;
    for (let relist = 0; relist < 40; relist++) {
      const { sandboxes, containers } = randomListing(next);
      const current = snapshotOf(sandboxes, containers);
      const expected = diffSnapshots(previous, current);
      assert.deepEqual(tracker.update(sandboxes, containers), expected, `seed ${seed}, relist ${relist}`);
      assert.equal(tracker.size, current.size, `seed ${seed}, relist ${relist}: ids held`);
      moves += expected.length;
      previous = current;
    }
    assert.ok(moves > 0, `precondition: seed ${seed} moves something`);
  }
});

test('an unchanged relist yields nothing and leaves every entry as it was, even given equal strings anew', () => {
  const tracker = new LifecycleTracker();
  const listing = () => ({
    sandboxes: [testSandbox(['p', '1'].join(''), 'SANDBOX_READY')],
    containers: [testContainer(['c', '1'].join(''), 'CONTAINER_RUNNING', 'p1', ['n', 'a'].join(''))],
  });
  const first = listing();
  assert.deepEqual(
    tracker.update(first.sandboxes, first.containers).map((e) => `${e.type} ${e.id}`),
    ['ContainerStarted p1', 'ContainerStarted c1'],
  );
  const second = listing();
  assert.deepEqual(tracker.update(second.sandboxes, second.containers), []);
  const third = { sandboxes: second.sandboxes, containers: [testContainer('c1', 'CONTAINER_EXITED', 'p1', 'na')] };
  assert.deepEqual(tracker.update(third.sandboxes, third.containers), [
    { type: 'ContainerDied', id: 'c1', podSandboxId: 'p1', kind: 'container', name: 'na' },
  ]);
  assert.deepEqual(tracker.update([], []).map((e) => `${e.type} ${e.id}`), ['ContainerDied p1', 'ContainerRemoved p1', 'ContainerRemoved c1']);
  assert.equal(tracker.size, 0);
});
