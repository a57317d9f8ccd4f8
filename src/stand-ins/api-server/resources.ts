// The resources the stand-in serves, each described the way the real registry describes it:
// its strategy (pkg/registry/.../strategy.go), its validation (pkg/apis/.../validation), its
// typed decode, its strategic-merge-patch strategies (the patchStrategy tags on the Go types),
// and its field selectors.
//
// Served: coordination.k8s.io/v1 leases, v1 nodes (+ nodes/status), v1 events,
// events.k8s.io/v1 events, apps/v1 daemonsets (+ daemonsets/status, daemonset-resource.ts) and
// v1 pods (+ pods/status, pod-resource.ts). Assumptions, stated once:
//   - namespaces are not objects here: every namespace exists;
//   - the two Event APIs are kept as two stores; the real server keeps one store and converts
//     between the two shapes, so an Event written through one is not visible through the other here;
//   - of these kinds only DaemonSet sets metadata.generation upstream (its strategy does);
//   - unknown fields are dropped only from Lease.spec (the real typed decoder drops them
//     everywhere and warns); Node and Event keep what they are sent.

import { type FieldError, fieldInvalid, fieldRequired, validateName } from './field-error.ts';
import { isObject, type JsonObject, stringField, valueAt } from './object-meta.ts';
import { DAEMON_SET } from './daemonset-resource.ts';
import { POD } from './pod-resource.ts';
import { decodeAll, decodeMeta, jsonKind, objectAt, type GoKind } from './typed-decode.ts';

/** How a strategic merge patch merges a list, from the Go type's patchStrategy/patchMergeKey tags. */
export interface ListStrategy {
  /** A merge key for lists of objects; undefined for a list of primitives merged as a set. */
  readonly mergeKey?: string;
}

export interface ResourceDef {
  readonly group: string;
  readonly version: string;
  /** Plural resource name, as in the URL. */
  readonly resource: string;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly hasStatus: boolean;
  readonly allowCreateOnUpdate: boolean;
  readonly allowUnconditionalUpdate: boolean;
  /** Dotted path → list strategy; lists not named here are replaced by a strategic merge patch. */
  readonly listStrategies: Readonly<Record<string, ListStrategy>>;
  /** Field selector labels this resource accepts, beyond metadata.name / metadata.namespace. */
  readonly extraFieldLabels: Readonly<Record<string, (obj: JsonObject) => string>>;
  /** The typed decode: Go's json errors for wrong types, and time fields normalised to UTC. */
  decode(obj: JsonObject): { error: string } | { warnings: string[] };
  validate(obj: JsonObject): FieldError[];
  /** What the empty typed object carries (a BOOKMARK's object): its fields, and any metadata beyond the resourceVersion. */
  readonly emptyBody: JsonObject;
  /** The strategy's PrepareForCreate, once the system fields are stamped (e.g. generation 1). */
  readonly prepareForCreate?: (obj: JsonObject) => void;
  /** The strategy's PrepareForUpdate beyond the generic one (e.g. generation + 1 on a spec change). */
  readonly prepareForUpdate?: (obj: JsonObject, old: JsonObject, subresource: string) => void;
  /** The strategy's ValidateUpdate rules that compare with the old object (immutable fields). */
  readonly validateUpdate?: (obj: JsonObject, old: JsonObject, subresource: string) => FieldError[];
  /**
   * The group a 422 Invalid names, where it is not the URL's: the validation runs on the internal
   * type, so events.k8s.io/v1 Events are refused as the core `Event`.
   */
  readonly invalidGroup?: string;
}

export function apiVersionOf(def: ResourceDef): string {
  return def.group === '' ? def.version : `${def.group}/${def.version}`;
}

/** `leases.coordination.k8s.io`, or `nodes`: the store's name for a resource. */
export function resourceId(def: ResourceDef): string {
  return def.group === '' ? def.resource : `${def.resource}.${def.group}`;
}

// ---------------------------------------------------------------------------------------------
// coordination.k8s.io/v1 Lease: pkg/registry/coordination/lease/strategy.go (namespaced,
// AllowCreateOnUpdate true, AllowUnconditionalUpdate false) and
// pkg/apis/coordination/validation/validation.go ValidateLease / ValidateLeaseSpec.

const LEASE_SPEC_FIELDS: Readonly<Record<string, readonly [GoKind, string]>> = {
  holderIdentity: ['string', 'string'],
  leaseDurationSeconds: ['int32', 'int32'],
  acquireTime: ['MicroTime', 'v1.MicroTime'],
  renewTime: ['MicroTime', 'v1.MicroTime'],
  leaseTransitions: ['int32', 'int32'],
  strategy: ['string', 'v1.CoordinatedLeaseStrategy'],
  preferredHolder: ['string', 'string'],
};

const LEASE: ResourceDef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  singular: 'lease',
  kind: 'Lease',
  listKind: 'LeaseList',
  namespaced: true,
  shortNames: [],
  hasStatus: false,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
  listStrategies: { 'metadata.ownerReferences': { mergeKey: 'uid' }, 'metadata.finalizers': {} },
  extraFieldLabels: {},
  emptyBody: { spec: {} },
  decode(obj) {
    const metaErr = decodeMeta(obj, 'Lease');
    if (metaErr !== undefined) return { error: metaErr };
    const spec = objectAt(obj, 'spec', 'Lease', 'v1.LeaseSpec');
    if (typeof spec === 'string') return { error: spec };
    const warnings: string[] = [];
    if (spec !== undefined) {
      const e = decodeAll(spec, LEASE_SPEC_FIELDS, 'LeaseSpec', 'spec.');
      if (e !== undefined) return { error: e };
      for (const key of Object.keys(spec)) {
        if (!(key in LEASE_SPEC_FIELDS)) {
          warnings.push(`unknown field "spec.${key}"`);
          delete spec[key];
        }
      }
      // A JSON null leaves a Go pointer nil, which the encoder omits.
      for (const [k, v] of Object.entries(spec)) if (v === null) delete spec[k];
    } else {
      obj['spec'] = {};
    }
    return { warnings };
  },
  validate(obj) {
    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    const errs: FieldError[] = [];
    const d = spec['leaseDurationSeconds'];
    if (typeof d === 'number' && d <= 0) errs.push(fieldInvalid('spec.leaseDurationSeconds', { go: 'int', value: d }, 'must be greater than 0'));
    const t = spec['leaseTransitions'];
    if (typeof t === 'number' && t < 0) {
      errs.push(fieldInvalid('spec.leaseTransitions', { go: 'int', value: t }, 'must be greater than or equal to 0'));
    }
    return errs;
  },
};

// ---------------------------------------------------------------------------------------------
// v1 Node: pkg/registry/core/node/strategy.go (cluster-scoped, AllowCreateOnUpdate false,
// AllowUnconditionalUpdate true; an update keeps the old status, a status update keeps the old
// spec). Patch strategies from staging/src/k8s.io/api/core/v1/types.go: NodeStatus.Conditions and
// NodeStatus.Addresses merge by `type`, NodeSpec.PodCIDRs merges as a set, NodeSpec.Taints has
// no strategy (a patch replaces the whole list).

/**
 * NodeSystemInfo's fields: strings without omitempty, so every Node the real server returns
 * carries all ten (empty until a kubelet reports them), as it carries daemonEndpoints'
 * kubeletEndpoint.Port 0.
 */
const NODE_INFO_FIELDS = [
  'machineID', 'systemUUID', 'bootID', 'kernelVersion', 'osImage', 'containerRuntimeVersion', 'kubeletVersion', 'kubeProxyVersion', 'operatingSystem', 'architecture',
] as const;

/** The typed NodeStatus as it marshals: the struct fields without omitempty are always there. */
function nodeStatusDefaults(obj: JsonObject): void {
  const status = isObject(obj['status']) ? obj['status'] : {};
  obj['status'] = status;
  const endpoints = isObject(status['daemonEndpoints']) ? status['daemonEndpoints'] : {};
  status['daemonEndpoints'] = endpoints;
  const kubelet = isObject(endpoints['kubeletEndpoint']) ? endpoints['kubeletEndpoint'] : {};
  endpoints['kubeletEndpoint'] = kubelet;
  kubelet['Port'] ??= 0;
  const info = isObject(status['nodeInfo']) ? status['nodeInfo'] : {};
  status['nodeInfo'] = info;
  for (const f of NODE_INFO_FIELDS) info[f] ??= '';
}

const NODE: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'nodes',
  singular: 'node',
  kind: 'Node',
  listKind: 'NodeList',
  namespaced: false,
  shortNames: ['no'],
  hasStatus: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  listStrategies: {
    'metadata.ownerReferences': { mergeKey: 'uid' },
    'metadata.finalizers': {},
    'spec.podCIDRs': {},
    'status.conditions': { mergeKey: 'type' },
    'status.addresses': { mergeKey: 'type' },
  },
  extraFieldLabels: {
    'spec.unschedulable': (obj) => String(valueAt(obj, 'spec.unschedulable') === true),
  },
  emptyBody: { spec: {}, status: { daemonEndpoints: { kubeletEndpoint: { Port: 0 } }, nodeInfo: Object.fromEntries(NODE_INFO_FIELDS.map((f) => [f, ''])) } },
  decode(obj) {
    const metaErr = decodeMeta(obj, 'Node');
    if (metaErr !== undefined) return { error: metaErr };
    const spec = objectAt(obj, 'spec', 'Node', 'v1.NodeSpec');
    if (typeof spec === 'string') return { error: spec };
    const specErr = decodeAll(spec, { unschedulable: ['bool', 'bool'], taints: ['array', '[]v1.Taint'], podCIDRs: ['array', '[]string'] }, 'NodeSpec', 'spec.');
    if (specErr !== undefined) return { error: specErr };
    const status = objectAt(obj, 'status', 'Node', 'v1.NodeStatus');
    if (typeof status === 'string') return { error: status };
    const statusErr = decodeAll(status, { conditions: ['array', '[]v1.NodeCondition'], addresses: ['array', '[]v1.NodeAddress'] }, 'NodeStatus', 'status.');
    if (statusErr !== undefined) return { error: statusErr };
    const conditions = status?.['conditions'];
    if (Array.isArray(conditions)) {
      for (const c of conditions) {
        if (!isObject(c)) return { error: `json: cannot unmarshal ${jsonKind(c)} into Go struct field NodeStatus.status.conditions of type v1.NodeCondition` };
        const e = decodeAll(
          c,
          {
            type: ['string', 'v1.NodeConditionType'],
            status: ['string', 'v1.ConditionStatus'],
            lastHeartbeatTime: ['Time', 'v1.Time'],
            lastTransitionTime: ['Time', 'v1.Time'],
            reason: ['string', 'string'],
            message: ['string', 'string'],
          },
          'NodeCondition',
          'status.conditions.',
        );
        if (e !== undefined) return { error: e };
      }
    }
    nodeStatusDefaults(obj);
    return { warnings: [] };
  },
  validate() {
    return [];
  },
};

// ---------------------------------------------------------------------------------------------
// Events: pkg/registry/core/event/strategy.go (namespaced, AllowCreateOnUpdate true,
// AllowUnconditionalUpdate true) and pkg/apis/core/validation/events.go ValidateEventCreate,
// whose strict rules apply to events.k8s.io/v1 only.

function eventDecode(obj: JsonObject, timeFields: readonly string[]): { error: string } | { warnings: string[] } {
  const metaErr = decodeMeta(obj, 'Event');
  if (metaErr !== undefined) return { error: metaErr };
  const fields: Record<string, readonly [GoKind, string]> = {};
  for (const f of timeFields) fields[f] = f === 'eventTime' ? ['MicroTime', 'v1.MicroTime'] : ['Time', 'v1.Time'];
  const e = decodeAll(obj, fields, 'Event', '');
  if (e !== undefined) return { error: e };
  return { warnings: [] };
}

const CORE_EVENT: ResourceDef = {
  group: '',
  version: 'v1',
  resource: 'events',
  singular: 'event',
  kind: 'Event',
  listKind: 'EventList',
  namespaced: true,
  shortNames: ['ev'],
  hasStatus: false,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  listStrategies: { 'metadata.ownerReferences': { mergeKey: 'uid' }, 'metadata.finalizers': {} },
  extraFieldLabels: {
    'involvedObject.kind': (o) => String(valueAt(o, 'involvedObject.kind') ?? ''),
    'involvedObject.namespace': (o) => String(valueAt(o, 'involvedObject.namespace') ?? ''),
    'involvedObject.name': (o) => String(valueAt(o, 'involvedObject.name') ?? ''),
    'involvedObject.uid': (o) => String(valueAt(o, 'involvedObject.uid') ?? ''),
    'involvedObject.apiVersion': (o) => String(valueAt(o, 'involvedObject.apiVersion') ?? ''),
    'involvedObject.resourceVersion': (o) => String(valueAt(o, 'involvedObject.resourceVersion') ?? ''),
    'involvedObject.fieldPath': (o) => String(valueAt(o, 'involvedObject.fieldPath') ?? ''),
    reason: (o) => stringField(o, 'reason') ?? '',
    reportingComponent: (o) => stringField(o, 'reportingComponent') ?? '',
    source: (o) => String(valueAt(o, 'source.component') ?? ''),
    type: (o) => stringField(o, 'type') ?? '',
  },
  emptyBody: { involvedObject: {}, source: {}, firstTimestamp: null, lastTimestamp: null, eventTime: null, reportingComponent: '', reportingInstance: '' },
  decode(obj) {
    return eventDecode(obj, ['eventTime', 'firstTimestamp', 'lastTimestamp']);
  },
  validate() {
    return [];
  },
};

/** pkg/apis/core/validation/events.go: reportingInstance, action and reason; and the note. */
const EVENT_FIELD_LIMIT = 128;
const EVENT_NOTE_LIMIT = 1024;

const EVENTS_V1: ResourceDef = {
  ...CORE_EVENT,
  group: 'events.k8s.io',
  invalidGroup: '',
  shortNames: ['ev'],
  extraFieldLabels: {
    'regarding.kind': (o) => String(valueAt(o, 'regarding.kind') ?? ''),
    'regarding.namespace': (o) => String(valueAt(o, 'regarding.namespace') ?? ''),
    'regarding.name': (o) => String(valueAt(o, 'regarding.name') ?? ''),
    'regarding.uid': (o) => String(valueAt(o, 'regarding.uid') ?? ''),
    reason: (o) => stringField(o, 'reason') ?? '',
    reportingController: (o) => stringField(o, 'reportingController') ?? '',
    type: (o) => stringField(o, 'type') ?? '',
  },
  emptyBody: { eventTime: null, reportingController: '', reportingInstance: '' },
  decode(obj) {
    return eventDecode(obj, ['eventTime', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp']);
  },
  validate(obj) {
    const errs: FieldError[] = [];
    if (obj['eventTime'] === undefined || obj['eventTime'] === null) errs.push(fieldRequired('eventTime'));
    const type = stringField(obj, 'type') ?? '';
    if (type !== 'Normal' && type !== 'Warning') errs.push(fieldInvalid('type', { go: 'string', value: '' }, `has invalid value: ${type}`));
    // Each required, and within its bound (ReportingInstanceLengthLimit, ActionLengthLimit,
    // ReasonLengthLimit: 128; NoteLengthLimit: 1024), counted in bytes as Go's len() counts a
    // string. The note's bound is reported on the field `message`, its internal name.
    const bytes = (f: string): number => Buffer.byteLength(stringField(obj, f) ?? '');
    const tooLong = (field: string, limit: number): FieldError => fieldInvalid(field, { go: 'string', value: '' }, `can have at most ${limit} characters`);
    if (bytes('reportingController') === 0) errs.push(fieldRequired('reportingController'));
    for (const f of ['reportingInstance', 'action', 'reason']) {
      if (bytes(f) === 0) errs.push(fieldRequired(f));
      else if (bytes(f) > EVENT_FIELD_LIMIT) errs.push(tooLong(f, EVENT_FIELD_LIMIT));
    }
    if (bytes('note') > EVENT_NOTE_LIMIT) errs.push(tooLong('message', EVENT_NOTE_LIMIT));
    return errs;
  },
};

export const RESOURCES: readonly ResourceDef[] = [LEASE, NODE, CORE_EVENT, EVENTS_V1, DAEMON_SET, POD];

/** Finds the definition for a URL's group, version and plural resource. */
export function findResource(group: string, version: string, resource: string): ResourceDef | undefined {
  return RESOURCES.find((r) => r.group === group && r.version === version && r.resource === resource);
}

/** Finds a definition by `leases`, `leases.coordination.k8s.io`, `nodes`, `events`, `events.events.k8s.io`. */
export function findResourceById(id: string): ResourceDef | undefined {
  return RESOURCES.find((r) => resourceId(r) === id) ?? RESOURCES.find((r) => r.resource === id);
}

/** Name validation shared by every kind here (all are DNS-subdomain named). */
export function validateObjectName(obj: JsonObject): FieldError[] {
  const meta = isObject(obj['metadata']) ? obj['metadata'] : {};
  return validateName(stringField(meta, 'name'), stringField(meta, 'generateName'));
}
