// node-control.ts on the shared cluster's first node, and back: what the fault tests build on.
//
// | step                                                   | must hold                                      |
// |--------------------------------------------------------|------------------------------------------------|
// | containerd moved to /run/containerd/real/containerd.sock | it answers at that path's host path; nothing   |
// |                                                        | listens at the default path any more; a pod's  |
// |                                                        | container of that node lives on                |
// | moved back to the default path                         | the kubelet reaches it again: the Node is      |
// |                                                        | Ready, the pod still there                     |
// | the kubelet stopped and started again                  | a new pid in the state file; the Node Ready;   |
// |                                                        | the pod deleted, it stops the pod's tasks      |
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { TEST_IMAGE } from '../fixtures/busybox-image.ts';
import { readState } from './cluster.ts';
import { isRunning } from './daemon.ts';
import { CONTAINERD_SOCKET, daemonOf, hostPath, inNode, moveContainerdSocket, startNodeDaemon, stopNodeDaemon } from './node-control.ts';
import { sharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const MOVED = '/run/containerd/real/containerd.sock';
/** The kubelet's runtime status check runs every 5 s; the Node's status follows within its update period. */
const READY_AGAIN_MS = 120_000;

test('a node\'s containerd moves off the default path and back, and its kubelet restarts, without losing the node', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined) return;
  const clock = new SystemClock();
  const state = cluster.state;
  const node = state.nodes[0];
  assert.ok(node !== undefined, 'precondition: the shared cluster has a node');
  const ctr = (socket: string, args: string[]): string => execFileSync('ctr', ['-a', socket, '-n', 'k8s.io', ...args], { encoding: 'utf8', timeout: 10_000 });
  let podUid = '';
  /** The pod's sandbox and container, by the pod uid the kubelet labels them with. */
  const sandboxes = (socket: string): string[] => ctr(socket, ['containers', 'ls', '-q', `labels."io.kubernetes.pod.uid"==${podUid}`]).split('\n').filter((l) => l !== '').sort();
  const ready = async (): Promise<true | string> => {
    const a = await cluster.request(`/api/v1/nodes/${node.name}`);
    const c = (a.json as { status: { conditions: Array<{ type: string; status: string; reason: string }> } }).status.conditions.find((x) => x.type === 'Ready');
    return c?.status === 'True' ? true : `Ready=${c?.status} ${c?.reason}`;
  };
  t.after(async () => {
    // Leave the node as it was found, whatever failed.
    const now = readState();
    if (now !== undefined && !existsSync(node.hostSocket)) await moveContainerdSocket(now, node.name, CONTAINERD_SOCKET, clock);
    if (now !== undefined && !isRunning(daemonOf(now, `${node.name}/kubelet`))) startNodeDaemon(now, `${node.name}/kubelet`);
  });

  assert.equal(await ready(), true, `precondition: ${node.name} is Ready`);
  // A pod on the node, so there is a container whose survival to look at.
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'node-control-sleeper', namespace: 'default' }, spec: { nodeName: node.name, terminationGracePeriodSeconds: 0, containers: [{ name: 'sleep', image: TEST_IMAGE, imagePullPolicy: 'Never' }] } };
  const created = await cluster.request('/api/v1/namespaces/default/pods', { method: 'POST', body: pod });
  assert.equal(created.status, 201, `precondition: the pod is created: ${created.body}`);
  podUid = (created.json as { metadata: { uid: string } }).metadata.uid;
  t.after(() => cluster.request('/api/v1/namespaces/default/pods/node-control-sleeper?gracePeriodSeconds=0', { method: 'DELETE' }));
  await waitFor('the pod runs', async () => {
    const a = await cluster.request('/api/v1/namespaces/default/pods/node-control-sleeper');
    const phase = (a.json as { status?: { phase?: string } }).status?.phase;
    return phase === 'Running' ? true : `phase ${phase}`;
  }, { clock, timeoutMs: READY_AGAIN_MS });
  const before = sandboxes(node.hostSocket);
  assert.equal(before.length, 2, `precondition: the pod's sandbox and container (${before.join(', ')})`);

  const moved = await moveContainerdSocket(state, node.name, MOVED, clock);
  assert.equal(moved, hostPath(node, MOVED));
  assert.match(ctr(moved, ['version']), /Server:/, 'containerd answers at the new path');
  assert.equal(existsSync(node.hostSocket), false, 'nothing is at the default path');
  const [file = 'nsenter', ...args] = inNode(node, ['sh', '-c', `test -S ${MOVED} && ! test -e ${CONTAINERD_SOCKET} && echo moved`]);
  assert.equal(execFileSync(file, args, { encoding: 'utf8' }).trim(), 'moved', 'inside the node too');
  assert.deepEqual(sandboxes(moved), before, 'the node\'s containers lived on');

  await moveContainerdSocket(state, node.name, CONTAINERD_SOCKET, clock);
  await waitFor(`${node.name} is Ready with containerd back at the default path`, ready, { clock, timeoutMs: READY_AGAIN_MS });
  assert.deepEqual(sandboxes(node.hostSocket), before);

  const kubelet = `${node.name}/kubelet`;
  const oldPid = daemonOf(state, kubelet).pid;
  await stopNodeDaemon(state, kubelet, clock);
  const restarted = startNodeDaemon(state, kubelet);
  assert.notEqual(restarted.pid, oldPid);
  assert.equal(readState()?.daemons.find((d) => d.name === kubelet)?.pid, restarted.pid, 'the state file has the new pid');
  assert.ok(readFileSync(`/proc/${restarted.pid}/cmdline`, 'utf8').includes('kubelet'));
  await waitFor(`${node.name} is Ready under the restarted kubelet`, ready, { clock, timeoutMs: READY_AGAIN_MS, daemon: restarted });

  // The restarted kubelet drives the runtime it found back at the default path: the pod deleted,
  // it stops the pod's tasks.
  assert.equal((await cluster.request('/api/v1/namespaces/default/pods/node-control-sleeper?gracePeriodSeconds=0', { method: 'DELETE' })).status, 200);
  const running = (): string[] => ctr(node.hostSocket, ['tasks', 'ls']).split('\n').slice(1).filter((l) => / RUNNING/.test(l)).map((l) => l.split(/\s+/)[0] ?? '');
  await waitFor('the kubelet stops the deleted pod\'s tasks', () => {
    const left = running().filter((id) => before.includes(id));
    return left.length === 0 ? true : `running: ${left.join(', ')}`;
  }, { clock, timeoutMs: READY_AGAIN_MS, daemon: restarted });
});
