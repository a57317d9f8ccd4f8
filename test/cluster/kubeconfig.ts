// Kubeconfig files for the cluster's users (the admin, each control-plane component, each kubelet
// and kube-proxy), with the CA and the client certificate embedded, so a file can be copied or
// mounted anywhere and still work.
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigSpec {
  readonly path: string;
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  /** PEM files of the client certificate and its key. */
  readonly cert: string;
  readonly key: string;
}

/** The cluster, user and context are all named after the cluster, so one file never shadows another's names in a merge. */
export const CONTEXT = 'nodepulse-cluster';

export function writeKubeconfig(spec: KubeconfigSpec): string {
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CONTEXT, cluster: { server: spec.server, 'certificate-authority-data': b64(spec.caPem) } }],
    users: [{
      name: `${CONTEXT}-${spec.user}`,
      user: { 'client-certificate-data': b64(readFileSync(spec.cert, 'utf8')), 'client-key-data': b64(readFileSync(spec.key, 'utf8')) },
    }],
    contexts: [{ name: CONTEXT, context: { cluster: CONTEXT, user: `${CONTEXT}-${spec.user}` } }],
    'current-context': CONTEXT,
  };
  writeFileSync(spec.path, stringify(doc), { mode: 0o600 });
  return spec.path;
}
