// nodepulse in the non-root mode on the real kubelets: test/cluster/overlay-non-root (the
// non-root component, and the socket's gid in supplementalGroups), on nodes whose containerd has
// `[grpc] gid = 64321` (the shared cluster's --socket-gid). install-checks.ts's table, with the
// agent running as uid 65532 holding group 64321.
//
// And the control: the same pod template without the group is refused by the socket (EACCES),
// so it is the group, and nothing else, that lets the non-root agent in. That agent says it
// cannot observe the runtime (CannotObserve, the cause named), and the real kubelet keeps its pod
// out of Ready (/readyz fails), which is what stops a rollout of such an install.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { requireImageBuild } from '../fixtures/agent-image.ts';
import { agentAccount, renderOverlay, theOne } from './agent-identity.ts';
import { importAgentImage, podGet, waitPodsReady, type PodView } from './agent-on-cluster.ts';
import { checkInstall, readyConditions } from './install-checks.ts';
import { sharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const OVERLAY = 'test/cluster/overlay-non-root';
const SOCKET_GID = 64321;
const NON_ROOT_UID = '65532';
/** The control agent's first relists fail at once; a loaded machine gets margin. */
const REFUSED_MS = 60_000;

test('the non-root mode: the agent runs as 65532 with the socket\'s group, and without the group the socket refuses it', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined || !requireImageBuild(t)) return;
  assert.equal(cluster.state.socketGid, SOCKET_GID, `precondition: the cluster's containerd sockets have gid ${SOCKET_GID} (up --socket-gid)`);
  for (const node of cluster.state.nodes) {
    const st = statSync(node.hostSocket);
    assert.deepEqual([st.uid, st.gid, st.mode & 0o777], [0, SOCKET_GID, 0o660], `precondition: ${node.name}'s socket is root:${SOCKET_GID} 0660`);
  }
  const objects = await renderOverlay(cluster, OVERLAY);
  const account = agentAccount(objects);
  const ds = theOne(objects, 'DaemonSet') as unknown as { spec: { template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> & { securityContext: { supplementalGroups?: number[] } } } } };
  assert.deepEqual(ds.spec.template.spec.securityContext.supplementalGroups, [SOCKET_GID], 'precondition: the overlay adds the socket\'s group');

  const readyBefore = await readyConditions(cluster);
  await importAgentImage(cluster);
  const node = cluster.state.nodes[0];
  assert.ok(node !== undefined, 'precondition: the shared cluster has a node');
  const controlName = 'nodepulse-without-socket-group';
  t.after(async () => {
    await cluster.request(`/api/v1/namespaces/${account.namespace}/pods/${controlName}?gracePeriodSeconds=0`, { method: 'DELETE' });
    await cluster.kubectl(['delete', '-k', OVERLAY, '--ignore-not-found', '--wait=true', '--timeout=180s']);
  });
  await cluster.kubectl(['apply', '-k', OVERLAY]);
  await checkInstall(t, cluster, { account, objects, readyBefore, expect: { uid: NON_ROOT_UID, groups: [String(SOCKET_GID)] } });

  await t.test('without the group in supplementalGroups, the socket refuses the agent (EACCES): it cannot observe, and is not Ready', async () => {
    // The DaemonSet's own pod template, as a bare Pod on the first node, minus the group; its labels
    // differ from the DaemonSet's selector, so the DaemonSet does not adopt it.
    const template = ds.spec.template;
    const spec = { ...template.spec, nodeName: node.name, securityContext: { ...template.spec.securityContext, supplementalGroups: [] } };
    const created = await cluster.request(`/api/v1/namespaces/${account.namespace}/pods`, {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: controlName, namespace: account.namespace, labels: { 'app.kubernetes.io/name': 'nodepulse-control' } }, spec },
    });
    assert.equal(created.status, 201, created.body);
    const control = await waitPodRunningOn(cluster, account.namespace, node.name, 'app.kubernetes.io/name=nodepulse-control');
    let seen = '';
    await waitFor('the control agent reports the socket refusing it', async () => {
      const s = (await podGet(cluster, control, 9356, '/status')).json as { runtime?: { state: string; lastFault: { code: string; message: string } | null } };
      seen = `${s.runtime?.state} ${s.runtime?.lastFault?.code ?? ''}: ${s.runtime?.lastFault?.message ?? ''}`;
      return /EACCES/.test(seen) ? true : seen;
    }, { clock: new SystemClock(), timeoutMs: REFUSED_MS });
    assert.match(seen, /^CannotObserve \S+: .*connect EACCES \/run\/containerd\/containerd\.sock/);
    // The readiness probe (period 5 s) has run by now; give the kubelet two periods to write it.
    let ready = '';
    await waitFor('the kubelet keeps the control pod out of Ready', async () => {
      const pod = (await cluster.request(`/api/v1/namespaces/${account.namespace}/pods/${controlName}`)).json as PodView;
      ready = pod.status.conditions?.find((c) => c.type === 'ContainersReady')?.status ?? 'none';
      const probed = (await cluster.request(`/api/v1/namespaces/${account.namespace}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${controlName},reason=Unhealthy`)}`)).body;
      return ready === 'False' && probed.includes('Readiness probe failed') ? true : `ContainersReady=${ready}`;
    }, { clock: new SystemClock(), timeoutMs: REFUSED_MS });
  });
});

async function waitPodRunningOn(cluster: Parameters<typeof waitPodsReady>[0], namespace: string, nodeName: string, selector: string): Promise<PodView> {
  let found: PodView | undefined;
  await waitFor(`a running pod of ${selector} on ${nodeName}`, async () => {
    const a = await cluster.request(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`);
    found = (a.json as { items: PodView[] }).items.find((p) => p.spec.nodeName === nodeName && p.status.containerStatuses?.[0]?.started === true);
    return found !== undefined ? true : `pods: ${a.body.slice(0, 300)}`;
  }, { clock: new SystemClock(), timeoutMs: 180_000 });
  return found as PodView;
}
