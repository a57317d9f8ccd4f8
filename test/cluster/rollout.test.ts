// A rollout of a version that cannot observe the runtime stops on its first node, on three real
// nodes: the shipped install (kustomize, as root) with `maxUnavailable: 1`, then a rolling update
// to an image under a new tag whose pod runs as uid 65532 without the socket's group (the shipped
// template pins runAsUser 0, so the uid is the template's, as a non-root component applied
// without its group patch would set it). The socket (root:64321 0660) refuses it: EACCES.
//
// | what                                   | must hold while ROLLOUT_WATCH_MS pass from the new pod's  |
// |                                        | creation                                                   |
// |----------------------------------------|------------------------------------------------------------|
// | the new pod                            | exactly one, its container started and never restarted     |
// |                                        | (live), never Ready (/readyz is 503 while it cannot        |
// |                                        | observe)                                                   |
// | the other two nodes                    | their original pods (same uids), Ready; the DaemonSet's    |
// |                                        | updatedNumberScheduled stays 1                             |
// | the first node's condition             | Unknown/AgentCannotObserve within the threshold, a start   |
// |                                        | and slack; never True                                      |
// | after `kubectl rollout undo`           | every node's pod Ready on the original template, every     |
// |                                        | condition False/RelistHealthy                              |
//
// The agent runs at the CI matrix's flags (threshold 6 s), so that the watch (60 s) is ten
// thresholds. minReadySeconds stays the shipped 90 s: the install is waited for until every pod
// is available, so the update starts from a settled DaemonSet (the controller would otherwise
// replace the still-unavailable old pods first, as it does for any rollout).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { agentImage, requireImageBuild } from '../fixtures/agent-image.ts';
import { CI_AGENT_ARGS } from '../matrix/matrix-settings.ts';
import { apply, remove, renderOverlay, theOne } from './agent-identity.ts';
import { listPods, waitPodsReady, type PodView } from './agent-on-cluster.ts';
import { importImage } from './cluster.ts';
import { sharedCluster, type SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const clock = new SystemClock();
const NAMESPACE = 'nodepulse';
const SELECTOR = 'app.kubernetes.io/component=agent';
/** The broken version's image: the same build under a tag of its own. */
const ROLLOUT_IMAGE = 'localhost/nodepulse:rollout-cannot-observe';
const NON_ROOT_UID = 65532;
/** How long the rollout is watched standing still after the new pod is made. */
const ROLLOUT_WATCH_MS = 60_000;
/** The threshold (6 s), the agent's start on a loaded machine (8 s), the condition loop and a PATCH, slack. */
const CANNOT_OBSERVE_MS = 6_000 + 8_000 + 1_000 + 1_500 + 4_000;
/** Every pod ready, then minReadySeconds (90 s), with margin. */
const AVAILABLE_MS = 240_000;
const POLL_MS = 500;

interface DaemonSetView {
  status: { desiredNumberScheduled?: number; numberAvailable?: number; updatedNumberScheduled?: number; observedGeneration?: number };
  metadata: { generation?: number };
}

interface NodeView {
  status: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

async function daemonSet(cluster: SharedCluster): Promise<DaemonSetView> {
  const a = await cluster.request(`/apis/apps/v1/namespaces/${NAMESPACE}/daemonsets/nodepulse`);
  assert.equal(a.status, 200, a.body);
  return a.json as DaemonSetView;
}

async function condition(cluster: SharedCluster, node: string): Promise<string> {
  const a = await cluster.request(`/api/v1/nodes/${node}`);
  assert.equal(a.status, 200, a.body);
  const c = (a.json as NodeView).status.conditions?.find((x) => x.type === 'RuntimeRelistUnhealthy');
  return c === undefined ? 'absent' : `${c.status}/${c.reason ?? ''}`;
}

const isReady = (p: PodView): boolean => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

test('a rollout to a version that cannot observe the runtime stops after its first node; rollout undo brings every node back', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined || !requireImageBuild(t)) return;
  const nodes = cluster.state.nodes.map((n) => n.name);
  assert.equal(nodes.length, 3, `precondition: the shared cluster has three nodes (SHARED_CLUSTER_ARGS), has ${nodes.join(', ')}`);
  assert.equal(cluster.state.socketGid, 64321, 'precondition: the nodes\' sockets are root:64321 0660, a group the new version\'s pod lacks');

  const objects = await renderOverlay(cluster);
  const ds = theOne(objects, 'DaemonSet') as unknown as { spec: { updateStrategy: { rollingUpdate: Record<string, unknown> }; template: { spec: { containers: Array<{ name: string; args?: string[]; image: string }> } } } };
  ds.spec.updateStrategy.rollingUpdate = { maxUnavailable: 1, maxSurge: 0 };
  const agent = ds.spec.template.spec.containers[0];
  assert.ok(agent !== undefined && agent.name === 'agent', 'precondition: the DaemonSet\'s first container is the agent');
  agent.args = [...CI_AGENT_ARGS];
  const image = await agentImage();
  const names = importImage(cluster.state, image.archive, 'localhost/nodepulse:cluster-test');
  importImage(cluster.state, image.archive, ROLLOUT_IMAGE);
  assert.ok(names.includes('localhost/nodepulse:cluster-test'), `precondition: the image is on the nodes (${names.join(', ')})`);
  t.after(() => remove(cluster, objects));
  await apply(cluster, objects);
  const before = await waitPodsReady(cluster, NAMESPACE, SELECTOR);
  await waitFor('the install settled: every pod available (minReadySeconds 90 s)', async () => {
    const s = (await daemonSet(cluster)).status;
    return s.numberAvailable === 3 && s.updatedNumberScheduled === 3 ? true : `available ${s.numberAvailable}, updated ${s.updatedNumberScheduled}`;
  }, { clock, timeoutMs: AVAILABLE_MS, intervalMs: 1_000 });
  for (const n of nodes) assert.equal(await condition(cluster, n), 'False/RelistHealthy', `precondition: ${n}'s agent observes before the update`);
  const original = new Map([...before].map(([node, pod]) => [node, pod.metadata.uid]));

  await cluster.kubectl(['patch', 'daemonset', 'nodepulse', '-n', NAMESPACE, '--type=json', '-p', JSON.stringify([
    { op: 'replace', path: '/spec/template/spec/containers/0/image', value: ROLLOUT_IMAGE },
    { op: 'replace', path: '/spec/template/spec/containers/0/securityContext/runAsUser', value: NON_ROOT_UID },
    { op: 'replace', path: '/spec/template/spec/containers/0/securityContext/runAsGroup', value: NON_ROOT_UID },
    { op: 'replace', path: '/spec/template/spec/containers/0/securityContext/runAsNonRoot', value: true },
  ])]);

  let fresh: PodView | undefined;
  await waitFor('the rollout makes its first new pod', async () => {
    const pods = await listPods(cluster, NAMESPACE, SELECTOR);
    fresh = pods.find((p) => (p.spec.containers[0] as { image?: string }).image === ROLLOUT_IMAGE);
    return fresh !== undefined || `pods: ${pods.map((p) => `${p.metadata.name}@${p.spec.nodeName}`).join(', ')}`;
  }, { clock, timeoutMs: 60_000, intervalMs: 200 });
  const first = (fresh as PodView).spec.nodeName ?? '';
  const others = nodes.filter((n) => n !== first);
  const started = clock.monotonicMs();
  const states = new Set<string>();
  let cannotObserveAtMs: number | undefined;
  let live = false;
  while (clock.monotonicMs() - started < ROLLOUT_WATCH_MS) {
    const atMs = clock.monotonicMs() - started;
    const pods = await listPods(cluster, NAMESPACE, SELECTOR);
    const updated = pods.filter((p) => (p.spec.containers[0] as { image?: string }).image === ROLLOUT_IMAGE);
    assert.deepEqual(updated.map((p) => p.spec.nodeName), [first], `at ${atMs} ms: only ${first}'s pod is replaced`);
    const mine = updated[0] as PodView;
    assert.equal(isReady(mine), false, `at ${atMs} ms: the new pod on ${first} must never be Ready`);
    const status = mine.status.containerStatuses?.[0];
    assert.equal(status?.restartCount ?? 0, 0, `at ${atMs} ms: the new agent stays live (no restart): ${JSON.stringify(status?.state)}`);
    if (status?.started === true) live = true;
    for (const n of others) {
      const p = pods.find((x) => x.spec.nodeName === n);
      assert.equal(p?.metadata.uid, original.get(n), `at ${atMs} ms: ${n} keeps its original agent pod`);
      assert.ok(p !== undefined && isReady(p), `at ${atMs} ms: ${n}'s agent stays Ready`);
    }
    const c = await condition(cluster, first);
    states.add(c);
    assert.ok(!c.startsWith('True'), `at ${atMs} ms: ${first}'s condition must never be True (it is ${c})`);
    if (c === 'Unknown/AgentCannotObserve') cannotObserveAtMs ??= atMs;
    await clock.sleep(POLL_MS);
  }
  assert.ok(live, `the new agent's container started on ${first}`);
  assert.ok(cannotObserveAtMs !== undefined && cannotObserveAtMs <= CANNOT_OBSERVE_MS, `${first}'s condition must be Unknown/AgentCannotObserve within ${CANNOT_OBSERVE_MS} ms of the new pod (seen at ${cannotObserveAtMs} ms; states ${[...states].join(', ')})`);
  assert.equal((await daemonSet(cluster)).status.updatedNumberScheduled, 1, 'the rollout stopped after one node');
  t.diagnostic(`rollout stopped on ${first}: Unknown/AgentCannotObserve at ${Math.round(cannotObserveAtMs)} ms, watched ${ROLLOUT_WATCH_MS} ms; states seen ${[...states].join(', ')}`);

  await cluster.kubectl(['rollout', 'undo', 'daemonset/nodepulse', '-n', NAMESPACE]);
  await waitFor('rollout undo: every node back on the original template, Ready', async () => {
    const pods = await listPods(cluster, NAMESPACE, SELECTOR);
    const bad = pods.filter((p) => (p.spec.containers[0] as { image?: string }).image === ROLLOUT_IMAGE);
    const ready = pods.filter(isReady).map((p) => p.spec.nodeName);
    return bad.length === 0 && nodes.every((n) => ready.includes(n)) ? true : `new-version pods ${bad.length}, Ready on ${ready.join(', ')}`;
  }, { clock, timeoutMs: 180_000, intervalMs: 1_000 });
  await waitFor('every condition False/RelistHealthy again', async () => {
    const seen = await Promise.all(nodes.map(async (n) => `${n} ${await condition(cluster, n)}`));
    return seen.every((s) => s.endsWith('False/RelistHealthy')) ? true : seen.join(', ');
  }, { clock, timeoutMs: 60_000, intervalMs: 1_000 });
});
