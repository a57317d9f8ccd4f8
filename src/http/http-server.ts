// The agent's HTTP surface, built but not listening (the caller listens, as with fastify):
//
// | path        | answers                                                                     |
// |-------------|-----------------------------------------------------------------------------|
// | /livez      | 200 while every loop is Alive, or Unknown within the start-up grace; else   |
// |             | 503 naming each failing loop and why. Never reads the runtime's health.     |
// | /readyz     | 200 once started and serving (config loaded, loops started, HTTP up), unless|
// |             | the agent cannot observe the runtime (503, with the ledger's words): a      |
// |             | rollout of a version that cannot observe stops, one on a sick node does not |
// |             | (health-report.ts, readyzChecks).                                           |
// | /healthz    | every check (each loop, the runtime judgement, the lease); ?verbose lists   |
// |             | them as Kubernetes components do. 200 only when all pass.                   |
// | /metrics    | Prometheus text, or OpenMetrics when Accept asks for it.                    |
// | /status     | the StatusSnapshot as JSON.                                                 |
//
// Anything else is 404; a method other than GET or HEAD is 405 with `Allow: GET, HEAD`; a
// request body over maxBodyBytes is 413 and the connection is closed (none of these routes
// takes a body, so a large one is a mistake or an attack, never read in full).
//
// Bounds: header size, header and request timeouts, keep-alive and the number of connections are
// all capped (HttpServerOptions). When the connections are full, a newcomer is not refused: the
// connection that has waited longest without completing a request is closed, and no one remote
// address may hold more than a small share (connection-guard.ts), so idle connections cannot
// starve the probes. Failure modes: a dependency that throws gives that request a
// 500 with the error's message and is reported through onError; it never crashes the server.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Liveness } from '../liveness/liveness.ts';
import { exposition } from '../metrics/exposition.ts';
import { http } from '../node-http.ts';
import { defaultMaxPerPeer, guardConnections } from './connection-guard.ts';
import { livezChecks, renderHealth, type HealthCheck } from './health-report.ts';
import type { StatusSnapshot } from './status-snapshot.ts';

/** What the server reads, as plain functions the agent supplies; each is called per request. */
export interface HttpDeps {
  /** Each loop's liveness row now (relister, lease, Status poller). */
  loops(): readonly Liveness[];
  /** True while the start-up grace for /livez has not run out. */
  withinStartupGrace(): boolean;
  /** The /readyz checks (readyzChecks): started and serving, and the runtime observable. */
  ready(): readonly HealthCheck[];
  /** /healthz checks: each loop, the runtime judgement, the lease. */
  checks(): readonly HealthCheck[];
  status(): StatusSnapshot;
  /** The registry the agent's metrics live on. */
  readonly registry: Registry;
  /** Told about a dependency that threw (the request got a 500). Must not throw. */
  onError?(err: unknown, path: string): void;
}

export interface HttpServerOptions {
  /** Largest request body read; larger is 413. Default 1 KiB. */
  readonly maxBodyBytes?: number;
  /** Time allowed to receive the headers. Default 10 s. */
  readonly headersTimeoutMs?: number;
  /** Time allowed for the whole request. Default 15 s. */
  readonly requestTimeoutMs?: number;
  /** Idle keep-alive time. Default 5 s. */
  readonly keepAliveTimeoutMs?: number;
  /** Largest header block. Default 8 KiB. */
  readonly maxHeaderBytes?: number;
  /**
   * Connections held at most. Default 64 (a probe and a scraper or two, with room to spare). A
   * newcomer past it closes the longest-waiting idle connection instead (connection-guard.ts).
   */
  readonly maxConnections?: number;
  /** Connections one remote address may hold at most. Default maxConnections / 8. */
  readonly maxConnectionsPerPeer?: number;
}

/** How often Node looks for connections past their header or request timeout (its default is 30 s). */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

export const ROUTES = ['/livez', '/readyz', '/healthz', '/metrics', '/status'] as const;
const ALLOW = 'GET, HEAD';

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const TEXT = 'text/plain; charset=utf-8';

function text(status: number, body: string, headers?: Readonly<Record<string, string>>): Answer {
  return { status, contentType: TEXT, body, ...(headers === undefined ? {} : { headers }) };
}

export function createHttpServer(deps: HttpDeps, options: HttpServerOptions = {}): Server {
  const maxBody = options.maxBodyBytes ?? 1024;
  const server = http.createServer(
    { maxHeaderSize: options.maxHeaderBytes ?? 8192, connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS },
    (req, res) => {
      void serve(deps, maxBody, req, res);
    },
  );
  server.headersTimeout = options.headersTimeoutMs ?? 10_000;
  server.requestTimeout = options.requestTimeoutMs ?? 15_000;
  server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 5_000;
  server.maxHeadersCount = 64;
  const maxConnections = options.maxConnections ?? 64;
  guardConnections(server, { maxConnections, maxPerPeer: options.maxConnectionsPerPeer ?? defaultMaxPerPeer(maxConnections) });
  return server;
}

async function serve(deps: HttpDeps, maxBody: number, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let answer: Answer;
  let path = '';
  try {
    const tooLarge = await bodyTooLarge(req, maxBody);
    const url = new URL(req.url ?? '/', 'http://agent.invalid');
    path = url.pathname;
    if (tooLarge) answer = text(413, `request body must be at most ${maxBody} bytes\n`, { Connection: 'close' });
    else if (!(ROUTES as readonly string[]).includes(path)) answer = text(404, `${path} not found\n`);
    else if (req.method !== 'GET' && req.method !== 'HEAD') answer = text(405, `method ${req.method ?? ''} must be GET or HEAD\n`, { Allow: ALLOW });
    else answer = await route(deps, path, url.searchParams, req);
  } catch (err) {
    try {
      deps.onError?.(err, path);
    } catch {
      // onError must not throw; if it does, the 500 below still goes out.
    }
    answer = text(500, `internal error: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  send(req, res, answer);
}

async function route(deps: HttpDeps, path: string, query: URLSearchParams, req: IncomingMessage): Promise<Answer> {
  const verbose = query.has('verbose');
  switch (path) {
    case '/livez': {
      const { status, body } = renderHealth('livez', livezChecks(deps.loops(), deps.withinStartupGrace()), verbose);
      return text(status, body);
    }
    case '/readyz': {
      const { status, body } = renderHealth('readyz', deps.ready(), verbose);
      return text(status, body);
    }
    case '/healthz': {
      const { status, body } = renderHealth('healthz', deps.checks(), verbose);
      return text(status, body);
    }
    case '/metrics': {
      const { contentType, body } = await exposition(deps.registry, req.headers.accept);
      return { status: 200, contentType, body };
    }
    case '/status':
      return { status: 200, contentType: 'application/json; charset=utf-8', body: `${JSON.stringify(deps.status(), null, 2)}\n` };
    default:
      return text(404, `${path} not found\n`);
  }
}

/**
 * Reads and discards the request body, resolving true as soon as it passes the limit (or at once
 * when Content-Length declares more). A refused body keeps draining, unparsed, until the response
 * with `Connection: close` ends the connection: closing a socket with unread input would reset it
 * and could lose the 413 itself. The request timeout bounds how long a client can keep sending.
 */
function bodyTooLarge(req: IncomingMessage, maxBody: number): Promise<boolean> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > maxBody) {
    req.resume();
    return Promise.resolve(true);
  }
  return new Promise((resolve) => {
    let seen = 0;
    const done = (tooLarge: boolean): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onEnd);
      resolve(tooLarge);
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > maxBody) done(true);
    };
    const onEnd = (): void => done(false);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onEnd);
  });
}

function send(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
  if (res.headersSent || res.destroyed) return;
  const body = Buffer.from(answer.body, 'utf8');
  res.writeHead(answer.status, {
    'Content-Type': answer.contentType,
    'Content-Length': String(body.length),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...answer.headers,
  });
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}
