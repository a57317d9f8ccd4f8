// A loaded kubeconfig (load-kubeconfig.ts) as the request core's credentials: every request
// takes its connection and headers from client-node's KubeConfig.applyToHTTPSOptions, so the
// library does what kubectl does with each kind of user: runs the exec plugin (and again once
// its token expires), re-reads a token file every minute, presents a client certificate,
// verifies the server against the CA, goes through a proxy-url.
//
// Header values are trimmed: client-node sends a token file's bytes as they are, so the newline
// most token files end with would make an invalid header; client-go trims the token it reads.
//
// After a 401 the credentials are dropped: the next request uses a fresh KubeConfig over the
// same entries, so an exec plugin runs again and a token file is read again, as client-go's exec
// authenticator and token source do on a 401. Only the first 401 of the credentials in use
// does this, and requests that arrive while a KubeConfig fetches its first credentials wait for
// that fetch (client-node would run the plugin once per request): concurrent requests run the
// plugin once, as client-go's exec authenticator does under its mutex.
//
// Failure modes: credentials that cannot be had (the plugin exits non-zero or prints no
// ExecCredential; a certificate or CA file is unreadable) reject prepare() with an Error that
// names the plugin or the file; the request core reports it as `unauthorized` for that request,
// and the next request tries again.
import type { Agent } from 'node:http';
import type { RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { KubeAuth, PreparedRequest } from './kube-auth.ts';
import type { LoadedKubeconfig } from './load-kubeconfig.ts';

export function kubeConfigAuth(loaded: LoadedKubeconfig): KubeAuth {
  let current = loaded.kubeConfig;
  const server = current.getCurrentCluster()?.server;
  if (server === undefined) throw new Error(`kubeconfig: context ${current.getCurrentContext()} must name a cluster`);
  const agents = new Set<Agent>();
  const preparedBy = new WeakMap<PreparedRequest, KubeConfig>();
  /** Per KubeConfig, its first credential fetch; later requests wait for it to settle. */
  const firstFetch = new WeakMap<KubeConfig, Promise<void>>();
  return {
    server,
    source: loaded.source,
    async prepare(): Promise<PreparedRequest> {
      const kc = current;
      const options: RequestOptions = {};
      const first = firstFetch.get(kc);
      try {
        if (first === undefined) {
          const fetching = kc.applyToHTTPSOptions(options);
          // A failed first fetch is forgotten: the next request tries again.
          firstFetch.set(kc, fetching.catch(() => void firstFetch.delete(kc)));
          await fetching;
        } else {
          await first;
          await kc.applyToHTTPSOptions(options);
        }
      } catch (err) {
        throw credentialsError(kc, err);
      }
      const agent = options.agent;
      if (!(agent instanceof Object) || typeof (agent as Agent).destroy !== 'function') throw new Error('kubeconfig: client-node gave no connection agent');
      agents.add(agent as Agent);
      const prepared: PreparedRequest = { agent: agent as Agent, headers: flatHeaders(options.headers), basicAuth: options.auth ?? undefined };
      preparedBy.set(prepared, kc);
      return prepared;
    },
    unauthorized(prepared: PreparedRequest): Promise<string | undefined> {
      if (preparedBy.get(prepared) === current) current = freshCopy(current);
      return Promise.resolve(undefined);
    },
    close(): void {
      for (const agent of agents) agent.destroy();
      agents.clear();
    },
  };
}

/** The same entries in a new KubeConfig: its authenticators have cached nothing. */
function freshCopy(kc: KubeConfig): KubeConfig {
  const next = new KubeConfig();
  next.loadFromOptions({ clusters: kc.getClusters(), users: kc.getUsers(), contexts: kc.getContexts(), currentContext: kc.getCurrentContext() });
  return next;
}

function credentialsError(kc: KubeConfig, err: unknown): Error {
  const detail = err instanceof Error ? err.message.trim() : String(err).trim();
  const exec = kc.getCurrentUser()?.exec as { command?: unknown } | null | undefined;
  if (typeof exec?.command !== 'string') return new Error(detail, { cause: err });
  return new Error(`exec plugin ${exec.command}: ${detail === '' ? 'failed with nothing on stderr' : detail}`, { cause: err });
}

function flatHeaders(headers: RequestOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined || Array.isArray(headers)) return out;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = (Array.isArray(value) ? value.join(', ') : String(value)).trim();
  }
  return out;
}
