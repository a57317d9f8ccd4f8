// The Kubernetes API client of nodepulse: the only code that talks to the API server.
//
// It is a thin request core over node:http / node:https with the cluster URL, TLS material and
// bearer token from kube-config.ts, plus one method per call the agent makes. No generated API
// classes: the lease and condition writers need six calls, and the typed client costs ~80 MiB
// of RSS to load (see kube-config.ts).
//
// Every request:
// - has a timeout (default 10 s, upstream's heartbeat client) on the injected clock, and the
//   caller's AbortSignal;
// - reads at most maxResponseBytes of body (default 16 MiB);
// - sends the bearer token, re-read from its file every 60 s, and re-read at once after a 401
//   (before the caller's retry, so the retry carries the new token);
// - fails with a KubeApiError whose code comes from kube-api-error.ts, the one place errors are
//   mapped. There are no retries in here: retry policy belongs to the caller (the lease writer
//   must check its gate before every write attempt, and only it knows that gate).
//
// For the fleet reader, list is a GET with a query, and watch will be a second reader of
// #exchange's response that parses lines as they stream instead of buffering: the request
// core (URL, headers, TLS, timeout, abort, error mapping) is shared.
import type { Agent as HttpAgent, IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Clock } from '../clock/clock.ts';
import { wallMs } from '../clock/clock.ts';
import { http } from '../node-http.ts';
import { VERSION } from '../version.ts';
import { BearerToken } from './bearer-token.ts';
import { errorFromBadBody, errorFromResponse, errorFromTransport, KubeApiError } from './kube-api-error.ts';
import type { KubeTarget } from './kube-config.ts';
import type { KubeEvent, Lease, Node } from './kube-types.ts';

/** Upstream's node heartbeat client times out every request at 10 s. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** A Node, a Lease or a Status is a few KiB; a node list of a big cluster is a few MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Bounds the connections the agent may hold to the API server. */
const MAX_SOCKETS = 4;

export const CONTENT_TYPE_JSON = 'application/json';
export const CONTENT_TYPE_MERGE_PATCH = 'application/merge-patch+json';
export const CONTENT_TYPE_STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

export interface KubeClientOptions {
  readonly target: KubeTarget;
  readonly clock: Clock;
  /** Per-request timeout, ms. Default 10 s. */
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  /** How often a token file is re-read. Default 60 s. */
  readonly tokenRereadMs?: number;
}

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
}

interface Exchange {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export class KubeClient {
  /** The API server's base URL (never holds credentials). */
  readonly server: string;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #token: BearerToken;
  readonly #agent: HttpAgent;
  readonly #https: boolean;

  constructor(options: KubeClientOptions) {
    const { target } = options;
    this.server = target.server;
    this.#clock = options.clock;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    if (!(this.#timeoutMs > 0)) throw new RangeError(`apiTimeout: ${this.#timeoutMs}ms must be more than 0`);
    this.#token = new BearerToken({
      clock: options.clock,
      token: target.token,
      tokenFile: target.tokenFile,
      ...(options.tokenRereadMs === undefined ? {} : { rereadMs: options.tokenRereadMs }),
    });
    this.#https = target.server.startsWith('https:');
    this.#agent = this.#https
      ? new https.Agent({
          keepAlive: true,
          maxSockets: MAX_SOCKETS,
          ...(target.ca === undefined ? {} : { ca: target.ca }),
          ...(target.cert === undefined ? {} : { cert: target.cert }),
          ...(target.key === undefined ? {} : { key: target.key }),
          ...(target.tlsServerName === undefined ? {} : { servername: target.tlsServerName }),
          rejectUnauthorized: !target.skipTLSVerify,
        })
      : new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
  }

  // ---- the calls the agent makes ----------------------------------------------------------

  getLease(namespace: string, name: string, options: CallOptions = {}): Promise<Lease> {
    return this.request<Lease>({ ...options, method: 'GET', path: leasePath(namespace, name), what: `GET leases ${namespace}/${name}` });
  }

  createLease(namespace: string, lease: Lease, options: CallOptions = {}): Promise<Lease> {
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease };
    return this.request<Lease>({
      ...options,
      method: 'POST',
      path: leasePath(namespace),
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

  /** Creates an events.k8s.io/v1 Event. */
  createEvent(namespace: string, event: KubeEvent, options: CallOptions = {}): Promise<KubeEvent> {
    return this.request<KubeEvent>({
      ...options,
      method: 'POST',
      path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      body: event,
      what: `POST events ${namespace}/${event.metadata.name ?? ''}`,
    });
  }

  // ---- the request core ---------------------------------------------------------------------

  /** One request; resolves with the JSON object the server answered, or rejects with a KubeApiError. */
  async request<T>(req: KubeRequest): Promise<T> {
    const timeoutMs = req.timeoutMs ?? this.#timeoutMs;
    const answer = await this.#exchange(req, timeoutMs);
    if (answer.status === 401) {
      // Re-read before the caller's retry: a rotated projected token is the usual cause.
      await this.#token.reload();
      const err = errorFromResponse(req.what, answer.status, answer.body, undefined, wallMs(this.#clock));
      const problem = this.#token.problem;
      throw problem === undefined ? err : new KubeApiError(err.code, `${err.message} (${problem})`, err);
    }
    if (answer.status < 200 || answer.status > 299) {
      const retryAfter = headerValue(answer.headers['retry-after']);
      throw errorFromResponse(req.what, answer.status, answer.body, retryAfter, wallMs(this.#clock));
    }
    let value: unknown;
    try {
      value = JSON.parse(answer.body);
    } catch (err) {
      throw errorFromBadBody(req.what, answer.status, answer.body, err);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errorFromBadBody(req.what, answer.status, answer.body);
    return value as T;
  }

  /** Closes idle connections and refuses nothing: calls in flight finish or time out. */
  close(): void {
    this.#agent.destroy();
  }

  async #exchange(req: KubeRequest, timeoutMs: number): Promise<Exchange> {
    const caller = req.signal;
    if (aborted(caller)) throw errorFromTransport(req.what, caller?.reason, 'aborted', timeoutMs);
    const url = new URL(this.server + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: CONTENT_TYPE_JSON, 'user-agent': `nodepulse/${VERSION}` };
    const authorization = await this.#token.header();
    if (authorization !== undefined) headers['authorization'] = authorization;
    let payload: Buffer | undefined;
    if (req.body !== undefined) {
      payload = Buffer.from(JSON.stringify(req.body));
      headers['content-type'] = req.contentType ?? CONTENT_TYPE_JSON;
      headers['content-length'] = String(payload.length);
    }

    // Checked again after the token read: an abort during that await fired no listener yet.
    if (aborted(caller)) throw errorFromTransport(req.what, caller?.reason, 'aborted', timeoutMs);
    const controller = new AbortController();
    let how: 'timeout' | 'aborted' | 'failed' = 'failed';
    const onCallerAbort = (): void => {
      how = 'aborted';
      controller.abort(caller?.reason);
    };
    caller?.addEventListener('abort', onCallerAbort, { once: true });
    const timer = this.#clock.after(timeoutMs, () => {
      how = 'timeout';
      controller.abort(new Error('timeout'));
    });
    const maxBytes = this.#maxBytes;
    const what = req.what;
    const send = this.#https ? https.request : http.request;
    try {
      return await new Promise<Exchange>((resolve, reject) => {
        const request = send(url, { method: req.method, headers, agent: this.#agent, signal: controller.signal }, (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > maxBytes) {
              // Reject first: destroying the response emits its own error, which must lose.
              reject(errorFromBadBody(what, response.statusCode ?? 0, `(a body larger than ${maxBytes} bytes)`));
              response.destroy();
              return;
            }
            chunks.push(chunk);
          });
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString('utf8') });
          });
          response.on('error', (err) => reject(errorFromTransport(what, err, how, timeoutMs)));
          response.on('aborted', () => reject(errorFromTransport(what, new Error('response aborted'), how, timeoutMs)));
        });
        request.on('error', (err) => reject(errorFromTransport(what, err, how, timeoutMs)));
        request.end(payload);
      });
    } finally {
      timer.cancel();
      caller?.removeEventListener('abort', onCallerAbort);
    }
  }
}

function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function leasePath(namespace: string, name?: string): string {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

function nodePath(name: string): string {
  return `/api/v1/nodes/${encodeURIComponent(name)}`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
