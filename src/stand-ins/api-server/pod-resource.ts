// v1 Pod, as much of it as a reader of pods needs: pkg/registry/core/pod/strategy.go (namespaced,
// AllowCreateOnUpdate false, AllowUnconditionalUpdate true, a status subresource), its field
// selectors (spec.nodeName, status.phase and the others pod/strategy.go's PodToSelectableFields
// lists), and the patchStrategy tags of PodSpec, Container and PodStatus.
//
// Assumptions, stated once: no kubelet and no scheduler run here, so a pod's phase moves only when
// a client writes its status; a DELETE removes the pod at once, as a delete with
// gracePeriodSeconds 0 would (graceful deletion needs a kubelet to finish it); of the validation
// only "spec.containers is required" is checked.
import { fieldRequired } from './field-error.ts';
import { isObject, valueAt } from './object-meta.ts';
import type { ResourceDef } from './resources.ts';
import { decodeAll, decodeMeta, objectAt } from './typed-decode.ts';

function text(obj: Parameters<typeof valueAt>[0], path: string): string {
  const v = valueAt(obj, path);
  return typeof v === 'string' ? v : '';
}

export const POD: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'pods',
  singular: 'pod',
  kind: 'Pod',
  listKind: 'PodList',
  namespaced: true,
  shortNames: ['po'],
  hasStatus: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  listStrategies: {
    'metadata.ownerReferences': { mergeKey: 'uid' },
    'metadata.finalizers': {},
    'spec.containers': { mergeKey: 'name' },
    'spec.initContainers': { mergeKey: 'name' },
    'spec.volumes': { mergeKey: 'name' },
    'spec.containers.env': { mergeKey: 'name' },
    'spec.containers.ports': { mergeKey: 'containerPort' },
    'spec.containers.volumeMounts': { mergeKey: 'mountPath' },
    'status.conditions': { mergeKey: 'type' },
    'status.podIPs': { mergeKey: 'ip' },
  },
  extraFieldLabels: {
    'spec.nodeName': (o) => text(o, 'spec.nodeName'),
    'spec.restartPolicy': (o) => text(o, 'spec.restartPolicy'),
    'spec.schedulerName': (o) => text(o, 'spec.schedulerName'),
    'spec.serviceAccountName': (o) => text(o, 'spec.serviceAccountName'),
    'spec.hostNetwork': (o) => String(valueAt(o, 'spec.hostNetwork') === true),
    'status.phase': (o) => text(o, 'status.phase'),
    'status.podIP': (o) => text(o, 'status.podIP'),
    'status.nominatedNodeName': (o) => text(o, 'status.nominatedNodeName'),
  },
  emptyBody: { spec: { containers: null }, status: {} },
  decode(obj) {
    const metaErr = decodeMeta(obj, 'Pod');
    if (metaErr !== undefined) return { error: metaErr };
    const spec = objectAt(obj, 'spec', 'Pod', 'v1.PodSpec');
    if (typeof spec === 'string') return { error: spec };
    const specErr = decodeAll(spec, { nodeName: ['string', 'string'], containers: ['array', '[]v1.Container'], hostNetwork: ['bool', 'bool'] }, 'PodSpec', 'spec.');
    if (specErr !== undefined) return { error: specErr };
    const status = objectAt(obj, 'status', 'Pod', 'v1.PodStatus');
    if (typeof status === 'string') return { error: status };
    const statusErr = decodeAll(status, { phase: ['string', 'v1.PodPhase'] }, 'PodStatus', 'status.');
    if (statusErr !== undefined) return { error: statusErr };
    return { warnings: [] };
  },
  validate(obj) {
    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    const containers = spec['containers'];
    return Array.isArray(containers) && containers.length > 0 ? [] : [fieldRequired('spec.containers')];
  },
  prepareForCreate(obj) {
    // pod/strategy.go PrepareForCreate: the status starts as Pending, whatever was sent (the QoS
    // class it also computes is left out here).
    obj['status'] = { phase: 'Pending' };
  },
};
