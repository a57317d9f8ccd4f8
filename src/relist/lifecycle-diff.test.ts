import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testContainer, testSandbox } from '../cri/scripted-runtime-client.ts';
import { diffSnapshots, snapshotOf, transitionEvents, type PlegState } from './lifecycle-diff.ts';

// kubelet's generateEvents(), every (old, new) pair of PLEG states.
const TABLE: ReadonlyArray<[PlegState, PlegState, string[]]> = [
  ['non-existent', 'non-existent', []],
  ['non-existent', 'running', ['ContainerStarted']],
  ['non-existent', 'exited', ['ContainerDied']],
  ['non-existent', 'unknown', ['ContainerChanged']],
  ['running', 'running', []],
  ['running', 'exited', ['ContainerDied']],
  ['running', 'unknown', ['ContainerChanged']],
  ['running', 'non-existent', ['ContainerDied', 'ContainerRemoved']],
  ['exited', 'exited', []],
  ['exited', 'running', ['ContainerStarted']],
  ['exited', 'unknown', ['ContainerChanged']],
  ['exited', 'non-existent', ['ContainerRemoved']],
  ['unknown', 'unknown', []],
  ['unknown', 'running', ['ContainerStarted']],
  ['unknown', 'exited', ['ContainerDied']],
  ['unknown', 'non-existent', ['ContainerDied', 'ContainerRemoved']],
];

for (const [from, to, expected] of TABLE) {
  test(`a container going ${from} → ${to} gives [${expected.join(', ')}]`, () => {
    assert.deepEqual(transitionEvents(from, to), expected);
  });
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
