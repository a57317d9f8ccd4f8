// Reads the kubeconfig a person hands us, as kubectl reads it, into @kubernetes/client-node's
// KubeConfig, which then authenticates every request (kubeconfig-auth.ts): exec credential
// plugins, client certificates, token files, CA data or files, basic auth, proxies.
//
// Where to look, in kubectl's order (client-go clientcmd loading rules):
//
// | given                   | read                                                           |
// |-------------------------|----------------------------------------------------------------|
// | --kubeconfig FILE       | that file only; it must exist                                  |
// | else KUBECONFIG=a:b:…   | those files, merged; missing ones are skipped; duplicates once |
// | else                    | $HOME/.kube/config, if it exists                               |
// | nothing found (empty)   | in-cluster, when KUBERNETES_SERVICE_HOST/PORT are set and the  |
// |                         | service-account token exists; otherwise an error               |
//
// How files merge, kubectl's rules, which client-node's loadFromDefault() does not follow (it
// throws on a missing file and on a name two files both define):
// - the first file to define a cluster, user or context of a name wins, whole: nothing of a
//   later file's entry of that name is kept;
// - the first file that sets a current-context wins; --context overrides it;
// - relative paths (certificate-authority, client-certificate, client-key, tokenFile, and an exec
//   command containing a '/') resolve against the folder of the file that defined the entry.
// Files are YAML 1.1, as kubectl's parser reads them (an unquoted `y` is a boolean there).
//
// Each entry is made to mean for client-node what it means for kubectl (tokenFile, exec info,
// plain HTTP), and the chosen context is checked as client-go checks it before the first request:
// kubeconfig-entries.ts.
//
// Failure modes: every problem throws a KubeConfigError with one line naming the file, the entry
// and what is wrong (`context: "x" must name a context of the kubeconfig (a, b)`). Credentials
// themselves (token files, exec plugins, certificate files) are read when a request is made.
import { readFileSync, statSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { newClusters, newContexts, newUsers, type Cluster, type Context, type User } from '@kubernetes/client-node/dist/config_types.js';
import { SERVICE_ACCOUNT_DIR } from './in-cluster.ts';
import { KubeConfigError } from './kube-config-error.ts';
import { bridgeCluster, bridgeUser, checkNames, checkUsable, withExecInfo } from './kubeconfig-entries.ts';

export interface LoadKubeconfigOptions {
  /** --kubeconfig: one file, which must exist. */
  readonly kubeconfig?: string | undefined;
  /** --context: the context to use instead of the kubeconfig's current-context. */
  readonly context?: string | undefined;
  /** KUBECONFIG, and KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT for in-cluster. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** $HOME, where .kube/config is looked for. */
  readonly homeDir: string | undefined;
  /** The service-account folder; SERVICE_ACCOUNT_DIR by default (tests point it elsewhere). */
  readonly serviceAccountDir?: string;
}

export interface LoadedKubeconfig {
  /** Every merged entry, with current-context set to the one to use. */
  readonly kubeConfig: KubeConfig;
  /** For the start-up log: "kubeconfig /a:/b (context x)" or "in-cluster". Never a secret. */
  readonly source: string;
  /** The context's namespace (or the service account's), if any. */
  readonly namespace: string | undefined;
}

/** The merge of several kubeconfig files, before a context is chosen. */
export interface MergedKubeconfig {
  /** The files that were read, in order (missing ones skipped). */
  readonly files: readonly string[];
  readonly clusters: readonly Cluster[];
  readonly users: readonly User[];
  readonly contexts: readonly Context[];
  readonly currentContext: string | undefined;
}

export function loadKubeconfig(options: LoadKubeconfigOptions): LoadedKubeconfig {
  const explicit = options.kubeconfig !== undefined && options.kubeconfig !== '' ? options.kubeconfig : undefined;
  const envList = options.env['KUBECONFIG'] ?? '';
  let paths: string[];
  if (explicit !== undefined) {
    try {
      statSync(explicit);
    } catch (err) {
      throw new KubeConfigError(`kubeconfig: ${explicit} must be a readable file (${(err as Error).message})`, { cause: err });
    }
    paths = [explicit];
  } else if (envList !== '') {
    paths = [...new Set(envList.split(':').filter((p) => p !== ''))];
  } else {
    paths = options.homeDir === undefined || options.homeDir === '' ? [] : [join(options.homeDir, '.kube', 'config')];
  }
  const merged = mergeKubeconfigFiles(paths);
  if (merged.clusters.length === 0 && merged.users.length === 0 && merged.contexts.length === 0) {
    const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
    if (inClusterPossible(options.env, dir)) return inCluster(options.env, dir);
    if (explicit !== undefined) throw new KubeConfigError(`kubeconfig: ${explicit} must define a cluster and a context (it defines none)`);
    const looked = paths.length === 0 ? 'no file to read (KUBECONFIG and HOME are unset)' : `${paths.join(', ')} ${paths.length === 1 ? 'is' : 'are'} missing or empty`;
    throw new KubeConfigError(`kubeconfig: none found: ${looked}, and this is not a pod (KUBERNETES_SERVICE_HOST and the service-account token); pass --kubeconfig or set KUBECONFIG`);
  }
  const where = merged.files.join(':');
  const names = merged.contexts.map((c) => c.name).join(', ');
  const chosen = options.context !== undefined && options.context !== '' ? options.context : merged.currentContext;
  if (chosen === undefined) {
    throw new KubeConfigError(`kubeconfig: ${where} must set current-context, or pass --context (${names === '' ? 'it defines no context' : `contexts: ${names}`})`);
  }
  const context = merged.contexts.find((c) => c.name === chosen);
  if (context === undefined) {
    const key = chosen === options.context ? 'context' : 'kubeconfig: current-context';
    throw new KubeConfigError(`${key}: ${JSON.stringify(chosen)} must name a context of ${where} (${names})`);
  }
  const cluster = merged.clusters.find((c) => c.name === context.cluster);
  if (cluster === undefined) throw new KubeConfigError(`kubeconfig: cluster ${JSON.stringify(context.cluster)} of context ${JSON.stringify(chosen)} must be defined in ${where}`);
  const user = context.user === undefined ? undefined : merged.users.find((u) => u.name === context.user);
  if (context.user !== undefined && user === undefined) {
    throw new KubeConfigError(`kubeconfig: user ${JSON.stringify(context.user)} of context ${JSON.stringify(chosen)} must be defined in ${where}`);
  }
  checkUsable(cluster, user);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: merged.clusters,
    users: merged.users.map((u) => (u.name === context.user ? withExecInfo(u, cluster) : u)),
    contexts: merged.contexts,
    currentContext: chosen,
  });
  return { kubeConfig, source: `kubeconfig ${where} (context ${chosen})`, namespace: context.namespace };
}

/** kubectl's merge of a KUBECONFIG list (see the header): exported for its tests. */
export function mergeKubeconfigFiles(paths: readonly string[]): MergedKubeconfig {
  const files: string[] = [];
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  for (const path of paths) {
    const doc = readKubeconfigFile(path);
    if (doc === undefined) continue;
    files.push(path);
    const base = dirname(resolve(path));
    const parse = <T>(fn: () => T): T => {
      try {
        return fn();
      } catch (err) {
        throw new KubeConfigError(`kubeconfig: ${path}: ${(err as Error).message}`, { cause: err });
      }
    };
    for (const c of parse(() => newClusters(doc['clusters']))) {
      if (!clusters.has(c.name)) clusters.set(c.name, bridgeCluster(c, base));
    }
    const rawUsers = Array.isArray(doc['users']) ? (doc['users'] as unknown[]) : [];
    parse(() => newUsers(rawUsers)).forEach((u, i) => {
      if (!users.has(u.name)) users.set(u.name, bridgeUser(u, rawUsers[i], base));
    });
    for (const c of parse(() => newContexts(doc['contexts']))) {
      if (!contexts.has(c.name)) contexts.set(c.name, c);
    }
    const current = doc['current-context'];
    if (currentContext === undefined && typeof current === 'string' && current !== '') currentContext = current;
  }
  return { files, clusters: [...clusters.values()], users: [...users.values()], contexts: [...contexts.values()], currentContext };
}

/** The file as a mapping; undefined when it does not exist (skipped, as kubectl skips it). */
function readKubeconfigFile(path: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw new KubeConfigError(`kubeconfig: ${path} must be a readable file (${(err as Error).message})`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { version: '1.1' });
  } catch (err) {
    // The parser's message carries a code frame on further lines; the first line says it all.
    throw new KubeConfigError(`kubeconfig: ${path} must be YAML (${(err as Error).message.split('\n')[0] ?? ''})`, { cause: err });
  }
  if (doc === null || doc === undefined) return {}; // an empty file is an empty config, as in client-go
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new KubeConfigError(`kubeconfig: ${path} must hold a YAML mapping`);
  checkNames(doc as Record<string, unknown>, path);
  return doc as Record<string, unknown>;
}

/** client-go's inClusterClientConfig.Possible(). */
function inClusterPossible(env: Readonly<Record<string, string | undefined>>, dir: string): boolean {
  if ((env['KUBERNETES_SERVICE_HOST'] ?? '') === '' || (env['KUBERNETES_SERVICE_PORT'] ?? '') === '') return false;
  try {
    statSync(join(dir, 'token'));
    return true;
  } catch {
    return false;
  }
}

/** rest.InClusterConfig through client-node: the service account's token file (re-read) and CA. */
function inCluster(env: Readonly<Record<string, string | undefined>>, dir: string): LoadedKubeconfig {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    namespace = undefined; // optional: the namespace comes from flags when the file is absent
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'in-cluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${env['KUBERNETES_SERVICE_PORT'] ?? ''}`, caFile: join(dir, 'ca.crt'), skipTLSVerify: false }],
    users: [{ name: 'in-cluster', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } }],
    contexts: [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', ...(namespace === undefined ? {} : { namespace }) }],
    currentContext: 'in-cluster',
  });
  return { kubeConfig, source: 'in-cluster', namespace };
}
