// The stand-in's etcd and watch cache in one: objects by resource and key, one global revision
// counter, and a bounded history of changes for watches.
//
// - One counter for every resource, as etcd's revision: every write (create, update, delete)
//   takes the next number, and that number is the object's resourceVersion.
// - Each stored version is serialised once (JSON.stringify at write time); lists, GETs and
//   every watcher reuse those bytes, so 5,000 watchers cost no extra stringify per change.
// - The history keeps the last `historySize` events (default 1,000). A watch from a version
//   older than the oldest kept event minus one gets 410 Expired, as the watch cache answers
//   (apiserver/pkg/storage/cacher/watch_cache.go getAllEventsSinceLocked). A list continued in
//   pages is served at its first page's revision: from a snapshot that page pinned (kept 5
//   minutes, as etcd keeps revisions until the API server compacts it), else from the history.
// - Watch sinks are called synchronously in commit order; a sink must not throw.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock/clock.ts';
import { formatTime, RFC3339 } from './go-time.ts';
import { canonicalOrder, clone, type JsonObject, metaOf, stringField } from './object-meta.ts';
import { apiVersionOf, findResourceById, RESOURCES, type ResourceDef, resourceId } from './resources.ts';

/** One stored version of one object. Never mutated once made. */
export interface StoredObject {
  readonly obj: JsonObject;
  /** The object's JSON with kind and apiVersion, as a GET returns it. */
  readonly json: string;
  readonly rv: number;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: WatchEventType;
  readonly rv: number;
  readonly resource: string;
  readonly namespace: string;
  readonly cur: StoredObject;
  /** The version before this change, for MODIFIED and DELETED. */
  readonly prev: StoredObject | undefined;
}

export interface WatchSink {
  readonly resource: string;
  onEvent(event: StoreEvent): void;
}

export const DEFAULT_HISTORY_SIZE = 1000;
/** The API server compacts etcd every 5 minutes (--etcd-compaction-interval): a continue token lives that long. */
export const PINNED_SNAPSHOT_MS = 5 * 60_000;
/** Lists in pages held at once; the oldest is dropped first (its later pages fall back to the history). */
const MAX_PINNED_SNAPSHOTS = 64;

export class StoreError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
  }
}

function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The `{"kind":...,"apiVersion":...,` prefix every stored JSON starts with, for list items. */
function typePrefix(def: ResourceDef): string {
  return `{"kind":${JSON.stringify(def.kind)},"apiVersion":${JSON.stringify(apiVersionOf(def))},`;
}

export class ObjectStore {
  readonly #clock: Clock;
  readonly #historySize: number;
  readonly #objects = new Map<string, Map<string, StoredObject>>();
  readonly #history: StoreEvent[] = [];
  #historyStart = 0;
  #evicted = false;
  #rv: number;
  readonly #sinks = new Map<string, Set<WatchSink>>();
  readonly #pinned = new Map<string, { readonly atMs: number; readonly entries: readonly StoredObject[] }>();

  constructor(options: { clock: Clock; historySize?: number; startResourceVersion?: number }) {
    this.#clock = options.clock;
    this.#historySize = Math.max(1, options.historySize ?? DEFAULT_HISTORY_SIZE);
    this.#rv = options.startResourceVersion ?? 1;
  }

  /** The latest revision, as a list's metadata.resourceVersion reports it. */
  resourceVersion(): number {
    return this.#rv;
  }

  /** The oldest version a watch may start from, or undefined while nothing was evicted. */
  oldestWatchableVersion(): number | undefined {
    if (!this.#evicted) return undefined;
    const first = this.#history[this.#historyStart];
    return first === undefined ? this.#rv : first.rv - 1;
  }

  #bucket(resource: string): Map<string, StoredObject> {
    let b = this.#objects.get(resource);
    if (b === undefined) {
      b = new Map();
      this.#objects.set(resource, b);
    }
    return b;
  }

  entry(def: ResourceDef, namespace: string, name: string): StoredObject | undefined {
    return this.#objects.get(resourceId(def))?.get(keyOf(namespace, name));
  }

  /** Every stored version of a resource, in key order, optionally within one namespace. */
  entries(def: ResourceDef, namespace?: string): StoredObject[] {
    const bucket = this.#objects.get(resourceId(def));
    if (bucket === undefined) return [];
    const picked: [string, StoredObject][] = [];
    const prefix = namespace === undefined ? undefined : `${namespace}/`;
    for (const kv of bucket) if (prefix === undefined || kv[0].startsWith(prefix)) picked.push(kv);
    // etcd returns a range in key order; so does a list here.
    picked.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return picked.map((kv) => kv[1]);
  }

  /** A list item's JSON: the stored JSON without kind/apiVersion, as typed list items print. */
  itemJson(def: ResourceDef, stored: StoredObject): string {
    const prefix = typePrefix(def);
    return stored.json.startsWith(prefix) ? `{${stored.json.slice(prefix.length)}` : stored.json;
  }

  /**
   * Writes a new version (or a deletion, with obj undefined) under the next revision, records
   * it in the history and tells the watchers. The object must already be validated.
   */
  commit(def: ResourceDef, namespace: string, name: string, obj: JsonObject | undefined): StoredObject {
    const resource = resourceId(def);
    const bucket = this.#bucket(resource);
    const key = keyOf(namespace, name);
    const prev = bucket.get(key);
    const rv = ++this.#rv;
    let stored: StoredObject;
    let type: WatchEventType;
    if (obj === undefined) {
      if (prev === undefined) throw new StoreError('not_found', `${resource} ${key}: object must exist to be deleted`);
      // The deleted object is reported with the deletion's revision, as etcd3's store does.
      const copy = clone(prev.obj);
      metaOf(copy)['resourceVersion'] = String(rv);
      stored = { obj: copy, json: JSON.stringify(copy), rv };
      bucket.delete(key);
      type = 'DELETED';
    } else {
      const withRv: JsonObject = { ...obj, metadata: { ...metaOf(obj), resourceVersion: String(rv) } };
      const full = canonicalOrder({ ...withRv, kind: def.kind, apiVersion: apiVersionOf(def) });
      stored = { obj: full, json: JSON.stringify(full), rv };
      bucket.set(key, stored);
      type = prev === undefined ? 'ADDED' : 'MODIFIED';
    }
    const event: StoreEvent = { type, rv, resource, namespace, cur: stored, prev };
    this.#record(event);
    const sinks = this.#sinks.get(resource);
    if (sinks !== undefined) for (const s of [...sinks]) s.onEvent(event);
    return stored;
  }

  #record(event: StoreEvent): void {
    this.#history.push(event);
    if (this.#history.length - this.#historyStart > this.#historySize) {
      this.#historyStart++;
      this.#evicted = true;
      // Compact the array now and then, so eviction stays O(1) amortised.
      if (this.#historyStart > this.#historySize) {
        this.#history.splice(0, this.#historyStart);
        this.#historyStart = 0;
      }
    }
  }

  /** Events of one resource after `rv`, or 'expired' when the history no longer reaches back to it. */
  eventsSince(resource: string, rv: number): StoreEvent[] | 'expired' {
    const oldest = this.oldestWatchableVersion();
    if (oldest !== undefined && rv < oldest) return 'expired';
    const out: StoreEvent[] = [];
    for (let i = this.#historyStart; i < this.#history.length; i++) {
      const e = this.#history[i];
      if (e !== undefined && e.rv > rv && e.resource === resource) out.push(e);
    }
    return out;
  }

  /**
   * Keeps a list's entries at revision `rv` for the pages that follow, as etcd keeps a past
   * revision until the API server compacts it (every PINNED_SNAPSHOT_MS): a list continued in
   * pages sees one revision, however fast other objects change and the watch history rolls.
   */
  pinSnapshot(def: ResourceDef, rv: number, namespace: string | undefined, entries: readonly StoredObject[]): void {
    const now = this.#clock.monotonicMs();
    for (const [key, pinned] of this.#pinned) if (now - pinned.atMs > PINNED_SNAPSHOT_MS) this.#pinned.delete(key);
    this.#pinned.set(`${resourceId(def)}|${namespace ?? ''}|${rv}`, { atMs: now, entries: [...entries] });
    while (this.#pinned.size > MAX_PINNED_SNAPSHOTS) this.#pinned.delete(this.#pinned.keys().next().value ?? '');
  }

  /**
   * Every version of a resource as it stood at revision `rv`, in key order (optionally within
   * one namespace): a snapshot a list pinned at that revision, else the current entries with
   * every later event of the resource undone, as etcd serves a range at a past revision.
   * 'expired' when neither reaches back to it, as etcd answers a revision it has compacted.
   */
  snapshot(def: ResourceDef, rv: number, namespace?: string): readonly StoredObject[] | 'expired' {
    const pinned = this.#pinned.get(`${resourceId(def)}|${namespace ?? ''}|${rv}`);
    if (pinned !== undefined && this.#clock.monotonicMs() - pinned.atMs <= PINNED_SNAPSHOT_MS) return pinned.entries;
    const later = this.eventsSince(resourceId(def), rv);
    if (later === 'expired') return 'expired';
    const at = new Map(this.entries(def, namespace).map((e) => [keyOf(stringField(metaOf(e.obj), 'namespace') ?? '', stringField(metaOf(e.obj), 'name') ?? ''), e]));
    for (const e of [...later].reverse()) {
      if (namespace !== undefined && e.namespace !== namespace) continue;
      const key = keyOf(e.namespace, stringField(metaOf(e.cur.obj), 'name') ?? '');
      if (e.type === 'ADDED' || e.prev === undefined) at.delete(key);
      else at.set(key, e.prev);
    }
    return [...at.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((kv) => kv[1]);
  }

  /** The key an object is stored under: `namespace/name` (`/name` for a cluster-scoped one). */
  static keyOf(stored: StoredObject): string {
    const meta = metaOf(stored.obj);
    return keyOf(stringField(meta, 'namespace') ?? '', stringField(meta, 'name') ?? '');
  }

  subscribe(sink: WatchSink): () => void {
    let set = this.#sinks.get(sink.resource);
    if (set === undefined) {
      set = new Set();
      this.#sinks.set(sink.resource, set);
    }
    set.add(sink);
    return () => {
      set.delete(sink);
    };
  }

  watcherCount(): number {
    let n = 0;
    for (const s of this.#sinks.values()) n += s.size;
    return n;
  }

  // --- The test API: direct access, no admission, no validation --------------------------------

  #def(resource: string): ResourceDef {
    const def = findResourceById(resource);
    if (def === undefined) throw new StoreError('unknown_resource', `resource: ${resource} must be one of leases, nodes, events, events.events.k8s.io`);
    return def;
  }

  /**
   * Stores an object as is (seeding), filling uid and creationTimestamp when missing. The
   * resource is taken from `resource`, or from the object's apiVersion and kind.
   * Returns a copy of what was stored.
   */
  put(obj: Readonly<Record<string, unknown>>, resource?: string): JsonObject {
    const copy = JSON.parse(JSON.stringify(obj)) as JsonObject;
    const def = resource !== undefined ? this.#def(resource) : this.#defOf(copy);
    const meta = metaOf(copy);
    const name = stringField(meta, 'name');
    if (name === undefined || name === '') throw new StoreError('bad_object', 'metadata.name: "" must be set');
    const namespace = def.namespaced ? (stringField(meta, 'namespace') ?? 'default') : '';
    if (def.namespaced) meta['namespace'] = namespace;
    else delete meta['namespace'];
    const prev = this.entry(def, namespace, name);
    if (stringField(meta, 'uid') === undefined) meta['uid'] = prev === undefined ? randomUUID() : (stringField(prev.obj['metadata'] as JsonObject, 'uid') ?? randomUUID());
    if (stringField(meta, 'creationTimestamp') === undefined) meta['creationTimestamp'] = formatTime(RFC3339, this.#clock.wallMicros());
    return clone(this.commit(def, namespace, name, copy).obj);
  }

  #defOf(obj: JsonObject): ResourceDef {
    const kind = stringField(obj, 'kind');
    const apiVersion = stringField(obj, 'apiVersion');
    const found = findResourceByKind(apiVersion, kind);
    if (found === undefined) throw new StoreError('unknown_resource', `kind: ${String(apiVersion)}/${String(kind)} must be a served kind, or name the resource`);
    return found;
  }

  /** A copy of the stored object, or undefined. */
  get(resource: string, namespace: string | undefined, name: string): JsonObject | undefined {
    const def = this.#def(resource);
    const e = this.entry(def, def.namespaced ? (namespace ?? 'default') : '', name);
    return e === undefined ? undefined : clone(e.obj);
  }

  /** Copies of every stored object of a resource, optionally in one namespace. */
  list(resource: string, namespace?: string): JsonObject[] {
    const def = this.#def(resource);
    return this.entries(def, def.namespaced ? namespace : undefined).map((e) => clone(e.obj));
  }

  /** Deletes an object, telling watchers. Returns false when it did not exist. */
  delete(resource: string, namespace: string | undefined, name: string): boolean {
    const def = this.#def(resource);
    const ns = def.namespaced ? (namespace ?? 'default') : '';
    if (this.entry(def, ns, name) === undefined) return false;
    this.commit(def, ns, name, undefined);
    return true;
  }
}

function findResourceByKind(apiVersion: string | undefined, kind: string | undefined): ResourceDef | undefined {
  return RESOURCES.find((r) => apiVersionOf(r) === apiVersion && r.kind === kind);
}
