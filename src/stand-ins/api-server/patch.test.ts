import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject, JsonValue } from './object-meta.ts';
import { jsonPatch, mergePatch, PatchError, strategicMergePatch } from './patch.ts';

const NODE_LISTS = { 'status.conditions': { mergeKey: 'type' }, 'status.addresses': { mergeKey: 'type' }, 'spec.podCIDRs': {}, 'metadata.finalizers': {} };

describe('strategicMergePatch with the Node patch strategies', () => {
  const base: JsonObject = {
    metadata: { name: 'n', labels: { a: '1', b: '2' }, finalizers: ['x'] },
    spec: { taints: [{ key: 'k1', effect: 'NoSchedule' }], podCIDRs: ['10.0.0.0/24'] },
    status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Disk', status: 'False' }] },
  };
  const table: [string, JsonValue, (out: JsonObject) => JsonValue, JsonValue][] = [
    ['conditions merge by type', { status: { conditions: [{ type: 'Disk', status: 'True' }, { type: 'New', status: 'False' }] } },
      (o) => (o['status'] as JsonObject)['conditions'] ?? null,
      [{ type: 'Ready', status: 'True' }, { type: 'Disk', status: 'True' }, { type: 'New', status: 'False' }]],
    ['a condition is removed with $patch: delete', { status: { conditions: [{ type: 'Ready', $patch: 'delete' }] } },
      (o) => (o['status'] as JsonObject)['conditions'] ?? null, [{ type: 'Disk', status: 'False' }]],
    ['taints have no strategy, so a patch replaces the list', { spec: { taints: [{ key: 'k2', effect: 'NoExecute' }] } },
      (o) => (o['spec'] as JsonObject)['taints'] ?? null, [{ key: 'k2', effect: 'NoExecute' }]],
    ['podCIDRs merge as a set', { spec: { podCIDRs: ['10.0.0.0/24', 'fd00::/64'] } },
      (o) => (o['spec'] as JsonObject)['podCIDRs'] ?? null, ['10.0.0.0/24', 'fd00::/64']],
    ['null deletes a map key, other keys stay', { metadata: { labels: { a: null, c: '3' } } },
      (o) => (o['metadata'] as JsonObject)['labels'] ?? null, { b: '2', c: '3' }],
    ['$setElementOrder orders the merged list', { status: { '$setElementOrder/conditions': [{ type: 'Disk' }, { type: 'Ready' }], conditions: [{ type: 'Ready', status: 'Unknown' }] } },
      (o) => (o['status'] as JsonObject)['conditions'] ?? null, [{ type: 'Disk', status: 'False' }, { type: 'Ready', status: 'Unknown' }]],
    ['$deleteFromPrimitiveList removes from a set', { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } },
      (o) => (o['metadata'] as JsonObject)['finalizers'] ?? null, []],
  ];
  for (const [name, patch, pick, want] of table) {
    it(name, () => {
      assert.deepEqual(pick(strategicMergePatch(structuredClone(base), patch, NODE_LISTS)), want);
    });
  }

  // The order of a merged list, as strategicpatch's normalizeElementOrder gives it. Each row was
  // also sent to a real kube-apiserver v1.34.4 (a Node's status with conditions A, B, C, D), which
  // answered these orders; the conformance table (test/cluster/) keeps the first case checked.
  const four: JsonObject = { status: { conditions: ['A', 'B', 'C', 'D'].map((type) => ({ type, status: 'False' })) } };
  const order: [string, JsonValue, string[]][] = [
    ['a condition new to the list comes first', { status: { conditions: [{ type: 'X', status: 'True' }] } }, ['X', 'A', 'B', 'C', 'D']],
    ['a condition already there keeps its place', { status: { conditions: [{ type: 'C', status: 'True' }] } }, ['A', 'B', 'C', 'D']],
    ['a new one follows the patch\'s previous element, before the server\'s next', { status: { conditions: [{ type: 'C', status: 'True' }, { type: 'X', status: 'True' }] } }, ['A', 'B', 'C', 'X', 'D']],
    ['the patch\'s elements keep the patch\'s order, placed after the server\'s that stood before them', { status: { conditions: [{ type: 'D', status: 'True' }, { type: 'B', status: 'True' }] } }, ['A', 'C', 'D', 'B']],
    ['a deletion and a new one together', { status: { conditions: [{ type: 'A', $patch: 'delete' }, { type: 'X', status: 'True' }] } }, ['X', 'B', 'C', 'D']],
  ];
  for (const [name, patch, want] of order) {
    it(name, () => {
      const out = strategicMergePatch(structuredClone(four), patch, NODE_LISTS);
      assert.deepEqual(((out['status'] as JsonObject)['conditions'] as JsonObject[]).map((c) => c['type']), want);
    });
  }

  it('a merge-keyed item without its key is an internal error naming the key', () => {
    assert.throws(() => strategicMergePatch(structuredClone(base), { status: { conditions: [{ status: 'True' }] } }, NODE_LISTS),
      (e: unknown) => e instanceof PatchError && e.code === 'internal' && e.message === 'map: map[status:True] does not contain declared merge key: type');
  });
});

describe('mergePatch (RFC 7386) and jsonPatch (RFC 6902)', () => {
  it('merge patch replaces lists and deletes on null', () => {
    assert.deepEqual(mergePatch({ a: [1, 2], b: { c: 1, d: 2 } }, { a: [3], b: { c: null } }), { a: [3], b: { d: 2 } });
  });

  it('json patch applies add, replace, remove and test in order', () => {
    const out = jsonPatch({ spec: { a: 1, list: [1] } }, [
      { op: 'test', path: '/spec/a', value: 1 },
      { op: 'replace', path: '/spec/a', value: 2 },
      { op: 'add', path: '/spec/list/-', value: 2 },
      { op: 'remove', path: '/spec/list/0' },
    ]);
    assert.deepEqual(out, { spec: { a: 2, list: [2] } });
  });

  it('a failing json patch test is unprocessable', () => {
    assert.throws(() => jsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: 2 }]), (e: unknown) => e instanceof PatchError && e.code === 'unprocessable');
  });
});
