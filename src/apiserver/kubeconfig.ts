// Writes a kubeconfig that a real kubectl and @kubernetes/client-node load, pointing at the
// stand-in (plain HTTP, so no certificate authority). The token is written inline, or as a
// tokenFile path (which client-go re-reads, so tests can rotate it on disk).
//
// The file is written with mode 0600, as kubectl writes its own; it may hold a bearer token.
//
// Plain HTTP and the two clients:
//   - @kubernetes/client-node v2 refuses an http:// server unless the cluster sets
//     insecure-skip-tls-verify, so an http:// server gets it (there is no TLS to verify);
//   - client-go (kubectl) loads a kubeconfig's credentials only for an https:// server
//     (clientcmd DirectClientConfig: IsConfigTransportTLS), so kubectl sends no token to the
//     stand-in: run it without tokens for kubectl.

import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** The API server URL, e.g. the stand-in's `url`. */
  readonly server: string;
  readonly token?: string;
  readonly tokenFile?: string;
  /** The context's default namespace. */
  readonly namespace?: string;
}

export const KUBECONFIG_CONTEXT = 'nodepulse-stand-in';

/** The kubeconfig document as an object (what writeKubeconfig writes). */
export function kubeconfigDocument(options: KubeconfigOptions): Record<string, unknown> {
  if (options.token !== undefined && options.tokenFile !== undefined) {
    throw new Error('kubeconfig: token and tokenFile must not both be set');
  }
  const user: Record<string, string> = {};
  if (options.token !== undefined) user['token'] = options.token;
  if (options.tokenFile !== undefined) user['tokenFile'] = options.tokenFile;
  const context: Record<string, string> = { cluster: KUBECONFIG_CONTEXT, user: KUBECONFIG_CONTEXT };
  if (options.namespace !== undefined) context['namespace'] = options.namespace;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{
      name: KUBECONFIG_CONTEXT,
      cluster: options.server.startsWith('http://') ? { server: options.server, 'insecure-skip-tls-verify': true } : { server: options.server },
    }],
    users: [{ name: KUBECONFIG_CONTEXT, user }],
    contexts: [{ name: KUBECONFIG_CONTEXT, context }],
    'current-context': KUBECONFIG_CONTEXT,
    preferences: {},
  };
}

/** Writes the kubeconfig to `path` (mode 0600). */
export function writeKubeconfig(path: string, options: KubeconfigOptions): void {
  writeFileSync(path, stringify(kubeconfigDocument(options)), { mode: 0o600 });
}
