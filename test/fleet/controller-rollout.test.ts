// A rollout cannot remediate nodes: `nodepulse controller` (a real process, test-shortened
// timings) pauses its marking while the agent DaemonSet rolls out, says so in its log and in
// nodepulse_controller_marking_paused{reason="agent_rollout"}, and marks again once the rollout
// is done. The DaemonSet lives on the API stand-in, which applies the registry's strategy
// (generation on a spec change, the status subresource); this test writes the status as the
// DaemonSet controller would. Agents are simulated (their lease loops run in this test).
//
// Real time passes here, because a real process runs; every wait is a bounded poll.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { electionHolder, nodeCondition, SimAgent, startControllerProcess, waitFor, type ControllerTimings } from './controller-harness.ts';
import { realisticNode } from './fleet-fixtures.ts';

const real = new SystemClock();
const GRACE_MS = 2_000;
const MONITOR_MS = 250;
const SLACK_MS = 1_000;
const NS = 'nodepulse';
const FLEET = 5;
const DS_PATH = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
const TIMINGS: ControllerTimings = { graceMs: GRACE_MS, monitorPeriodMs: MONITOR_MS, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };

type Json = Record<string, unknown>;

function agentDaemonSet(image: string): Json {
  const labels = { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'agent' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'nodepulse', namespace: NS },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'agent', image }] } } },
  };
}

async function api(server: ApiServerHandle, method: string, path: string, body: unknown, contentType = 'application/json'): Promise<Json> {
  const res = await fetch(server.url + path, { method, headers: { 'content-type': contentType, authorization: 'Bearer token-test' }, body: JSON.stringify(body) });
  const json = (await res.json()) as Json;
  assert.ok(res.status < 300, `precondition: ${method} ${path} must succeed, got ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** What the DaemonSet controller would write to daemonsets/status. */
function writeStatus(server: ApiServerHandle, status: { observedGeneration: number; updated: number; available: number }): Promise<Json> {
  return api(server, 'PATCH', `${DS_PATH}/nodepulse/status`, {
    status: {
      observedGeneration: status.observedGeneration,
      desiredNumberScheduled: FLEET,
      currentNumberScheduled: FLEET,
      numberMisscheduled: 0,
      updatedNumberScheduled: status.updated,
      numberReady: status.available,
      numberAvailable: status.available,
      numberUnavailable: FLEET - status.available,
    },
  }, 'application/merge-patch+json');
}

function pausedForRollout(metrics: string): number | undefined {
  const m = /^nodepulse_controller_marking_paused\{reason="agent_rollout"\} (\d+)$/m.exec(metrics);
  return m === null ? undefined : Number(m[1]);
}

test('the controller pauses marking while the agent DaemonSet rolls out, and marks again once it is done', { timeout: 120_000 }, async (t) => {
  const server = await startApiServer({ clock: real, tokens: { 'token-a': 'controller-a', 'token-test': 'the-test' } });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-rollout-'));
  const agents: SimAgent[] = [];
  t.after(async () => {
    for (const a of agents) await a.kill();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const now = real.wallMicros();
  // Five nodes: two silent agents stay under the controller's other pause (more than half silent).
  for (const [i, name] of ['node-1', 'node-2', 'node-3', 'node-4', 'node-5'].entries()) {
    server.store.put(realisticNode(name, i, { createdMicros: now - 86_400_000_000, condition: { status: 'False', reason: 'RelistHealthy' } }) as Parameters<ApiServerHandle['store']['put']>[0]);
    const agent = new SimAgent(server, name);
    agent.start();
    agents.push(agent);
  }
  const [agent1, agent2] = agents;
  if (agent1 === undefined || agent2 === undefined) throw new Error('precondition: five agents');
  const created = await api(server, 'POST', DS_PATH, agentDaemonSet('nodepulse:0.1.0'));
  assert.equal((created['metadata'] as { generation: number }).generation, 1, 'precondition: the stand-in sets generation 1');
  await writeStatus(server, { observedGeneration: 1, updated: FLEET, available: FLEET });

  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: server.url, token: 'token-a' });
  const ctl = await startControllerProcess(t, { kubeconfig, identity: 'ctl-a', namespace: NS, timings: TIMINGS, args: ['--agent-daemonset', `${NS}/nodepulse`] });
  await waitFor('ctl-a leads', () => electionHolder(server, NS) === 'ctl-a', 15_000);
  await real.sleep(GRACE_MS + MONITOR_MS);
  assert.equal(pausedForRollout(await ctl.metrics()), 0, 'precondition: a settled DaemonSet pauses nothing');

  // 1. A new version rolls out, and crash-loops on node-1: its lease stops.
  const updated = await api(server, 'PUT', `${DS_PATH}/nodepulse`, agentDaemonSet('nodepulse:0.2.0'));
  assert.equal((updated['metadata'] as { generation: number }).generation, 2, 'precondition: a new image is a new generation');
  await writeStatus(server, { observedGeneration: 2, updated: 1, available: FLEET - 1 });
  await agent1.kill();
  await waitFor('ctl-a says marking paused', () => ctl.logText().includes('Marking paused: the agent DaemonSet is rolling out'), 2 * MONITOR_MS + SLACK_MS);
  await real.sleep(GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  assert.equal(nodeCondition(server, 'node-1')?.reason, 'RelistHealthy', 'node-1 must not be marked while its agent rolls out');
  assert.equal(pausedForRollout(await ctl.metrics()), 1);
  const line = ctl.lines().find((l) => l['msg'] === 'Marking paused: the agent DaemonSet is rolling out');
  assert.deepEqual({ daemonSet: line?.['daemonSet'], why: line?.['why'] }, { daemonSet: `${NS}/nodepulse`, why: 'generation 2 not yet observed (observed 1)' });

  // 2. Every pod is updated, the last not yet available: still the rollout's tail.
  await writeStatus(server, { observedGeneration: 2, updated: FLEET, available: FLEET - 1 });
  await real.sleep(4 * MONITOR_MS);
  assert.equal(nodeCondition(server, 'node-1')?.reason, 'RelistHealthy', 'not marked during the rollout\'s tail');

  // 3. The rollout is done: marking resumes, and the silent node is marked.
  await writeStatus(server, { observedGeneration: 2, updated: FLEET, available: FLEET });
  await waitFor('node-1 marked once the rollout is done', () => nodeCondition(server, 'node-1')?.reason === 'AgentLeaseStale', 2 * MONITOR_MS + SLACK_MS);
  assert.ok(ctl.logText().includes('Marking resumed: the agent DaemonSet rollout is done'), ctl.logText());
  assert.equal(pausedForRollout(await ctl.metrics()), 0);

  // 4. After the rollout settled, an unavailable agent pod is an agent failing on its own: marked.
  await agent2.kill();
  await writeStatus(server, { observedGeneration: 2, updated: FLEET, available: FLEET - 1 });
  await waitFor('node-2 marked', () => nodeCondition(server, 'node-2')?.reason === 'AgentLeaseStale', GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  assert.equal(ctl.logText().split('Marking paused: the agent DaemonSet is rolling out').length - 1, 1, 'paused once, for the one rollout');
  assert.equal(await ctl.stop('SIGTERM'), 0, ctl.logText());
});
