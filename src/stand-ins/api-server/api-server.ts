// The Kubernetes API stand-in: a server on loopback that speaks the real REST protocol for the
// resources in resources.ts, for the demo, the tests and the benchmarks. Its answers to every
// request the product sends are compared with a real kube-apiserver's by the conformance table
// (test/cluster/conformance.test.ts; what it found is in docs/reliability.md). Plain HTTP by default;
// HTTPS with the `tls` option (a certificate from test-pki.ts), and then, with `tls.clientCa`,
// client certificates authenticate as the real server's x509 authenticator does: a certificate
// signed by that CA is user CN. The TLS handshake only requests a certificate (the real server's
// tls.RequestClientCert), so a client without one still authenticates by bearer token.
//
// Request path, in the order the real server's filter chain runs it:
//   record → read body (≤ 3 MiB, else 413) → injected fault → authenticate (401) →
//   route (404 for unknown paths, 405 for a method the path does not take) → authorize (403) →
//   content type (415) → verb handler → answer, recorded with its status.
//
// Failure modes: a handler bug answers 500 InternalError and is counted in the record; it never
// takes the server down. `stopListening()` closes the port and drops every connection (the API
// server "down"); `startListening()` reopens the same port. `close()` ends watches, cancels
// timers and destroys sockets, hung ones included.
//
// Assumptions: namespaces are not objects (every namespace exists); aggregated discovery and
// server-side apply are not served (apply-patch+yaml is 415); no controller runs (no garbage
// collector, no node or DaemonSet controllers): objects change only when a client writes them.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import type { Clock, Timer } from '../../clock/clock.ts';
import { type AccessRule, AuthSettings, forbiddenReason, type ResourceAttributes } from './auth.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, SERVER_VERSION } from './discovery.ts';
import { type FaultAction, FaultInjector } from './faults.ts';
import { ObjectStore } from './object-store.ts';
import type { JsonValue } from './object-meta.ts';
import { type RecordedRequest, RequestLog } from './request-log.ts';
import {
  type Answer, createObject, decodeBody, deleteObject, getObject, listObjects, parseListFilter, parseResourceVersion,
  patchObject, type PatchType, type Target, updateObject,
} from './resource-handlers.ts';
import { findResource, type ResourceDef } from './resources.ts';
import {
  ApiStatusError, forbidden, genericServerResponse, internalError, invalid, statusBody, tooManyRequests, unauthorized, unsupportedMediaType,
} from './status.ts';
import {
  type ActiveWatch, DEFAULT_BOOKMARK_INTERVAL_MS, DEFAULT_MAX_WATCH_BUFFER_BYTES, DEFAULT_WATCH_TIMEOUT_MS, startWatch, watchOptionErrors,
} from './watch-stream.ts';

/** The real server's http.Server IdleTimeout. */
const IDLE_TIMEOUT_MS = 90_000;

/** apiserver's MaxRequestBodyBytes default: 3 MiB. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

const PATCH_TYPES: Readonly<Record<string, PatchType>> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};
// The list the real server names in its 415 (endpoints/installer.go supportedTypes, 1.31).
const PATCH_TYPES_ADVERTISED = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
const BODY_TYPES_ADVERTISED = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

export interface ApiServerOptions {
  /** Loopback address to bind; default 127.0.0.1. */
  readonly host?: string;
  /** Port; default 0 (any free port). */
  readonly port?: number;
  /** Times watches, bookmarks, delays and the request record: the system clock from a main, a manual one in unit tests. */
  readonly clock: Clock;
  /** Serve HTTPS with this certificate (PEM); with clientCa, authenticate client certificates it signed. */
  readonly tls?: { readonly cert: string; readonly key: string; readonly clientCa?: string };
  /** Bearer token → user name. Absent: no authentication, every request is system:admin (or its client certificate's CN). */
  readonly tokens?: Readonly<Record<string, string>>;
  /** Authorization rules. Absent: everything is allowed. */
  readonly rules?: readonly AccessRule[];
  /** Watch history length (default 1,000 events). */
  readonly historySize?: number;
  /** Request record capacity (default 100,000). */
  readonly maxRecordedRequests?: number;
  readonly bookmarkIntervalMs?: number;
  readonly watchTimeoutMs?: number;
  readonly maxWatchBufferBytes?: number;
  /**
   * The WatchList feature gate (default true, as on 1.34): false refuses a watch with
   * sendInitialEvents with upstream's 422, as a 1.29–1.31 server with the gate off does.
   */
  readonly watchList?: boolean;
}

export interface ApiServerHandle {
  /** `http://127.0.0.1:<port>`, or `https://…` with the tls option. */
  readonly url: string;
  readonly port: number;
  readonly requests: RequestLog;
  readonly store: ObjectStore;
  readonly faults: FaultInjector;
  readonly auth: AuthSettings;
  /** Closes the port and drops every connection; the store is kept. */
  stopListening(): Promise<void>;
  /** Listens again on the same port. */
  startListening(): Promise<void>;
  /** Stops everything: watches, timers, sockets. Idempotent. */
  close(): Promise<void>;
}

interface Parsed {
  readonly kind: 'resource';
  readonly def: ResourceDef;
  readonly namespace: string | undefined;
  readonly name: string;
  readonly subresource: string;
}

type Route = Parsed | { readonly kind: 'document'; readonly body: object } | { readonly kind: 'notFound' };

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Audit-Id': randomUUID(),
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  });
  res.end(body);
}

function sendStatus(res: ServerResponse, e: ApiStatusError, headers: Record<string, string> = {}): void {
  send(res, e.httpStatus, JSON.stringify(e.body), headers);
}

/** Maps a URL path to a resource, a discovery document, or nothing. */
function route(path: string, serverAddress: string): Route {
  if (path === '/api' || path === '/api/') return { kind: 'document', body: apiVersions(serverAddress) };
  if (path === '/apis' || path === '/apis/') return { kind: 'document', body: apiGroupList() };
  if (path === '/version' || path === '/version/') return { kind: 'document', body: SERVER_VERSION };
  const parts = path.split('/').filter((p) => p !== '').map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    group = '';
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    group = parts[1] ?? '';
    if (parts.length === 2) {
      const doc = apiGroup(group);
      return doc === undefined ? { kind: 'notFound' } : { kind: 'document', body: doc };
    }
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return { kind: 'notFound' };
  }
  if (rest.length === 0) {
    const doc = apiResourceList(group, version);
    return doc === undefined ? { kind: 'notFound' } : { kind: 'document', body: doc };
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource = '', name = '', subresource = '', ...extra] = rest;
  if (extra.length > 0) return { kind: 'notFound' };
  const def = findResource(group, version, resource);
  if (def === undefined) return { kind: 'notFound' };
  if (!def.namespaced && namespace !== undefined) return { kind: 'notFound' };
  // A namespaced resource is listed across namespaces at the cluster path, but never named there.
  if (def.namespaced && namespace === undefined && name !== '') return { kind: 'notFound' };
  if (subresource !== '' && !(subresource === 'status' && def.hasStatus)) return { kind: 'notFound' };
  return { kind: 'resource', def, namespace, name, subresource };
}

/** The verb for a method on a route, or undefined when the route does not take it (405). */
function verbFor(method: string, r: Parsed, query: URLSearchParams): string | undefined {
  const watch = query.get('watch') === 'true' || query.get('watch') === '1';
  if (r.name === '') {
    if (method === 'GET') return watch ? 'watch' : 'list';
    if (method === 'POST' && r.namespace !== undefined === r.def.namespaced) return 'create';
    return undefined;
  }
  if (r.subresource === 'status') {
    return ({ GET: 'get', PUT: 'update', PATCH: 'patch' } as Record<string, string>)[method];
  }
  return ({ GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method];
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

function parseBody(text: string, contentType: string): { value: JsonValue | undefined; error: string | undefined } {
  if (text.length === 0) return { value: undefined, error: undefined };
  try {
    if (contentType === 'application/yaml') return { value: parseYaml(text) as JsonValue, error: undefined };
    return { value: JSON.parse(text) as JsonValue, error: undefined };
  } catch (e) {
    return { value: undefined, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Starts the stand-in and resolves once it listens. */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServerHandle> {
  const { clock } = options;
  const host = options.host ?? '127.0.0.1';
  const store = new ObjectStore({ clock, ...(options.historySize === undefined ? {} : { historySize: options.historySize }) });
  const requests = new RequestLog(options.maxRecordedRequests);
  const faults = new FaultInjector();
  const auth = new AuthSettings({
    ...(options.tokens === undefined ? {} : { tokens: options.tokens }),
    ...(options.rules === undefined ? {} : { rules: options.rules }),
  });
  const sockets = new Set<Socket>();
  const watches = new Set<ActiveWatch>();
  const timers = new Set<Timer>();
  let port = options.port ?? 0;
  let closed = false;

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((e: unknown) => {
      sendStatus(res, internalError(e instanceof Error ? e.message : String(e)));
    });
  };
  const tls = options.tls;
  const server: Server = tls === undefined
    ? createServer(onRequest)
    : createHttpsServer({
      cert: tls.cert,
      key: tls.key,
      ...(tls.clientCa === undefined ? {} : { ca: tls.clientCa, requestCert: true, rejectUnauthorized: false }),
    }, onRequest);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // An idle connection is kept 90 s, as the real server's IdleTimeout keeps it (secure_serving.go),
  // so a client that writes every 10 s reuses its connection, TLS session included. Closing the
  // stand-in destroys every socket, idle or not.
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;

  const readBody = (req: IncomingMessage): Promise<Buffer | 'too-large'> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_REQUEST_BODY_BYTES) over = true;
        else chunks.push(c);
      });
      req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
      req.on('error', reject);
    });

  const applyFault = async (action: FaultAction, rec: RecordedRequest, res: ServerResponse): Promise<'continue' | 'done'> => {
    rec.fault = action.kind;
    switch (action.kind) {
      case 'delay':
        await new Promise<void>((resolve) => {
          const t = clock.after(action.ms, () => {
            timers.delete(t);
            resolve();
          });
          timers.add(t);
        });
        return res.destroyed ? 'done' : 'continue';
      case 'hang':
        return 'done';
      case 'reset':
        res.socket?.resetAndDestroy();
        return 'done';
      case 'nonJson': {
        const status = action.status ?? 200;
        rec.status = status;
        const body = action.body ?? '<html><body>502 Bad Gateway</body></html>';
        if (!res.headersSent) {
          res.writeHead(status, { 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(body)) });
          res.end(body);
        }
        return 'done';
      }
      case 'status': {
        rec.status = action.status;
        const headers: Record<string, string> = {};
        if (action.retryAfterSeconds !== undefined) headers['Retry-After'] = String(action.retryAfterSeconds);
        if (action.plainText === true) {
          const text = `${action.message ?? 'Too many requests, please try again later.'}\n`;
          if (!res.headersSent) {
            res.writeHead(action.status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', ...headers });
            res.end(text);
          }
          return 'done';
        }
        const e = action.status === 429
          ? tooManyRequests(action.message ?? 'Too many requests, please try again later.', action.retryAfterSeconds ?? 0)
          : genericServerResponse(action.status, action.message ?? '', action.retryAfterSeconds ?? 0);
        if (action.message !== undefined && action.status !== 429) {
          sendStatus(res, new ApiStatusError(statusBody({ code: e.body.code, message: action.message, reason: e.body.reason ?? '', details: e.body.details ?? {} })), headers);
        } else {
          sendStatus(res, e, headers);
        }
        return 'done';
      }
    }
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const method = (req.method ?? 'GET').toUpperCase();
    const contentType = req.headers['content-type'];
    const body = await readBody(req);
    const text = body === 'too-large' ? '' : body.toString('utf8');
    let parsed: unknown;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const rec = requests.record({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      contentType,
      accept: req.headers.accept,
      bodyBytes: body === 'too-large' ? MAX_REQUEST_BODY_BYTES + 1 : body.length,
      body: text,
      parsed,
      atMs: clock.monotonicMs(),
      wallMicros: clock.wallMicros(),
    });
    res.on('finish', () => {
      rec.status ??= res.statusCode;
    });
    const answer = (status: number, json: string, headers: Record<string, string> = {}): void => {
      rec.status = status;
      send(res, status, json, headers);
    };
    const fail = (e: ApiStatusError, headers: Record<string, string> = {}): void => {
      rec.status = e.httpStatus;
      sendStatus(res, e, headers);
    };

    if (body === 'too-large') {
      fail(new ApiStatusError(statusBody({ code: 413, reason: 'RequestEntityTooLarge', message: `Request entity too large: limit is ${MAX_REQUEST_BODY_BYTES}` })));
      return;
    }
    const fault = faults.take(method, url.pathname);
    if (fault !== undefined && (await applyFault(fault, rec, res)) === 'done') return;

    const authn = auth.authenticate(req.headers.authorization, url.pathname, clientCertificateUser(req.socket));
    if (!authn.ok) {
      fail(unauthorized());
      return;
    }
    rec.user = authn.user;
    const addr = `${host}:${port}`;
    const r = route(url.pathname, addr);
    if (r.kind === 'notFound') {
      fail(genericServerResponse(404));
      return;
    }
    if (r.kind === 'document') {
      if (method !== 'GET') {
        fail(genericServerResponse(405));
        return;
      }
      answer(200, JSON.stringify(r.body));
      return;
    }
    const verb = verbFor(method, r, url.searchParams);
    if (verb === undefined) {
      fail(genericServerResponse(405));
      return;
    }
    rec.verb = verb;
    const attrs: ResourceAttributes = {
      user: authn.user,
      verb,
      group: r.def.group,
      resource: r.def.resource,
      subresource: r.subresource,
      namespace: r.namespace ?? '',
      name: r.name,
    };
    if (!auth.authorize(attrs)) {
      fail(forbidden({ group: r.def.group, resource: r.def.resource }, r.name, forbiddenReason(attrs)));
      return;
    }
    try {
      serve(r, verb, method, url.searchParams, mediaType(contentType), text, rec, res, answer);
    } catch (e) {
      if (e instanceof ApiStatusError) {
        fail(e, e.httpStatus === 504 || e.httpStatus === 429 ? { 'Retry-After': '1' } : {});
        return;
      }
      throw e;
    }
  }

  function serve(
    r: Parsed,
    verb: string,
    method: string,
    query: URLSearchParams,
    type: string,
    text: string,
    rec: RecordedRequest,
    res: ServerResponse,
    answer: (status: number, json: string, headers?: Record<string, string>) => void,
  ): void {
    const target: Target = { def: r.def, namespace: r.namespace ?? '', name: r.name, subresource: r.subresource };
    const reply = (a: Answer): void => {
      const headers: Record<string, string> = {};
      if (a.warnings.length > 0) headers['Warning'] = a.warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ');
      answer(a.status, a.body, headers);
    };
    const ctx = { store, clock };
    switch (verb) {
      case 'get':
        reply(getObject(store, target));
        return;
      case 'list':
        reply(listObjects(store, r.def, parseListFilter(r.def, query, r.namespace), query));
        return;
      case 'watch': {
        const problems = watchOptionErrors(query, options.watchList ?? true);
        if (problems.length > 0) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', problems);
        const filter = parseListFilter(r.def, query, r.namespace);
        const startRv = parseResourceVersion(store, query.get('resourceVersion'));
        rec.status = 200;
        const w = startWatch(res, {
          store, def: r.def, filter, clock, query,
          bookmarkIntervalMs: options.bookmarkIntervalMs ?? DEFAULT_BOOKMARK_INTERVAL_MS,
          maxBufferedBytes: options.maxWatchBufferBytes ?? DEFAULT_MAX_WATCH_BUFFER_BYTES,
          defaultTimeoutMs: options.watchTimeoutMs ?? DEFAULT_WATCH_TIMEOUT_MS,
        }, startRv, () => {
          if (w !== undefined) watches.delete(w);
        });
        if (w !== undefined) watches.add(w);
        return;
      }
      case 'delete': {
        const opts = type === '' || type === 'application/json' ? parseBody(text, 'application/json').value : undefined;
        reply(deleteObject(ctx, target, opts));
        return;
      }
      case 'patch': {
        const patchType = PATCH_TYPES[type];
        if (patchType === undefined) throw unsupportedMediaType(PATCH_TYPES_ADVERTISED);
        const { value, error } = parseBody(text, 'application/json');
        if (value === undefined || error !== undefined) throw genericBadPatch(error);
        reply(patchObject(ctx, target, patchType, value));
        return;
      }
      case 'create':
      case 'update': {
        if (type !== '' && type !== 'application/json' && type !== 'application/yaml') throw unsupportedMediaType(BODY_TYPES_ADVERTISED);
        const { value, error } = parseBody(text, type === '' ? 'application/json' : type);
        const { obj, warnings } = decodeBody(r.def, value, text, error);
        reply(method === 'POST' ? createObject(ctx, target, obj, warnings) : updateObject(ctx, target, obj, warnings));
        return;
      }
    }
  }

  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const a = server.address();
        if (a !== null && typeof a === 'object') port = a.port;
        resolve();
      });
    });

  const dropEverything = (): Promise<void> => {
    for (const w of [...watches]) w.end();
    watches.clear();
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    sockets.clear();
    return done;
  };

  await listen();
  return {
    get url() {
      return `${tls === undefined ? 'http' : 'https'}://${host}:${port}`;
    },
    get port() {
      return port;
    },
    requests,
    store,
    faults,
    auth,
    async stopListening() {
      if (!server.listening) return;
      await dropEverything();
    },
    async startListening() {
      if (closed) throw new Error('startListening: server must not be closed');
      if (server.listening) return;
      await listen();
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of timers) t.cancel();
      timers.clear();
      if (server.listening) await dropEverything();
    },
  };
}

/** The CN of a client certificate the TLS handshake verified against the client CA, if any. */
function clientCertificateUser(socket: Socket): string | undefined {
  const tlsSocket = socket as Partial<TLSSocket>;
  if (tlsSocket.authorized !== true || tlsSocket.getPeerCertificate === undefined) return undefined;
  const cn = tlsSocket.getPeerCertificate().subject?.CN;
  return typeof cn === 'string' && cn !== '' ? cn : undefined;
}

function genericBadPatch(error: string | undefined): ApiStatusError {
  return new ApiStatusError(statusBody({ code: 400, reason: 'BadRequest', message: error ?? 'invalid JSON document' }));
}
