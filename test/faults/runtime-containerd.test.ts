// Runtime faults on a real containerd (issue 6): the built agent, a real process, against a
// containerd of the test's own (test/fixtures/containerd.ts) and the API stand-in.
//
// | fault (real containerd)                         | the lease                          | failures{reason}  |
// |-------------------------------------------------|------------------------------------|-------------------|
// | no runtime when the agent starts (no socket at  | never written; the agent runs on,  | unavailable       |
// |   the given path: the agent cannot observe)     | not ready                          |                   |
// | …one arriving later                             | written within the recovery bound  |                   |
// | SIGSTOP for 1.5 s (shorter than the threshold)  | keeps renewing, never withheld     | none              |
// | SIGSTOP past the threshold, then SIGCONT        | stops at the threshold, comes back | deadline_exceeded |
// | killed, then restarted                          | stops at the threshold, comes back | unavailable       |
// | socket removed (containerd runs on)             | keeps renewing: the agent's        | none              |
// |                                                 | connection is already open         |                   |
// | …then killed with the socket gone, restarted    | stops at the threshold, comes back | unavailable       |
// |   (the socket recreated)                        |                                    |                   |
//
// One containerd and one agent go through every fault in turn (CI budget): the agent starts
// before containerd does, and each fault ends with the lease renewing again, the next one's
// precondition. Across all of them: the agent never exits, no lease write is stamped while the
// ledger reads not-Healthy (see renewalsWhileUnhealthy), and the first renewal after each fault
// comes within reconnect + period + RECHECK (+ process slack).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { busyboxImage } from '../fixtures/busybox-image.ts';
import { ContainerdFixture, requireContainerd } from '../fixtures/containerd.ts';
import {
  linesWith, metricValue, pollUntil, renewalsWhileUnhealthy, runFault, sampleStatus, startAgentProcess, startStandIn, stoppedEarlyByMs,
  type FaultRun,
} from '../support/agent-process.ts';
import {
  HOLD_PAST_THRESHOLD_MS, PROCESS_SLACK_MS, RENEW_INTERVAL_MS, RUNTIME_FAULT_TIMINGS, RUNTIME_RECOVERY_BOUND_MS, STOP_BOUND_MS, STOP_EARLY_BOUND_MS,
  THRESHOLD_MS,
} from './runtime-fault-timing.ts';

const NODE = 'fault-containerd';
/** A pause shorter than the deadline: every relist it holds is answered on SIGCONT. */
const SHORT_PAUSE_MS = 1_500;
/** How long the agent is watched with no runtime at all: past the threshold, so "never observed" is what it reads. */
const NO_RUNTIME_MS = THRESHOLD_MS + 1_000;
const PRECONDITION_BOUND_MS = 15_000;

test('runtime faults on a real containerd, one agent through each in turn', async (t) => {
  if (!requireContainerd(t)) return;
  const world = await startStandIn(t, { nodeName: NODE });
  // Prepared but not started: the agent comes up before the runtime.
  const cd = new ContainerdFixture(mkdtempSync(join(tmpdir(), 'np-fault-cd-')), {});
  t.after(() => cd.close());
  cd.prepare();
  const agent = await startAgentProcess(t, {
    args: [
      `--node-name=${NODE}`, `--cri-endpoint=${cd.endpoint}`, `--kubeconfig=${world.kubeconfig}`,
      ...RUNTIME_FAULT_TIMINGS,
    ],
  });
  const sampler = sampleStatus(t, agent);
  const invariants = (): void => {
    assert.ok(agent.running, `the agent never exits; stderr: ${agent.stderrTail()}`);
    assert.deepEqual(renewalsWhileUnhealthy(world.leaseWrites(), sampler.samples(), THRESHOLD_MS), [], 'no renewal while the runtime is not Healthy');
  };
  const steady = (): Promise<unknown> =>
    pollUntil('precondition: runtime Healthy and lease renewing', async () => {
      const s = await agent.status();
      return s.runtime.state === 'Healthy' && s.lease.renewing;
    }, { timeoutMs: PRECONDITION_BOUND_MS });
  const failures = async (reason: string): Promise<number> => metricValue(await agent.metrics(), 'nodepulse_relist_failures_total', { reason }) ?? 0;
  const report = (t: { diagnostic(m: string): void }, fault: string, run: FaultRun): void => {
    t.diagnostic(`${fault}: lease stopped ${run.stoppedAfterMs === undefined ? 'never' : `${Math.round(run.stoppedAfterMs)} ms`} after the fault; first renewal ${Math.round(run.renewedAfterMs)} ms after its end`);
  };
  const assertAgedOut = (run: FaultRun, reason: string, before: number): void => {
    const { status, metrics } = run.during;
    assert.equal(status.runtime.state, 'Unhealthy', `Unhealthy once the threshold passed: ${status.runtime.message}`);
    assert.equal(status.runtime.lastFault?.code, reason, `/status names the fault: ${JSON.stringify(status.runtime.lastFault)}`);
    assert.equal(status.lease.renewing, false);
    assert.equal(metricValue(metrics, 'nodepulse_runtime_healthy'), 0);
    assert.equal(metricValue(metrics, 'nodepulse_lease_renewing'), 0);
    assert.equal(run.during.readyz.status, 200, 'a sick runtime never fails readiness');
    const after = metricValue(metrics, 'nodepulse_relist_failures_total', { reason }) ?? 0;
    assert.ok(after > before, `nodepulse_relist_failures_total{reason="${reason}"} grows (${before} → ${after})`);
    const judged = linesWith(agent, 'Runtime judgement changed', run.logMarkAtInject);
    assert.ok(judged.some((l) => l['state'] === 'Unhealthy') && judged.some((l) => l['state'] === 'Healthy'), `logged Unhealthy, then Healthy: ${JSON.stringify(judged)}`);
    assert.ok(linesWith(agent, 'Lease renewal withheld', run.logMarkAtInject).length >= 1, 'logged the withhold');
    assert.ok(run.stoppedAfterMs !== undefined, 'the lease stopped during the fault');
    assert.ok(run.stoppedAfterMs <= STOP_BOUND_MS, `the lease stops within ${STOP_BOUND_MS} ms of the fault (after ${run.stoppedAfterMs} ms)`);
    const early = stoppedEarlyByMs(run, THRESHOLD_MS);
    assert.ok(early !== undefined && early <= STOP_EARLY_BOUND_MS, `the lease renews up to the threshold: one failed relist is not a dead runtime (stopped ${early} ms early)`);
    assert.ok(run.renewedAfterMs <= RUNTIME_RECOVERY_BOUND_MS, `first renewal within ${RUNTIME_RECOVERY_BOUND_MS} ms of the fault's end (took ${Math.round(run.renewedAfterMs)} ms)`);
  };

  await t.test('no runtime when the agent starts: no lease, the agent runs on; one arriving later gets the lease renewed', async (t) => {
    await pollUntil('the agent has looked for the runtime past the threshold', async () => (await failures('unavailable')) > 0, { timeoutMs: PRECONDITION_BOUND_MS });
    const run = await runFault({
      agent,
      world,
      inject: () => undefined,
      end: () => cd.start(),
      holdMs: NO_RUNTIME_MS,
      recoveryBoundMs: RUNTIME_RECOVERY_BOUND_MS,
    });
    t.diagnostic(`no runtime at start: first renewal ${Math.round(run.renewedAfterMs)} ms after containerd answered`);
    const { status, metrics } = run.during;
    // The given path has never held a socket: that is the agent's setting, not a runtime fault.
    assert.equal(status.runtime.state, 'CannotObserve', `nothing to observe: ${status.runtime.message}`);
    assert.equal(status.runtime.why, 'no-socket');
    assert.equal(status.runtime.lastFault?.code, 'unavailable');
    assert.equal(status.lease.renewing, false);
    assert.equal(status.lease.lastRenewTime, null);
    assert.equal(metricValue(metrics, 'nodepulse_runtime_healthy'), undefined, 'no runtime verdict: the runtime is not blamed');
    assert.equal(metricValue(metrics, 'nodepulse_runtime_observable'), 0);
    assert.equal(run.during.readyz.status, 503, 'not ready while it cannot observe');
    assert.equal(run.during.livez.status, 200);
    assert.equal(metricValue(metrics, 'nodepulse_lease_renewing'), 0);
    assert.equal(world.leaseWrites().filter((w) => w.atMs < run.endedAtMs).length, 0, 'no lease was written before the runtime answered');
    assert.ok(run.renewedAfterMs <= RUNTIME_RECOVERY_BOUND_MS, `first renewal within ${RUNTIME_RECOVERY_BOUND_MS} ms of containerd answering (took ${Math.round(run.renewedAfterMs)} ms)`);
    invariants();
    // A real pod, so the faults below relist something.
    await cd.importImage(busyboxImage());
    const pod = await cd.cri.runPod('web', { namespace: 'faults', uid: 'uid-web' });
    await cd.cri.runContainer(pod, 'app');
    await pollUntil('the relist sees the pod', async () => (await agent.status()).counts.pods === 1, { timeoutMs: PRECONDITION_BOUND_MS });
  });

  await t.test('containerd stopped (SIGSTOP) for less than the threshold: the lease keeps renewing', async (t) => {
    await steady();
    const withheldBefore = metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0;
    const run = await runFault({ agent, world, inject: () => cd.pause(), end: () => cd.resume(), holdMs: SHORT_PAUSE_MS, recoveryBoundMs: RUNTIME_RECOVERY_BOUND_MS });
    report(t, 'SIGSTOP 1.5 s', run);
    assert.equal(run.stoppedAfterMs, undefined, 'the lease never stopped');
    for (const s of sampler.between(run.injectedAtMs)) assert.equal(s.status.runtime.state, 'Healthy', 'Healthy at every read');
    const withheld = (metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0) - withheldBefore;
    assert.equal(withheld, 0, 'no check withheld the lease');
    assert.ok(run.renewedAfterMs <= RENEW_INTERVAL_MS + PROCESS_SLACK_MS, `renewing on (${Math.round(run.renewedAfterMs)} ms after SIGCONT)`);
    invariants();
  });

  await t.test('containerd stopped (SIGSTOP) past the threshold: the lease stops, and renews after SIGCONT', async (t) => {
    await steady();
    const before = await failures('deadline_exceeded');
    const run = await runFault({ agent, world, inject: () => cd.pause(), end: () => cd.resume(), holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS, recoveryBoundMs: RUNTIME_RECOVERY_BOUND_MS });
    report(t, 'SIGSTOP past the threshold', run);
    assertAgedOut(run, 'deadline_exceeded', before);
    invariants();
  });

  await t.test('containerd killed, then restarted: the lease stops, and renews once it answers', async (t) => {
    await steady();
    const before = await failures('unavailable');
    const run = await runFault({ agent, world, inject: () => cd.kill(), end: () => cd.start(), holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS, recoveryBoundMs: RUNTIME_RECOVERY_BOUND_MS });
    report(t, 'killed, then restarted', run);
    assertAgedOut(run, 'unavailable', before);
    invariants();
  });

  await t.test('the socket removed: the open connection goes on; killed with it gone and restarted: the lease stops and comes back', async (t) => {
    await steady();
    const removed = await runFault({ agent, world, inject: () => cd.removeSocket(), end: () => undefined, holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS, recoveryBoundMs: RUNTIME_RECOVERY_BOUND_MS });
    report(t, 'socket removed (containerd running)', removed);
    assert.equal(removed.stoppedAfterMs, undefined, 'the lease never stopped: the agent\'s connection was already open');
    assert.equal(removed.during.status.runtime.state, 'Healthy');
    const before = await failures('unavailable');
    const run = await runFault({ agent, world, inject: () => cd.kill(), end: () => cd.start(), holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS, recoveryBoundMs: RUNTIME_RECOVERY_BOUND_MS });
    report(t, 'socket gone and containerd killed, then restarted', run);
    assertAgedOut(run, 'unavailable', before);
    assert.match(run.during.status.runtime.lastFault?.message ?? '', /No such file|ENOENT|connect/i, 'the fault says the socket is missing');
    invariants();
  });
});
