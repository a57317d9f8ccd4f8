// One WATCH: a stream of newline-delimited JSON events, `{"type":...,"object":...}`, as the
// watch cache serves it (apiserver/pkg/storage/cacher/cache_watcher.go).
//
// - No resourceVersion, or "0": first a synthetic ADDED for every current object, then changes.
//   A resourceVersion X: every change after X from the history, then live changes; X older
//   than the history reaches gives HTTP 200 and one ERROR event carrying a 410 Expired Status.
// - Filters are applied to both the old and the new version, as convertToWatchEvent does: an
//   object that stops matching is sent as DELETED (its previous content at the new version),
//   one that starts matching as ADDED.
// - allowWatchBookmarks: a BOOKMARK with the latest resourceVersion every bookmark interval,
//   and one PRE_TIMEOUT_BOOKMARK_MS before timeoutSeconds ends the watch, as the cache sends a
//   watcher whose deadline is near (cache_watcher.go nextBookmarkTime), so a client resumes
//   from a recent version. sendInitialEvents=true: the initial ADDED events end with a BOOKMARK
//   annotated k8s.io/initial-events-end=true. A BOOKMARK's object is the kind's empty object
//   with only metadata.resourceVersion (and that annotation) set. It carries the latest revision
//   (as a cache kept fresh by etcd's progress notifications does), and is sent only when that is
//   newer than what the watch has replayed (its start, raised by each replayed event in its
//   namespace): a quiet resource gets none.
// - The watch's options are validated first, as handlers/get.go validates them
//   (watchOptionErrors: apimachinery's validateWatchOptions): sendInitialEvents needs
//   resourceVersionMatch=NotOlderThan, and is forbidden while the WatchList gate is off; the
//   caller answers 422 Invalid for ListOptions.meta.k8s.io.
// - timeoutSeconds ends the stream cleanly; without it the stream lasts the default request
//   timeout. A watcher that stops reading is cut off once `maxBufferedBytes` are queued for it,
//   as the cache cuts off an unresponsive watcher.
// - Event lines are built once per store event and shared by all watchers.

import type { ServerResponse } from 'node:http';
import type { Clock, Timer } from '../../clock/clock.ts';
import type { ObjectStore, StoreEvent, StoredObject, WatchEventType } from './object-store.ts';
import { clone, isObject, metaOf, type JsonObject } from './object-meta.ts';
import { apiVersionOf, type ResourceDef, resourceId } from './resources.ts';
import { matchesFilter, type ListFilter } from './resource-handlers.ts';
import { fieldForbidden, fieldNotSupported, type FieldError } from './field-error.ts';
import { resourceExpired } from './status.ts';

/** Upstream's --min-request-timeout (1800 s): the longest a watch lasts when the client sets none. */
export const DEFAULT_WATCH_TIMEOUT_MS = 1_800_000;
/** How often a watch that allows bookmarks gets one (upstream sends about once a minute). */
export const DEFAULT_BOOKMARK_INTERVAL_MS = 60_000;
/** The cache's last bookmark comes this long before a watch's deadline (none when the watch is shorter). */
export const PRE_TIMEOUT_BOOKMARK_MS = 2_000;
/** How much may queue for one slow watcher before it is cut off. */
export const DEFAULT_MAX_WATCH_BUFFER_BYTES = 64 * 1024 * 1024;

const lineCache = new WeakMap<StoreEvent, Map<string, string>>();

function eventLine(type: WatchEventType | 'BOOKMARK' | 'ERROR', objectJson: string): string {
  return `{"type":"${type}","object":${objectJson}}\n`;
}

/** The line for a store event sent as `type`; built once per event and type. */
function lineFor(event: StoreEvent, type: WatchEventType, fromPrev: boolean): string {
  let cache = lineCache.get(event);
  if (cache === undefined) {
    cache = new Map();
    lineCache.set(event, cache);
  }
  const key = `${type}:${fromPrev ? 'prev' : 'cur'}`;
  let line = cache.get(key);
  if (line === undefined) {
    let json = event.cur.json;
    if (fromPrev && event.prev !== undefined) {
      const copy = clone(event.prev.obj);
      metaOf(copy)['resourceVersion'] = String(event.rv);
      json = JSON.stringify(copy);
    }
    line = eventLine(type, json);
    cache.set(key, line);
  }
  return line;
}

export interface WatchOptions {
  readonly store: ObjectStore;
  readonly def: ResourceDef;
  readonly filter: ListFilter;
  readonly clock: Clock;
  readonly query: URLSearchParams;
  readonly bookmarkIntervalMs: number;
  readonly maxBufferedBytes: number;
  readonly defaultTimeoutMs: number;
}

export interface ActiveWatch {
  /** Ends the stream (server shutdown). */
  end(): void;
}

function bookmarkJson(def: ResourceDef, rv: number, initialEventsEnd: boolean): string {
  const { metadata: emptyMeta, ...emptyRest } = def.emptyBody;
  const meta: JsonObject = { resourceVersion: String(rv), ...(isObject(emptyMeta) ? clone(emptyMeta) : {}) };
  if (initialEventsEnd) meta['annotations'] = { ...(isObject(meta['annotations']) ? meta['annotations'] : {}), 'k8s.io/initial-events-end': 'true' };
  return JSON.stringify({ kind: def.kind, apiVersion: apiVersionOf(def), metadata: meta, ...emptyRest });
}

function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

/** apimachinery's validateWatchOptions over a watch's query, with the WatchList gate as given. */
export function watchOptionErrors(query: URLSearchParams, watchListEnabled: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const match = query.get('resourceVersionMatch') ?? '';
  const sendInitialEvents = query.has('sendInitialEvents');
  if (sendInitialEvents) {
    if (match !== 'NotOlderThan') errors.push(fieldForbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (!watchListEnabled) errors.push(fieldForbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
  }
  if (match !== '') {
    if (!sendInitialEvents) errors.push(fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errors.push(fieldNotSupported('resourceVersionMatch', { go: 'string', value: match }, ['NotOlderThan']));
  }
  return errors;
}

/** Starts a watch on `res`; returns a handle that ends it, or undefined if it ended at once. */
export function startWatch(res: ServerResponse, o: WatchOptions, startRv: number | undefined, onEnd: () => void): ActiveWatch | undefined {
  const { store, def, filter } = o;
  const resource = resourceId(def);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();

  const replay = startRv === undefined ? 'initial' : store.eventsSince(resource, startRv);
  if (replay === 'expired') {
    const oldest = store.oldestWatchableVersion() ?? store.resourceVersion();
    const status = resourceExpired(`too old resource version: ${String(startRv)} (${oldest})`);
    res.end(eventLine('ERROR', JSON.stringify(status.body)));
    onEnd();
    return undefined;
  }

  let ended = false;
  const timers: Timer[] = [];
  let unsubscribe = (): void => {};
  const end = (): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    for (const t of timers) t.cancel();
    if (!res.writableEnded) res.end();
    onEnd();
  };
  const write = (line: string): void => {
    if (ended) return;
    res.write(line);
    if (res.writableLength > o.maxBufferedBytes) {
      ended = true;
      unsubscribe();
      for (const t of timers) t.cancel();
      res.destroy();
      onEnd();
    }
  };
  const inNamespace = (ns: string): boolean => filter.namespace === undefined || filter.namespace === ns;
  const deliver = (event: StoreEvent): void => {
    if (!inNamespace(event.namespace)) return;
    const curPasses = event.type !== 'DELETED' && matchesFilter(def, filter, event.cur.obj);
    const prevPasses = event.prev !== undefined && matchesFilter(def, filter, event.prev.obj);
    if (event.type === 'DELETED') {
      if (prevPasses) write(lineFor(event, 'DELETED', false));
    } else if (curPasses && prevPasses) {
      write(lineFor(event, 'MODIFIED', false));
    } else if (curPasses) {
      write(lineFor(event, 'ADDED', false));
    } else if (prevPasses) {
      write(lineFor(event, 'DELETED', true));
    }
  };

  // What the watcher has been brought up to: its start, raised by every replayed event in its
  // namespace, matching or not (cache_watcher.go processInterval). A bookmark no newer than this
  // is not sent; live events do not raise it.
  let reached = startRv ?? 0;
  if (replay === 'initial') {
    for (const e of store.entries(def, filter.namespace)) {
      reached = Math.max(reached, e.rv);
      if (matchesFilter(def, filter, e.obj)) write(addedLine(e));
    }
    if (isTrue(o.query.get('sendInitialEvents'))) write(eventLine('BOOKMARK', bookmarkJson(def, store.resourceVersion(), true)));
  } else {
    for (const e of replay) {
      if (inNamespace(e.namespace)) reached = Math.max(reached, e.rv);
      deliver(e);
    }
  }
  if (ended) return undefined;
  unsubscribe = store.subscribe({ resource, onEvent: deliver });

  const timeoutRaw = o.query.get('timeoutSeconds');
  const timeoutMs = timeoutRaw !== null && /^\d+$/.test(timeoutRaw) ? Number(timeoutRaw) * 1000 : o.defaultTimeoutMs;
  timers.push(o.clock.after(timeoutMs, end));
  if (isTrue(o.query.get('allowWatchBookmarks'))) {
    const bookmark = (): void => {
      if (store.resourceVersion() > reached) write(eventLine('BOOKMARK', bookmarkJson(def, store.resourceVersion(), false)));
    };
    if (timeoutMs > PRE_TIMEOUT_BOOKMARK_MS) timers.push(o.clock.after(timeoutMs - PRE_TIMEOUT_BOOKMARK_MS, bookmark));
    // One interval timer at a time: its slot of `timers` is re-armed, so the list stays bounded.
    const slot = timers.length;
    const arm = (): void => {
      timers[slot] = o.clock.after(o.bookmarkIntervalMs, () => {
        bookmark();
        if (!ended) arm();
      });
    };
    arm();
  }
  res.on('close', end);
  return { end };
}

const addedCache = new WeakMap<StoredObject, string>();

/** The ADDED line for a current object, shared by every watcher that starts while it is current. */
function addedLine(e: StoredObject): string {
  let line = addedCache.get(e);
  if (line === undefined) {
    line = eventLine('ADDED', e.json);
    addedCache.set(e, line);
  }
  return line;
}
