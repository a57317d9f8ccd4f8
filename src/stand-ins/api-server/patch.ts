// The three patch formats the API server applies, as pure functions over JSON.
//
//   - JSON merge patch, RFC 7386 (evanphx/json-patch MergePatch);
//   - JSON patch, RFC 6902 (evanphx/json-patch Apply): add, remove, replace, move, copy, test;
//   - strategic merge patch (apimachinery/pkg/util/strategicpatch): maps merge, null deletes,
//     lists merge by the merge key the Go type declares (conditions by `type`), lists without a
//     strategy are replaced, and the directives `$patch` (replace/delete/merge), `$retainKeys`,
//     `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured.
//
// Failure modes: each throws a PatchError whose `kind` says how the handler must answer
// (400 bad patch document, 422 patch does not apply, 500 missing merge key), as
// endpoints/handlers/patch.go maps them.

import type { ListStrategy } from './resources.ts';
import { isObject, type JsonObject, type JsonValue } from './object-meta.ts';

export type PatchErrorKind = 'bad-request' | 'unprocessable' | 'internal';

export class PatchError extends Error {
  readonly code: PatchErrorKind;

  constructor(code: PatchErrorKind, message: string) {
    super(message);
    this.name = 'PatchError';
    this.code = code;
  }
}

/** RFC 7386. */
export function mergePatch(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isObject(patch)) return patch;
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// --- RFC 6902 --------------------------------------------------------------------------------

function unescapeToken(t: string): string {
  return t.replace(/~1/g, '/').replace(/~0/g, '~');
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new PatchError('unprocessable', `invalid JSON pointer: ${path}`);
  return path.slice(1).split('/').map(unescapeToken);
}

function parentOf(doc: JsonValue, tokens: string[]): { parent: JsonObject | JsonValue[]; key: string } {
  let cur: JsonValue = doc;
  for (const t of tokens.slice(0, -1)) {
    if (Array.isArray(cur)) cur = cur[Number(t)] ?? null;
    else if (isObject(cur)) cur = cur[t] ?? null;
    else cur = null;
    if (cur === null) throw new PatchError('unprocessable', 'doc is missing path');
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw new PatchError('unprocessable', 'doc is missing path');
  return { parent: cur, key: tokens[tokens.length - 1] ?? '' };
}

function getAt(doc: JsonValue, path: string): JsonValue {
  let cur: JsonValue = doc;
  for (const t of pointer(path)) {
    if (Array.isArray(cur)) cur = cur[Number(t)] ?? (() => { throw new PatchError('unprocessable', `missing value: ${path}`); })();
    else if (isObject(cur) && t in cur) cur = cur[t] ?? null;
    else throw new PatchError('unprocessable', `missing value: ${path}`);
  }
  return cur;
}

function addAt(doc: JsonValue, path: string, value: JsonValue): JsonValue {
  const tokens = pointer(path);
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(i) || i < 0 || i > parent.length) throw new PatchError('unprocessable', `index out of bounds: ${path}`);
    parent.splice(i, 0, value);
  } else {
    parent[key] = value;
  }
  return doc;
}

function removeAt(doc: JsonValue, path: string): JsonValue {
  const tokens = pointer(path);
  const { parent, key } = parentOf(doc, tokens);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!Number.isInteger(i) || i < 0 || i >= parent.length) throw new PatchError('unprocessable', `index out of bounds: ${path}`);
    parent.splice(i, 1);
  } else {
    if (!(key in parent)) throw new PatchError('unprocessable', `missing value: ${path}`);
    delete parent[key];
  }
  return doc;
}

function deepEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: JsonValue | undefined): JsonValue | undefined {
  if (Array.isArray(v)) return v.map((x) => sortKeys(x) ?? null);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]) ?? null;
    return out;
  }
  return v;
}

/** The largest JSON patch the server applies (endpoints/handlers/patch.go maxJSONPatchOperations). */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;

/** RFC 6902, applied to a copy. */
export function jsonPatch(target: JsonValue, ops: JsonValue): JsonValue {
  if (!Array.isArray(ops)) throw new PatchError('bad-request', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError('bad-request', `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`);
  }
  let doc: JsonValue = JSON.parse(JSON.stringify(target)) as JsonValue;
  for (const op of ops) {
    if (!isObject(op)) throw new PatchError('bad-request', 'json: cannot unmarshal into Go value of type jsonpatch.Operation');
    const kind = op['op'];
    const path = typeof op['path'] === 'string' ? op['path'] : '';
    const from = typeof op['from'] === 'string' ? op['from'] : '';
    switch (kind) {
      case 'add': doc = addAt(doc, path, op['value'] ?? null); break;
      case 'remove': doc = removeAt(doc, path); break;
      case 'replace': getAt(doc, path); doc = removeAt(doc, path); doc = addAt(doc, path, op['value'] ?? null); break;
      case 'move': { const v = getAt(doc, from); doc = removeAt(doc, from); doc = addAt(doc, path, v); break; }
      case 'copy': doc = addAt(doc, path, JSON.parse(JSON.stringify(getAt(doc, from))) as JsonValue); break;
      case 'test':
        if (!deepEqual(getAt(doc, path), op['value'])) throw new PatchError('unprocessable', `testing value ${path} failed: test failed`);
        break;
      default: throw new PatchError('unprocessable', `Unexpected kind: ${String(kind)}`);
    }
  }
  return doc;
}

// --- Strategic merge patch -------------------------------------------------------------------

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

/** Applies a strategic merge patch; `strategies` maps dotted paths to list strategies. */
export function strategicMergePatch(
  original: JsonObject,
  patch: JsonValue,
  strategies: Readonly<Record<string, ListStrategy>>,
): JsonObject {
  if (!isObject(patch)) throw new PatchError('bad-request', 'invalid JSON document');
  const merged = mergeMap(original, patch, '', strategies);
  return merged ?? {};
}

function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  path: string,
  strategies: Readonly<Record<string, ListStrategy>>,
): JsonObject | undefined {
  const directive = patch[DIRECTIVE];
  if (directive === 'delete') return undefined;
  if (directive === 'replace') {
    const out = { ...patch };
    delete out[DIRECTIVE];
    return out;
  }
  if (directive !== undefined && directive !== 'merge') {
    throw new PatchError('bad-request', `Unknown patch type: ${String(directive)} in map: ${goPrintMap(patch)}`);
  }
  let out: JsonObject = { ...original };
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain)) throw new PatchError('bad-request', 'invalid patch format for retainKeys');
    const keep = new Set(retain.map(String));
    out = Object.fromEntries(Object.entries(out).filter(([k]) => keep.has(k)));
  }
  const orders: [string, JsonValue[]][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (key === DIRECTIVE || key === RETAIN_KEYS) continue;
    if (key.startsWith(SET_ORDER)) {
      if (!Array.isArray(value)) throw new PatchError('bad-request', 'invalid patch format for setElementOrder list');
      orders.push([key.slice(SET_ORDER.length), value]);
      continue;
    }
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length);
      if (!Array.isArray(value)) throw new PatchError('bad-request', 'invalid patch format for primitive list');
      const cur = out[field];
      if (Array.isArray(cur)) {
        const drop = new Set(value.map((v) => JSON.stringify(v)));
        out[field] = cur.filter((v) => !drop.has(JSON.stringify(v)));
      }
      continue;
    }
    const childPath = path === '' ? key : `${path}.${key}`;
    if (value === null) {
      delete out[key];
      continue;
    }
    const cur = out[key];
    if (isObject(value)) {
      const merged = mergeMap(isObject(cur) ? cur : {}, value, childPath, strategies);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
      continue;
    }
    if (Array.isArray(value)) {
      out[key] = mergeList(Array.isArray(cur) ? cur : [], value, childPath, strategies);
      continue;
    }
    out[key] = value;
  }
  for (const [field, order] of orders) {
    const list = out[field];
    const strategy = strategies[path === '' ? field : `${path}.${field}`];
    if (Array.isArray(list)) out[field] = applyOrder(list, order, strategy?.mergeKey);
  }
  return out;
}

function mergeList(
  original: JsonValue[],
  patch: JsonValue[],
  path: string,
  strategies: Readonly<Record<string, ListStrategy>>,
): JsonValue[] {
  const strategy = strategies[path];
  // A `{"$patch": "replace"}` element replaces the list with the other elements.
  const replace = patch.some((p) => isObject(p) && p[DIRECTIVE] === 'replace');
  if (replace) return patch.filter((p) => !(isObject(p) && p[DIRECTIVE] === 'replace'));
  if (strategy === undefined) return patch;
  if (strategy.mergeKey === undefined) {
    const identity = (v: JsonValue): string => JSON.stringify(v);
    const fromPatch: JsonValue[] = [];
    for (const v of patch) if (!fromPatch.some((p) => identity(p) === identity(v))) fromPatch.push(v);
    const serverOnly = original.filter((v) => !fromPatch.some((p) => identity(p) === identity(v)));
    return mergeInServerOrder(serverOnly, fromPatch, original, identity);
  }
  const key = strategy.mergeKey;
  // Deletions first, as mergeSliceWithSpecialElements does; then the other elements merge.
  let base = [...original];
  const items: JsonObject[] = [];
  for (const item of patch) {
    if (!isObject(item)) throw new PatchError('bad-request', 'invalid patch format for a list of maps');
    const id = item[key];
    if (id === undefined) {
      throw new PatchError('internal', `map: ${goPrintMap(item)} does not contain declared merge key: ${key}`);
    }
    if (item[DIRECTIVE] === 'delete') base = base.filter((o) => !(isObject(o) && deepEqual(o[key], id)));
    else items.push(item);
  }
  const merged = [...base];
  for (const item of items) {
    const at = merged.findIndex((o) => isObject(o) && deepEqual(o[key], item[key]));
    if (at >= 0) {
      const existing = merged[at];
      const result = mergeMap(isObject(existing) ? existing : {}, item, path, strategies);
      if (result === undefined) merged.splice(at, 1);
      else merged[at] = result;
    } else {
      const fresh = { ...item };
      delete fresh[DIRECTIVE];
      merged.push(fresh);
    }
  }
  const identity = (v: JsonValue): string => JSON.stringify(isObject(v) ? (v[key] ?? null) : v);
  const patched = new Map(items.map((item, i) => [identity(item), i]));
  const fromPatch = merged.filter((v) => patched.has(identity(v))).sort((a, b) => (patched.get(identity(a)) ?? 0) - (patched.get(identity(b)) ?? 0));
  const serverOnly = merged.filter((v) => !patched.has(identity(v)));
  return mergeInServerOrder(serverOnly, fromPatch, base, identity);
}

/**
 * The order strategicpatch's normalizeElementOrder gives a merged list: the patch's elements in
 * the patch's order, the server's other elements in the server's order, interleaved by where
 * each stood in the live list. An element new to the list has no place there, so it goes before
 * the server's elements that follow the patch's previous one: a new condition comes first.
 */
function mergeInServerOrder(serverOnly: JsonValue[], fromPatch: JsonValue[], live: JsonValue[], identity: (v: JsonValue) => string): JsonValue[] {
  const place = new Map(live.map((v, i) => [identity(v), i]));
  const out: JsonValue[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < fromPatch.length) {
    const left = serverOnly[i];
    const right = fromPatch[j];
    if (right === undefined || left === undefined) {
      out.push((right ?? left) as JsonValue);
      if (right === undefined) i++;
      else j++;
      continue;
    }
    const l = place.get(identity(left));
    const r = place.get(identity(right));
    if (l !== undefined && r !== undefined && l < r) {
      out.push(left);
      i++;
    } else {
      out.push(right);
      j++;
    }
  }
  return out;
}

/** `$setElementOrder`: listed elements in the listed order, the rest after them in their own order. */
function applyOrder(list: JsonValue[], order: JsonValue[], mergeKey: string | undefined): JsonValue[] {
  const identity = (v: JsonValue): string => JSON.stringify(mergeKey !== undefined && isObject(v) ? (v[mergeKey] ?? null) : v);
  const rank = new Map(order.map((o, i) => [identity(o), i]));
  const listed = list.filter((v) => rank.has(identity(v))).sort((a, b) => (rank.get(identity(a)) ?? 0) - (rank.get(identity(b)) ?? 0));
  const rest = list.filter((v) => !rank.has(identity(v)));
  return [...listed, ...rest];
}

/** The Go `%+v` of a decoded patch map, as the 422 `patch` field error prints it. */
export function goPrintMap(v: JsonValue): string {
  if (isObject(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${goPrintMap(v[k] ?? null)}`).join(' ')}]`;
  if (Array.isArray(v)) return `[${v.map(goPrintMap).join(' ')}]`;
  if (v === null) return '<nil>';
  return String(v);
}

/** Go's json.Marshal of a map: keys sorted, compact. The merged document evanphx returns is printed so. */
export function sortedJson(v: JsonValue): string {
  return JSON.stringify(sortKeys(v));
}
