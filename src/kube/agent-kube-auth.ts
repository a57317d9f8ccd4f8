// The agent's credentials, chosen once at start:
//
// | the agent's `kubeconfig` setting  | credentials                                                   |
// |-----------------------------------|---------------------------------------------------------------|
// | unset (the DaemonSet)             | the pod's service account, the lean way (kube-config.ts)      |
// | one path                          | that file, through client-node's KubeConfig; it must exist    |
// | a ':' list (KUBECONFIG's form)    | those files merged as kubectl merges them; missing ones skipped|
//
// load-kubeconfig.ts and kubeconfig-auth.ts are imported only in the last two rows: client-node's
// KubeConfig costs most of the agent's RSS budget (docs/bench.md), which an agent on every node
// must not pay for a kubeconfig it was not given; and even then without the generated API
// (client-node-narrow.ts).
import type { Clock } from '../clock/clock.ts';
import { narrowClientNode } from './client-node-narrow.ts';
import type { KubeAuth } from './kube-auth.ts';
import { loadInCluster } from './kube-config.ts';
import { targetAuth } from './target-auth.ts';

export async function agentKubeAuth(options: {
  readonly kubeconfig: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
}): Promise<KubeAuth> {
  const { kubeconfig } = options;
  if (kubeconfig === undefined || kubeconfig === '') return targetAuth(loadInCluster({ env: options.env }), { clock: options.clock });
  narrowClientNode();
  const [{ loadKubeconfig }, { kubeConfigAuth }] = await Promise.all([import('./load-kubeconfig.ts'), import('./kubeconfig-auth.ts')]);
  const files = kubeconfig.includes(':') ? { env: { KUBECONFIG: kubeconfig } } : { kubeconfig, env: {} };
  return kubeConfigAuth(loadKubeconfig({ ...files, homeDir: undefined }));
}
