// Writes a kubeconfig that a real kubectl and @kubernetes/client-node load, pointing at the
// stand-in. The token is written inline, or as a tokenFile path (which client-go re-reads, so
// tests can rotate it on disk); over HTTPS, the CA (test-pki.ts) and a client certificate are
// written as data.
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
  /** PEM of the CA that signed the server's certificate (an https:// server). */
  readonly ca?: string;
  /** A client certificate and its key, PEM. */
  readonly clientCertificate?: { readonly cert: string; readonly key: string };
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
  if (options.clientCertificate !== undefined) {
    user['client-certificate-data'] = base64(options.clientCertificate.cert);
    user['client-key-data'] = base64(options.clientCertificate.key);
  }
  const cluster: Record<string, unknown> = { server: options.server };
  if (options.server.startsWith('http://')) cluster['insecure-skip-tls-verify'] = true;
  if (options.ca !== undefined) cluster['certificate-authority-data'] = base64(options.ca);
  const context: Record<string, string> = { cluster: KUBECONFIG_CONTEXT, user: KUBECONFIG_CONTEXT };
  if (options.namespace !== undefined) context['namespace'] = options.namespace;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: KUBECONFIG_CONTEXT, cluster }],
    users: [{ name: KUBECONFIG_CONTEXT, user }],
    contexts: [{ name: KUBECONFIG_CONTEXT, context }],
    'current-context': KUBECONFIG_CONTEXT,
    preferences: {},
  };
}

function base64(pem: string): string {
  return Buffer.from(pem).toString('base64');
}

/** Writes the kubeconfig to `path` (mode 0600). */
export function writeKubeconfig(path: string, options: KubeconfigOptions): void {
  writeFileSync(path, stringify(kubeconfigDocument(options)), { mode: 0o600 });
}
