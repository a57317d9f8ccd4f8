// Every request the stand-in received, in arrival order, so that tests can assert the exact
// calls a client made ("one PATCH per renewal and no GET").
//
// Bounded: the log keeps the most recent `capacity` requests (default 100,000) and counts the
// ones it dropped. Bodies are kept as received, up to the server's body limit.

import type { FaultAction } from './faults.ts';

export interface RecordedRequest {
  /** 1 for the first request the server saw. */
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType: string | undefined;
  readonly accept: string | undefined;
  /** The authenticated user, once known. */
  user: string | undefined;
  /** The Kubernetes verb (get, list, watch, create, update, patch, delete), for resource requests. */
  verb: string | undefined;
  readonly bodyBytes: number;
  readonly body: string;
  /** The body parsed as JSON, or undefined when empty or not JSON. */
  readonly parsed: unknown;
  /** The HTTP status sent, or undefined while in flight, hung, or reset. */
  status: number | undefined;
  /** The fault injected into this request, if any. */
  fault: FaultAction['kind'] | undefined;
  /** Monotonic milliseconds on the server's clock when the request arrived. */
  readonly atMs: number;
  /** Wall microseconds since the epoch when it arrived. */
  readonly wallMicros: number;
}

export const DEFAULT_REQUEST_LOG_CAPACITY = 100_000;

/** A filter: method and/or a path (exact string or RegExp). */
export interface RequestFilter {
  readonly method?: string;
  readonly path?: string | RegExp;
  readonly verb?: string;
}

export class RequestLog {
  readonly #capacity: number;
  #entries: RecordedRequest[] = [];
  #seq = 0;
  #dropped = 0;

  constructor(capacity = DEFAULT_REQUEST_LOG_CAPACITY) {
    this.#capacity = Math.max(1, capacity);
  }

  /** Records a request and returns the record, which the server completes as it answers. */
  record(r: Omit<RecordedRequest, 'seq' | 'user' | 'verb' | 'status' | 'fault'>): RecordedRequest {
    const entry: RecordedRequest = { ...r, seq: ++this.#seq, user: undefined, verb: undefined, status: undefined, fault: undefined };
    this.#entries.push(entry);
    if (this.#entries.length > this.#capacity) {
      this.#entries.shift();
      this.#dropped++;
    }
    return entry;
  }

  /** Every kept request, oldest first (a copy of the list). */
  all(): RecordedRequest[] {
    return [...this.#entries];
  }

  /** The kept requests matching the filter. */
  filter(f: RequestFilter): RecordedRequest[] {
    return this.#entries.filter((r) =>
      (f.method === undefined || r.method === f.method.toUpperCase()) &&
      (f.verb === undefined || r.verb === f.verb) &&
      (f.path === undefined || (typeof f.path === 'string' ? r.path === f.path : f.path.test(r.path))));
  }

  count(f: RequestFilter = {}): number {
    return this.filter(f).length;
  }

  /** Requests received after the one with sequence number `seq`. */
  since(seq: number): RecordedRequest[] {
    return this.#entries.filter((r) => r.seq > seq);
  }

  /** The sequence number of the latest request (0 before any). */
  lastSeq(): number {
    return this.#seq;
  }

  dropped(): number {
    return this.#dropped;
  }

  clear(): void {
    this.#entries = [];
  }
}
