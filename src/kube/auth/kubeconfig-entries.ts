// Each entry of a kubeconfig, made to mean for client-node's KubeConfig what it means for kubectl,
// and checked as client-go checks it. load-kubeconfig.ts decides which files and which context;
// this module is about one cluster or one user at a time.
//
// | rule                                  | why                                                       |
// |---------------------------------------|-----------------------------------------------------------|
// | names and references are strings      | kubectl's YAML 1.1 decoder refuses `name: y` (a boolean)  |
// | relative paths resolve against the    | clientcmd ResolveLocalPaths: CA, client certificate and   |
// | file that defined the entry           | key, tokenFile, an exec command containing a '/'          |
// | tokenFile becomes client-node's token | client-node reads only its own `token-file`, once; client-|
// | file authenticator, over any token    | go re-reads tokenFile and prefers it to an inline token   |
// | data wins over a file of the same     | client-go lets -data override; client-node reads the file |
// | an http:// cluster skips TLS checks   | client-node refuses plain HTTP otherwise; there is no TLS |
// | exec gets KUBERNETES_EXEC_INFO        | client-go always sets it; client-node does not            |
// | the chosen context must be usable     | clientcmd validation.go, before the first request         |
//
// Failure modes: a rule that does not hold throws a KubeConfigError naming the entry and the value.
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Cluster, User } from '@kubernetes/client-node/dist/config_types.js';
import { KubeConfigError } from './kube-config-error.ts';

/** The interactive modes nodepulse can honour: it never has a terminal to give a plugin. */
const INTERACTIVE_MODES = ['Never', 'IfAvailable'];
/** Exec API versions for which client-go defaults interactiveMode to IfAvailable. */
const DEFAULTED_INTERACTIVE = ['client.authentication.k8s.io/v1beta1', 'client.authentication.k8s.io/v1alpha1'];

/**
 * The checks client-go makes of the chosen context before its first request (clientcmd
 * validation.go), so a kubeconfig that cannot work stops start-up with one line instead of
 * failing every request: the server is an http(s) URL; files it names are readable; a client
 * certificate comes with its key; an exec plugin names a command, an apiVersion and an
 * interactiveMode this process can honour.
 */
export function checkUsable(cluster: Cluster, user: User | undefined): void {
  const c = `cluster ${JSON.stringify(cluster.name)}`;
  let url: URL | undefined;
  try {
    url = new URL(cluster.server);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new KubeConfigError(`kubeconfig: ${c} server ${JSON.stringify(cluster.server)} must be an http:// or https:// URL`);
  }
  readable(cluster.caData ? undefined : cluster.caFile, `${c} certificate-authority`);
  if (user === undefined) return;
  const u = `user ${JSON.stringify(user.name)}`;
  if ((user.certData || user.certFile) && !(user.keyData || user.keyFile)) {
    throw new KubeConfigError(`kubeconfig: ${u} must set client-key or client-key-data with its client certificate`);
  }
  readable(user.certData ? undefined : user.certFile, `${u} client-certificate`);
  readable(user.keyData ? undefined : user.keyFile, `${u} client-key`);
  const exec = user.exec as { command?: unknown; apiVersion?: unknown; interactiveMode?: unknown } | null | undefined;
  if (exec === null || exec === undefined) return;
  if (typeof exec.command !== 'string' || exec.command === '') throw new KubeConfigError(`kubeconfig: ${u} exec: command must be set`);
  if (typeof exec.apiVersion !== 'string' || exec.apiVersion === '') throw new KubeConfigError(`kubeconfig: ${u} exec: apiVersion must be set`);
  const mode = exec.interactiveMode ?? (DEFAULTED_INTERACTIVE.includes(exec.apiVersion) ? 'IfAvailable' : undefined);
  if (typeof mode !== 'string' || !INTERACTIVE_MODES.includes(mode)) {
    throw new KubeConfigError(`kubeconfig: ${u} exec: interactiveMode ${JSON.stringify(mode ?? '')} must be Never or IfAvailable (nodepulse has no terminal to give the plugin)`);
  }
}

function readable(path: string | undefined, where: string): void {
  if (path === undefined || path === '') return;
  try {
    readFileSync(path);
  } catch (err) {
    throw new KubeConfigError(`kubeconfig: ${where} ${path} must be readable (${(err as Error).message})`, { cause: err });
  }
}

const YAML_11_HINT = 'YAML 1.1, as kubectl reads it, takes an unquoted y, n, yes, no, on or off for a boolean: quote it';

/** Names are strings, as kubectl's decoder insists; client-node would take a boolean for one. */
export function checkNames(doc: Record<string, unknown>, path: string): void {
  const current = doc['current-context'];
  if (current !== undefined && current !== null && typeof current !== 'string') {
    throw new KubeConfigError(`kubeconfig: ${path}: current-context: ${JSON.stringify(current)} must be a string (${YAML_11_HINT})`);
  }
  for (const section of ['clusters', 'users', 'contexts'] as const) {
    const list = doc[section];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw new KubeConfigError(`kubeconfig: ${path}: ${section} must be a list`);
    list.forEach((entry: unknown, i) => {
      const fields = (entry ?? {}) as Record<string, unknown>;
      const context = (section === 'contexts' ? fields['context'] ?? {} : {}) as Record<string, unknown>;
      for (const [key, value] of [['name', fields['name']], ['context.cluster', context['cluster']], ['context.user', context['user']]] as const) {
        if (value !== undefined && value !== null && typeof value !== 'string') {
          throw new KubeConfigError(`kubeconfig: ${path}: ${section}[${i}].${key}: ${JSON.stringify(value)} must be a string (${YAML_11_HINT})`);
        }
      }
    });
  }
}

function absolute(path: string, base: string): string {
  return isAbsolute(path) ? path : resolve(base, path);
}

// In client-go, data overrides a file of the same thing (validation.go: "certificate-authority-
// data will override"); client-node reads the file when both are set. So a file is kept only
// when there is no data.
export function bridgeCluster(c: Cluster, base: string): Cluster {
  const { caFile, ...rest } = c;
  return {
    ...rest,
    ...(caFile && !c.caData ? { caFile: absolute(caFile, base) } : {}),
    ...(c.server.startsWith('http://') ? { skipTLSVerify: true } : {}),
  };
}

export function bridgeUser(u: User, raw: unknown, base: string): User {
  const fields = ((raw as { user?: unknown } | undefined)?.user ?? {}) as Record<string, unknown>;
  const tokenFile = fields['tokenFile'];
  const exec = u.exec as { command?: unknown } | null | undefined;
  const { certFile, keyFile, ...others } = u;
  const bridged: User = {
    ...others,
    ...(certFile && !u.certData ? { certFile: absolute(certFile, base) } : {}),
    ...(keyFile && !u.keyData ? { keyFile: absolute(keyFile, base) } : {}),
    ...(typeof exec?.command === 'string' && exec.command.includes('/') ? { exec: { ...exec, command: absolute(exec.command, base) } } : {}),
  };
  if (typeof tokenFile !== 'string' || tokenFile === '') return bridged;
  // client-go: the file, re-read, wins over an inline token.
  const { token: _inline, ...rest } = bridged;
  return { ...rest, authProvider: { name: 'tokenFile', config: { tokenFile: absolute(tokenFile, base) } } };
}

/** client-go hands every exec plugin KUBERNETES_EXEC_INFO, an ExecCredential with the spec filled in. */
export function withExecInfo(u: User, cluster: Cluster): User {
  const exec = u.exec as { apiVersion?: string; env?: Array<{ name: string; value: string }> | null; provideClusterInfo?: boolean } | null | undefined;
  if (exec === null || exec === undefined) return u;
  const spec: Record<string, unknown> = { interactive: false };
  if (exec.provideClusterInfo === true) {
    const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
    spec['cluster'] = {
      server: cluster.server,
      ...(ca === undefined ? {} : { 'certificate-authority-data': ca }),
      ...(cluster.tlsServerName ? { 'tls-server-name': cluster.tlsServerName } : {}),
      ...(cluster.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
    };
  }
  const info = JSON.stringify({ apiVersion: exec.apiVersion, kind: 'ExecCredential', spec });
  return { ...u, exec: { ...exec, env: [...(exec.env ?? []), { name: 'KUBERNETES_EXEC_INFO', value: info }] } };
}
