// The pod's service account as credentials, the lean way (lean-auth.ts), as client-go's
// rest.InClusterConfig reads it: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the
// service account's ca.crt, and its token file, which the credentials read (and re-read every
// 60 s and after a 401), so a token missing at start is a request error, as kubelet treats a
// rotated projected token. This is the agent's production path, and a reader's in a pod
// (pick-kube-auth.ts says when each is taken, and why never through KubeConfig).
//
// Failure modes: a problem stops start-up with a KubeConfigError whose message says what is
// missing (the env, the CA file) or wrong (the port).
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import type { Clock } from '../../clock/clock.ts';
import { KubeConfigError } from './kube-config-error.ts';
import type { KubeAuth } from './kube-auth.ts';
import { leanAuth, type LeanAuthOptions } from './lean-auth.ts';

/** The service-account mount of every pod (upstream rest.InClusterConfig). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterOptions {
  /** Environment for in-cluster discovery; process.env by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The service-account folder; SERVICE_ACCOUNT_DIR by default (tests point it elsewhere). */
  readonly serviceAccountDir?: string;
  readonly clock: Clock;
  /** The connections it may hold; the agent's bound by default (lean-auth.ts). */
  readonly maxSockets?: number | undefined;
}

/** The pod's service account as credentials, or a KubeConfigError saying what is missing. */
export function inClusterAuth(o: InClusterOptions): KubeAuth {
  return leanAuth({ ...inClusterServer(o.env ?? process.env, o.serviceAccountDir ?? SERVICE_ACCOUNT_DIR), clock: o.clock, maxSockets: o.maxSockets });
}

/** rest.InClusterConfig: the server, the service account's CA and its token file. */
function inClusterServer(env: Readonly<Record<string, string | undefined>>, dir: string): Pick<LeanAuthOptions, 'server' | 'ca' | 'tokenFile' | 'source'> {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  if (host === '') {
    throw new KubeConfigError('kubeconfig: none found; set --kubeconfig or KUBECONFIG, or run in a pod (KUBERNETES_SERVICE_HOST is unset)');
  }
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
  if (!/^\d{1,5}$/.test(port)) throw new KubeConfigError(`KUBERNETES_SERVICE_PORT: ${JSON.stringify(port)} must be a port number`);
  const server = `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  try {
    new URL(server);
  } catch (err) {
    throw new KubeConfigError(`in-cluster server: ${JSON.stringify(server)} must be a URL`, { cause: err });
  }
  const caPath = `${dir}/ca.crt`;
  let ca: Buffer;
  try {
    ca = readFileSync(caPath);
  } catch (err) {
    throw new KubeConfigError(`in-cluster: ${caPath} must be readable (${(err as Error).message})`, { cause: err });
  }
  return { server, ca, tokenFile: `${dir}/token`, source: 'in-cluster' };
}
