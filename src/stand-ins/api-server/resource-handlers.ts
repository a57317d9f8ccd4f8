// The verbs on one resource: get, list, create, update, patch, delete. Each takes the parsed
// request and the store, and returns the answer or throws ApiStatusError. No HTTP here.
//
// They follow the generic registry (apiserver/pkg/registry/generic/registry/store.go) and the
// handlers (apiserver/pkg/endpoints/handlers/{create,update,patch,delete,get}.go):
//   - update of a missing object creates it only where the strategy allows create-on-update
//     (Lease, Event: yes; Node: no → 404), and never when the body carries a uid (a precondition);
//   - update without metadata.resourceVersion is refused with 422 where the strategy forbids
//     unconditional update (Lease), and a stale one is 409 Conflict;
//   - patch never creates (404 on a missing object) and is unconditional unless the patch
//     itself carries a resourceVersion (or uid), which is then a precondition;
//   - an update or patch that changes nothing keeps the resourceVersion and makes no event,
//     as etcd3's GuaranteedUpdate short-circuits;
//   - decode errors: 400 for a create/update body (transformDecodeError), 422 on field `patch`
//     for a patched object (patch.go applyPatchToCurrentObject);
//   - a delete is answered with a Success Status naming what was deleted (finalizers are not
//     modelled: every delete is immediate).

import { randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../../clock/clock.ts';
import { fieldInvalid, type FieldError } from './field-error.ts';
import { formatTime, RFC3339 } from './go-time.ts';
import { ObjectStore, type StoredObject } from './object-store.ts';
import { clone, isObject, type JsonObject, type JsonValue, labelsOf, metaOf, stringField } from './object-meta.ts';
import { goPrintMap, jsonPatch, mergePatch, PatchError, sortedJson, strategicMergePatch } from './patch.ts';
import { apiVersionOf, type ResourceDef, validateObjectName } from './resources.ts';
import { type FieldRequirement, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError, type LabelRequirement } from './selectors.ts';
import {
  alreadyExists, type ApiStatusError, badRequest, conflict, genericServerResponse, internalError, invalid, notFound, resourceExpired,
  tooLargeResourceVersion,
} from './status.ts';

export interface Target {
  readonly def: ResourceDef;
  /** '' for cluster-scoped resources. */
  readonly namespace: string;
  readonly name: string;
  /** '' or 'status'. */
  readonly subresource: string;
}

export interface Answer {
  readonly status: number;
  /** JSON text. */
  readonly body: string;
  readonly warnings: readonly string[];
}

export type PatchType = 'json' | 'merge' | 'strategic';

function groupResource(def: ResourceDef): { group: string; resource: string } {
  return { group: def.group, resource: def.resource };
}

function nameOf(obj: JsonObject): string {
  return stringField(metaOf(obj), 'name') ?? '';
}

// --- Reading ---------------------------------------------------------------------------------

export function getObject(store: ObjectStore, t: Target): Answer {
  const e = store.entry(t.def, t.namespace, t.name);
  if (e === undefined) throw notFound(groupResource(t.def), t.name);
  return { status: 200, body: e.json, warnings: [] };
}

export interface ListFilter {
  readonly labels: readonly LabelRequirement[];
  readonly fields: readonly FieldRequirement[];
  readonly namespace: string | undefined;
}

/** Parses labelSelector and fieldSelector; 400 on a bad one or an unsupported field label. */
export function parseListFilter(def: ResourceDef, query: URLSearchParams, namespace: string | undefined): ListFilter {
  try {
    const labels = parseLabelSelector(query.get('labelSelector') ?? '');
    const fields = parseFieldSelector(query.get('fieldSelector') ?? '');
    for (const f of fields) {
      if (f.field !== 'metadata.name' && f.field !== 'metadata.namespace' && !(f.field in def.extraFieldLabels)) {
        throw new SelectorError(`field label not supported: ${f.field}`);
      }
    }
    return { labels, fields, namespace };
  } catch (e) {
    if (e instanceof SelectorError) throw badRequest(e.message);
    throw e;
  }
}

export function matchesFilter(def: ResourceDef, filter: ListFilter, obj: JsonObject): boolean {
  if (!matchesLabels(filter.labels, labelsOf(obj))) return false;
  if (filter.fields.length === 0) return true;
  const meta = metaOf(obj);
  return matchesFields(filter.fields, (field) => {
    if (field === 'metadata.name') return stringField(meta, 'name') ?? '';
    if (field === 'metadata.namespace') return stringField(meta, 'namespace') ?? '';
    return def.extraFieldLabels[field]?.(obj) ?? '';
  });
}

/**
 * Parses a resourceVersion parameter. '' and '0' mean "any"; a number newer than the store's
 * is a 504 Too large resource version (the watch cache waits 3 s for it first; this answers at once).
 */
export function parseResourceVersion(store: ObjectStore, raw: string | null): number | undefined {
  if (raw === null || raw === '' || raw === '0') return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`invalid resource version: ${raw}`);
  const rv = Number(raw);
  if (rv > store.resourceVersion()) throw tooLargeResourceVersion(rv, store.resourceVersion());
  return rv;
}

/** The continue token, as the real server writes it: base64url JSON of the list's revision and the last key sent. */
interface ContinueToken {
  readonly v: 'meta.k8s.io/v1';
  readonly rv: number;
  readonly start: string;
}

/**
 * A key as the token carries it: relative to the list's etcd prefix (`/registry/<resource>/` for
 * the whole resource, `/registry/<resource>/<namespace>` within one namespace), with a NUL after
 * it, which sorts right after the key itself.
 */
function tokenStart(storeKey: string, def: ResourceDef, namespace: string | undefined): string {
  const relative = namespace !== undefined ? storeKey.slice(namespace.length) : def.namespaced ? storeKey : storeKey.slice(1);
  return `${relative}\u0000`;
}

function storeKeyOf(start: string, def: ResourceDef, namespace: string | undefined): string {
  const relative = start.endsWith('\u0000') ? start.slice(0, -1) : start;
  return namespace !== undefined ? `${namespace}${relative}` : def.namespaced ? relative : `/${relative}`;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch (e) {
    throw badRequest(`invalid continue token: continue key is not valid: ${e instanceof Error ? e.message : String(e)}`);
  }
  const t = parsed as Partial<ContinueToken> | null;
  if (t === null || typeof t !== 'object' || t.v !== 'meta.k8s.io/v1') throw badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof t.rv !== 'number' || typeof t.start !== 'string' || t.start === '') throw badRequest('invalid continue token: continue key is not valid: encoded start key is empty');
  return { v: 'meta.k8s.io/v1', rv: t.rv, start: t.start };
}

/** The 410 for a continue token older than the history (etcd3 store's continue-from-compacted answer). */
function continueExpired(token: ContinueToken): ApiStatusError {
  const e = resourceExpired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.');
  (e.body as { metadata: Record<string, string> }).metadata = { continue: encodeContinue({ v: 'meta.k8s.io/v1', rv: -1, start: token.start }) };
  return e;
}

/**
 * A LIST, in pages when `limit` is given, as the real server pages it: each page at most
 * `limit` matching items in key order, `metadata.continue` while more remain, every page at the
 * first page's revision (a snapshot from the history), and `remainingItemCount` only for a list
 * without selectors. A continue token older than the history is 410 Expired.
 */
export function listObjects(store: ObjectStore, def: ResourceDef, filter: ListFilter, query: URLSearchParams): Answer {
  parseResourceVersion(store, query.get('resourceVersion'));
  const limitRaw = query.get('limit');
  const limit = limitRaw !== null && /^\d+$/.test(limitRaw) ? Number(limitRaw) : 0;
  const continueRaw = query.get('continue');
  let rv = store.resourceVersion();
  let after: string | undefined;
  let entries: readonly StoredObject[];
  if (continueRaw !== null && continueRaw !== '') {
    const token = decodeContinue(continueRaw);
    const snapshot = store.snapshot(def, token.rv, filter.namespace);
    if (snapshot === 'expired') throw continueExpired(token);
    rv = token.rv;
    after = storeKeyOf(token.start, def, filter.namespace);
    entries = snapshot;
  } else {
    entries = store.entries(def, filter.namespace);
  }
  const matching = entries.filter((e) => (after === undefined || ObjectStore.keyOf(e) > after) && matchesFilter(def, filter, e.obj));
  const page = limit > 0 ? matching.slice(0, limit) : matching;
  const remaining = matching.length - page.length;
  if (remaining > 0 && after === undefined) store.pinSnapshot(def, rv, filter.namespace, entries);
  const meta: Record<string, string | number> = { resourceVersion: String(rv) };
  const last = page[page.length - 1];
  if (remaining > 0 && last !== undefined) {
    meta['continue'] = encodeContinue({ v: 'meta.k8s.io/v1', rv, start: tokenStart(ObjectStore.keyOf(last), def, filter.namespace) });
    if (filter.labels.length === 0 && filter.fields.length === 0) meta['remainingItemCount'] = remaining;
  }
  const head = `{"kind":${JSON.stringify(def.listKind)},"apiVersion":${JSON.stringify(apiVersionOf(def))},"metadata":${JSON.stringify(meta)},"items":[`;
  return { status: 200, body: `${head}${page.map((e) => store.itemJson(def, e)).join(',')}]}`, warnings: [] };
}

// --- Decoding a request body -----------------------------------------------------------------

/** Go's summarizeData(body, 30), for the "unrecognized object" message. */
function summarize(body: string): string {
  if (body.length === 0) return '<empty>';
  if (body.startsWith('{')) return body.length > 30 ? `${body.slice(0, 30)} ...` : body;
  const hex = Buffer.from(body.slice(0, 30)).toString('hex');
  return body.length > 30 ? `${hex} ...` : hex;
}

/** Parses and type-checks a create/update body; 400 as transformDecodeError words it. */
export function decodeBody(def: ResourceDef, raw: JsonValue | undefined, text: string, parseError: string | undefined): { obj: JsonObject; warnings: string[] } {
  if (raw === undefined || parseError !== undefined) {
    throw badRequest(`the object provided is unrecognized (must be of type ${def.kind}): couldn't get version/kind; json parse error: ${parseError ?? 'unexpected end of JSON input'} (${summarize(text)})`);
  }
  if (!isObject(raw)) {
    throw badRequest(`the object provided is unrecognized (must be of type ${def.kind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(raw) ? 'array' : typeof raw} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (${summarize(text)})`);
  }
  const obj = clone(raw);
  const kind = stringField(obj, 'kind') ?? def.kind;
  const apiVersion = stringField(obj, 'apiVersion') ?? apiVersionOf(def);
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  if (kind !== def.kind || apiVersion !== apiVersionOf(def)) {
    throw badRequest(`${kind} in version "${version}" cannot be handled as a ${def.kind}: no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`);
  }
  const decoded = def.decode(obj);
  if ('error' in decoded) throw badRequest(`${def.kind} in version "${version}" cannot be handled as a ${def.kind}: ${decoded.error}`);
  obj['kind'] = def.kind;
  obj['apiVersion'] = apiVersionOf(def);
  return { obj, warnings: decoded.warnings };
}

function checkNamespace(t: Target, obj: JsonObject): void {
  const meta = metaOf(obj);
  const ns = stringField(meta, 'namespace');
  if (t.def.namespaced) {
    if (ns !== undefined && ns !== '' && ns !== t.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta['namespace'] = t.namespace;
  } else {
    if (ns !== undefined && ns !== '') throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    delete meta['namespace'];
  }
}

// apiserver/pkg/storage/names/generate.go: five characters from this alphabet.
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function generateSuffix(): string {
  const bytes = randomBytes(5);
  let s = '';
  for (const b of bytes) s += NAME_ALPHABET[b % NAME_ALPHABET.length] ?? 'x';
  return s;
}

function validateForCreate(def: ResourceDef, obj: JsonObject): FieldError[] {
  return [...validateObjectName(obj), ...def.validate(obj)];
}

function throwIfInvalid(def: ResourceDef, name: string, errs: readonly FieldError[]): void {
  if (errs.length > 0) throw invalid({ group: def.invalidGroup ?? def.group, kind: def.kind }, name, errs);
}

// --- Writing ---------------------------------------------------------------------------------

export interface WriteContext {
  readonly store: ObjectStore;
  readonly clock: Clock;
}

function stampNew(ctx: WriteContext, obj: JsonObject): void {
  const meta = metaOf(obj);
  meta['uid'] = randomUUID();
  meta['creationTimestamp'] = formatTime(RFC3339, ctx.clock.wallMicros());
  delete meta['resourceVersion'];
  delete meta['deletionTimestamp'];
  delete meta['deletionGracePeriodSeconds'];
  delete meta['generation'];
}

export function createObject(ctx: WriteContext, t: Target, obj: JsonObject, warnings: readonly string[]): Answer {
  checkNamespace(t, obj);
  const meta = metaOf(obj);
  if ((stringField(meta, 'name') ?? '') === '' && (stringField(meta, 'generateName') ?? '') !== '') {
    meta['name'] = `${stringField(meta, 'generateName') ?? ''}${generateSuffix()}`;
  }
  const rv = stringField(meta, 'resourceVersion');
  if (rv !== undefined && rv !== '') throw internalError('resourceVersion should not be set on objects to be created');
  throwIfInvalid(t.def, nameOf(obj), validateForCreate(t.def, obj));
  const name = nameOf(obj);
  if (ctx.store.entry(t.def, t.namespace, name) !== undefined) throw alreadyExists(groupResource(t.def), name);
  stampNew(ctx, obj);
  t.def.prepareForCreate?.(obj);
  const stored = ctx.store.commit(t.def, t.namespace, name, obj);
  return { status: 201, body: stored.json, warnings };
}

/**
 * rest.BeforeUpdate and the strategies' PrepareForUpdate: system fields come from the old
 * object, a main-resource update keeps the old status and a status update keeps the old spec.
 */
function prepareForUpdate(t: Target, obj: JsonObject, old: JsonObject): FieldError[] {
  const meta = metaOf(obj);
  const oldMeta = metaOf(old);
  const errs: FieldError[] = [];
  const uid = stringField(meta, 'uid');
  const oldUid = stringField(oldMeta, 'uid') ?? '';
  if (uid === undefined || uid === '') meta['uid'] = oldUid;
  else if (uid !== oldUid) errs.push(fieldInvalid('metadata.uid', { go: 'string', value: uid }, 'field is immutable'));
  if (oldMeta['creationTimestamp'] !== undefined) meta['creationTimestamp'] = oldMeta['creationTimestamp'];
  if (oldMeta['generation'] !== undefined) meta['generation'] = oldMeta['generation'];
  else delete meta['generation'];
  if (t.def.hasStatus) {
    if (t.subresource === 'status') {
      if (old['spec'] !== undefined) obj['spec'] = old['spec'];
      else delete obj['spec'];
    } else if (old['status'] !== undefined) {
      obj['status'] = old['status'];
    } else {
      delete obj['status'];
    }
  }
  t.def.prepareForUpdate?.(obj, old, t.subresource);
  return errs;
}

/** Same content apart from resourceVersion: the write is a no-op. */
function unchanged(obj: JsonObject, old: StoredObject): boolean {
  const a = clone(obj);
  const b = clone(old.obj);
  delete metaOf(a)['resourceVersion'];
  delete metaOf(b)['resourceVersion'];
  return sortedJson(a) === sortedJson(b);
}

function finishUpdate(ctx: WriteContext, t: Target, obj: JsonObject, existing: StoredObject, warnings: readonly string[]): Answer {
  const errs = prepareForUpdate(t, obj, existing.obj);
  errs.push(...t.def.validate(obj), ...(t.def.validateUpdate?.(obj, existing.obj, t.subresource) ?? []));
  throwIfInvalid(t.def, t.name, errs);
  metaOf(obj)['name'] = t.name;
  if (unchanged(obj, existing)) return { status: 200, body: existing.json, warnings };
  const stored = ctx.store.commit(t.def, t.namespace, t.name, obj);
  return { status: 200, body: stored.json, warnings };
}

/** etcd key prefixes that are not the resource's name (pkg/registry: nodes are stored as minions). */
const STORAGE_PREFIX: Readonly<Record<string, string>> = { nodes: 'minions' };

export function updateObject(ctx: WriteContext, t: Target, obj: JsonObject, warnings: readonly string[]): Answer {
  const gr = groupResource(t.def);
  const bodyName = nameOf(obj);
  if (bodyName !== t.name) throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${t.name})`);
  checkNamespace(t, obj);
  const existing = ctx.store.entry(t.def, t.namespace, t.name);
  const rvText = stringField(metaOf(obj), 'resourceVersion') ?? '';
  // The body's uid is a precondition (store.go: the update's Preconditions), checked against the
  // stored object before anything else, a missing one included: a PUT of an object read before
  // it was deleted is a 409, never a create.
  if (existing === undefined && (!t.def.allowCreateOnUpdate || t.subresource !== '')) throw notFound(gr, t.name);
  const uid = stringField(metaOf(obj), 'uid') ?? '';
  const storedUid = existing === undefined ? '' : (stringField(metaOf(existing.obj), 'uid') ?? '');
  if (uid !== '' && uid !== storedUid) {
    const key = `/registry/${STORAGE_PREFIX[t.def.resource] ?? t.def.resource}/${t.def.namespaced ? `${t.namespace}/` : ''}${t.name}`;
    throw conflict(gr, t.name, `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${storedUid}`);
  }
  if (existing === undefined) {
    throwIfInvalid(t.def, t.name, validateForCreate(t.def, obj));
    stampNew(ctx, obj);
    t.def.prepareForCreate?.(obj);
    const stored = ctx.store.commit(t.def, t.namespace, t.name, obj);
    return { status: 201, body: stored.json, warnings };
  }
  if (rvText === '') {
    if (!t.def.allowUnconditionalUpdate) {
      // store.go Update: the Invalid error names the resource where a kind belongs (see #18526).
      throw invalid({ group: t.def.group, kind: t.def.resource }, t.name, [
        fieldInvalid('metadata.resourceVersion', { go: 'uint64', value: 0 }, 'must be specified for an update'),
      ]);
    }
  } else if (rvText !== String(existing.rv)) {
    throw conflict(gr, t.name);
  }
  return finishUpdate(ctx, t, obj, existing, warnings);
}

export function patchObject(ctx: WriteContext, t: Target, type: PatchType, patch: JsonValue): Answer {
  const gr = groupResource(t.def);
  const existing = ctx.store.entry(t.def, t.namespace, t.name);
  if (existing === undefined) throw notFound(gr, t.name);
  let patched: JsonValue;
  try {
    if (type === 'merge') patched = mergePatch(clone(existing.obj), patch);
    else if (type === 'json') patched = jsonPatch(existing.obj, patch);
    else patched = strategicMergePatch(clone(existing.obj), patch, t.def.listStrategies);
  } catch (e) {
    if (!(e instanceof PatchError)) throw e;
    if (e.code === 'bad-request') throw badRequest(e.message);
    if (e.code === 'unprocessable') throw genericServerResponse(422, e.message);
    throw internalError(e.message);
  }
  if (!isObject(patched)) throw badRequest('Invalid JSON Patch');
  const obj = clone(patched);
  const decoded = t.def.decode(obj);
  if ('error' in decoded) {
    // patch.go: a patched object that does not decode is Invalid on the field `patch`, its value
    // the merged document (JSON and merge patch) or the patch map (strategic).
    const value = type === 'strategic' ? goPrintMap(patch) : sortedJson(patched);
    throw invalid({ group: '', kind: '' }, '', [fieldInvalid('patch', { go: 'string', value }, decoded.error)]);
  }
  obj['kind'] = t.def.kind;
  obj['apiVersion'] = apiVersionOf(t.def);
  const meta = metaOf(obj);
  // A resourceVersion or uid inside the patch is a precondition; otherwise the patch applies to the latest.
  const rvText = stringField(meta, 'resourceVersion') ?? '';
  if (rvText !== '' && rvText !== String(existing.rv)) throw conflict(gr, t.name);
  const uid = stringField(meta, 'uid') ?? '';
  const oldUid = stringField(metaOf(existing.obj), 'uid') ?? '';
  if (uid !== '' && uid !== oldUid) {
    throw conflict(gr, t.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${oldUid}`);
  }
  meta['name'] = t.name;
  checkNamespace(t, obj);
  return finishUpdate(ctx, t, obj, existing, decoded.warnings);
}

export function deleteObject(ctx: WriteContext, t: Target, options: JsonValue | undefined): Answer {
  const gr = groupResource(t.def);
  const existing = ctx.store.entry(t.def, t.namespace, t.name);
  if (existing === undefined) throw notFound(gr, t.name);
  const pre = isObject(options) && isObject(options['preconditions']) ? options['preconditions'] : undefined;
  if (pre !== undefined) {
    const uid = stringField(pre, 'uid');
    const oldUid = stringField(metaOf(existing.obj), 'uid') ?? '';
    if (uid !== undefined && uid !== oldUid) {
      throw conflict(gr, t.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${oldUid}`);
    }
    const rv = stringField(pre, 'resourceVersion');
    if (rv !== undefined && rv !== String(existing.rv)) {
      throw conflict(gr, t.name, `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${existing.rv}`);
    }
  }
  const stored = ctx.store.commit(t.def, t.namespace, t.name, undefined);
  // handlers/delete.go: an object deleted at once (no finalizer holds it) is answered with a
  // Success Status naming it, not with the object.
  const details: Record<string, string> = { name: t.name, ...(t.def.group === '' ? {} : { group: t.def.group }), kind: t.def.resource };
  const uid = stringField(metaOf(stored.obj), 'uid');
  if (uid !== undefined && uid !== '') details['uid'] = uid;
  return { status: 200, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details }), warnings: [] };
}

