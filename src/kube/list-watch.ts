// List and watch: the fleet readers' view of a resource, kept current by an informer that
// restarts after every error, as client-go's Reflector does.
//
// | what happens                                    | the informer                                   |
// |-------------------------------------------------|------------------------------------------------|
// | start                                           | LISTs in pages of 500, replaces its store,     |
// |                                                 | then WATCHes from the list's resourceVersion   |
// | ADDED / MODIFIED / DELETED                      | updates the store, calls onEvent               |
// | BOOKMARK                                        | remembers the resourceVersion only             |
// | the watch ends cleanly (server timeoutSeconds)  | watches again from the last resourceVersion    |
// | ERROR event or HTTP 410 (Expired / Gone)        | relists (the resourceVersion is too old)       |
// | any other failure (refused, 5xx, idle, bad line)| waits (WATCH_RETRY: 200 ms doubling to 30 s,   |
// |                                                 | plus up to half again), then relists           |
// | its signal aborts                               | ends, closing the stream                       |
//
// The store holds a PROJECTION of each object, chosen by the caller, never the object itself: a
// realistic Node is several KiB (images, addresses, capacity), and the controller needs a few
// fields of it. So memory is bounded by the projection, not by what the server sends.
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
}

/** Thrown out of a watch when its resourceVersion is too old (410 or an ERROR event): relist. */
export class WatchExpiredError extends Error {
  readonly code = 'watch_expired';
}

/** A source over the project's client: lists and watches through its one request core. */
export function kubeListWatch<T extends KubeObject>(options: {
  readonly client: KubeClient;
  /** The collection path, e.g. /apis/coordination.k8s.io/v1/namespaces/nodepulse/leases. */
  readonly path: string;
  readonly labelSelector?: string | undefined;
  /** e.g. `metadata.name=nodepulse`: one object by name, which RBAC resourceNames can allow. */
  readonly fieldSelector?: string | undefined;
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
      }),
    watch: async (resourceVersion, signal, onEvent) => {
      const timeoutSeconds = Math.floor(WATCH_TIMEOUT_MIN_S * (1 + random()));
      const what = `WATCH ${path}`;
      const query = { ...selector, resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeoutSeconds) };
      try {
        await client.watch({ path, query, signal, idleMs: timeoutSeconds * 1000 + IDLE_SLACK_MS, what }, (value) => {
          const event = value as WatchEvent<T>;
          if (event.type === 'ERROR') throw watchError(what, event.object as WatchErrorStatus);
          onEvent(event);
        });
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 410) throw new WatchExpiredError(`${what}: ${err.message}`, { cause: err });
        throw err;
      }
    },
  };
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
    while (!signal.aborted) {
      try {
        let rv = await this.#relist(signal);
        this.#failures?.succeeded();
        failures = 0;
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
    for (const [key, previous] of [...this.store]) {
      if (seen.has(key)) continue;
      this.store.delete(key);
      this.#o.onEvent?.({ type: 'delete', key, previous });
    }
    this.#synced = true;
    this.#o.onSynced?.();
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

/** One complete, paginated listing (for a reader that judges a single listing). */
export async function listAll<T extends KubeObject>(source: ListWatchSource<T>, signal: AbortSignal): Promise<T[]> {
  const items: T[] = [];
  let continueToken: string | undefined;
  do {
    const page = await source.list({ signal, limit: LIST_PAGE_SIZE, continueToken });
    items.push(...page.items);
    const next = page.metadata.continue;
    continueToken = next === undefined || next === '' ? undefined : next;
  } while (continueToken !== undefined);
  return items;
}
