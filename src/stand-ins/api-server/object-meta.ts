// JSON objects as the stand-in keeps them, and the key order the real server writes.
//
// The real server encodes Go structs, so its JSON keys come in struct field order: TypeMeta
// (kind, apiVersion), then metadata, spec, status. ObjectMeta's own order is fixed too. Objects
// are put into that order once, when they are stored, so every read serves the same bytes.

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A deep copy through JSON; the store's objects are never handed out by reference. */
export function clone<T extends JsonValue>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

// staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go ObjectMeta field order.
const META_ORDER = [
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers',
  'managedFields',
];
const TOP_ORDER = ['kind', 'apiVersion', 'metadata', 'spec', 'status'];

function ordered(obj: JsonObject, order: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of order) {
    const v = obj[k];
    if (v !== undefined) out[k] = v;
  }
  for (const [k, v] of Object.entries(obj)) {
    if (!(k in out)) out[k] = v;
  }
  return out;
}

/** The object with kind/apiVersion first and metadata in ObjectMeta order. */
export function canonicalOrder(obj: JsonObject): JsonObject {
  const out = ordered(obj, TOP_ORDER);
  const meta = out['metadata'];
  if (isObject(meta)) out['metadata'] = ordered(meta, META_ORDER);
  return out;
}

export function metaOf(obj: JsonObject): JsonObject {
  const meta = obj['metadata'];
  if (isObject(meta)) return meta;
  const fresh: JsonObject = {};
  obj['metadata'] = fresh;
  return fresh;
}

export function stringField(obj: JsonObject, key: string): string | undefined {
  const v = obj[key];
  return typeof v === 'string' ? v : undefined;
}

export function labelsOf(obj: JsonObject): Record<string, string> {
  const meta = obj['metadata'];
  if (!isObject(meta)) return {};
  const labels = meta['labels'];
  if (!isObject(labels)) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The value at a dotted path (`spec.unschedulable`), or undefined. */
export function valueAt(obj: JsonObject, path: string): JsonValue | undefined {
  let cur: JsonValue | undefined = obj;
  for (const part of path.split('.')) {
    if (!isObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}
