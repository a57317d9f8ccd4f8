// The one HTTP server the product's commands serve on (the agent's endpoints, the controller's),
// built but not listening: the caller listens. A command gives its routes, each a function of
// the query and the request that returns an Answer; this module holds what every route shares.
//
// Anything not routed is 404; a method other than GET or HEAD is 405 with `Allow: GET, HEAD`; a
// request body over maxBodyBytes is 413 and the connection is closed (no route takes a body, so
// a large one is a mistake or an attack, never read in full). A route that throws gives that
// request a 500 with the error's message and is reported through onError; it never crashes the
// server.
//
// Bounds: header size, header and request timeouts, keep-alive and the number of connections are
// all capped (HttpServerOptions). When the connections are full, a newcomer is not refused: the
// connection that has waited longest without completing a request is closed, and no one remote
// address may hold more than a small share (connection-guard.ts), so idle connections cannot
// starve the probes.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../node-http.ts';
import { defaultMaxPerPeer, guardConnections } from './connection-guard.ts';

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One path's answer, from the query and the request (its Accept header, for one). */
export type Route = (query: URLSearchParams, req: IncomingMessage) => Answer | Promise<Answer>;

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

const ALLOW = 'GET, HEAD';
const TEXT = 'text/plain; charset=utf-8';

/** A plain-text answer. */
export function textAnswer(status: number, body: string, headers?: Readonly<Record<string, string>>): Answer {
  return { status, contentType: TEXT, body, ...(headers === undefined ? {} : { headers }) };
}

/**
 * A server answering `routes` (by path) within the bounds of `options`. onError is told about a
 * route that threw (the request got a 500); it must not throw.
 */
export function createBoundedServer(
  routes: Readonly<Record<string, Route>>,
  options: HttpServerOptions = {},
  onError?: (err: unknown, path: string) => void,
): Server {
  const maxBody = options.maxBodyBytes ?? 1024;
  const server = http.createServer(
    { maxHeaderSize: options.maxHeaderBytes ?? 8192, connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS },
    (req, res) => {
      void serve(routes, maxBody, onError, req, res);
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

async function serve(
  routes: Readonly<Record<string, Route>>,
  maxBody: number,
  onError: ((err: unknown, path: string) => void) | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let answer: Answer;
  let path = '';
  try {
    const tooLarge = await bodyTooLarge(req, maxBody);
    const url = new URL(req.url ?? '/', 'http://server.invalid');
    path = url.pathname;
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (tooLarge) answer = textAnswer(413, `request body must be at most ${maxBody} bytes\n`, { Connection: 'close' });
    else if (route === undefined) answer = textAnswer(404, `${path} not found\n`);
    else if (req.method !== 'GET' && req.method !== 'HEAD') answer = textAnswer(405, `method ${req.method ?? ''} must be GET or HEAD\n`, { Allow: ALLOW });
    else answer = await route(url.searchParams, req);
  } catch (err) {
    try {
      onError?.(err, path);
    } catch {
      // onError must not throw; if it does, the 500 below still goes out.
    }
    answer = textAnswer(500, `internal error: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  send(req, res, answer);
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
