// `nodepulse controller` end to end (acceptance 3), with test-shortened timings: two controller
// replicas as real processes, the API stand-in, and three SIMULATED agents (loops in this test
// that renew their node's lease on the stand-in, and write the agent's own condition).
//
// Real time passes here, because real processes run; every wait is a bounded poll.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { electionHolder, nodeCondition, SimAgent, startControllerProcess, waitFor, type ControllerProcess, type ControllerTimings } from './controller-harness.ts';
import { realisticNode } from './fleet-fixtures.ts';

const real = new SystemClock();

const GRACE_MS = 2_000;
const MONITOR_MS = 250;
const LEASE_MS = 3_000;
const RETRY_MS = 500;
/** Process start, HTTP round trips and log lines on a loaded machine. */
const SLACK_MS = 1_000;
const ELECTION_NS = 'nodepulse-system';

type Json = Record<string, unknown>;

const TIMINGS: ControllerTimings = { graceMs: GRACE_MS, monitorPeriodMs: MONITOR_MS, leaseDurationMs: LEASE_MS, renewDeadlineMs: 2_000, retryPeriodMs: RETRY_MS };

function condition(server: ApiServerHandle, node: string): { status: string; reason: string; message: string } | undefined {
  return nodeCondition(server, node);
}

function holder(server: ApiServerHandle): string | undefined {
  return electionHolder(server, ELECTION_NS);
}

function startController(t: TestContext, kubeconfig: string, identity: string): Promise<ControllerProcess> {
  return startControllerProcess(t, { kubeconfig, identity, namespace: ELECTION_NS, timings: TIMINGS, args: ['--max-writes-per-second', '20'] });
}

function statusPatches(server: ApiServerHandle, node: string): Array<{ user: string | undefined; seq: number; status: string }> {
  return server.requests
    .filter({ method: 'PATCH', path: `/api/v1/nodes/${node}/status` })
    .filter((r) => r.status === 200)
    .map((r) => ({
      user: r.user,
      seq: r.seq,
      status: String((r.parsed as { status: { conditions: Array<{ status: string }> } }).status.conditions[0]?.status),
    }));
}

test('controller e2e: marks a silent agent\'s node, clears it when the lease moves, respects the agent\'s own True, and hands over cleanly', { timeout: 120_000 }, async (t) => {
  const server = await startApiServer({ clock: real, tokens: { 'token-a': 'controller-a', 'token-b': 'controller-b' } });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-ctl-'));
  const controllers: ControllerProcess[] = [];
  const agents: SimAgent[] = [];
  t.after(async () => {
    if (process.env['NODEPULSE_E2E_LOGS'] !== undefined) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env['NODEPULSE_E2E_LOGS'], controllers.map((c) => `== ${c.identity}\n${c.logText()}`).join('\n'));
    }
    for (const a of agents) await a.kill();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const now = real.wallMicros();
  for (const [i, name] of ['node-1', 'node-2', 'node-3'].entries()) {
    server.store.put(realisticNode(name, i, { createdMicros: now - 86_400_000_000, condition: { status: 'False', reason: 'RelistHealthy' } }) as Parameters<ApiServerHandle['store']['put']>[0]);
    const agent = new SimAgent(server, name);
    agent.start();
    agents.push(agent);
  }
  const [agent1, agent2, agent3] = agents;
  if (agent1 === undefined || agent2 === undefined || agent3 === undefined) throw new Error('precondition: three agents');
  const kubeA = join(dir, 'a.kubeconfig');
  const kubeB = join(dir, 'b.kubeconfig');
  writeKubeconfig(kubeA, { server: server.url, token: 'token-a' });
  writeKubeconfig(kubeB, { server: server.url, token: 'token-b' });
  const ctlA = await startController(t, kubeA, 'ctl-a');
  controllers.push(ctlA);
  await waitFor('ctl-a leads', () => holder(server) === 'ctl-a', 15_000);
  const ctlB = await startController(t, kubeB, 'ctl-b');
  controllers.push(ctlB);
  // The new leader first sees every lease now; a silent one can be called stale only after grace.
  await real.sleep(GRACE_MS + MONITOR_MS);
  assert.equal(condition(server, 'node-1')?.status, 'False', 'precondition: node-1 is healthy while its agent runs');

  // 1. Kill agent 1: Unknown/AgentLeaseStale within grace + 2 monitor periods.
  await agent1.kill();
  const marked = await waitFor('node-1 marked', () => condition(server, 'node-1')?.reason === 'AgentLeaseStale', GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  const c1 = condition(server, 'node-1');
  assert.equal(c1?.status, 'Unknown');
  assert.match(c1?.message ?? '', /^agent lease nodepulse\/node-1 last moved \d+(\.\d+)?s ago; renewTime \S+ is \d+(\.\d+)?s old/);
  t.diagnostic(`node-1 marked ${marked} ms after its agent stopped (grace ${GRACE_MS} ms + 2 × ${MONITOR_MS} ms)`);

  // 2. A hung runtime: the agent writes its own True/RelistStale and withholds the lease.
  const node3 = server.store.get('nodes', undefined, 'node-3') as Json & { status: { conditions: Json[] } };
  node3.status.conditions = node3.status.conditions.map((c) =>
    c['type'] === 'RuntimeRelistUnhealthy' ? { ...c, status: 'True', reason: 'RelistStale', message: 'relist was last seen active 3m5s ago; threshold is 3m0s' } : c);
  server.store.put(node3 as Parameters<ApiServerHandle['store']['put']>[0]);
  await agent3.kill();

  // 3. Restart agent 1: False/RelistHealthy.
  agent1.start();
  const cleared = await waitFor('node-1 cleared', () => condition(server, 'node-1')?.reason === 'RelistHealthy', 2 * MONITOR_MS + SLACK_MS);
  assert.equal(condition(server, 'node-1')?.status, 'False');
  t.diagnostic(`node-1 cleared ${cleared} ms after its agent restarted`);
  await real.sleep(GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  assert.deepEqual(
    { status: condition(server, 'node-3')?.status, reason: condition(server, 'node-3')?.reason },
    { status: 'True', reason: 'RelistStale' },
    "the agent's own True is never overwritten",
  );

  // 4. Kill the leading controller: ctl-b takes over within lease duration + 2 retry periods.
  const killedAt = real.monotonicMs();
  await ctlA.kill();
  const handover = await waitFor('ctl-b leads', () => holder(server) === 'ctl-b', LEASE_MS + 2 * RETRY_MS * 1.2 + SLACK_MS);
  t.diagnostic(`handover ${handover} ms after SIGKILL (lease ${LEASE_MS} ms + 2 × ${RETRY_MS} ms retry)`);
  assert.ok(real.monotonicMs() - killedAt >= 0);
  // 5. Kill agent 2 while node-3's agent is still silent: 2 of 3 judged nodes stale is more than
  // half, so the new leader pauses marking and says so.
  await real.sleep(GRACE_MS);
  await agent2.kill();
  await waitFor('ctl-b says it paused', () => ctlB.logText().includes('Marking paused: more than half the judged fleet is stale at once'), GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  await real.sleep(2 * MONITOR_MS);
  assert.equal(condition(server, 'node-2')?.reason, 'RelistHealthy', 'not marked while paused');
  // node-3's runtime recovers: its agent writes False/RelistHealthy and renews again. Marking
  // resumes, and node-2 is marked by the new leader.
  const recovered = server.store.get('nodes', undefined, 'node-3') as Json & { status: { conditions: Json[] } };
  recovered.status.conditions = recovered.status.conditions.map((c) =>
    c['type'] === 'RuntimeRelistUnhealthy' ? { ...c, status: 'False', reason: 'RelistHealthy', message: '' } : c);
  server.store.put(recovered as Parameters<ApiServerHandle['store']['put']>[0]);
  agent3.start();
  await waitFor('node-2 marked by ctl-b', () => condition(server, 'node-2')?.reason === 'AgentLeaseStale', 2 * MONITOR_MS + SLACK_MS);
  await real.sleep(4 * MONITOR_MS);

  // No double writes: one status PATCH per change of state, each from the leader of its time.
  assert.deepEqual(statusPatches(server, 'node-1').map((p) => [p.user, p.status]), [['controller-a', 'Unknown'], ['controller-a', 'False']]);
  assert.deepEqual(statusPatches(server, 'node-2').map((p) => [p.user, p.status]), [['controller-b', 'Unknown']]);
  assert.deepEqual(statusPatches(server, 'node-3'), []);
  const events = server.store.list('events.events.k8s.io', 'default') as Array<{ reason: string; regarding: { name: string } }>;
  assert.deepEqual(
    events.map((e) => `${e.regarding.name}:${e.reason}`).sort(),
    ['node-1:AgentLeaseStale', 'node-1:RelistHealthy', 'node-2:AgentLeaseStale'],
  );
  assert.ok(!ctlA.logText().includes('"level":"error"'), ctlA.logText());

  // A clean stop releases the lease.
  assert.equal(await ctlB.stop('SIGTERM'), 0, ctlB.logText());
  assert.equal(holder(server), '', 'released on a clean stop');
});
