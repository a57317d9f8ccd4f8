import assert from 'node:assert/strict';
import { test } from 'node:test';
import { designTable } from '../../test/support/design-tables.ts';
import { testContainer, testSandbox } from '../stand-ins/doubles/scripted-runtime-client.ts';
import { diffSnapshots, snapshotOf, transitionEvents, type LifecycleEvent, type PlegState, type Snapshot } from './lifecycle-diff.ts';

// kubelet's generateEvents(), every (old, new) pair of PLEG states, as docs/design.md's table
// ("Lifecycle events") gives them: a column per new state, the row "same state" when old = new,
// "any other" otherwise.
const PLEG_STATES: readonly PlegState[] = ['running', 'exited', 'unknown', 'non-existent'];

/** The events a cell names, for a container coming from `from`. */
function documentedEvents(cell: string, from: PlegState): string[] {
  if (cell === '(none)') return [];
  const split = /^from (\S+): (.+); otherwise: (.+)$/.exec(cell);
  const names = split === null ? cell : from === split[1] ? (split[2] ?? '') : (split[3] ?? '');
  return names.split(', ');
}

const lifecycle = designTable('Lifecycle events');
test("the document's lifecycle table has a column for each PLEG state, and a row for the same and for any other", () => {
  assert.deepEqual(lifecycle.header.slice(1), PLEG_STATES);
  assert.deepEqual(lifecycle.rows.map((r) => r[0]), ['same state', 'any other']);
});

for (const [column, to] of PLEG_STATES.entries()) {
  for (const from of PLEG_STATES) {
    const row = lifecycle.rows.find((r) => r[0] === (from === to ? 'same state' : 'any other'));
    const expected = documentedEvents(row?.[column + 1] ?? '', from);
    test(`a container going ${from} → ${to} gives [${expected.join(', ')}]`, () => {
      for (const type of expected) assert.match(type, /^Container(Started|Died|Changed|Removed)$/, 'precondition: the cell names event types');
      assert.deepEqual(transitionEvents(from, to), expected);
    });
  }
}

test('CRI states map to PLEG states as kubelet maps them (CREATED and unknown enums are unknown)', () => {
  const snap = snapshotOf(
    [testSandbox('s-ready', 'SANDBOX_READY'), testSandbox('s-notready', 'SANDBOX_NOTREADY'), testSandbox('s-odd', 'UNKNOWN_7')],
    [
      testContainer('c-created', 'CONTAINER_CREATED'),
      testContainer('c-running', 'CONTAINER_RUNNING'),
      testContainer('c-exited', 'CONTAINER_EXITED'),
      testContainer('c-unknown', 'CONTAINER_UNKNOWN'),
      testContainer('c-odd', 'UNKNOWN_9'),
    ],
  );
  assert.deepEqual(
    Object.fromEntries([...snap].map(([id, v]) => [id, v.state])),
    {
      's-ready': 'running',
      's-notready': 'exited',
      's-odd': 'unknown',
      'c-created': 'unknown',
      'c-running': 'running',
      'c-exited': 'exited',
      'c-unknown': 'unknown',
      'c-odd': 'unknown',
    },
  );
});

test('sandboxes are diffed as containers of their pod, sandboxes first, then containers by id', () => {
  const before = snapshotOf([testSandbox('p1', 'SANDBOX_READY')], [testContainer('b', 'CONTAINER_RUNNING', 'p1'), testContainer('a', 'CONTAINER_EXITED', 'p1')]);
  const after = snapshotOf([testSandbox('p1', 'SANDBOX_NOTREADY'), testSandbox('p2', 'SANDBOX_READY')], [testContainer('b', 'CONTAINER_EXITED', 'p1')]);
  assert.deepEqual(diffSnapshots(before, after), [
    { type: 'ContainerDied', id: 'p1', podSandboxId: 'p1', kind: 'sandbox', name: 'p1' },
    { type: 'ContainerStarted', id: 'p2', podSandboxId: 'p2', kind: 'sandbox', name: 'p2' },
    { type: 'ContainerRemoved', id: 'a', podSandboxId: 'p1', kind: 'container', name: 'a' },
    { type: 'ContainerDied', id: 'b', podSandboxId: 'p1', kind: 'container', name: 'b' },
  ]);
});

/** The diff as first written: every id of both snapshots, sorted, each compared. The reference. */
function referenceDiff(previous: Snapshot, current: Snapshot): LifecycleEvent[] {
  const rank = (id: string): number => ((current.get(id) ?? previous.get(id))?.kind === 'sandbox' ? 0 : 1);
  const ids = [...new Set([...previous.keys(), ...current.keys()])].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  return ids.flatMap((id) => {
    const before = previous.get(id);
    const after = current.get(id);
    const meta = (after ?? before)!;
    return transitionEvents(before?.state ?? 'non-existent', after?.state ?? 'non-existent').map((type) => ({
      type,
      id,
      podSandboxId: meta.podSandboxId,
      kind: meta.kind,
      name: meta.name,
    }));
  });
}

test('the diff of random snapshots equals the every-id reference diff, events and order', () => {
  let seed = 7;
  const next = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const sandboxStates = ['SANDBOX_READY', 'SANDBOX_NOTREADY', 'UNKNOWN_5'] as const;
  const containerStates = ['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN'] as const;
  const randomSnapshot = (): Snapshot => {
    const sandboxes = Array.from({ length: next(8) }, () => testSandbox(`id${next(20)}`, sandboxStates[next(3)]!));
    const containers = Array.from({ length: next(16) }, () => testContainer(`id${next(20)}`, containerStates[next(4)]!, `id${next(20)}`));
    return snapshotOf(sandboxes, containers);
  };
  for (let round = 0; round < 500; round++) {
    const previous = randomSnapshot();
    const current = randomSnapshot();
    assert.deepEqual(diffSnapshots(previous, current), referenceDiff(previous, current), `round ${round}`);
  }
});
