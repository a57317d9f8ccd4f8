// The readers' credentials (fleet, controller, verify, cleanup), chosen by kubectl's loading
// rules, and the lean way wherever those rules end in the pod's service account:
//
// | --kubeconfig | KUBECONFIG                 | ~/.kube/config | in a pod¹ | credentials                          |
// |--------------|----------------------------|----------------|-----------|--------------------------------------|
// | given        | any                        | any            | any       | kubeconfig (client-node's KubeConfig)|
// | unset        | names a file that exists   | any            | any       | kubeconfig                           |
// | unset        | set, names no existing file| any            | yes       | in-cluster, lean                     |
// | unset        | unset or empty             | exists         | any       | kubeconfig                           |
// | unset        | unset or empty             | missing        | yes       | in-cluster, lean                     |
// | unset        | no existing file           | missing        | no        | kubeconfig: its "none found" error   |
//
// ¹ KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set, and the service account's token file
//   there: client-go's inClusterClientConfig.Possible(), as load-kubeconfig.ts asks it.
//
// Why: client-node's KubeConfig module loads the generated API with it, about 77 MiB of RSS
// (docs/bench.md) that a controller in its pod spent on reading two files. In a pod the lean
// path (kube-config.ts, target-auth.ts) does what KubeConfig's in-cluster path did: the server
// from the environment, the service account's CA, its token file re-read every 60 s and after a
// 401. A kubeconfig file, even one that turns out to define nothing, still goes through
// KubeConfig (load-kubeconfig.ts), which is imported only then, and without the generated API
// it never uses (client-node-narrow.ts).
//
// Failure modes: as load-kubeconfig.ts's and kube-config.ts's, a KubeConfigError naming what is
// missing or wrong.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock/clock.ts';
import { narrowClientNode } from './client-node-narrow.ts';
import type { KubeAuth } from './kube-auth.ts';
import { loadInCluster, SERVICE_ACCOUNT_DIR } from './kube-config.ts';
import { targetAuth } from './target-auth.ts';

export interface ReaderAuthOptions {
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string | undefined;
  readonly clock: Clock;
  /** The service-account folder; SERVICE_ACCOUNT_DIR by default (tests point it elsewhere). */
  readonly serviceAccountDir?: string;
}

export type ReaderCredentials = 'kubeconfig' | 'in-cluster';

/**
 * Connections a reader in a pod may hold: the controller's three watches hold one each for
 * minutes, and its election renewals and Node writes must never queue behind them.
 */
export const READER_MAX_SOCKETS = 16;

/** The table of the header, with the file system asked through `exists`. */
export function chooseReaderCredentials(o: {
  readonly kubeconfig: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string | undefined;
  readonly serviceAccountDir: string;
  readonly exists: (path: string) => boolean;
}): ReaderCredentials {
  if (o.kubeconfig !== undefined && o.kubeconfig !== '') return 'kubeconfig';
  const listed = (o.env['KUBECONFIG'] ?? '').split(':').filter((p) => p !== '');
  const candidates = listed.length > 0 ? listed : o.homeDir === undefined || o.homeDir === '' ? [] : [join(o.homeDir, '.kube', 'config')];
  if (candidates.some((p) => o.exists(p))) return 'kubeconfig';
  const inPod = (o.env['KUBERNETES_SERVICE_HOST'] ?? '') !== '' && (o.env['KUBERNETES_SERVICE_PORT'] ?? '') !== '' && o.exists(join(o.serviceAccountDir, 'token'));
  return inPod ? 'in-cluster' : 'kubeconfig';
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The credentials the table picks; client-node is imported only on a kubeconfig row. */
export async function readerAuth(o: ReaderAuthOptions): Promise<KubeAuth> {
  const serviceAccountDir = o.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (chooseReaderCredentials({ ...o, serviceAccountDir, exists }) === 'in-cluster') {
    return targetAuth(loadInCluster({ env: o.env, serviceAccountDir }), { clock: o.clock, maxSockets: READER_MAX_SOCKETS });
  }
  narrowClientNode();
  const [{ loadKubeconfig }, { kubeConfigAuth }] = await Promise.all([import('./load-kubeconfig.ts'), import('./kubeconfig-auth.ts')]);
  return kubeConfigAuth(loadKubeconfig({ kubeconfig: o.kubeconfig, context: o.context, env: o.env, homeDir: o.homeDir, serviceAccountDir }));
}
