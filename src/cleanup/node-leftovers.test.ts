import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
