// The typed decode of the stand-in's resources: a JSON body checked field by field as Go's
// encoding/json (sigs.k8s.io/json) would decode it into the resource's Go struct, with Go's own
// messages, and time fields rewritten as MarshalJSON prints them. Each resource definition
// (resources.ts, daemonset-resource.ts) names its fields and their Go types.
//
// Failure modes: the first field that does not decode is the answer (a Go message string);
// fields not named are passed through unchecked.
import { goParseTime, RFC3339, RFC3339_MICRO } from './go-time.ts';
import { isObject, type JsonObject, type JsonValue } from './object-meta.ts';

export type GoKind = 'string' | 'int32' | 'int64' | 'bool' | 'MicroTime' | 'Time' | 'object' | 'array';

export function jsonKind(v: JsonValue): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/**
 * Checks one field as encoding/json (sigs.k8s.io/json) would decode it into its Go type, and
 * rewrites time fields as MarshalJSON would print them. Returns Go's message on failure.
 */
function decodeField(
  holder: JsonObject,
  key: string,
  want: GoKind,
  goStruct: string,
  path: string,
  goType: string,
): string | undefined {
  const v = holder[key];
  if (v === undefined || v === null) return undefined;
  const typeError = (): string =>
    `json: cannot unmarshal ${jsonKind(v)}${typeof v === 'number' ? ` ${String(v)}` : ''} into Go struct field ${goStruct}.${path} of type ${goType}`;
  switch (want) {
    case 'string':
      return typeof v === 'string' ? undefined : typeError();
    case 'bool':
      return typeof v === 'boolean' ? undefined : typeError();
    case 'int32':
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) return typeError();
      return undefined;
    case 'int64':
      // Past 2^53 a JSON number loses precision here, where Go would still decode it exactly.
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return typeError();
      return undefined;
    case 'object':
      return isObject(v) ? undefined : typeError();
    case 'array':
      return Array.isArray(v) ? undefined : typeError();
    case 'MicroTime':
    case 'Time': {
      // MicroTime/Time.UnmarshalJSON first decode a Go string, then time.Parse it.
      if (typeof v !== 'string') return `json: cannot unmarshal ${jsonKind(v)} into Go value of type string`;
      // Time also accepts "" as the zero time? No: only JSON null is the zero value.
      const parsed = goParseTime(want === 'MicroTime' ? RFC3339_MICRO : RFC3339, v);
      if (!parsed.ok) return parsed.message;
      holder[key] = parsed.text;
      return undefined;
    }
  }
}

export function decodeAll(
  holder: JsonObject | undefined,
  fields: Readonly<Record<string, readonly [GoKind, string]>>,
  goStruct: string,
  prefix: string,
): string | undefined {
  if (holder === undefined) return undefined;
  for (const [key, [kind, goType]] of Object.entries(fields)) {
    const e = decodeField(holder, key, kind, goStruct, `${prefix}${key}`, goType);
    if (e !== undefined) return e;
  }
  return undefined;
}

export function objectAt(obj: JsonObject, key: string, goStruct: string, goType: string): JsonObject | string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) return `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${goStruct}.${key} of type ${goType}`;
  return v;
}

export const META_FIELDS: Readonly<Record<string, readonly [GoKind, string]>> = {
  name: ['string', 'string'],
  generateName: ['string', 'string'],
  namespace: ['string', 'string'],
  uid: ['string', 'types.UID'],
  resourceVersion: ['string', 'string'],
  generation: ['int64', 'int64'],
  labels: ['object', 'map[string]string'],
  annotations: ['object', 'map[string]string'],
  ownerReferences: ['array', '[]v1.OwnerReference'],
  finalizers: ['array', '[]string'],
};

export function decodeMeta(obj: JsonObject, kind: string): string | undefined {
  const meta = objectAt(obj, 'metadata', kind, 'v1.ObjectMeta');
  if (typeof meta === 'string') return meta;
  const e = decodeAll(meta, META_FIELDS, kind, 'metadata.');
  if (e !== undefined) return e;
  for (const map of ['labels', 'annotations']) {
    const m = meta?.[map];
    if (isObject(m)) {
      for (const [k, v] of Object.entries(m)) {
        if (typeof v !== 'string' && v !== null) {
          return `json: cannot unmarshal ${jsonKind(v)} into Go struct field ObjectMeta.metadata.${map} of type string`;
        }
        if (v === null) delete m[k];
      }
    }
  }
  return undefined;
}
