// What an install of nodepulse must show on the test cluster's real kubelets, whichever way it
// was installed (kustomize as root, kustomize non-root, the chart): the checks of
// kustomize-install.test.ts and non-root-install.test.ts, and the agent half of
// helm-install.test.ts.
//
// | what                                   | must hold                                                          |
// |----------------------------------------|--------------------------------------------------------------------|
// | the DaemonSet's pods                   | one per node, Ready under the shipped readiness probe, no restart, |
// |                                        | the image already present (never pulled); the running pod holds    |
// |                                        | the render's image, probes, securityContext and mounts             |
// | the process the kubelet started        | the expected uid and groups, no capability, no_new_privs, seccomp  |
// |                                        | filter (the shipped securityContext, applied by the real runtime)  |
// | the mounts                             | /status: the agent chose /run/containerd/containerd.sock (the      |
// |                                        | hostPath), its relists see the node's pods                         |
// | its Lease                              | renews, under the real RBAC and the admission policy, with the     |
// |                                        | projected token (which carries the node claim the policy demands)  |
// | its Node condition                     | RuntimeRelistUnhealthy=False/RelistHealthy beside the kubelet's    |
// |                                        | conditions; Ready as the kubelet wrote it (status, reason, time)   |
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { K8sObject } from '../deploy/render.ts';
import { theOne, type AgentAccount } from './agent-identity.ts';
import { agentProcess, eventsAbout, leaseRenewals, nodeConditions, podGet, waitPodsReady, type NodeCondition, type PodView } from './agent-on-cluster.ts';
import type { SharedCluster } from './shared-cluster.ts';

const KUBELET_CONDITIONS = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];

export interface ExpectedProcess {
  /** The real uid the agent runs as. */
  readonly uid: string;
  /** Supplementary groups the process must hold (e.g. the socket's gid). */
  readonly groups: readonly string[];
}

/** Every node's Ready condition, as the kubelet wrote it: to compare after the agent has written its own. */
export async function readyConditions(cluster: SharedCluster): Promise<Map<string, NodeCondition | undefined>> {
  const before = new Map<string, NodeCondition | undefined>();
  for (const node of cluster.state.nodes) {
    const ready: NodeCondition | undefined = (await nodeConditions(cluster, node.name)).find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True', `precondition: ${node.name} is Ready before the install`);
    before.set(node.name, ready);
  }
  return before;
}

/**
 * Runs the header's checks as subtests of `t`, on an install whose DaemonSet (in `objects`) was
 * just applied; its pods are found by the DaemonSet's own selector, so a renamed install
 * (the chart's nameOverride) is checked the same way. Returns the Ready pods by node.
 */
export async function checkInstall(t: TestContext, cluster: SharedCluster, o: { account: AgentAccount; objects: readonly K8sObject[]; expect: ExpectedProcess; readyBefore: Map<string, NodeCondition | undefined> }): Promise<Map<string, PodView>> {
  const ds = theOne(o.objects, 'DaemonSet') as unknown as { spec: { selector: { matchLabels: Record<string, string> }; template: { spec: { containers: Array<Record<string, unknown>> } } } };
  const selector = Object.entries(ds.spec.selector.matchLabels).map(([k, v]) => `${k}=${v}`).join(',');
  const pods: Map<string, PodView> = await waitPodsReady(cluster, o.account.namespace, selector);

  for (const node of cluster.state.nodes) {
    await t.test(`${node.name}: Ready under the shipped probes, running as the render says`, async () => {
      const pod = pods.get(node.name);
      assert.ok(pod !== undefined);
      const shipped = ds.spec.template.spec.containers[0] ?? {};
      const running = pod.spec.containers[0] ?? { name: '' };
      // The API server adds defaults, and the ServiceAccount admission plugin the token's mount.
      const withoutToken = (mounts: unknown): unknown => (Array.isArray(mounts) ? mounts.filter((m: { name?: string }) => !(m.name ?? '').startsWith('kube-api-access-')) : mounts);
      for (const field of ['image', 'livenessProbe', 'readinessProbe', 'securityContext', 'volumeMounts'] as const) {
        const actual = field === 'volumeMounts' ? withoutToken(running[field]) : running[field];
        assert.deepEqual(differences(actual, shipped[field], field), [], `the running pod's ${field} holds the render's`);
      }
      const status = pod.status.containerStatuses?.[0];
      assert.deepEqual([status?.ready, status?.restartCount, status?.started], [true, 0, true]);
      const events = await eventsAbout(cluster, o.account.namespace, pod.metadata.name);
      assert.ok(events.some((e) => /^Pulled: .*already present on machine/.test(e)), `the kubelet used the present image: ${events.join(' | ')}`);
      assert.ok(!events.some((e) => /^Pulling:/.test(e)), `no pull was tried: ${events.join(' | ')}`);
      assert.ok(pod.spec.volumes?.some((v) => v.name.startsWith('kube-api-access-') && 'projected' in v), 'the service-account token is a projected volume');

      const proc = agentProcess(node.index);
      const groups = proc.groups.split(/\s+/).filter((g) => g !== '');
      assert.deepEqual(
        { uid: proc.uid.split(/\s+/)[0], capEff: proc.capEff, noNewPrivs: proc.noNewPrivs, seccomp: proc.seccomp, groups: o.expect.groups.filter((g) => groups.includes(g)) },
        { uid: o.expect.uid, capEff: '0000000000000000', noNewPrivs: '1', seccomp: '2', groups: [...o.expect.groups] },
        'the securityContext as the runtime applied it: the uid and groups, no capability, no privilege escalation, RuntimeDefault seccomp',
      );

      const agentStatus = (await podGet(cluster, pod, 9356, '/status')).json as { node: string; criEndpoint: { endpoint: string | null }; runtime: { state: string }; counts: { pods: number } };
      assert.equal(agentStatus.node, node.name);
      assert.equal(agentStatus.criEndpoint.endpoint, 'unix:///run/containerd/containerd.sock', 'the agent found the node\'s runtime through the hostPath mount');
      assert.equal(agentStatus.runtime.state, 'Healthy');
      assert.ok(agentStatus.counts.pods >= 1, `its relists see the node's pods, its own among them (${agentStatus.counts.pods})`);
    });
  }

  await t.test('each Lease renews, under the real RBAC and the admission policy', async () => {
    // All nodes at once: each waits for two renewals (~10 s apart).
    await Promise.all(cluster.state.nodes.map(async (node) => {
      const seen = await leaseRenewals(cluster, o.account.namespace, node.name);
      assert.ok(seen.every((time, i) => i === 0 || time > (seen[i - 1] ?? '')), `${node.name}: renewTime only moves forward: ${seen.join(', ')}`);
    }));
  });

  await t.test('each Node condition sits beside the kubelet\'s, and Ready stays as the kubelet wrote it', async () => {
    for (const node of cluster.state.nodes) {
      const conditions = await nodeConditions(cluster, node.name);
      const ours = conditions.find((c) => c.type === 'RuntimeRelistUnhealthy');
      assert.deepEqual([ours?.status, ours?.reason], ['False', 'RelistHealthy'], `${node.name}'s condition`);
      for (const type of KUBELET_CONDITIONS) assert.ok(conditions.some((c) => c.type === type), `${node.name} keeps the kubelet's ${type}`);
      const ready = conditions.find((c) => c.type === 'Ready');
      const before = o.readyBefore.get(node.name);
      assert.deepEqual([ready?.status, ready?.reason, ready?.lastTransitionTime], [before?.status, before?.reason, before?.lastTransitionTime], `${node.name}'s Ready is the kubelet's`);
      assert.equal(ready?.reason, 'KubeletReady');
    }
  });
  return pods;
}

/** Where `actual` does not hold `expected`: every key of an object, every element of an array (same length). */
function differences(actual: unknown, expected: unknown, path: string): string[] {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [`${path}: ${JSON.stringify(actual)} must be ${JSON.stringify(expected)}`];
    return expected.flatMap((e, i) => differences(actual[i], e, `${path}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object') return [`${path}: ${JSON.stringify(actual)} must be an object`];
    return Object.entries(expected).flatMap(([k, v]) => differences((actual as Record<string, unknown>)[k], v, `${path}.${k}`));
  }
  return actual === expected ? [] : [`${path}: ${JSON.stringify(actual)} must be ${JSON.stringify(expected)}`];
}
