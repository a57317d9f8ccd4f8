// `nodepulse controller` end to end with REAL agents (issue 8, acceptance 3): two controller
// replicas and three built agents as real processes, each agent on its own simulated CRI
// runtime (three nodes), all against one API stand-in, with test-shortened timings.
//
// | step                                   | what must happen                                         |
// |----------------------------------------|----------------------------------------------------------|
// | SIGKILL agent 1                        | node-1 Unknown/AgentLeaseStale within grace + 2 monitor  |
// |                                        | periods, and not before the lease stood still for grace  |
// | a new agent process for node-1         | node-1 False/RelistHealthy again, and no second mark when |
// |                                        | the controller sees the agent's Node write before its     |
// |                                        | lease renewal (two unordered watches)                     |
// | node-3's runtime hangs                 | its agent writes True/RelistStale; both leaders judge it |
// |                                        | Stale and never write node-3's status                    |
// | SIGKILL the leading controller         | the standby holds the election lease within lease        |
// |                                        | duration + 2 retry periods                               |
// | node-3 recovers, SIGKILL agent 2       | the new leader marks node-2, and clears it on restart    |
// | the whole run                          | every controller write lies inside its writer's term,    |
// |                                        | terms never overlap (the stand-in's request record)      |
//
// Why the timings: the agent's last renewal before a hang is at most one renew interval (1 s)
// before its runtime turns Unhealthy, and its condition loop writes True within one period (1 s)
// after that; a grace of 4 s keeps the controller's Stale verdict about 2 s behind the agent's
// own True, so "the controller does not overwrite it" is a property, not a race the test won.
//
// Real time passes here, because real processes run; every wait is a bounded poll, and each
// measured time is printed as a diagnostic. NODEPULSE_E2E_LOGS=FILE writes every process's log
// and the stand-in's request record there after the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { startSimRuntime, type SimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { createNode, metricValue, startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import {
  controllerWrites, electionHolder, electionWrites, nodeCondition, observedTerms, startControllerProcess, termViolations, waitFor,
  type ControllerProcess, type ControllerTimings, type ControllerWrite,
} from './controller-harness.ts';

const real = new SystemClock();

const TIMINGS: ControllerTimings = { graceMs: 4_000, monitorPeriodMs: 250, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
const { graceMs: GRACE_MS, monitorPeriodMs: MONITOR_MS, leaseDurationMs: LEASE_MS, retryPeriodMs: RETRY_MS } = TIMINGS;
/** The elector adds up to 20 % jitter to every retry (RETRY_JITTER in src/election/leader-elector.ts). */
const RETRY_JITTER = 0.2;
const THRESHOLD_MS = 5_000;
/** The agent's renew interval and its condition loop's period (the relist period, which the agent gives its condition loop). */
const RENEW_MS = 1_000;
const CONDITION_PERIOD_MS = 1_000;
const AGENT_ARGS = [
  `--relist-threshold=${THRESHOLD_MS / 1000}s`,
  '--relist-deadline=2s',
  '--lease-duration=4s',
  `--renew-interval=${RENEW_MS / 1000}s`,
  '--idle-window=10s',
  '--stuck-window=8s',
  '--api-timeout=2s',
  '--status-deadline=2s',
  '--lease-namespace=nodepulse',
];
/** Process start, loopback round trips and timer lateness on a loaded 2-core machine. */
const SLACK_MS = 1_000;
/** A fresh agent writes its first condition within a relist and a condition tick; 10 s covers a loaded machine. */
const AGENT_UP_BOUND_MS = 10_000;
/** After a hang is cleared: the hung relist is answered, the next relist and the lease recheck follow. */
const RECOVERY_BOUND_MS = 10_000;
const ELECTION_NS = 'nodepulse-system';
const NODES = ['node-1', 'node-2', 'node-3'] as const;
type NodeName = (typeof NODES)[number];
const CONTROLLERS = ['ctl-a', 'ctl-b'] as const;

function statusPatches(api: ApiServerHandle, node: string, fromSeq = 0): Array<{ user: string | undefined; status: number | undefined; condition: string; atMs: number }> {
  return api.requests
    .filter({ method: 'PATCH', path: `/api/v1/nodes/${node}/status` })
    .filter((r) => r.seq > fromSeq)
    .map((r) => {
      const c = (r.parsed as { status?: { conditions?: Array<{ type?: string; status?: string; reason?: string }> } } | undefined)?.status?.conditions?.find(
        (x) => x.type === 'RuntimeRelistUnhealthy',
      );
      return { user: r.user, status: r.status, condition: `${c?.status ?? '-'}/${c?.reason ?? '-'}`, atMs: r.atMs };
    });
}

/** Successful writes of the node's agent lease (create or renew), after record seq `fromSeq`. */
function leaseRenewals(api: ApiServerHandle, node: string, fromSeq = 0): number {
  return api.requests
    .all()
    .filter((r) => r.seq > fromSeq && r.user === `agent-${node}` && r.status !== undefined && r.status >= 200 && r.status < 300)
    .filter((r) => r.path === `/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases/${node}` || (r.method === 'POST' && r.path === '/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases'))
    .length;
}

async function verdicts(ctl: ControllerProcess): Promise<{ leading: number | undefined; fresh: number | undefined; stale: number | undefined; missing: number | undefined }> {
  const text = await ctl.metrics();
  return {
    leading: metricValue(text, 'nodepulse_controller_leading'),
    fresh: metricValue(text, 'nodepulse_controller_nodes', { verdict: 'fresh' }),
    stale: metricValue(text, 'nodepulse_controller_nodes', { verdict: 'stale' }),
    missing: metricValue(text, 'nodepulse_controller_nodes', { verdict: 'missing' }),
  };
}

/** Polls the controller's /metrics until `ok`; resolves with the ms it took. */
async function waitForMetrics(what: string, ctl: ControllerProcess, ok: (v: Awaited<ReturnType<typeof verdicts>>) => boolean, withinMs: number): Promise<number> {
  let last: Awaited<ReturnType<typeof verdicts>> | undefined;
  const start = real.monotonicMs();
  while (real.monotonicMs() - start <= withinMs) {
    last = await verdicts(ctl);
    if (ok(last)) return real.monotonicMs() - start;
    await real.sleep(50);
  }
  return assert.fail(`${what}: not within ${withinMs} ms (last: ${JSON.stringify(last)})`);
}

test('controller e2e with real agents: marks a killed agent\'s node and clears it on restart, keeps a hung runtime\'s own True, hands over without double writes', { timeout: 120_000 }, async (t) => {
  const began = real.monotonicMs();
  const dir = mkdtempSync(join(tmpdir(), 'np-ctl-agents-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const api = await startApiServer({ clock: real });
  t.after(() => api.close());
  // NODEPULSE_E2E_LOGS=FILE keeps what a failure needs: every process's log and the record.
  const everyController: ControllerProcess[] = [];
  const everyAgent: Array<{ node: string; process: AgentProcess }> = [];
  t.after(() => {
    const path = process.env['NODEPULSE_E2E_LOGS'];
    if (path === undefined) return;
    const record = api.requests.all().filter((r) => r.method !== 'GET' || r.path.includes('/nodes')).map((r) => `${r.seq} ${r.atMs.toFixed(0)} ${r.user} ${r.method} ${r.path} ${r.status} ${r.method === 'GET' ? '' : r.body.slice(0, 400)}`);
    const agentLogs = everyAgent.map((a) => `== agent ${a.node}\n${a.process.keptLogs().map((k) => `${k.atMs.toFixed(0)} ${JSON.stringify(k.line)}`).join('\n')}`);
    writeFileSync(path, [...everyController.map((c) => `== ${c.identity}\n${c.logText()}`), ...agentLogs, '== record', ...record].join('\n'));
  });

  // The world: three Nodes registered as a kubelet would, then one token per writer, so the
  // request record names every writer.
  for (const node of NODES) await createNode(api.url, node);
  const tokens: Record<string, string> = {};
  const kubeconfigs: Record<string, string> = {};
  for (const user of [...CONTROLLERS, ...NODES.map((n) => `agent-${n}`)]) {
    tokens[`token-${user}`] = user;
    kubeconfigs[user] = join(dir, `${user}.kubeconfig`);
    writeKubeconfig(kubeconfigs[user], { server: api.url, token: `token-${user}` });
  }
  api.auth.setTokens(tokens);

  const sims = {} as Record<NodeName, SimRuntime>;
  for (const node of NODES) {
    const sim = await startSimRuntime({ socketPath: join(dir, `${node}.sock`), pods: 3, containersPerPod: 2, clock: real });
    t.after(async () => {
      sim.clearFaults();
      await sim.close();
    });
    sims[node] = sim;
  }
  const startAgent = async (node: NodeName): Promise<AgentProcess> => {
    const agent = await startAgentProcess(t, { args: [`--node-name=${node}`, `--cri-endpoint=${sims[node].endpoint}`, `--kubeconfig=${kubeconfigs[`agent-${node}`] ?? ''}`, ...AGENT_ARGS] });
    everyAgent.push({ node, process: agent });
    return agent;
  };
  const agents = {} as Record<NodeName, AgentProcess>;
  const started = await Promise.all(NODES.map((n) => startAgent(n)));
  NODES.forEach((n, i) => {
    const a = started[i];
    if (a === undefined) throw new Error('precondition: three agents');
    agents[n] = a;
  });
  for (const node of NODES) {
    await waitFor(`precondition: the agent of ${node} writes False/RelistHealthy`, () => nodeCondition(api, node)?.reason === 'RelistHealthy', AGENT_UP_BOUND_MS);
    await waitFor(`precondition: the agent of ${node} renews its lease`, () => leaseRenewals(api, node) >= 2, AGENT_UP_BOUND_MS);
  }

  const controller = (identity: (typeof CONTROLLERS)[number]): Promise<ControllerProcess> =>
    startControllerProcess(t, { kubeconfig: kubeconfigs[identity] ?? '', identity, namespace: ELECTION_NS, timings: TIMINGS, args: ['--max-writes-per-second', '20'] });
  const ctlA = await controller('ctl-a');
  everyController.push(ctlA);
  await waitFor('ctl-a leads', () => electionHolder(api, ELECTION_NS) === 'ctl-a', 10_000);
  const ledSeq = api.requests.lastSeq();
  const ctlB = await controller('ctl-b');
  everyController.push(ctlB);
  // Nodes are judged once older than grace; the leader's first full pass after that sees all three Fresh.
  await waitForMetrics('precondition: ctl-a judges all three nodes Fresh', ctlA, (v) => v.leading === 1 && v.fresh === 3, GRACE_MS + 2_000 + SLACK_MS);
  assert.equal((await verdicts(ctlB)).leading, 0, 'precondition: ctl-b stands by');
  // Two renewals of each lease since ctl-a leads: at least one came after its informer listed, so
  // ctl-a has seen every lease move (a lease only ever seen once is no evidence of a live agent).
  for (const node of NODES) await waitFor(`precondition: ${node}'s lease moves while ctl-a leads`, () => leaseRenewals(api, node, ledSeq) >= 2, 3 * RENEW_MS + SLACK_MS);
  const setupMs = real.monotonicMs() - began;

  // 1. SIGKILL agent 1: Unknown/AgentLeaseStale within grace + 2 monitor periods.
  const killSeq = api.requests.lastSeq();
  await agents['node-1'].kill();
  const markedMs = await waitFor('node-1 marked Unknown/AgentLeaseStale', () => nodeCondition(api, 'node-1')?.reason === 'AgentLeaseStale', GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  const mark = nodeCondition(api, 'node-1');
  assert.equal(mark?.status, 'Unknown');
  assert.match(mark?.message ?? '', /^agent lease nodepulse\/node-1 last moved \d+(\.\d+)?s ago; renewTime \S+ is \d+(\.\d+)?s old/);
  const lastAgent1Lease = api.requests.filter({ path: '/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases/node-1' }).filter((r) => r.user === 'agent-node-1' && r.status === 200).at(-1);
  const markPatch = statusPatches(api, 'node-1', killSeq).find((p) => p.condition === 'Unknown/AgentLeaseStale');
  assert.ok(lastAgent1Lease !== undefined && markPatch !== undefined, 'precondition: the record holds the last renewal and the mark');
  assert.equal(markPatch.user, 'ctl-a', 'the leader marks');
  const stillMs = markPatch.atMs - lastAgent1Lease.atMs;
  // The controller saw the renewal after the stand-in did, and sent the mark before the stand-in got it.
  assert.ok(stillMs >= GRACE_MS, `marked only once the lease stood still for the grace period (${stillMs.toFixed(0)} ms ≥ ${GRACE_MS} ms)`);
  t.diagnostic(`node-1 marked ${markedMs.toFixed(0)} ms after SIGKILL of its agent; its lease had stood still ${stillMs.toFixed(0)} ms (bound: grace ${GRACE_MS} + 2 × ${MONITOR_MS} ms)`);

  // 2. A new agent process for node-1: False/RelistHealthy again. The agent repairs a leftover
  // Unknown itself at start, and the controller clears its mark when the lease moves: whichever
  // lands first writes it, and the other finds nothing to do (or a 409 on its resourceVersion).
  const restartSeq = api.requests.lastSeq();
  const restartAt = real.monotonicMs();
  agents['node-1'] = await startAgent('node-1');
  await waitFor('node-1 False/RelistHealthy after its agent restarted', () => nodeCondition(api, 'node-1')?.reason === 'RelistHealthy', AGENT_UP_BOUND_MS);
  const clearedMs = real.monotonicMs() - restartAt;
  assert.equal(nodeCondition(api, 'node-1')?.status, 'False');
  await waitFor('the new agent of node-1 renews its lease', () => leaseRenewals(api, 'node-1', restartSeq) >= 1, AGENT_UP_BOUND_MS);
  await real.sleep(4 * MONITOR_MS);
  const afterRestart = statusPatches(api, 'node-1', restartSeq).filter((p) => p.status === 200);
  // The agent writes its condition and renews its lease a millisecond apart, and the controller
  // sees them on two unordered watches: the Node first must not bring a second mark.
  assert.deepEqual(afterRestart.filter((p) => p.condition !== 'False/RelistHealthy'), [], 'no one marks node-1 again once its new agent has written');
  assert.equal(nodeCondition(api, 'node-1')?.reason, 'RelistHealthy');
  t.diagnostic(`node-1 False/RelistHealthy ${clearedMs.toFixed(0)} ms after the new agent process was spawned (written by ${afterRestart.map((p) => p.user).join(', ')})`);

  // 3. node-3's runtime hangs: its agent writes True/RelistStale and withholds its lease.
  const hangSeq = api.requests.lastSeq();
  sims['node-3'].addFault({ method: '*', hang: true });
  const ownTrueMs = await waitFor(
    'the agent of node-3 writes True/RelistStale',
    () => nodeCondition(api, 'node-3')?.status === 'True' && nodeCondition(api, 'node-3')?.reason === 'RelistStale',
    THRESHOLD_MS + CONDITION_PERIOD_MS + SLACK_MS,
  );
  const staleSeenMs = await waitForMetrics('ctl-a judges node-3 Stale', ctlA, (v) => v.stale === 1 && v.fresh === 2, GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  await real.sleep(4 * MONITOR_MS); // a few more passes with node-3 Stale and True
  assert.deepEqual(statusPatches(api, 'node-3', hangSeq).map((p) => p.user), ['agent-node-3'], "only the agent writes node-3's status: its own True");
  t.diagnostic(`node-3 True/RelistStale ${ownTrueMs.toFixed(0)} ms after its runtime hung; ctl-a judged it Stale ${staleSeenMs.toFixed(0)} ms later and wrote nothing`);

  // 4. SIGKILL the leader: ctl-b holds the lease within lease duration + 2 retry periods.
  const ctlAKilledAt = real.monotonicMs();
  await ctlA.kill();
  const handoverMs = await waitFor('ctl-b holds the election lease', () => electionHolder(api, ELECTION_NS) === 'ctl-b', LEASE_MS + 2 * RETRY_MS * (1 + RETRY_JITTER) + SLACK_MS);
  const eAtHandover = electionWrites(api, ELECTION_NS);
  const lastA = eAtHandover.filter((w) => w.holder === 'ctl-a').at(-1);
  const firstB = eAtHandover.find((w) => w.holder === 'ctl-b');
  assert.ok(lastA !== undefined && firstB !== undefined, 'precondition: the record holds both holders\' writes');
  // ctl-b times expiry from when it saw ctl-a's last renewal, which was after the stand-in got it.
  const expiredMs = firstB.atMs - lastA.atMs;
  assert.ok(expiredMs >= LEASE_MS, `ctl-b took the lease only once it had stood still a lease duration (${expiredMs.toFixed(0)} ms ≥ ${LEASE_MS} ms)`);
  t.diagnostic(`handover ${handoverMs.toFixed(0)} ms after SIGKILL of the leader, ${expiredMs.toFixed(0)} ms after its last renewal (bound: lease ${LEASE_MS} + 2 × ${RETRY_MS} ms retry, + ${RETRY_JITTER * 100} % jitter)`);
  // The new leader sees every lease first at its term's start: node-3 reads Stale a grace later.
  const bStaleMs = await waitForMetrics('ctl-b judges node-3 Stale', ctlB, (v) => v.leading === 1 && v.stale === 1 && v.fresh === 2, GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  await real.sleep(4 * MONITOR_MS);
  assert.deepEqual(statusPatches(api, 'node-3', hangSeq).map((p) => p.user), ['agent-node-3'], 'the new leader does not overwrite the True either');
  assert.deepEqual(
    { status: nodeCondition(api, 'node-3')?.status, reason: nodeCondition(api, 'node-3')?.reason },
    { status: 'True', reason: 'RelistStale' },
    "the agent's own True/RelistStale stands",
  );
  t.diagnostic(`ctl-b judged node-3 Stale ${bStaleMs.toFixed(0)} ms after it took over, and wrote nothing`);

  // 5. node-3's runtime answers again; then SIGKILL agent 2: the new leader marks node-2, and
  // clears it when a new agent process renews. (Killed only once node-3 is Fresh again: two
  // silent nodes of three would pause marking, by design.)
  sims['node-3'].clearFaults();
  const recoveredMs = await waitFor('node-3 False/RelistHealthy', () => nodeCondition(api, 'node-3')?.reason === 'RelistHealthy', RECOVERY_BOUND_MS);
  await waitForMetrics('ctl-b judges all three Fresh', ctlB, (v) => v.fresh === 3, RECOVERY_BOUND_MS);
  t.diagnostic(`node-3 recovered ${recoveredMs.toFixed(0)} ms after its runtime answered again`);
  await agents['node-2'].kill();
  const marked2Ms = await waitFor('node-2 marked Unknown/AgentLeaseStale', () => nodeCondition(api, 'node-2')?.reason === 'AgentLeaseStale', GRACE_MS + 2 * MONITOR_MS + SLACK_MS);
  assert.equal(nodeCondition(api, 'node-2')?.status, 'Unknown');
  agents['node-2'] = await startAgent('node-2');
  const cleared2Ms = await waitFor('node-2 False/RelistHealthy after its agent restarted', () => nodeCondition(api, 'node-2')?.reason === 'RelistHealthy', AGENT_UP_BOUND_MS);
  t.diagnostic(`node-2 marked ${marked2Ms.toFixed(0)} ms after SIGKILL of its agent, by the new leader; cleared ${cleared2Ms.toFixed(0)} ms after its restart`);
  await real.sleep(4 * MONITOR_MS);

  // No double writes. Terms come from the stand-in's record of the election lease's writes.
  const eWrites = electionWrites(api, ELECTION_NS);
  for (const w of eWrites) if (w.holder !== '') assert.equal(w.user, w.holder, 'precondition: each replica writes the election lease as itself');
  const terms = observedTerms(eWrites, TIMINGS.renewDeadlineMs);
  assert.deepEqual(terms.map((term) => term.identity), ['ctl-a', 'ctl-b'], 'one term each: ctl-a, then ctl-b');
  const writes = controllerWrites(api, CONTROLLERS);
  assert.ok(writes.length >= 4, `precondition: the detector sees the two marks and their Events (${writes.length} writes)`);
  assert.deepEqual(termViolations(terms, writes), [], 'every controller write lies inside its writer\'s term, and terms do not overlap');
  assert.ok(writes.every((w) => w.user !== 'ctl-a' || w.atMs < ctlAKilledAt), 'nothing from ctl-a after its SIGKILL');
  // One status write per change of state, from the leader of its time; node-3 never.
  const ours = (node: string): string[] => statusPatches(api, node).filter((p) => p.status === 200 && CONTROLLERS.some((c) => c === p.user)).map((p) => `${p.user}:${p.condition}`);
  const expectOneMark = (node: string, leader: string): void => {
    const got = ours(node);
    assert.ok(
      got.length >= 1 && got[0] === `${leader}:Unknown/AgentLeaseStale` && got.slice(1).every((g) => g === `${leader}:False/RelistHealthy`) && got.length <= 2,
      `${node}: one mark by ${leader}, and at most one clear by ${leader}: ${JSON.stringify(got)}`,
    );
  };
  expectOneMark('node-1', 'ctl-a');
  expectOneMark('node-2', 'ctl-b');
  assert.deepEqual(ours('node-3'), [], 'the controller never wrote node-3');
  // Every controller Event names the replica that sent it, and goes with one of its writes.
  const events = api.requests
    .filter({ method: 'POST', path: '/apis/events.k8s.io/v1/namespaces/default/events' })
    .filter((r) => CONTROLLERS.some((c) => c === r.user))
    .map((r) => ({ user: r.user, event: r.parsed as { reportingInstance?: string; reason?: string; regarding?: { name?: string } } }));
  for (const e of events) assert.equal(e.event.reportingInstance, e.user, 'an Event carries its sender as reportingInstance');
  assert.deepEqual(
    events.filter((e) => e.event.reason === 'AgentLeaseStale').map((e) => `${e.event.regarding?.name}:${e.user}`),
    ['node-1:ctl-a', 'node-2:ctl-b'],
  );
  for (const ctl of [ctlA, ctlB]) {
    const errors = ctl.lines().filter((l) => l['level'] === 'error' || l['level'] === 'fatal');
    assert.deepEqual(errors, [], `${ctl.identity} logged no error`);
  }
  const conflicts = writes.filter((w) => w.status === 409).length;
  t.diagnostic(
    `controller writes: ${writes.length} (${conflicts} refused with 409 on their resourceVersion); terms: ${terms.map((term) => `${term.identity} ${(term.lastWriteMs - term.startMs).toFixed(0)} ms`).join(', ')}; ` +
      `setup ${setupMs.toFixed(0)} ms, whole run ${(real.monotonicMs() - began).toFixed(0)} ms`,
  );
});

test('the overlap detector flags terms that overlap and a write outside its writer\'s term', () => {
  const election = [
    { holder: 'a', atMs: 0 }, { holder: 'a', atMs: 500 }, { holder: 'a', atMs: 1_000 },
    { holder: 'b', atMs: 4_000 }, { holder: 'b', atMs: 4_500 },
    { holder: '', atMs: 5_000 },
    { holder: 'a', atMs: 6_000 },
  ];
  const terms = observedTerms(election, 2_000);
  assert.deepEqual(terms.map((x) => [x.identity, x.startMs, x.endMs]), [['a', 0, 3_000], ['b', 4_000, 6_500], ['a', 6_000, 8_000]]);
  const write = (user: string, atMs: number): ControllerWrite => ({ user, method: 'PATCH', path: '/api/v1/nodes/n/status', atMs, seq: 1, status: 200 });
  assert.deepEqual(termViolations(terms.slice(0, 2), [write('a', 2_999), write('b', 4_000), write('b', 6_500)]), [], 'writes inside their own terms');
  const problems = termViolations(terms, [write('a', 3_500), write('b', 500)]);
  assert.equal(problems.length, 3, problems.join('\n'));
  assert.match(problems[0] ?? '', /^term of a began at 6000 ms, before b's belief could end at 6500 ms$/);
  assert.match(problems[1] ?? '', /by a at 3500 ms .* outside every term of a$/);
  assert.match(problems[2] ?? '', /by b at 500 ms .* outside every term of b$/);
});
