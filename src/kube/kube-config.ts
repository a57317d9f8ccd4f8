// Where the Kubernetes API is and how to authenticate to it, the lean way: the pod's in-cluster
// service account (the agent's production path), or a server reached directly (the demo and the
// tests, against the API stand-in). targetAuth (target-auth.ts) turns a KubeTarget into the
// request core's credentials.
//
// Why not @kubernetes/client-node's KubeConfig here: its module (dist/config.js) imports the
// generated API (dist/gen/index.js) at load time, which costs most of the agent's RSS budget
// (docs/bench.md). nodepulse runs on every node, so its in-cluster path reads the two files itself. A kubeconfig file, with
// everything kubectl allows in it (exec plugins, client certificates, merged KUBECONFIG lists),
// goes through KubeConfig in load-kubeconfig.ts, loaded only when one is given.
//
// In-cluster, as rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
// the service account's ca.crt, and its token file, which the client reads (and re-reads every
// 60 s and after a 401), so a token missing at start is a request error, as kubelet treats a
// rotated projected token.
//
// Failure modes: a problem stops start-up with a KubeConfigError whose message says what is
// missing (the env, the CA file).
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';

/** The service-account mount of every pod (upstream rest.InClusterConfig). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeTarget {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  /** The CA that signed the server's certificate (PEM); the system's CAs when undefined. */
  readonly ca: Buffer | undefined;
  /** A bearer token given inline. */
  readonly token: string | undefined;
  /** A bearer token file, read by the client and re-read on rotation. Wins over token. */
  readonly tokenFile: string | undefined;
  /** The service account's namespace, if any. */
  readonly namespace: string | undefined;
  /** Where this came from, for the start-up log line: "in-cluster" or "server https://…". */
  readonly source: string;
}

export interface LoadInClusterOptions {
  /** Environment for in-cluster discovery; process.env by default. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The service-account folder; SERVICE_ACCOUNT_DIR by default (tests point it elsewhere). */
  readonly serviceAccountDir?: string;
}

export class KubeConfigError extends Error {
  readonly code = 'kubeconfig_invalid';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}

/**
 * A target for a server reached directly, with no kubeconfig: the in-process API stand-in of the
 * demo and the tests, optionally with its CA (PEM), a bearer token or a token file.
 */
export function targetForServer(server: string, auth: { ca?: string; token?: string; tokenFile?: string; source?: string } = {}): KubeTarget {
  return {
    server,
    ca: auth.ca === undefined ? undefined : Buffer.from(auth.ca),
    token: auth.token,
    tokenFile: auth.tokenFile,
    namespace: undefined,
    source: auth.source ?? `server ${server}`,
  };
}

/**
 * The pod's service account (rest.InClusterConfig), or a KubeConfigError saying what is missing.
 * The agent's lean path; a kubeconfig file goes through load-kubeconfig.ts instead.
 */
export function loadInCluster(options: LoadInClusterOptions = {}): KubeTarget {
  const env = options.env ?? process.env;
  if ((env['KUBERNETES_SERVICE_HOST'] ?? '') !== '') return fromInCluster(env, options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  throw new KubeConfigError(
    'kubeconfig: none found; set --kubeconfig or KUBECONFIG, or run in a pod (KUBERNETES_SERVICE_HOST is unset)',
  );
}

/** rest.InClusterConfig: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the SA token and CA. */
function fromInCluster(env: Readonly<Record<string, string | undefined>>, dir: string): KubeTarget {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
  if (!/^\d{1,5}$/.test(port)) throw new KubeConfigError(`KUBERNETES_SERVICE_PORT: ${JSON.stringify(port)} must be a port number`);
  const hostPart = isIPv6(host) ? `[${host}]` : host;
  const caPath = `${dir}/ca.crt`;
  let ca: Buffer;
  try {
    ca = readFileSync(caPath);
  } catch (err) {
    throw new KubeConfigError(`in-cluster: ${caPath} must be readable (${(err as Error).message})`, { cause: err });
  }
  let namespace: string | undefined;
  try {
    namespace = readFileSync(`${dir}/namespace`, 'utf8').trim() || undefined;
  } catch {
    namespace = undefined; // optional: the namespace comes from config when the file is absent
  }
  return {
    server: checkServer(`https://${hostPart}:${port}`, 'in-cluster server'),
    ca,
    token: undefined,
    tokenFile: `${dir}/token`,
    namespace,
    source: 'in-cluster',
  };
}

function checkServer(server: string, where: string): string {
  try {
    new URL(server);
  } catch (err) {
    throw new KubeConfigError(`${where}: ${JSON.stringify(server)} must be a URL`, { cause: err });
  }
  return server.replace(/\/+$/, '');
}
