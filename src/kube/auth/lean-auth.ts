// The lean credentials: a server, its CA, and a bearer token (inline or a token file), as a
// KubeAuth, with no kubeconfig and without @kubernetes/client-node. Two kinds of caller: the
// pod's service account (in-cluster.ts, the agent's production path and a reader's in a pod), and
// a server reached directly (leanAuth with its fields: the demo and the tests, against the API
// stand-in). Why the lean way at all: pick-kube-auth.ts.
//
// - The connection: one keep-alive Agent for the client's life, with the CA given (the system's
//   CAs without one; plain HTTP for an http:// server); at most MAX_SOCKETS connections for the
//   agent, more for a reader in a pod (pick-kube-auth.ts), whose watches each hold one for
//   minutes.
// - The token: inline, or a token file re-read every 60 s and at once after a 401
//   (bearer-token.ts), as client-go's cached file token source does for a projected
//   service-account token. A token file wins over an inline token.
//
// Failure modes: none at construction beyond node:https's own; a token file that cannot be read
// is a request error (bearer-token.ts).
import https from 'node:https';
import type { Clock } from '../../clock/clock.ts';
import { http } from '../../node-http.ts';
import { BearerToken } from './bearer-token.ts';
import type { KubeAuth, PreparedRequest } from './kube-auth.ts';

/** Bounds the connections the agent may hold to the API server. */
const MAX_SOCKETS = 4;

export interface LeanAuthOptions {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  /** The CA that signed the server's certificate (PEM); the system's CAs when undefined. */
  readonly ca?: string | Buffer | undefined;
  /** A bearer token given inline. */
  readonly token?: string | undefined;
  /** A bearer token file, re-read on rotation. Wins over token. */
  readonly tokenFile?: string | undefined;
  /** Where the credentials came from, for the start-up log line; `server <url>` by default. */
  readonly source?: string | undefined;
  readonly clock: Clock;
  /** How often a token file is re-read. Default 60 s. */
  readonly tokenRereadMs?: number | undefined;
  /** The connections it may hold; MAX_SOCKETS (the agent's) by default. A reader's watches each hold one. */
  readonly maxSockets?: number | undefined;
}

export function leanAuth(o: LeanAuthOptions): KubeAuth {
  const token = new BearerToken({
    clock: o.clock,
    token: o.token,
    tokenFile: o.tokenFile,
    ...(o.tokenRereadMs === undefined ? {} : { rereadMs: o.tokenRereadMs }),
  });
  const maxSockets = o.maxSockets ?? MAX_SOCKETS;
  const ca = typeof o.ca === 'string' ? Buffer.from(o.ca) : o.ca;
  const agent = o.server.startsWith('https:')
    ? new https.Agent({ keepAlive: true, maxSockets, ...(ca === undefined ? {} : { ca }) })
    : new http.Agent({ keepAlive: true, maxSockets });
  return {
    server: o.server,
    source: o.source ?? `server ${o.server}`,
    async prepare(): Promise<PreparedRequest> {
      const authorization = await token.header();
      return { agent, headers: authorization === undefined ? {} : { authorization } };
    },
    async unauthorized(): Promise<string | undefined> {
      // Re-read before the caller's retry: a rotated projected token is the usual cause.
      await token.reload();
      return token.problem;
    },
    close(): void {
      agent.destroy();
    },
  };
}
