// The lean credentials: a KubeTarget (kube-config.ts: the pod's service account, or a server
// reached directly) as a KubeAuth. This is the agent's in-cluster path, and it never loads
// @kubernetes/client-node: its KubeConfig costs most of the agent's RSS budget (docs/bench.md),
// and the agent runs on every node.
//
// - The connection: one keep-alive Agent for the client's life, with the target's CA; at most
//   MAX_SOCKETS connections for the agent, more for a reader in a pod (pick-kube-auth.ts), whose
//   watches each hold one for minutes.
// - The token: inline, or a token file re-read every 60 s and at once after a 401
//   (bearer-token.ts), as client-go's cached file token source does for a projected
//   service-account token.
import https from 'node:https';
import type { Clock } from '../clock/clock.ts';
import { http } from '../node-http.ts';
import { BearerToken } from './bearer-token.ts';
import type { KubeAuth, PreparedRequest } from './kube-auth.ts';
import type { KubeTarget } from './kube-config.ts';

/** Bounds the connections the agent may hold to the API server. */
const MAX_SOCKETS = 4;

export function targetAuth(
  target: KubeTarget,
  options: {
    readonly clock: Clock;
    readonly tokenRereadMs?: number | undefined;
    /** The connections it may hold; MAX_SOCKETS (the agent's) by default. A reader's watches each hold one. */
    readonly maxSockets?: number;
  },
): KubeAuth {
  const token = new BearerToken({
    clock: options.clock,
    token: target.token,
    tokenFile: target.tokenFile,
    ...(options.tokenRereadMs === undefined ? {} : { rereadMs: options.tokenRereadMs }),
  });
  const maxSockets = options.maxSockets ?? MAX_SOCKETS;
  const agent = target.server.startsWith('https:')
    ? new https.Agent({ keepAlive: true, maxSockets, ...(target.ca === undefined ? {} : { ca: target.ca }) })
    : new http.Agent({ keepAlive: true, maxSockets });
  return {
    server: target.server,
    source: target.source,
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
