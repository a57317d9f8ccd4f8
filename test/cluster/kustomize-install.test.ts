// nodepulse installed as a user installs it, `kubectl apply -k` of test/cluster/overlay (the base,
// the admission-policy and flowschema components, the image the tests build), on the real
// kubelets of the shared cluster: install-checks.ts's table, for the shipped root mode.
import { test } from 'node:test';
import { requireImageBuild } from '../fixtures/agent-image.ts';
import { agentAccount, OVERLAY, renderOverlay } from './agent-identity.ts';
import { importAgentImage } from './agent-on-cluster.ts';
import { checkInstall, readyConditions } from './install-checks.ts';
import { sharedCluster } from './shared-cluster.ts';

test('kubectl apply -k: the agent runs under the real kubelet on every node, renews its Lease and writes its condition', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined || !requireImageBuild(t)) return;
  const objects = await renderOverlay(cluster, OVERLAY);
  const readyBefore = await readyConditions(cluster);
  await importAgentImage(cluster);
  t.after(() => cluster.kubectl(['delete', '-k', OVERLAY, '--ignore-not-found', '--wait=true', '--timeout=180s']));
  await cluster.kubectl(['apply', '-k', OVERLAY]);
  await checkInstall(t, cluster, { account: agentAccount(objects), objects, readyBefore, expect: { uid: '0', groups: [] } });
});
