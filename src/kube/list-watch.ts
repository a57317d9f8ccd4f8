// List and watch: the fleet readers' view of a resource, kept current by an informer that
// restarts after every error, as client-go's Reflector does.
//
// | what happens                                    | the informer                                   |
// |-------------------------------------------------|------------------------------------------------|
// | start                                           | a streaming list: one WATCH with               |
// |                                                 | sendInitialEvents=true, every object as an     |
// |                                                 | ADDED event, then a BOOKMARK annotated         |
// |                                                 | k8s.io/initial-events-end (the store is        |
// |                                                 | complete: objects not sent are removed), then  |
// |                                                 | the same stream's changes                      |
// | the server refuses the streaming list (400, 403,| LISTs in pages of 500 instead, for the rest of |
// | or 422: WatchList off, before 1.32's default)   | its life, then WATCHes from the list's         |
// |                                                 | resourceVersion                                |
// | the streaming list fails before its initial     | LISTs in pages of 500 at once, this time only  |
// | events end (an error answer or ERROR event: a   | (the listing is complete: what it lacks is     |
// | watch cache more than 3 s behind etcd answers   | removed), as client-go's reflector falls back  |
// | 504 "Too large resource version"; a stream the  | to a LIST ("making progress is better than     |
// | server closes before the bookmark; 429, 5xx)    | deadlocking")                                  |
// | ADDED / MODIFIED / DELETED                      | updates the store, calls onEvent               |
// | BOOKMARK                                        | remembers the resourceVersion only             |
// | the watch ends cleanly (server timeoutSeconds)  | watches again from the last resourceVersion    |
// | ERROR event or HTTP 410 (Expired / Gone)        | lists again (the resourceVersion is too old)   |
// | any other failure (refused, 5xx, idle, bad line,| waits (WATCH_RETRY: 200 ms doubling to 30 s,   |
// | a stream that ends before its initial events)   | plus up to half again), then lists again       |
// | its signal aborts                               | ends, closing the stream                       |
//
// The store holds a PROJECTION of each object, chosen by the caller, never the object itself: a
// realistic Node is about 12 KiB of JSON (images, addresses, capacity, managedFields), and the
// controller needs a few fields of it. So memory is bounded by the projection, not by what the
// server sends. The streaming list is why the informer starts with it, as client-go's reflector
// does with WatchListClient: objects arrive one watch line at a time, and each is projected and
// dropped, where a page of 500 realistic Nodes is a 6 MB string and its parse held at once; and
// the API server serves it from its watch cache, one event at a time, instead of encoding pages.
// Its semantics are a consistent list's (resourceVersionMatch=NotOlderThan with no
// resourceVersion: at least as new as etcd when asked). An API server older than 1.27 ignores
// the parameter and would never end the initial events; the project supports 1.29 and newer,
// which refuse it (422) when WatchList is off.
//
// Bounded: every list page has the client's timeout and a body cap; a watch line is capped
// (kube-client.ts MAX_WATCH_LINE_BYTES); a watch with no bytes for its timeoutSeconds +
// IDLE_SLACK_MS is treated as dead; retries back off to a cap, by this file's schedule on the
// product's one retry module (loop/retry-policy.ts), or a policy the caller passes. Lists and
// watches both go through KubeClient's one request core: the same credentials, timeouts and
// error mapping.
//
// A relist after an error replays as events: objects that vanished are reported DELETED, every
// listed object ADDED or MODIFIED, so a consumer that counts on events never misses a change.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { FailureRun } from '../log/failure-run.ts';
import { exponentialBackoff, type RetryPolicy } from '../loop/retry-policy.ts';
import { KubeApiError } from './kube-api-error.ts';
import type { KubeClient } from './kube-client.ts';
import type { ObjectMeta } from './kube-types.ts';

/** client-go's reflector lists in pages of 500. */
export const LIST_PAGE_SIZE = 500;
/** Server-side watch timeout: 5 to 10 minutes, as client-go's minWatchTimeout × (1 + rand). */
const WATCH_TIMEOUT_MIN_S = 300;
/** A watch that sends nothing for its timeout plus this is dead (a half-open connection). */
const IDLE_SLACK_MS = 30_000;
/**
 * The wait before a restart after an error. Upstream's reflector starts at 800 ms and jitters up
 * to double; this starts at the lease's first step, so a reader is back within a fraction of a
 * second of a brief API blip, and stops at upstream's 30 s.
 */
export const WATCH_RETRY: RetryPolicy = exponentialBackoff({ initialMs: 200, maxMs: 30_000, jitter: 0.5 });

export interface KubeObject {
  readonly metadata: ObjectMeta;
}

export interface ListPage<T> {
  readonly items: T[];
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string };
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T> {
  readonly type: WatchEventType;
  readonly object: T;
}

/** Where an informer reads from: one collection (e.g. /api/v1/nodes) with an optional selector. */
export interface ListWatchSource<T extends KubeObject> {
  readonly what: string;
  list(options: { signal: AbortSignal; limit: number; continueToken?: string | undefined }): Promise<ListPage<T>>;
  /** Streams events until the server ends the watch (resolves) or it fails (rejects). */
  watch(resourceVersion: string, signal: AbortSignal, onEvent: (event: WatchEvent<T>) => void): Promise<void>;
  /**
   * A streaming list (see the header): every object as an ADDED event, then a BOOKMARK annotated
   * INITIAL_EVENTS_END, then changes, until the server ends the watch or it fails. Rejects with
   * StreamingListRefusedError when the server refuses it. Absent: the source lists in pages only.
   */
  watchList?(signal: AbortSignal, onEvent: (event: WatchEvent<T>) => void): Promise<void>;
}

/** How a collection's answers in protobuf are read: a list page, and one watch event's frame. */
export interface ProtobufReaders<T> {
  readonly list: (body: Buffer) => ListPage<T>;
  readonly event: (frame: Buffer) => WatchEvent<T>;
}

/** The annotation of the BOOKMARK that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** HTTP statuses with which an API server refuses a streaming list: list in pages instead. */
const STREAMING_REFUSED = new Set([400, 403, 422]);

/** Thrown out of a watch when its resourceVersion is too old (410 or an ERROR event): relist. */
export class WatchExpiredError extends Error {
  readonly code = 'watch_expired';
}

/** The server refused a streaming list (WatchList off, or RBAC allows list but not watch). */
export class StreamingListRefusedError extends Error {
  readonly code = 'streaming_list_refused';
}

/** A streaming list failed before its initial events ended (see the header): list in pages this time. */
class StreamIncompleteError extends Error {
  readonly code = 'streaming_list_incomplete';
}

/** Whether a BOOKMARK ends a streaming list's initial events. */
function endsInitialEvents(event: WatchEvent<KubeObject>): boolean {
  return event.type === 'BOOKMARK' && event.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true';
}

/** A source over the project's client: lists and watches through its one request core. */
export function kubeListWatch<T extends KubeObject>(options: {
  readonly client: KubeClient;
  /** The collection path, e.g. /apis/coordination.k8s.io/v1/namespaces/nodepulse/leases. */
  readonly path: string;
  readonly labelSelector?: string | undefined;
  /** e.g. `metadata.name=nodepulse`: one object by name, which RBAC resourceNames can allow. */
  readonly fieldSelector?: string | undefined;
  /** Whether to offer the streaming list (default true); false lists in pages only. */
  readonly streamingList?: boolean;
  /** Readers of the collection in protobuf (kube-protobuf.ts NODE_PROTOBUF); present, lists and watches ask for it first. */
  readonly protobuf?: ProtobufReaders<T> | undefined;
  readonly random?: () => number;
}): ListWatchSource<T> {
  const { client, path } = options;
  const selector = {
    ...(options.labelSelector === undefined || options.labelSelector === '' ? {} : { labelSelector: options.labelSelector }),
    ...(options.fieldSelector === undefined || options.fieldSelector === '' ? {} : { fieldSelector: options.fieldSelector }),
  };
  const random = options.random ?? Math.random;
  return {
    what: path,
    list: ({ signal, limit, continueToken }) =>
      client.request<ListPage<T>>({
        method: 'GET',
        path,
        query: { ...selector, limit: String(limit), ...(continueToken === undefined ? {} : { continue: continueToken }) },
        signal,
        what: `LIST ${path}`,
        protobuf: options.protobuf?.list,
      }),
    watch: (resourceVersion, signal, onEvent) => streamWatch({ resourceVersion }, signal, onEvent, `WATCH ${path}`),
    ...(options.streamingList === false
      ? {}
      : {
          watchList: (signal: AbortSignal, onEvent: (event: WatchEvent<T>) => void) =>
            streamWatch({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' }, signal, onEvent, `WATCH ${path} (streaming list)`),
        }),
  };

  async function streamWatch(extra: Record<string, string>, signal: AbortSignal, onEvent: (event: WatchEvent<T>) => void, what: string): Promise<void> {
    const timeoutSeconds = Math.floor(WATCH_TIMEOUT_MIN_S * (1 + random()));
    const query = { ...selector, ...extra, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) };
    try {
      await client.watch({ path, query, signal, idleMs: timeoutSeconds * 1000 + IDLE_SLACK_MS, what, protobuf: options.protobuf?.event }, (value) => {
        const event = value as WatchEvent<T>;
        if (event.type === 'ERROR') throw watchError(what, event.object as WatchErrorStatus);
        onEvent(event);
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 410) throw new WatchExpiredError(`${what}: ${err.message}`, { cause: err });
      if ('sendInitialEvents' in extra && err instanceof KubeApiError && STREAMING_REFUSED.has(err.status)) {
        throw new StreamingListRefusedError(`${what}: ${err.message}`, { cause: err });
      }
      throw err;
    }
  }
}

interface WatchErrorStatus {
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
}

/** An ERROR event: 410 / Expired / Gone means the resourceVersion is too old (relist); anything else is a failed watch. */
function watchError(what: string, s: WatchErrorStatus): Error {
  const message = `${what}: watch ERROR ${s.code ?? '?'} ${s.reason ?? ''}: ${s.message ?? ''}`;
  if (s.code === 410 || s.reason === 'Expired' || s.reason === 'Gone') return new WatchExpiredError(message);
  return new KubeApiError('unavailable', message, { status: s.code ?? 0, what });
}

export type InformerEvent<S> =
  | { readonly type: 'upsert'; readonly key: string; readonly value: S; readonly previous: S | undefined }
  | { readonly type: 'delete'; readonly key: string; readonly previous: S };

export interface InformerOptions<T extends KubeObject, S> {
  readonly source: ListWatchSource<T>;
  readonly clock: Clock;
  /** What the store keeps of an object; keep it small. */
  readonly project: (object: T) => S;
  /** The store key; metadata.name by default (namespaced callers watch one namespace). */
  readonly key?: (object: T) => string;
  /** Called for every change, including the replay of a relist. Must not throw. */
  readonly onEvent?: (event: InformerEvent<S>) => void;
  /** Called after each complete list (the first one means "synced"). */
  readonly onSynced?: () => void;
  readonly logger?: Logger;
  /** The wait before a restart after the n-th error in a row; WATCH_RETRY by default. */
  readonly retry?: RetryPolicy;
  readonly random?: () => number;
}

/** A store kept current by list + watch, restarting after errors. */
export class Informer<T extends KubeObject, S> {
  readonly store = new Map<string, S>();
  readonly #o: InformerOptions<T, S>;
  readonly #key: (object: T) => string;
  readonly #failures: FailureRun | undefined;
  #synced = false;
  #lists = 0;
  #watches = 0;

  constructor(options: InformerOptions<T, S>) {
    this.#o = options;
    this.#key = options.key ?? ((o) => o.metadata.name ?? '');
    this.#failures = options.logger === undefined ? undefined : new FailureRun(options.logger.child({ source: options.source.what }), 'List and watch');
  }

  /** Whether a first list has completed. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Lists and watches started so far (for tests and the steady-state check). */
  get counts(): { lists: number; watches: number } {
    return { lists: this.#lists, watches: this.#watches };
  }

  /** Runs until the signal aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const random = this.#o.random ?? Math.random;
    const retry = this.#o.retry ?? WATCH_RETRY;
    let failures = 0;
    let streaming = this.#o.source.watchList !== undefined;
    const listed = (): void => {
      this.#failures?.succeeded();
      failures = 0;
    };
    while (!signal.aborted) {
      try {
        let rv: string;
        if (streaming) {
          try {
            rv = await this.#streamingList(signal, listed);
          } catch (err) {
            if (signal.aborted) throw err;
            if (err instanceof StreamingListRefusedError) {
              streaming = false;
              this.#o.logger?.info({ source: this.#o.source.what, err }, 'Streaming list refused: listing in pages');
              continue;
            }
            if (!(err instanceof StreamIncompleteError)) throw err;
            this.#o.logger?.info({ source: this.#o.source.what, err: err.cause }, 'Streaming list failed before its initial events ended: listing in pages');
            rv = await this.#relist(signal);
            listed();
          }
        } else {
          rv = await this.#relist(signal);
          listed();
        }
        for (;;) {
          this.#watches++;
          await this.#o.source.watch(rv, signal, (event) => {
            const next = event.object.metadata.resourceVersion;
            if (event.type !== 'BOOKMARK') this.#apply(event);
            if (next !== undefined && next !== '') rv = next;
          });
          // A clean end is the server's timeoutSeconds: resume from where we were.
        }
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof WatchExpiredError) continue; // relist at once, as the reflector does
        this.#failures?.failed(err);
        failures++;
        try {
          await this.#o.clock.sleep(retry(failures, random), signal);
        } catch {
          break;
        }
      }
    }
  }

  /**
   * One streaming list (see the header), applied as a relist is: every object sent before the
   * initial-events-end bookmark is upserted, and at the bookmark the objects not sent are removed
   * and the store is synced; later events are applied as a watch's. Resolves with the last
   * resourceVersion when the server ends the stream, to watch on from; a stream that ends before
   * its initial events did is a failure.
   */
  async #streamingList(signal: AbortSignal, listed: () => void): Promise<string> {
    const watchList = this.#o.source.watchList;
    if (watchList === undefined) throw new StreamingListRefusedError(`${this.#o.source.what}: no streaming list`);
    this.#lists++;
    this.#watches++;
    const seen = new Set<string>();
    let initial = true;
    let rv = '';
    try {
      await watchList(signal, (event) => {
        const next = event.object.metadata.resourceVersion;
        if (initial) {
          if (endsInitialEvents(event)) {
            initial = false;
            this.#listed(seen);
            listed();
          } else if (event.type !== 'BOOKMARK') {
            seen.add(this.#key(event.object));
            this.#apply(event);
          }
        } else if (event.type !== 'BOOKMARK') {
          this.#apply(event);
        }
        if (next !== undefined && next !== '') rv = next;
      });
      if (initial) throw new Error(`${this.#o.source.what}: the streaming list ended before its initial events did`);
    } catch (err) {
      if (!initial || signal.aborted || err instanceof StreamingListRefusedError || err instanceof WatchExpiredError) throw err;
      throw new StreamIncompleteError(`${this.#o.source.what}: the streaming list failed before its initial events ended`, { cause: err });
    }
    return rv;
  }

  /** A complete list is in: what it did not hold is gone; the store is synced. */
  #listed(seen: ReadonlySet<string>): void {
    for (const [key, previous] of [...this.store]) {
      if (seen.has(key)) continue;
      this.store.delete(key);
      this.#o.onEvent?.({ type: 'delete', key, previous });
    }
    this.#synced = true;
    this.#o.onSynced?.();
  }

  async #relist(signal: AbortSignal): Promise<string> {
    this.#lists++;
    const seen = new Set<string>();
    let continueToken: string | undefined;
    let rv = '';
    do {
      const page = await this.#o.source.list({ signal, limit: LIST_PAGE_SIZE, continueToken });
      for (const item of page.items) {
        const key = this.#key(item);
        seen.add(key);
        this.#apply({ type: 'MODIFIED', object: item });
      }
      // The first page's resourceVersion is the snapshot's; later pages repeat it.
      if (rv === '') rv = page.metadata.resourceVersion ?? '';
      const next = page.metadata.continue;
      continueToken = next === undefined || next === '' ? undefined : next;
    } while (continueToken !== undefined);
    this.#listed(seen);
    return rv;
  }

  #apply(event: WatchEvent<T>): void {
    const key = this.#key(event.object);
    const previous = this.store.get(key);
    if (event.type === 'DELETED') {
      if (previous === undefined) return;
      this.store.delete(key);
      this.#o.onEvent?.({ type: 'delete', key, previous });
      return;
    }
    const value = this.#o.project(event.object);
    this.store.set(key, value);
    this.#o.onEvent?.({ type: 'upsert', key, value, previous });
  }
}

/** One complete, paginated listing (for a reader that needs every object at once). */
export async function listAll<T extends KubeObject>(source: ListWatchSource<T>, signal: AbortSignal): Promise<T[]> {
  const items: T[] = [];
  await listPages(source, signal, (item) => items.push(item));
  return items;
}

async function listPages<T extends KubeObject>(source: ListWatchSource<T>, signal: AbortSignal, onItem: (item: T) => void): Promise<void> {
  let continueToken: string | undefined;
  do {
    const page = await source.list({ signal, limit: LIST_PAGE_SIZE, continueToken });
    for (const item of page.items) onItem(item);
    const next = page.metadata.continue;
    continueToken = next === undefined || next === '' ? undefined : next;
  } while (continueToken !== undefined);
}

/**
 * Every object of the collection as it is now, handed to `onItem` one at a time so the caller
 * keeps only what it needs (for a reader that judges a single listing): the streaming list, cut
 * at its initial-events-end bookmark, where the server serves it; pages where it refuses it, or
 * where it fails before its initial events end. In that last case the objects already handed
 * over are handed again from the pages, and `onGone` is told the name of each one the pages no
 * longer hold (deleted in between), so the caller ends with exactly the pages' listing.
 */
export async function readAll<T extends KubeObject>(
  source: ListWatchSource<T>, signal: AbortSignal, onItem: (item: T) => void, onGone: (name: string) => void = () => {},
): Promise<void> {
  const watchList = source.watchList;
  const streamed = new Set<string>();
  if (watchList !== undefined) {
    const done = new AbortController();
    const stop = (): void => done.abort(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    let complete = false;
    try {
      await watchList(done.signal, (event) => {
        if (complete) return;
        if (endsInitialEvents(event)) {
          complete = true;
          done.abort(new Error('initial events complete'));
        } else if (event.type === 'ADDED' || event.type === 'MODIFIED') {
          streamed.add(event.object.metadata.name ?? '');
          onItem(event.object);
        }
      });
      if (!complete) throw new Error(`${source.what}: the streaming list ended before its initial events did`);
      return;
    } catch (err) {
      if (complete) return;
      if (signal.aborted) throw err;
      // Refused, or failed before its initial events ended (see the header): pages, as the informer does.
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }
  const paged = new Set<string>();
  await listPages(source, signal, (item) => {
    paged.add(item.metadata.name ?? '');
    onItem(item);
  });
  for (const name of streamed) if (!paged.has(name)) onGone(name);
}
