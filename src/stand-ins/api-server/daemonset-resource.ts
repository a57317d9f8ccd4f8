// apps/v1 DaemonSet, as the real registry serves it: pkg/registry/apps/daemonset/strategy.go
// (namespaced, AllowCreateOnUpdate false, AllowUnconditionalUpdate true, a status subresource),
// the apps/v1 defaults (pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet) and
// pkg/apis/apps/validation ValidateDaemonSet / ValidateDaemonSetStatusUpdate.
//
// The strategy, as upstream:
//   - create: status cleared, metadata.generation = 1, template generation 1 (apps/v1 shows it as
//     the annotation deprecated.daemonset.template.generation);
//   - update: status kept; generation + 1 when the spec changes (and the template generation + 1
//     when the pod template changes); the selector is immutable;
//   - status update: spec kept; every count and observedGeneration must be >= 0.
// The DaemonSet controller is not simulated: status moves only when a client writes it, as the
// real controller would through daemonsets/status.
//
// Assumptions, stated once: only the pod-level template defaults are applied (restartPolicy,
// dnsPolicy, schedulerName, terminationGracePeriodSeconds, securityContext), not the container-
// level ones; of the pod template's validation only "containers is required" and the restart
// policy are checked; the selector is compared with matchLabels and matchExpressions as
// metav1.LabelSelectorAsSelector reads them.
import { type FieldError, fieldInvalid, fieldNotSupported, fieldRequired, type GoValue } from './field-error.ts';
import { isObject, type JsonObject, type JsonValue, metaOf, stringField } from './object-meta.ts';
import { sortedJson } from './patch.ts';
import type { ResourceDef } from './resources.ts';
import { type LabelRequirement, matchesLabels } from './selectors.ts';
import { decodeAll, decodeMeta, jsonKind, objectAt } from './typed-decode.ts';

/** apps/v1's spelling of the internal spec.templateGeneration. */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const STATUS_COUNTS = [
  'currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady',
  'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'collisionCount',
] as const;

function objectIn(holder: JsonObject, key: string): JsonObject {
  const v = holder[key];
  if (isObject(v)) return v;
  const fresh: JsonObject = {};
  holder[key] = fresh;
  return fresh;
}

/** SetDefaults_DaemonSet, and the pod-level template defaults (see the header). */
function setDefaults(obj: JsonObject): void {
  const spec = objectIn(obj, 'spec');
  const strategy = objectIn(spec, 'updateStrategy');
  if ((stringField(strategy, 'type') ?? '') === '') strategy['type'] = 'RollingUpdate';
  if (strategy['type'] === 'RollingUpdate') {
    const rolling = objectIn(strategy, 'rollingUpdate');
    rolling['maxUnavailable'] ??= 1;
    rolling['maxSurge'] ??= 0;
  }
  spec['revisionHistoryLimit'] ??= 10;
  const podSpec = objectIn(objectIn(spec, 'template'), 'spec');
  if ((stringField(podSpec, 'restartPolicy') ?? '') === '') podSpec['restartPolicy'] = 'Always';
  if ((stringField(podSpec, 'dnsPolicy') ?? '') === '') podSpec['dnsPolicy'] = 'ClusterFirst';
  if ((stringField(podSpec, 'schedulerName') ?? '') === '') podSpec['schedulerName'] = 'default-scheduler';
  podSpec['terminationGracePeriodSeconds'] ??= 30;
  podSpec['securityContext'] ??= {};
}

function stringMap(v: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (isObject(v)) for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
}

/** Go's %#v of a map[string]string: keys sorted; `(nil)` when absent. */
function goMap(v: JsonValue | undefined): string {
  if (!isObject(v)) return 'map[string]string(nil)';
  const m = stringMap(v);
  return `map[string]string{${Object.keys(m).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(m[k])}`).join(', ')}}`;
}

/** metav1.LabelSelectorAsSelector: undefined (matches nothing) for a missing selector. */
function selectorRequirements(selector: JsonValue | undefined): LabelRequirement[] | undefined {
  if (!isObject(selector)) return undefined;
  const reqs: LabelRequirement[] = Object.entries(stringMap(selector['matchLabels'])).map(([key, value]) => ({ op: 'eq', key, value }));
  const expressions = Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : [];
  for (const e of expressions) {
    if (!isObject(e)) continue;
    const key = stringField(e, 'key') ?? '';
    const values = Array.isArray(e['values']) ? e['values'].filter((x): x is string => typeof x === 'string') : [];
    const op = stringField(e, 'operator');
    if (op === 'In') reqs.push({ op: 'in', key, values });
    else if (op === 'NotIn') reqs.push({ op: 'notin', key, values });
    else if (op === 'Exists') reqs.push({ op: 'exists', key });
    else if (op === 'DoesNotExist') reqs.push({ op: 'notexists', key });
  }
  return reqs;
}

/** intstr.IntOrString as %#v prints it. */
function intOrString(v: JsonValue | undefined): GoValue {
  if (typeof v === 'number') return { go: 'raw', text: `intstr.IntOrString{Type:0, IntVal:${v}, StrVal:""}` };
  return { go: 'raw', text: `intstr.IntOrString{Type:1, IntVal:0, StrVal:${JSON.stringify(typeof v === 'string' ? v : '')}}` };
}

/** ValidatePositiveIntOrPercent and IsNotMoreThan100Percent; the value (a percent's number) when valid. */
function intOrPercent(v: JsonValue | undefined, field: string, errs: FieldError[]): number {
  if (typeof v === 'string') {
    const m = /^([0-9]+)%$/.exec(v);
    if (m === null) {
      errs.push(fieldInvalid(field, intOrString(v), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
      return 0;
    }
    const percent = Number(m[1]);
    if (percent > 100) errs.push(fieldInvalid(field, intOrString(v), 'must not be greater than 100%'));
    return percent;
  }
  const n = typeof v === 'number' ? v : 0;
  if (n < 0) errs.push(fieldInvalid(field, { go: 'int', value: n }, 'must be greater than or equal to 0'));
  return n;
}

function validateSpec(obj: JsonObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  const template = isObject(spec['template']) ? spec['template'] : {};
  const templateMeta = isObject(template['metadata']) ? template['metadata'] : {};
  const selector = spec['selector'];
  const reqs = selectorRequirements(selector);
  if (reqs === undefined || !matchesLabels(reqs, stringMap(templateMeta['labels']))) {
    errs.push(fieldInvalid('spec.template.metadata.labels', { go: 'raw', text: goMap(templateMeta['labels']) }, '`selector` does not match template `labels`'));
  }
  if (isObject(selector) && reqs !== undefined && reqs.length === 0) {
    errs.push(fieldInvalid('spec.selector', { go: 'raw', text: `v1.LabelSelector{MatchLabels:${goMap(selector['matchLabels'])}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}` }, 'empty selector is invalid for daemonset'));
  }
  const podSpec = isObject(template['spec']) ? template['spec'] : {};
  const containers = podSpec['containers'];
  if (!Array.isArray(containers) || containers.length === 0) errs.push(fieldRequired('spec.template.spec.containers'));
  const restart = stringField(podSpec, 'restartPolicy') ?? '';
  if (restart !== 'Always') errs.push(fieldNotSupported('spec.template.spec.restartPolicy', { go: 'string', value: restart }, ['Always']));
  const minReady = spec['minReadySeconds'];
  if (typeof minReady === 'number' && minReady < 0) errs.push(fieldInvalid('spec.minReadySeconds', { go: 'int', value: minReady }, 'must be greater than or equal to 0'));
  const strategy = isObject(spec['updateStrategy']) ? spec['updateStrategy'] : {};
  const type = stringField(strategy, 'type') ?? '';
  if (type === 'RollingUpdate') {
    const rolling = isObject(strategy['rollingUpdate']) ? strategy['rollingUpdate'] : {};
    const unavailable = intOrPercent(rolling['maxUnavailable'], 'spec.updateStrategy.rollingUpdate.maxUnavailable', errs);
    const surge = intOrPercent(rolling['maxSurge'], 'spec.updateStrategy.rollingUpdate.maxSurge', errs);
    if (unavailable !== 0 && surge !== 0) {
      errs.push(fieldInvalid('spec.updateStrategy.rollingUpdate.maxSurge', intOrString(rolling['maxSurge']), 'may not be set when maxUnavailable is non-zero'));
    } else if (unavailable === 0 && surge === 0) {
      errs.push(fieldRequired('spec.updateStrategy.rollingUpdate.maxUnavailable', 'cannot be 0 when maxSurge is 0'));
    }
  } else if (type !== 'OnDelete') {
    errs.push(fieldNotSupported('spec.updateStrategy', { go: 'string', value: type }, ['OnDelete', 'RollingUpdate']));
  }
  return errs;
}

function validateStatus(obj: JsonObject): FieldError[] {
  const status = isObject(obj['status']) ? obj['status'] : {};
  const errs: FieldError[] = [];
  for (const key of ['currentNumberScheduled', 'numberMisscheduled', 'desiredNumberScheduled', 'numberReady', 'observedGeneration', 'updatedNumberScheduled', 'numberAvailable', 'numberUnavailable', 'collisionCount']) {
    const v = status[key];
    if (typeof v === 'number' && v < 0) errs.push(fieldInvalid(`status.${key}`, { go: 'int', value: v }, 'must be greater than or equal to 0'));
  }
  return errs;
}

function templateGeneration(obj: JsonObject): number {
  const text = stringField(annotationsOf(obj), TEMPLATE_GENERATION_ANNOTATION);
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : 0;
}

function annotationsOf(obj: JsonObject): JsonObject {
  const annotations = metaOf(obj)['annotations'];
  return isObject(annotations) ? annotations : {};
}

function setTemplateGeneration(obj: JsonObject, generation: number): void {
  const meta = metaOf(obj);
  meta['annotations'] = { ...annotationsOf(obj), [TEMPLATE_GENERATION_ANNOTATION]: String(generation) };
}

function specPart(obj: JsonObject, part?: string): string {
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  return sortedJson(part === undefined ? spec : (spec[part] ?? null));
}

export const DAEMON_SET: ResourceDef = {
  group: 'apps',
  version: 'v1',
  resource: 'daemonsets',
  singular: 'daemonset',
  kind: 'DaemonSet',
  listKind: 'DaemonSetList',
  namespaced: true,
  shortNames: ['ds'],
  hasStatus: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  // The patchStrategy tags of PodSpec, Container and DaemonSetStatus.
  listStrategies: {
    'metadata.ownerReferences': { mergeKey: 'uid' },
    'metadata.finalizers': {},
    'spec.template.spec.containers': { mergeKey: 'name' },
    'spec.template.spec.initContainers': { mergeKey: 'name' },
    'spec.template.spec.volumes': { mergeKey: 'name' },
    'spec.template.spec.imagePullSecrets': { mergeKey: 'name' },
    'spec.template.spec.containers.env': { mergeKey: 'name' },
    'spec.template.spec.containers.ports': { mergeKey: 'containerPort' },
    'spec.template.spec.containers.volumeMounts': { mergeKey: 'mountPath' },
    'status.conditions': { mergeKey: 'type' },
  },
  extraFieldLabels: {},
  // The empty apps/v1 DaemonSet as 1.34 encodes it (a BOOKMARK's object): its template generation
  // 0 shown as the annotation, the struct fields without omitempty present.
  emptyBody: {
    metadata: { annotations: { [TEMPLATE_GENERATION_ANNOTATION]: '0' } },
    spec: { selector: null, template: { metadata: {}, spec: { containers: null } }, updateStrategy: {} },
    status: { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
  },
  decode(obj) {
    const metaErr = decodeMeta(obj, 'DaemonSet');
    if (metaErr !== undefined) return { error: metaErr };
    const spec = objectAt(obj, 'spec', 'DaemonSet', 'v1.DaemonSetSpec');
    if (typeof spec === 'string') return { error: spec };
    const specErr = decodeAll(spec, { selector: ['object', 'v1.LabelSelector'], template: ['object', 'v1.PodTemplateSpec'], updateStrategy: ['object', 'v1.DaemonSetUpdateStrategy'], minReadySeconds: ['int32', 'int32'], revisionHistoryLimit: ['int32', 'int32'] }, 'DaemonSetSpec', 'spec.');
    if (specErr !== undefined) return { error: specErr };
    const status = objectAt(obj, 'status', 'DaemonSet', 'v1.DaemonSetStatus');
    if (typeof status === 'string') return { error: status };
    const counts: Record<string, readonly ['int32' | 'int64', string]> = { observedGeneration: ['int64', 'int64'] };
    for (const k of STATUS_COUNTS) counts[k] = ['int32', 'int32'];
    const statusErr = decodeAll(status, counts, 'DaemonSetStatus', 'status.');
    if (statusErr !== undefined) return { error: statusErr };
    const labels = isObject(spec?.['template']) && isObject(spec['template']['metadata']) ? spec['template']['metadata']['labels'] : undefined;
    if (labels !== undefined && labels !== null && !isObject(labels)) {
      return { error: `json: cannot unmarshal ${jsonKind(labels)} into Go struct field ObjectMeta.spec.template.metadata.labels of type map[string]string` };
    }
    setDefaults(obj);
    return { warnings: [] };
  },
  validate: validateSpec,
  prepareForCreate(obj) {
    obj['status'] = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    metaOf(obj)['generation'] = 1;
    setTemplateGeneration(obj, Math.max(1, templateGeneration(obj)));
  },
  prepareForUpdate(obj, old, subresource) {
    const generation = metaOf(old)['generation'];
    const oldGeneration = typeof generation === 'number' ? generation : 0;
    const oldTemplate = templateGeneration(old);
    if (subresource === 'status') {
      setTemplateGeneration(obj, oldTemplate);
      return;
    }
    if (specPart(obj, 'template') !== specPart(old, 'template')) {
      setTemplateGeneration(obj, oldTemplate + 1);
      metaOf(obj)['generation'] = oldGeneration + 1;
      return;
    }
    setTemplateGeneration(obj, oldTemplate);
    if (specPart(obj) !== specPart(old)) metaOf(obj)['generation'] = oldGeneration + 1;
  },
  validateUpdate(obj, old, subresource) {
    if (subresource === 'status') return validateStatus(obj);
    const spec = isObject(obj['spec']) ? obj['spec'] : {};
    const oldSpec = isObject(old['spec']) ? old['spec'] : {};
    if (sortedJson(spec['selector'] ?? null) !== sortedJson(oldSpec['selector'] ?? null)) {
      return [fieldInvalid('spec.selector', { go: 'raw', text: `v1.LabelSelector{MatchLabels:${goMap(isObject(spec['selector']) ? spec['selector']['matchLabels'] : undefined)}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}` }, 'field is immutable')];
    }
    return [];
  },
};

