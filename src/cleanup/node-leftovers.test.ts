import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import type { Node, NodeCondition } from '../kube/kube-types.ts';
import { CONDITION_DELETE_PATCH, describeLeftovers, hasLeftovers, nodeLeftovers, taintRemovalPatch, type JsonPatchOp } from './node-leftovers.ts';

const READY: NodeCondition = { type: 'Ready', status: 'True', reason: 'KubeletReady' };
const OURS: NodeCondition = { type: 'RuntimeRelistUnhealthy', status: 'True', reason: 'RelistStale' };
const SILENT = { key: 'nodepulse.io/agent-silent', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' };
const UNREACHABLE = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-01-02T03:04:06Z' };
const CORDON = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

function node(conditions: readonly NodeCondition[], taints?: readonly object[]): Node {
  return { metadata: { name: 'n1' }, ...(taints === undefined ? {} : { spec: { taints } }), status: { conditions } } as unknown as Node;
}

describe('nodeLeftovers and its patches, as the table in the header', () => {
  const table: ReadonlyArray<[string, Node, string, JsonPatchOp[]]> = [
    ['the kubelet\'s conditions and no taints: nothing', node([READY]), '', []],
    ['no status and no spec at all: nothing', { metadata: { name: 'n1' } }, '', []],
    ['our condition beside the kubelet\'s: the condition only', node([READY, OURS]), 'condition RuntimeRelistUnhealthy=True/RelistStale', []],
    ['our condition as the controller wrote it, Unknown', node([{ type: 'RuntimeRelistUnhealthy', status: 'Unknown', reason: 'AgentLeaseStale' }]), 'condition RuntimeRelistUnhealthy=Unknown/AgentLeaseStale', []],
    ['our taint between two others: tested and removed at its index', node([READY], [CORDON, SILENT, UNREACHABLE]), 'taint nodepulse.io/agent-silent:NoSchedule', [
      { op: 'test', path: '/spec/taints/1', value: SILENT },
      { op: 'remove', path: '/spec/taints/1' },
    ]],
    ['two of our taints (two effects): the last first, so the first index stays valid', node([OURS], [SILENT, UNREACHABLE, { ...SILENT, effect: 'NoExecute' }]), 'condition RuntimeRelistUnhealthy=True/RelistStale, taint nodepulse.io/agent-silent:NoSchedule, taint nodepulse.io/agent-silent:NoExecute', [
      { op: 'test', path: '/spec/taints/2', value: { ...SILENT, effect: 'NoExecute' } },
      { op: 'remove', path: '/spec/taints/2' },
      { op: 'test', path: '/spec/taints/0', value: SILENT },
      { op: 'remove', path: '/spec/taints/0' },
    ]],
    ['a taint of another key that only starts like ours: nothing', node([READY], [{ key: 'nodepulse.io/agent-silent-x', effect: 'NoSchedule' }]), '', []],
  ];
  for (const [name, input, described, patch] of table) {
    it(name, () => {
      const l = nodeLeftovers(input);
      assert.equal(l.node, 'n1');
      assert.equal(describeLeftovers(l), described);
      assert.equal(hasLeftovers(l), described !== '');
      assert.deepEqual(taintRemovalPatch(l), patch);
    });
  }

  it('the condition is deleted by its type with $patch: delete, and nothing else is in the patch', () => {
    assert.deepEqual(CONDITION_DELETE_PATCH, { status: { conditions: [{ type: 'RuntimeRelistUnhealthy', $patch: 'delete' }] } });
  });
});

// docs/design.md's table ("What an uninstall removes"), by the row's first cell: each row's Nodes,
// and what cleanup must send for them, as the row says it.
const TAINTED: ReadonlyArray<readonly [Node, readonly number[]]> = [
  [node([READY], [CORDON, SILENT, UNREACHABLE]), [1]],
  [node([READY], [{ ...SILENT, effect: 'NoExecute' }]), [0]],
  [node([OURS], [SILENT, UNREACHABLE, { ...SILENT, effect: 'NoExecute' }]), [2, 0]],
];
const UNINSTALL: Readonly<Record<string, (cell: string) => void>> = {
  'the condition RuntimeRelistUnhealthy, any status': (cell) => {
    const json = /: (\{.*\})$/.exec(cell)?.[1];
    assert.ok(json !== undefined && cell.startsWith('a strategic-merge PATCH of nodes/<node>/status'), `precondition: "${cell}" names the patch`);
    assert.deepEqual(CONDITION_DELETE_PATCH, JSON.parse(json));
    for (const status of ['True', 'False', 'Unknown'] as const) {
      const l = nodeLeftovers(node([READY, { type: 'RuntimeRelistUnhealthy', status, reason: 'Any' }]));
      assert.equal(hasLeftovers(l), true, status);
      assert.deepEqual(taintRemovalPatch(l), [], `${status}: the condition alone sends no JSON patch`);
    }
  },
  'the taint nodepulse.io/agent-silent at index i, any effect': (cell) => {
    assert.ok(cell.startsWith('a JSON PATCH of nodes/<node>: for each such taint, from the last: test /spec/taints/i'), `precondition: "${cell}" names the patch`);
    for (const [n, indexes] of TAINTED) {
      const taints = (n as unknown as { spec: { taints: object[] } }).spec.taints;
      const expected = indexes.flatMap((i): JsonPatchOp[] => [
        { op: 'test', path: `/spec/taints/${i}`, value: taints[i] as never },
        { op: 'remove', path: `/spec/taints/${i}` },
      ]);
      assert.deepEqual(taintRemovalPatch(nodeLeftovers(n)), expected);
    }
  },
  neither: (cell) => {
    assert.equal(cell, 'nothing');
    for (const n of [node([READY]), node([READY], [CORDON, { key: 'nodepulse.io/agent-silent-x', effect: 'NoSchedule' }])]) {
      const l = nodeLeftovers(n);
      assert.equal(hasLeftovers(l), false);
      assert.deepEqual(taintRemovalPatch(l), []);
    }
  },
};

describe("nodeLeftovers: docs/design.md's table", () => {
  for (const { key, expected, case: check } of casesOf(designTable('What an uninstall removes'), 1, UNINSTALL)) {
    it(`${key} → ${expected[0]}`, () => check(expected[0] ?? ''));
  }
});
