// What of nodepulse's a Node still carries once nodepulse is gone, and the patches that take it
// away without touching anything else on the Node. Pure: a Node in, the leftovers and the
// patches out; cli/cleanup-command.ts sends them.
//
// | the Node carries                                 | cleanup sends                                             |
// |--------------------------------------------------|-----------------------------------------------------------|
// | the condition RuntimeRelistUnhealthy, any status | a strategic-merge PATCH of nodes/<node>/status:           |
// |                                                  | {"status":{"conditions":[{"type":"RuntimeRelistUnhealthy",|
// |                                                  | "$patch":"delete"}]}}                                     |
// | the taint nodepulse.io/agent-silent at index i,  | a JSON PATCH of nodes/<node>: for each such taint, from   |
// | any effect                                       | the last: `test` /spec/taints/i is the taint as read,     |
// |                                                  | then `remove` /spec/taints/i                              |
// | neither                                          | nothing                                                   |
//
// Why these two patch types, given other writers at the same moment (the kubelet's status
// updates, the node lifecycle controller's taints, a person cordoning the node):
//   - Conditions merge by `type` (the patchMergeKey of NodeStatus.Conditions), so the API server
//     finds ours by type in the Node as stored when it applies the patch, and deletes that entry
//     alone: no index, no precondition, the kubelet's conditions untouched. The server retries its
//     own read-modify-write when the stored object changed under it, so a concurrent status
//     update neither is lost nor fails the patch. Deleting a type the Node lacks changes nothing.
//   - Taints have no merge key (NodeSpec.Taints is an atomic list): a strategic-merge or a merge
//     patch sends the whole list, which would drop a taint another writer added after cleanup
//     read the Node (node.kubernetes.io/unreachable, say). A JSON patch edits positions, and its
//     `test` ops make the server check, on the Node as stored, that each position still holds
//     exactly the taint cleanup read. If the list moved, the server refuses the whole patch (422)
//     and writes nothing; cleanup reads the Node again and sends a new patch. Removing from the
//     last index first keeps each earlier index valid. A resourceVersion precondition would also
//     be safe, but it fails on every unrelated write to the Node, the kubelet's included.
import type { Node } from '../kube/kube-types.ts';
import { CONDITION_TYPE, type Taint } from '../fleet/fleet-view.ts';
import { SILENT_TAINT_KEY } from '../controller/node-marker.ts';

export interface NodeLeftovers {
  readonly node: string;
  /** Our condition as the Node carries it, or undefined. */
  readonly condition: { readonly status: string; readonly reason: string } | undefined;
  /** Our taints with their positions in spec.taints, in list order. */
  readonly taints: ReadonlyArray<{ readonly index: number; readonly taint: Taint }>;
}

export type JsonPatchOp =
  | { readonly op: 'test'; readonly path: string; readonly value: Taint }
  | { readonly op: 'remove'; readonly path: string };

/** The same for every Node: the condition is found by its type, wherever it sits. */
export const CONDITION_DELETE_PATCH = { status: { conditions: [{ type: CONDITION_TYPE, $patch: 'delete' }] } } as const;

export function nodeLeftovers(node: Node): NodeLeftovers {
  const spec = (node as Node & { spec?: { taints?: readonly Taint[] } }).spec;
  const condition = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  const taints = (spec?.taints ?? []).flatMap((taint, index) => (taint.key === SILENT_TAINT_KEY ? [{ index, taint }] : []));
  return {
    node: node.metadata.name ?? '',
    condition: condition === undefined ? undefined : { status: condition.status, reason: condition.reason ?? '' },
    taints,
  };
}

export function hasLeftovers(l: NodeLeftovers): boolean {
  return l.condition !== undefined || l.taints.length > 0;
}

/** The JSON patch that removes our taints, from the last, each guarded by a test; empty when there are none. */
export function taintRemovalPatch(l: NodeLeftovers): JsonPatchOp[] {
  return [...l.taints]
    .sort((a, b) => b.index - a.index)
    .flatMap(({ index, taint }): JsonPatchOp[] => [
      { op: 'test', path: `/spec/taints/${index}`, value: taint },
      { op: 'remove', path: `/spec/taints/${index}` },
    ]);
}

/** What a Node carries, as one line says it: `condition RuntimeRelistUnhealthy=True/RelistStale, taint nodepulse.io/agent-silent:NoSchedule`. */
export function describeLeftovers(l: NodeLeftovers): string {
  const parts: string[] = [];
  if (l.condition !== undefined) parts.push(`condition ${CONDITION_TYPE}=${l.condition.status}${l.condition.reason === '' ? '' : `/${l.condition.reason}`}`);
  for (const { taint } of l.taints) parts.push(`taint ${taint.key}${taint.value === undefined || taint.value === '' ? '' : `=${taint.value}`}:${taint.effect}`);
  return parts.join(', ');
}
