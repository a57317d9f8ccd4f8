// `nodepulse controller` end to end (acceptance 3), with test-shortened timings: two controller
// replicas as real processes, the API stand-in, and three SIMULATED agents (loops in this test
// that renew their node's lease on the stand-in, and write the agent's own condition).
//
// Real time passes here, because real processes run; every wait is a bounded poll.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startApiServer, type ApiServerHandle } from '../../src/apiserver/api-server.ts';
import { writeKubeconfig } from '../../src/apiserver/kubeconfig.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { agentLease, realisticNode } from './fleet-fixtures.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');
const real = new SystemClock();

const GRACE_MS = 2_000;
const MONITOR_MS = 250;
const LEASE_MS = 3_000;
const RETRY_MS = 500;
/** Process start, HTTP round trips and log lines on a loaded machine. */
const SLACK_MS = 1_000;
const ELECTION_NS = 'nodepulse-system';

type Json = Record<string, unknown>;

function condition(server: ApiServerHandle, node: string): { status: string; reason: string; message: string } | undefined {
  const obj = server.store.get('nodes', undefined, node) as { status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } } | undefined;
  return obj?.status?.conditions?.find((c) => c.type === 'RuntimeRelistUnhealthy');
}

function holder(server: ApiServerHandle): string | undefined {
  const lease = server.store.get('leases', ELECTION_NS, 'nodepulse-controller') as { spec?: { holderIdentity?: string } } | undefined;
  return lease?.spec?.holderIdentity;
}

async function waitFor(what: string, ok: () => boolean, withinMs: number): Promise<number> {
  const start = real.monotonicMs();
  while (real.monotonicMs() - start <= withinMs) {
    if (ok()) return real.monotonicMs() - start;
    await real.sleep(25);
  }
  assert.fail(`${what}: not within ${withinMs} ms`);
}

/** A simulated agent: renews its node's lease every 300 ms while running. */
class SimAgent {
  readonly node: string;
  readonly #server: ApiServerHandle;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(server: ApiServerHandle, node: string) {
    this.#server = server;
    this.node = node;
  }

  start(): void {
    this.#running = true;
    this.#loop = (async () => {
      while (this.#running) {
        this.#server.store.put(agentLease(this.node, real.wallMicros()) as Json as Parameters<ApiServerHandle['store']['put']>[0]);
        await real.sleep(300);
      }
    })();
  }

  /** As SIGKILL: the lease simply stops moving. */
  async kill(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}

function startController(kubeconfig: string, identity: string, logs: string[]): ChildProcess {
  const child = spawn(
    NODE,
    [
      join(ROOT, 'src', 'cli', 'main.ts'),
      'controller',
      '--kubeconfig', kubeconfig,
      '--namespace', ELECTION_NS,
      '--identity', identity,
      '--grace', `${GRACE_MS}ms`,
      '--monitor-period', `${MONITOR_MS}ms`,
      '--leader-elect-lease-duration', `${LEASE_MS}ms`,
      '--leader-elect-renew-deadline', '2s',
      '--leader-elect-retry-period', `${RETRY_MS}ms`,
      '--http-address', '127.0.0.1:0',
      '--max-writes-per-second', '20',
      '--log-level', 'debug',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (d: Buffer) => logs.push(d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => logs.push(d.toString('utf8')));
  return child;
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
  const server = await startApiServer({ tokens: { 'token-a': 'controller-a', 'token-b': 'controller-b' } });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-ctl-'));
  const children: ChildProcess[] = [];
  const agents: SimAgent[] = [];
  const logs: Record<string, string[]> = { 'ctl-a': [], 'ctl-b': [] };
  t.after(async () => {
    if (process.env['NODEPULSE_E2E_LOGS'] !== undefined) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env['NODEPULSE_E2E_LOGS'], Object.entries(logs).map(([k, v]) => `== ${k}\n${v.join('')}`).join('\n'));
    }
    for (const a of agents) await a.kill();
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
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
  const ctlA = startController(kubeA, 'ctl-a', logs['ctl-a'] ?? []);
  children.push(ctlA);
  await waitFor('ctl-a leads', () => holder(server) === 'ctl-a', 15_000);
  const ctlB = startController(kubeB, 'ctl-b', logs['ctl-b'] ?? []);
  children.push(ctlB);
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
  ctlA.kill('SIGKILL');
  const handover = await waitFor('ctl-b leads', () => holder(server) === 'ctl-b', LEASE_MS + 2 * RETRY_MS * 1.2 + SLACK_MS);
  t.diagnostic(`handover ${handover} ms after SIGKILL (lease ${LEASE_MS} ms + 2 × ${RETRY_MS} ms retry)`);
  assert.ok(real.monotonicMs() - killedAt >= 0);
  // 5. Kill agent 2 while node-3's agent is still silent: 2 of 3 judged nodes stale is more than
  // half, so the new leader pauses marking and says so.
  await real.sleep(GRACE_MS);
  await agent2.kill();
  await waitFor('ctl-b says it paused', () => (logs['ctl-b'] ?? []).join('').includes('Marking paused: more than half the judged fleet is stale at once'), GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
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
  assert.ok(!(logs['ctl-a'] ?? []).join('').includes('"level":"error"'), (logs['ctl-a'] ?? []).join(''));

  // A clean stop releases the lease.
  ctlB.kill('SIGTERM');
  await waitFor('ctl-b exits', () => ctlB.exitCode !== null, 10_000);
  assert.equal(ctlB.exitCode, 0, (logs['ctl-b'] ?? []).join(''));
  assert.equal(holder(server), '', 'released on a clean stop');
});
