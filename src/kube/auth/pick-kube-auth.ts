// The one picker of credentials, for the agent and for the readers (fleet, controller, verify,
// cleanup). The agent uses only its own `kubeconfig` setting; a reader follows kubectl's loading
// rules. Either takes the lean way wherever its rules end in the pod's service account:
//
// | who    | kubeconfig (setting or --kubeconfig) | KUBECONFIG                  | ~/.kube/config | in a pod¹ | credentials                           |
// |--------|--------------------------------------|-----------------------------|----------------|-----------|---------------------------------------|
// | agent  | unset or empty                       | not read                    | not read       | any       | in-cluster, lean²                     |
// | agent  | one path                             | not read                    | not read       | any       | that file (kubeconfig); it must exist |
// | agent  | a ':' list (KUBECONFIG's form)       | not read                    | not read       | any       | those files merged; missing skipped   |
// | reader | given                                | any                         | any            | any       | kubeconfig (client-node's KubeConfig) |
// | reader | unset                                | names a file that exists    | any            | any       | kubeconfig                            |
// | reader | unset                                | set, names no existing file | any            | yes       | in-cluster, lean                      |
// | reader | unset                                | unset or empty              | exists         | any       | kubeconfig                            |
// | reader | unset                                | unset or empty              | missing        | yes       | in-cluster, lean                      |
// | reader | unset                                | no existing file            | missing        | no        | kubeconfig: its "none found" error    |
//
// ¹ KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT set, and the service account's token file
//   there: client-go's inClusterClientConfig.Possible(), as load-kubeconfig.ts asks it.
// ² The agent asks nothing first: outside a pod, inClusterAuth's error says what is missing, and
//   a token file missing at start is a request error (in-cluster.ts), as kubelet treats a
//   rotated projected token.
//
// Why: client-node's KubeConfig module loads the generated API with it, about 77 MiB of RSS
// (docs/bench.md): the agent runs on every node, and a controller in its pod would spend it on
// reading two files. The lean path (in-cluster.ts over lean-auth.ts) does what KubeConfig's
// in-cluster path did: the server from the environment, the service account's CA, its token file
// re-read every 60 s and after a 401. A kubeconfig file, even one that turns out to define
// nothing, still goes through KubeConfig (load-kubeconfig.ts), which is imported only then, and
// without the generated API it never uses (client-node-narrow.ts). The agent holds at most
// lean-auth.ts's default connections; a reader in a pod holds READER_MAX_SOCKETS.
//
// Failure modes: as load-kubeconfig.ts's and in-cluster.ts's, a KubeConfigError naming what is
// missing or wrong.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../clock/clock.ts';
import { narrowClientNode } from './client-node-narrow.ts';
import type { KubeAuth } from './kube-auth.ts';
import { inClusterAuth, SERVICE_ACCOUNT_DIR } from './in-cluster.ts';

export interface PickKubeAuthOptions {
  /** The agent (its own setting only) or a reader (kubectl's loading rules). */
  readonly who: 'agent' | 'reader';
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string | undefined;
  readonly clock: Clock;
  /** The service-account folder; SERVICE_ACCOUNT_DIR by default (tests point it elsewhere). */
  readonly serviceAccountDir?: string;
}

export type Credentials = 'kubeconfig' | 'in-cluster';

/**
 * Connections a reader in a pod may hold: the controller's three watches hold one each for
 * minutes, and its election renewals and Node writes must never queue behind them.
 */
export const READER_MAX_SOCKETS = 16;

/** The table of the header, with the file system asked through `exists`. */
export function chooseCredentials(o: {
  readonly who: 'agent' | 'reader';
  readonly kubeconfig: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string | undefined;
  readonly serviceAccountDir: string;
  readonly exists: (path: string) => boolean;
}): Credentials {
  if (o.kubeconfig !== undefined && o.kubeconfig !== '') return 'kubeconfig';
  if (o.who === 'agent') return 'in-cluster';
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
export async function pickKubeAuth(o: PickKubeAuthOptions): Promise<KubeAuth> {
  const serviceAccountDir = o.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const reader = o.who === 'reader';
  if (chooseCredentials({ ...o, serviceAccountDir, exists }) === 'in-cluster') {
    return inClusterAuth({ env: o.env, serviceAccountDir, clock: o.clock, ...(reader ? { maxSockets: READER_MAX_SOCKETS } : {}) });
  }
  narrowClientNode();
  const [{ loadKubeconfig }, { kubeConfigAuth }] = await Promise.all([import('./load-kubeconfig.ts'), import('./kubeconfig-auth.ts')]);
  if (reader) {
    return kubeConfigAuth(loadKubeconfig({ kubeconfig: o.kubeconfig, context: o.context, env: o.env, homeDir: o.homeDir, serviceAccountDir }));
  }
  // The agent's setting alone: a ':' list is read as KUBECONFIG is, nothing else is looked up.
  const kubeconfig = o.kubeconfig ?? '';
  const files = kubeconfig.includes(':') ? { env: { KUBECONFIG: kubeconfig } } : { kubeconfig, env: {} };
  return kubeConfigAuth(loadKubeconfig({ ...files, homeDir: undefined }));
}
