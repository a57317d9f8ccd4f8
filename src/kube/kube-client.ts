// The Kubernetes API client of nodepulse: the only code that talks to the API server.
//
// One request core serves plain requests and watches alike: URL, headers, credentials
// (kube-auth.ts: asked for before every request), timeout on the injected clock, the caller's
// AbortSignal, and the mapping of every failure to a KubeApiError (kube-api-error.ts, the one
// place errors are mapped). On top of it:
// - request(): reads at most maxResponseBytes of body (default 16 MiB) and parses one JSON
//   object; the timeout (default 10 s, upstream's heartbeat client) covers the whole exchange;
// - watch(): streams one JSON event per line to a callback, with an IDLE timeout instead: a
//   watch may last minutes, but a watch that sends nothing for its idle window is dead
//   (a half-open connection);
// - either, given a protobuf decoder (kube-protobuf.ts: the Node readers'), asks for protobuf
//   first and JSON second, and reads whichever the server chose by the answer's Content-Type: the
//   whole body, or a watch's length-prefixed frames. An error answer in protobuf is a Status,
//   read into the same KubeApiError as its JSON;
// - one method per call the product makes (the agent, the elector, the controller's marker,
//   cleanup and verify), each on a path of api-paths.ts, so no module outside src/kube/ writes a
//   path or picks a verb. No generated API classes: the product needs a dozen calls, and the
//   agent must not load client-node's generated API (auth/pick-kube-auth.ts says why). The readers'
//   lists and watches go through list-watch.ts, on the collection paths of api-paths.ts.
//
// A 401 tells the credentials before the error reaches the caller, so the caller's retry
// carries fresh ones (a rotated token file re-read, an exec plugin run again). There are no
// retries in here: retry policy belongs to the caller (the lease writer must check its gate
// before every write attempt, and only it knows that gate).
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { wallMs, type Clock } from '../clock/clock.ts';
import { http } from '../node-http.ts';
import { VERSION } from '../version.ts';
import { eventsPath, leasePath, leasesPath, nodePath, podsPath } from './api-paths.ts';
import { errorFromBadBody, errorFromBadProtobuf, errorFromCredentials, errorFromResponse, errorFromTransport, KubeApiError } from './kube-api-error.ts';
import type { KubeAuth, PreparedRequest } from './auth/kube-auth.ts';
import type { KubeEvent, Lease, Node } from './kube-types.ts';
import { ACCEPT_PROTOBUF_OR_JSON, CONTENT_TYPE_PROTOBUF, decodeStatus } from './kube-protobuf.ts';
import { readBody, readBytes, readFrames, readJsonLines, type ReadControl } from './response-reader.ts';

/** Upstream's node heartbeat client times out every request at 10 s. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** A Node, a Lease or a Status is a few KiB; a node list of a big cluster is a few MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** One watch event (one object) larger than this is refused as a bad stream. */
export const MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;

export const CONTENT_TYPE_JSON = 'application/json';
export const CONTENT_TYPE_MERGE_PATCH = 'application/merge-patch+json';
export const CONTENT_TYPE_STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const CONTENT_TYPE_JSON_PATCH = 'application/json-patch+json';

interface CommonOptions {
  readonly clock: Clock;
  /** Per-request timeout, ms. Default 10 s. */
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
}

/** The credentials come made (auth/: picked by auth/pick-kube-auth.ts, or auth/lean-auth.ts for a server reached directly). */
export type KubeClientOptions = CommonOptions & { readonly auth: KubeAuth };

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
  /** Overrides the client's timeout for this call. */
  readonly timeoutMs?: number | undefined;
}

export interface KubeRequest extends CallOptions {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The path, already escaped, e.g. /api/v1/nodes/node-1. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** Content-Type of the body; JSON by default. */
  readonly contentType?: string;
  /** What is asked, for errors and logs: "PATCH leases nodepulse/node-1". */
  readonly what: string;
  /** Reads a 2xx answer in protobuf; present, the request accepts protobuf before JSON. */
  readonly protobuf?: ((body: Buffer) => unknown) | undefined;
}

export interface WatchRequest {
  /** The collection path, e.g. /api/v1/nodes; `watch=true` is added to the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** A watch that receives nothing for this long fails as timed out. */
  readonly idleMs: number;
  readonly what: string;
  /** Reads one event frame of a watch in protobuf; present, the watch accepts protobuf before JSON. */
  readonly protobuf?: ((frame: Buffer) => unknown) | undefined;
}

type Timing = { readonly ms: number; readonly idle: boolean };

export class KubeClient {
  /** The API server's base URL (never holds credentials). */
  readonly server: string;
  /** Where the credentials came from, for the start-up log. */
  readonly source: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #auth: KubeAuth;

  constructor(options: KubeClientOptions) {
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!(this.#timeoutMs > 0)) throw new RangeError(`apiTimeout: ${this.#timeoutMs}ms must be more than 0`);
    this.#auth = options.auth;
    this.server = this.#auth.server;
    this.source = this.#auth.source;
  }

  // ---- the calls the product makes --------------------------------------------------------

  getLease(namespace: string, name: string, options: CallOptions = {}): Promise<Lease> {
    return this.request<Lease>({ ...options, method: 'GET', path: leasePath(namespace, name), what: `GET leases ${namespace}/${name}` });
  }

  createLease(namespace: string, lease: Lease, options: CallOptions = {}): Promise<Lease> {
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease };
    return this.request<Lease>({
      ...options,
      method: 'POST',
      path: leasesPath(namespace),
      body,
      what: `POST leases ${namespace}/${lease.metadata.name ?? ''}`,
    });
  }

  /** A JSON merge patch (RFC 7386) of a Lease: unconditional unless the patch carries a resourceVersion. */
  patchLease(namespace: string, name: string, patch: unknown, options: CallOptions = {}): Promise<Lease> {
    return this.request<Lease>({
      ...options,
      method: 'PATCH',
      path: leasePath(namespace, name),
      body: patch,
      contentType: CONTENT_TYPE_MERGE_PATCH,
      what: `PATCH leases ${namespace}/${name}`,
    });
  }

  /** A conditional replace (PUT) of a Lease: a stale resourceVersion is a 409, `conflict`. */
  replaceLease(namespace: string, name: string, lease: Lease, options: CallOptions = {}): Promise<Lease> {
    return this.request<Lease>({
      ...options,
      method: 'PUT',
      path: leasePath(namespace, name),
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease },
      what: `PUT leases ${namespace}/${name}`,
    });
  }

  /** Deletes a Lease; the answer (a Status or the Lease) is not read further. */
  async deleteLease(namespace: string, name: string, options: CallOptions = {}): Promise<void> {
    await this.request({ ...options, method: 'DELETE', path: leasePath(namespace, name), what: `DELETE leases ${namespace}/${name}` });
  }

  /** One page of Pods in a namespace, under the caller's query (labelSelector, limit). */
  listPods<P>(namespace: string, query: Readonly<Record<string, string>>, options: CallOptions = {}): Promise<{ items?: P[] }> {
    return this.request<{ items?: P[] }>({ ...options, method: 'GET', path: podsPath(namespace), query, what: `LIST pods ${namespace}` });
  }

  getNode(name: string, options: CallOptions = {}): Promise<Node> {
    return this.request<Node>({ ...options, method: 'GET', path: nodePath(name), what: `GET nodes ${name}` });
  }

  /** A strategic merge patch of nodes/<name>/status: conditions merge by type. */
  patchNodeStatus(name: string, patch: unknown, options: CallOptions = {}): Promise<Node> {
    return this.request<Node>({
      ...options,
      method: 'PATCH',
      path: `${nodePath(name)}/status`,
      body: patch,
      contentType: CONTENT_TYPE_STRATEGIC_MERGE_PATCH,
      what: `PATCH nodes/status ${name}`,
    });
  }

  /** A JSON merge patch (RFC 7386) of a Node: lists (spec.taints) are written whole. */
  patchNode(name: string, patch: unknown, options: CallOptions = {}): Promise<Node> {
    return this.request<Node>({
      ...options,
      method: 'PATCH',
      path: nodePath(name),
      body: patch,
      contentType: CONTENT_TYPE_MERGE_PATCH,
      what: `PATCH nodes ${name}`,
    });
  }

  /** A JSON patch (RFC 6902) of a Node: its `test` operations make it conditional on what the list holds. */
  jsonPatchNode(name: string, operations: readonly unknown[], options: CallOptions = {}): Promise<Node> {
    return this.request<Node>({
      ...options,
      method: 'PATCH',
      path: nodePath(name),
      body: operations,
      contentType: CONTENT_TYPE_JSON_PATCH,
      what: `PATCH nodes ${name}`,
    });
  }

  /** Creates an events.k8s.io/v1 Event. */
  createEvent(namespace: string, event: KubeEvent, options: CallOptions = {}): Promise<KubeEvent> {
    return this.request<KubeEvent>({
      ...options,
      method: 'POST',
      path: eventsPath(namespace),
      body: event,
      what: `POST events ${namespace}/${event.metadata.name ?? ''}`,
    });
  }

  // ---- the request core ---------------------------------------------------------------------

  /** One request; resolves with the JSON object the server answered, or rejects with a KubeApiError. */
  request<T>(req: KubeRequest): Promise<T> {
    const ms = req.timeoutMs ?? this.#timeoutMs;
    return this.#send(req, { ms, idle: false }, async (response, control) => {
      const status = response.statusCode ?? 0;
      if (req.protobuf !== undefined && isProtobuf(response)) {
        const bytes = await readBytes(response, this.#maxBytes, control);
        try {
          return req.protobuf(bytes) as T;
        } catch (err) {
          throw errorFromBadProtobuf(req.what, status, err);
        }
      }
      const body = await readBody(response, this.#maxBytes, control);
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch (err) {
        throw errorFromBadBody(req.what, status, body, err);
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errorFromBadBody(req.what, status, body);
      return value as T;
    });
  }

  /**
   * Watches a collection: every line the server streams, parsed, goes to onEvent. Resolves when
   * the server ends the watch (its timeoutSeconds), rejects with a KubeApiError on any failure,
   * or with what onEvent threw.
   */
  watch(req: WatchRequest, onEvent: (event: unknown) => void): Promise<void> {
    const full: KubeRequest = { method: 'GET', path: req.path, query: { ...req.query, watch: 'true' }, signal: req.signal, what: req.what, protobuf: req.protobuf };
    const decode = req.protobuf;
    return this.#send(full, { ms: req.idleMs, idle: true }, (response, control) => {
      if (decode === undefined || !isProtobuf(response)) return readJsonLines(response, MAX_WATCH_LINE_BYTES, control, onEvent);
      const status = response.statusCode ?? 0;
      return readFrames(response, MAX_WATCH_LINE_BYTES, control, (frame) => {
        let event: unknown;
        try {
          event = decode(frame);
        } catch (err) {
          throw errorFromBadProtobuf(req.what, status, err);
        }
        onEvent(event);
      });
    });
  }

  /**
   * An error answer's body as the JSON errorFromResponse reads: a protobuf Status is read into
   * the same fields; one that cannot be read leaves the body to say so.
   */
  async #errorBody(response: IncomingMessage, control: ReadControl): Promise<string> {
    if (!isProtobuf(response)) return readBody(response, this.#maxBytes, control);
    const bytes = await readBytes(response, this.#maxBytes, control);
    try {
      return JSON.stringify({ kind: 'Status', ...decodeStatus(bytes) });
    } catch (err) {
      return `(a protobuf Status that cannot be read: ${err instanceof Error ? err.message : String(err)})`;
    }
  }

  /** Destroys the connections: calls in flight fail. */
  close(): void {
    this.#auth.close();
  }

  /**
   * Sends one request and hands a 2xx response to `read`; any other status is read (bounded) and
   * rejected as the KubeApiError it maps to. The timer runs until `read` settles: a total timeout,
   * or an idle one restarted by every chunk.
   */
  async #send<T>(req: KubeRequest, timing: Timing, read: (response: IncomingMessage, control: ReadControl) => Promise<T>): Promise<T> {
    const { what } = req;
    const caller = req.signal;
    if (aborted(caller)) throw errorFromTransport(what, caller?.reason, 'aborted', timing.ms);
    const url = new URL(this.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    let prepared: PreparedRequest;
    try {
      prepared = await this.#auth.prepare();
    } catch (err) {
      throw errorFromCredentials(what, err);
    }
    const accept = req.protobuf === undefined ? CONTENT_TYPE_JSON : ACCEPT_PROTOBUF_OR_JSON;
    const headers: Record<string, string> = { accept, 'user-agent': `nodepulse/${VERSION}`, ...prepared.headers };
    let payload: Buffer | undefined;
    if (req.body !== undefined) {
      payload = Buffer.from(JSON.stringify(req.body));
      headers['content-type'] = req.contentType ?? CONTENT_TYPE_JSON;
      headers['content-length'] = String(payload.length);
    }

    // Checked again after prepare(): an abort during that await fired no listener yet.
    if (aborted(caller)) throw errorFromTransport(what, caller?.reason, 'aborted', timing.ms);
    const controller = new AbortController();
    let how: 'timeout' | 'aborted' | 'failed' = 'failed';
    const onCallerAbort = (): void => {
      how = 'aborted';
      controller.abort(caller?.reason);
    };
    caller?.addEventListener('abort', onCallerAbort, { once: true });
    const onTimeout = (): void => {
      how = 'timeout';
      controller.abort(new Error('timeout'));
    };
    let timer = this.#clock.after(timing.ms, onTimeout);
    const control: ReadControl = {
      what,
      transportError: (err) => errorFromTransport(what, err, how, timing.ms),
      ...(timing.idle ? { onData: () => {
        timer.cancel();
        timer = this.#clock.after(timing.ms, onTimeout);
      } } : {}),
    };
    const send = url.protocol === 'https:' ? https.request : http.request;
    try {
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        const request = send(url, {
          method: req.method,
          headers,
          agent: prepared.agent,
          signal: controller.signal,
          ...(prepared.basicAuth === undefined ? {} : { auth: prepared.basicAuth }),
        }, resolve);
        request.on('error', (err) => reject(control.transportError(err)));
        request.end(payload);
      });
      const status = response.statusCode ?? 0;
      if (status >= 200 && status <= 299) return await read(response, control);
      const body = await this.#errorBody(response, control);
      const err = errorFromResponse(what, status, body, headerValue(response.headers['retry-after']), wallMs(this.#clock));
      if (status !== 401) throw err;
      const problem = await this.#auth.unauthorized(prepared);
      throw problem === undefined ? err : new KubeApiError(err.code, `${err.message} (${problem})`, err);
    } finally {
      timer.cancel();
      caller?.removeEventListener('abort', onCallerAbort);
    }
  }
}

/** Whether the server answered in protobuf (a whole object, or a watch's frames). */
function isProtobuf(response: IncomingMessage): boolean {
  return (response.headers['content-type'] ?? '').startsWith(CONTENT_TYPE_PROTOBUF);
}

function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
