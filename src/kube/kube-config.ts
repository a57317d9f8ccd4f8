// Where the Kubernetes API is and how to authenticate to it: a kubeconfig file (the
// --kubeconfig flag or KUBECONFIG, which may list several files), or the pod's in-cluster
// service account.
//
// Why not @kubernetes/client-node's KubeConfig class: its module (dist/config.js) imports the
// generated API (dist/gen/index.js) at load time, so even its deep path costs what the package
// root costs (~128 MiB RSS on Node 24, measured; ~46 MiB for a bare Node). nodepulse runs on
// every node, so it takes only the kubeconfig entry parsers (dist/config_types.js: clusters,
// users, contexts, with the field names and checks of the real client) and reads the YAML and
// the files itself.
//
// Supported: server URL, CA (file or data), insecure-skip-tls-verify, tls-server-name, client
// certificate and key (file or data), bearer token (inline or token-file). Refused with a clear
// error: exec plugins, auth-provider, basic auth and proxy-url; an agent on every node must not
// depend on a helper binary or a proxy that may be missing.
//
// Failure modes: any problem stops start-up with a KubeConfigError whose message says which
// file, which entry and what is wrong. A token file is NOT read here: the client reads it (and
// re-reads it every 60 s and after a 401), so a missing token at start is a request error, as
// kubelet treats a rotated projected token.
import { readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { newClusters, newContexts, newUsers, type Cluster, type Context, type User } from '@kubernetes/client-node/dist/config_types.js';

/** The service-account mount of every pod (upstream rest.InClusterConfig). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeTarget {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  readonly ca: Buffer | undefined;
  readonly cert: Buffer | undefined;
  readonly key: Buffer | undefined;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName: string | undefined;
  /** A bearer token written inline in the kubeconfig. */
  readonly token: string | undefined;
  /** A bearer token file, read by the client and re-read on rotation. Wins over token. */
  readonly tokenFile: string | undefined;
  /** The context's (or the service account's) namespace, if any. */
  readonly namespace: string | undefined;
  /** Where this came from, for the start-up log line: "kubeconfig /x (context y)" or "in-cluster". */
  readonly source: string;
}

export interface LoadKubeConfigOptions {
  /** --kubeconfig (or KUBECONFIG, which the config layer folds into it); a path list joined by ':'. */
  readonly kubeconfig?: string | undefined;
  /** --context: the context to use instead of the files' current-context. */
  readonly context?: string | undefined;
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
 * demo and the tests (plain HTTP on loopback), optionally with a bearer token or token file.
 */
export function targetForServer(server: string, auth: { token?: string; tokenFile?: string; source?: string } = {}): KubeTarget {
  return {
    server,
    ca: undefined,
    cert: undefined,
    key: undefined,
    skipTLSVerify: false,
    tlsServerName: undefined,
    token: auth.token,
    tokenFile: auth.tokenFile,
    namespace: undefined,
    source: auth.source ?? `server ${server}`,
  };
}

/** The kubeconfig file(s) if given, else in-cluster; throws KubeConfigError. */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): KubeTarget {
  const env = options.env ?? process.env;
  const list = (options.kubeconfig ?? '').split(':').filter((p) => p.length > 0);
  if (list.length > 0) return fromKubeconfigFiles(list, options.context);
  if (options.context !== undefined) {
    throw new KubeConfigError(`context: ${options.context} must name a context of a kubeconfig, and none was given (set --kubeconfig or KUBECONFIG)`);
  }
  if ((env['KUBERNETES_SERVICE_HOST'] ?? '') !== '') return fromInCluster(env, options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  throw new KubeConfigError(
    'kubeconfig: none found; set --kubeconfig or KUBECONFIG, or run in a pod (KUBERNETES_SERVICE_HOST is unset)',
  );
}

interface RawFile {
  readonly path: string;
  readonly doc: Record<string, unknown>;
}

/**
 * Merges files as client-go's loading rules do for KUBECONFIG lists: the first file to name a
 * cluster, user or context wins, and the first current-context set wins.
 */
function fromKubeconfigFiles(paths: readonly string[], contextName: string | undefined): KubeTarget {
  const files: RawFile[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      // client-go skips missing files in a KUBECONFIG list, but fails on a single explicit one.
      if (paths.length > 1 && (err as { code?: string }).code === 'ENOENT') continue;
      throw new KubeConfigError(`kubeconfig: ${path} must be a readable file (${(err as Error).message})`, { cause: err });
    }
    let doc: unknown;
    try {
      doc = parseYaml(text);
    } catch (err) {
      // The parser's message carries a code frame on further lines; the first line says it all.
      throw new KubeConfigError(`kubeconfig: ${path} must be YAML (${(err as Error).message.split('\n')[0] ?? ''})`, { cause: err });
    }
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
      throw new KubeConfigError(`kubeconfig: ${path} must hold a YAML mapping`);
    }
    files.push({ path, doc: doc as Record<string, unknown> });
  }
  if (files.length === 0) throw new KubeConfigError(`kubeconfig: none of ${paths.join(', ')} exists`);

  const currentContext = contextName ?? files.map((f) => f.doc['current-context']).find((c): c is string => typeof c === 'string' && c !== '');
  if (currentContext === undefined) throw new KubeConfigError(`kubeconfig: ${paths.join(':')} must set current-context`);
  const context = firstNamed(files, 'contexts', currentContext, (raw, f) => entries(() => newContexts(raw), f))?.entry as Context | undefined;
  if (context === undefined) throw new KubeConfigError(`kubeconfig: context ${currentContext} must be defined`);
  const clusterHit = firstNamed(files, 'clusters', context.cluster, (raw, f) => entries(() => newClusters(raw), f));
  if (clusterHit === undefined) throw new KubeConfigError(`kubeconfig: cluster ${context.cluster} (of context ${currentContext}) must be defined`);
  const cluster = clusterHit.entry as Cluster;
  const userHit = context.user === undefined ? undefined : firstNamed(files, 'users', context.user, (raw, f) => entries(() => newUsers(raw), f));
  if (context.user !== undefined && userHit === undefined) {
    throw new KubeConfigError(`kubeconfig: user ${context.user} (of context ${currentContext}) must be defined`);
  }
  if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== null) {
    throw new KubeConfigError(`kubeconfig: cluster ${cluster.name} proxy-url must be unset (a proxy is not supported)`);
  }
  const clusterDir = dirname(clusterHit.file.path);
  const server = checkServer(cluster.server, `cluster ${cluster.name} server`);
  let token: string | undefined;
  let tokenFile: string | undefined;
  let cert: Buffer | undefined;
  let key: Buffer | undefined;
  if (userHit !== undefined) {
    const user = userHit.entry as User;
    const where = `user ${user.name}`;
    if (user.exec !== undefined && user.exec !== null) throw new KubeConfigError(`kubeconfig: ${where} exec must be unset (exec plugins are not supported)`);
    if (user.authProvider !== undefined && user.authProvider !== null) {
      throw new KubeConfigError(`kubeconfig: ${where} auth-provider must be unset (auth providers are not supported)`);
    }
    if ((user.username ?? '') !== '' || (user.password ?? '') !== '') {
      throw new KubeConfigError(`kubeconfig: ${where} username/password must be unset (basic auth is not supported)`);
    }
    const userDir = dirname(userHit.file.path);
    // The raw entry, because config_types reads token-file once and keeps only its content.
    const rawUser = (userHit.raw['user'] ?? {}) as Record<string, unknown>;
    const rawTokenFile = rawUser['tokenFile'] ?? rawUser['token-file'];
    if (typeof rawTokenFile === 'string' && rawTokenFile !== '') tokenFile = absolute(rawTokenFile, userDir);
    else if (typeof rawUser['token'] === 'string' && rawUser['token'] !== '') token = rawUser['token'];
    cert = material(user.certData, user.certFile, userDir, `${where} client-certificate`);
    key = material(user.keyData, user.keyFile, userDir, `${where} client-key`);
    if ((cert === undefined) !== (key === undefined)) {
      throw new KubeConfigError(`kubeconfig: ${where} must set both client-certificate and client-key, or neither`);
    }
  }
  return {
    server,
    ca: material(cluster.caData, cluster.caFile, clusterDir, `cluster ${cluster.name} certificate-authority`),
    cert,
    key,
    skipTLSVerify: cluster.skipTLSVerify,
    tlsServerName: cluster.tlsServerName ?? undefined,
    token,
    tokenFile,
    namespace: context.namespace,
    source: `kubeconfig ${files.map((f) => f.path).join(':')} (context ${currentContext})`,
  };
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
    cert: undefined,
    key: undefined,
    skipTLSVerify: false,
    tlsServerName: undefined,
    token: undefined,
    tokenFile: `${dir}/token`,
    namespace,
    source: 'in-cluster',
  };
}

interface Hit {
  readonly entry: unknown;
  readonly raw: Record<string, unknown>;
  readonly file: RawFile;
}

function firstNamed(
  files: readonly RawFile[],
  section: 'clusters' | 'users' | 'contexts',
  name: string,
  parse: (raw: unknown, file: RawFile) => Array<{ name: string }>,
): Hit | undefined {
  for (const file of files) {
    const raw = file.doc[section];
    if (!Array.isArray(raw)) continue;
    const parsed = parse(raw, file);
    const index = parsed.findIndex((e) => e.name === name);
    if (index >= 0) return { entry: parsed[index], raw: (raw[index] ?? {}) as Record<string, unknown>, file };
  }
  return undefined;
}

function entries<T extends { name: string }>(parse: () => T[], file: RawFile): T[] {
  try {
    return parse();
  } catch (err) {
    throw new KubeConfigError(`kubeconfig: ${file.path}: ${(err as Error).message}`, { cause: err });
  }
}

function checkServer(server: string, where: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch (err) {
    throw new KubeConfigError(`kubeconfig: ${where} ${JSON.stringify(server)} must be a URL`, { cause: err });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeConfigError(`kubeconfig: ${where} ${JSON.stringify(server)} must be an http:// or https:// URL`);
  }
  return server.replace(/\/+$/, '');
}

function absolute(path: string, base: string): string {
  return isAbsolute(path) ? path : resolve(base, path);
}

/** Inline base64 data wins over a file, as in client-go. */
function material(data: string | undefined | null, file: string | undefined | null, base: string, where: string): Buffer | undefined {
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
  if (typeof file === 'string' && file !== '') {
    const path = absolute(file, base);
    try {
      return readFileSync(path);
    } catch (err) {
      throw new KubeConfigError(`kubeconfig: ${where} ${path} must be readable (${(err as Error).message})`, { cause: err });
    }
  }
  return undefined;
}
