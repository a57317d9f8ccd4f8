// Runtime faults on the simulated runtime (issue 6): the built agent, a real process, against the
// simulated CRI runtime and the API stand-in, with test-shortened timings.
//
// | fault (sim)                                   | the lease                         | relist failures{reason}  |
// |-----------------------------------------------|-----------------------------------|--------------------------|
// | answers after 1 s (inside the deadline)       | keeps renewing, never withheld    | none                     |
// | answers after 3 s (past the 2 s deadline)     | stops once the threshold passes   | deadline_exceeded        |
// | UNIMPLEMENTED (the agent cannot observe)      | stops once the threshold passes   | unimplemented            |
// | a listing over 16 MiB, default limit (the     | stops once the threshold passes   | resource_exhausted       |
// |   agent cannot observe: its own limit)        |                                   |                          |
// | a connection accepted and never answered      | stops once the threshold passes   | deadline_exceeded        |
// | a listing over 16 MiB, --max-message-size 64Mi| renews                            | none                     |
//
// A fault the runtime is to blame for reads Unhealthy past the threshold; one of the agent's own
// (UNIMPLEMENTED, a listing over its receive limit) reads CannotObserve: never Unhealthy, no
// nodepulse_runtime_healthy sample, /readyz 503 while /livez stays 200.
//
// Across every fault: the agent never exits; no lease write is stamped while the agent's own
// ledger reads not-Healthy (renewalsWhileUnhealthy in test/support/agent-process.ts says why that
// check is sound); and the first renewal after the fault ends comes within the fault's own bound.
//
// One agent serves the first five faults in turn (CI budget): each fault ends with the lease
// renewing again, which is the next fault's precondition, asserted.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startSimRuntime, type SimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import {
  linesWith, metricValue, pollUntil, renewalsWhileUnhealthy, runFault, sampleStatus, startAgentProcess, startStandIn, stoppedEarlyByMs,
  type AgentProcess, type FaultRun, type StandIn, type StatusSampler,
} from '../support/agent-process.ts';
import {
  DEADLINE_MS, HOLD_PAST_THRESHOLD_MS, PROCESS_SLACK_MS, RENEW_INTERVAL_MS, RUNTIME_FAULT_TIMINGS, RUNTIME_RECOVERY_BOUND_MS, STOP_BOUND_MS,
  STOP_EARLY_BOUND_MS, THRESHOLD_MS,
} from './runtime-fault-timing.ts';

/**
 * A slow answer (3 s, past the deadline) still holds the relist in flight when the fault is
 * cleared: that relist ends at its deadline, so this fault's end is a deadline later.
 */
const SLOW_RECOVERY_BOUND_MS = DEADLINE_MS + RUNTIME_RECOVERY_BOUND_MS;
/** A fresh agent renews within a relist and a lease tick; 10 s covers a loaded machine. */
const FIRST_RENEWAL_BOUND_MS = 10_000;
/** gRPC's default receive limit, and a listing past it. */
const DEFAULT_LIMIT_BYTES = 16 * 1024 * 1024;
const OVERSIZE_BYTES = DEFAULT_LIMIT_BYTES + 1024 * 1024;


interface Rig {
  readonly world: StandIn;
  readonly sim: SimRuntime;
  readonly agent: AgentProcess;
  readonly sampler: StatusSampler;
}

async function startRig(t: TestContext, node: string, extraArgs: readonly string[] = []): Promise<Rig> {
  const world = await startStandIn(t, { nodeName: node });
  const sim = await startSimRuntime({ clock: world.clock, socketPath: join(world.dir, 'cri.sock'), pods: 3, containersPerPod: 2 });
  t.after(() => sim.close());
  const agent = await startAgentProcess(t, {
    args: [`--node-name=${node}`, `--cri-endpoint=${sim.endpoint}`, `--kubeconfig=${world.kubeconfig}`, ...RUNTIME_FAULT_TIMINGS, ...extraArgs],
  });
  const sampler = sampleStatus(t, agent);
  await pollUntil('the first renewal', () => world.lease()?.spec.renewTime, { timeoutMs: FIRST_RENEWAL_BOUND_MS });
  return { world, sim, agent, sampler };
}

/** Precondition of every fault: the runtime is Healthy and the lease renewing. */
async function assertSteady(rig: Rig): Promise<void> {
  await pollUntil('precondition: runtime Healthy and lease renewing', async () => {
    const s = await rig.agent.status();
    return s.runtime.state === 'Healthy' && s.lease.renewing;
  }, { timeoutMs: RUNTIME_RECOVERY_BOUND_MS + SLOW_RECOVERY_BOUND_MS });
}

/** What every ageing fault shows while it lasts, and what must hold across it. */
function assertAgedOut(rig: Rig, run: FaultRun, reason: string, failuresBefore: number, blame: { state: 'Unhealthy' } | { state: 'CannotObserve'; cause: string }): void {
  const { status, metrics } = run.during;
  assert.equal(status.runtime.state, blame.state, `the runtime reads ${blame.state} once the threshold passed: ${status.runtime.message}`);
  assert.equal(status.runtime.lastFault?.code, reason, `/status names the fault: ${JSON.stringify(status.runtime.lastFault)}`);
  assert.match(status.runtime.message, /relist was last seen active .* ago; threshold is 4s/);
  assert.equal(status.lease.renewing, false, '/status: the lease is withheld');
  if (blame.state === 'Unhealthy') {
    assert.equal(metricValue(metrics, 'nodepulse_runtime_healthy'), 0);
    assert.equal(metricValue(metrics, 'nodepulse_runtime_observable'), 1);
    assert.equal(run.during.readyz.status, 200, 'a sick runtime never fails readiness');
  } else {
    assert.equal(status.runtime.why, blame.cause, '/status says why the agent cannot observe');
    assert.match(status.runtime.message, new RegExp(`^the agent cannot observe the runtime \\(${blame.cause}\\): `));
    assert.equal(metricValue(metrics, 'nodepulse_runtime_healthy'), undefined, 'no runtime_healthy sample: the runtime is not blamed');
    assert.equal(metricValue(metrics, 'nodepulse_runtime_observable'), 0);
    assert.equal(run.during.readyz.status, 503, `/readyz fails while the agent cannot observe: ${run.during.readyz.body}`);
    assert.match(run.during.readyz.body, /runtime-observable failed: the agent cannot observe the runtime/);
  }
  assert.equal(run.during.livez.status, 200, '/livez never follows the runtime');
  assert.equal(metricValue(metrics, 'nodepulse_lease_renewing'), 0);
  const failures = metricValue(metrics, 'nodepulse_relist_failures_total', { reason }) ?? 0;
  assert.ok(failures > failuresBefore, `nodepulse_relist_failures_total{reason="${reason}"} grows (${failuresBefore} → ${failures})`);

  const judged = linesWith(rig.agent, 'Runtime judgement changed', run.logMarkAtInject);
  assert.ok(judged.some((l) => l['state'] === blame.state), `the log says the runtime turned ${blame.state}: ${JSON.stringify(judged)}`);
  assert.ok(blame.state === 'Unhealthy' || !judged.some((l) => l['state'] === 'Unhealthy'), 'an agent that cannot observe never calls the runtime Unhealthy');
  assert.ok(judged.some((l) => l['state'] === 'Healthy'), 'and that it turned Healthy again');
  assert.ok(linesWith(rig.agent, 'Lease renewal withheld', run.logMarkAtInject).length >= 1, 'the log says the lease is withheld');

  assert.ok(run.stoppedAfterMs !== undefined, 'the lease stopped during the fault');
  assert.ok(run.stoppedAfterMs <= STOP_BOUND_MS, `the lease stops within ${STOP_BOUND_MS} ms of the fault (took ${run.stoppedAfterMs} ms)`);
  const early = stoppedEarlyByMs(run, THRESHOLD_MS);
  assert.ok(early !== undefined && early <= STOP_EARLY_BOUND_MS, `the lease renews up to the threshold: one failed relist is not a dead runtime (stopped ${early} ms early)`);
}

function assertInvariants(rig: Rig): void {
  assert.ok(rig.agent.running, `the agent never exits; stderr: ${rig.agent.stderrTail()}`);
  assert.deepEqual(renewalsWhileUnhealthy(rig.world.leaseWrites(), rig.sampler.samples(), THRESHOLD_MS), [], 'no renewal while the runtime is not Healthy');
}

async function failures(rig: Rig, reason: string): Promise<number> {
  return metricValue(await rig.agent.metrics(), 'nodepulse_relist_failures_total', { reason }) ?? 0;
}

/** Measured numbers, printed for docs/reliability.md. */
function report(t: { diagnostic(message: string): void }, fault: string, run: FaultRun): void {
  t.diagnostic(`${fault}: lease stopped ${run.stoppedAfterMs === undefined ? 'never' : `${Math.round(run.stoppedAfterMs)} ms`} after the fault; first renewal ${Math.round(run.renewedAfterMs)} ms after its end`);
}

test('runtime faults on the simulated runtime, one agent through each in turn', async (t) => {
  const rig = await startRig(t, 'fault-sim');
  const { sim } = rig;

  await t.test('a runtime answering after 1 s (inside the deadline) keeps the lease renewing', async (t) => {
    await assertSteady(rig);
    const withheldBefore = metricValue(await rig.agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0;
    const run = await runFault({
      agent: rig.agent,
      world: rig.world,
      inject: () => {
        sim.addFault({ method: 'ListPodSandbox', delayMs: 1_000 });
        sim.addFault({ method: 'ListContainers', delayMs: 1_000 });
      },
      end: () => sim.clearFaults(),
      holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS,
      recoveryBoundMs: RENEW_INTERVAL_MS + PROCESS_SLACK_MS,
    });
    report(t, 'answers after 1 s', run);
    assert.equal(run.stoppedAfterMs, undefined, 'the lease never stopped');
    assert.equal(run.during.status.runtime.state, 'Healthy');
    for (const s of rig.sampler.between(run.injectedAtMs, run.endCalledAtMs)) assert.equal(s.status.runtime.state, 'Healthy', 'Healthy at every read');
    const withheldAfter = metricValue(run.during.metrics, 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0;
    assert.equal(withheldAfter, withheldBefore, 'no check withheld the lease');
    assert.equal(metricValue(run.during.metrics, 'nodepulse_relist_failures_total', { reason: 'deadline_exceeded' }) ?? 0, 0);
    assert.ok(run.renewedAfterMs <= RENEW_INTERVAL_MS + PROCESS_SLACK_MS, `renewing on (next renewal ${run.renewedAfterMs} ms after)`);
    assertInvariants(rig);
  });

  const ageing: Array<{ name: string; reason: string; blame: Parameters<typeof assertAgedOut>[4]; inject: () => void; boundMs: number }> = [
    {
      name: 'a runtime answering after 3 s (past the 2 s deadline)',
      reason: 'deadline_exceeded',
      blame: { state: 'Unhealthy' },
      inject: () => sim.addFault({ method: '*', delayMs: 3_000 }),
      boundMs: SLOW_RECOVERY_BOUND_MS,
    },
    {
      name: 'a runtime answering UNIMPLEMENTED (the agent cannot observe)',
      reason: 'unimplemented',
      blame: { state: 'CannotObserve', cause: 'unimplemented' },
      inject: () => sim.addFault({ method: '*', code: 12, message: 'unknown service runtime.v1.RuntimeService' }),
      boundMs: RUNTIME_RECOVERY_BOUND_MS,
    },
    {
      name: 'a listing over the default 16 MiB limit (the agent cannot observe)',
      reason: 'resource_exhausted',
      blame: { state: 'CannotObserve', cause: 'oversized' },
      inject: () => sim.setOversize(OVERSIZE_BYTES),
      boundMs: RUNTIME_RECOVERY_BOUND_MS,
    },
    {
      name: 'a connection accepted and never answered',
      reason: 'deadline_exceeded',
      blame: { state: 'Unhealthy' },
      inject: () => sim.addFault({ method: '*', hang: true }),
      boundMs: RUNTIME_RECOVERY_BOUND_MS,
    },
  ];
  for (const fault of ageing) {
    await t.test(`${fault.name}: the lease stops at the threshold and renews within the fault's bound after`, async (t) => {
      await assertSteady(rig);
      const before = await failures(rig, fault.reason);
      const run = await runFault({
        agent: rig.agent,
        world: rig.world,
        inject: fault.inject,
        end: () => {
          sim.clearFaults();
          sim.setOversize(undefined);
        },
        holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS,
        recoveryBoundMs: fault.boundMs,
      });
      report(t, fault.name, run);
      assertAgedOut(rig, run, fault.reason, before, fault.blame);
      assert.ok(run.renewedAfterMs <= fault.boundMs, `the first renewal comes within ${fault.boundMs} ms of the fault's end (took ${Math.round(run.renewedAfterMs)} ms)`);
      assertInvariants(rig);
    });
  }
});

test('a listing over 16 MiB succeeds once --max-message-size is raised', async (t) => {
  const rig = await startRig(t, 'fault-sim-big', ['--max-message-size=64Mi']);
  await assertSteady(rig);
  const mark = rig.agent.logMark();
  const run = await runFault({
    agent: rig.agent,
    world: rig.world,
    inject: () => rig.sim.setOversize(OVERSIZE_BYTES),
    end: () => rig.sim.setOversize(undefined),
    holdMs: THRESHOLD_MS + HOLD_PAST_THRESHOLD_MS,
    recoveryBoundMs: RENEW_INTERVAL_MS + PROCESS_SLACK_MS,
  });
  report(t, 'a listing over 16 MiB, --max-message-size 64Mi', run);
  assert.equal(run.stoppedAfterMs, undefined, 'the lease never stopped');
  assert.equal(run.during.status.runtime.state, 'Healthy');
  assert.equal(run.during.status.counts.pods, 3, 'the oversized listing was read whole');
  assert.equal(metricValue(run.during.metrics, 'nodepulse_relist_failures_total', { reason: 'resource_exhausted' }) ?? 0, 0);
  assert.equal(linesWith(rig.agent, 'Lease renewal withheld', mark).length, 0);
  assertInvariants(rig);
});
