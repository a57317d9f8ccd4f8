// Process fault: the wall clock stepped an hour forward, then back (issue 6), through the
// clock's injectable wall offset (SystemClock.wallOffsetMs). The agent's env-gated debug hook
// (src/agent/debug-hooks.ts) re-reads NODEPULSE_DEBUG_WALL_OFFSET_FILE on SIGUSR1 and sets the
// offset to the number of ms it holds; the machine's clock is never touched.
//
// What must hold, and why:
//   - no judgement changes: the runtime stays Healthy, no loop leaves Alive, no check withholds
//     the lease (every judgement is made on the monotonic clock, which the step does not move);
//   - renewTime never goes backwards: it is max(wall now, last written + 1 µs), so after the
//     step back it creeps forward by 1 µs per renewal until the wall catches up;
//   - a fleet reader keeps the node Fresh throughout: the projection of src/fleet/readiness.ts
//     (observeLease + judgeNode on the reader's own monotonic clock), fed from the stand-in's
//     Lease every 100 ms, with a grace of two renew intervals, so one missed advance shows.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { parseLabelSelector } from '../../src/fleet/label-selector.ts';
import { judgeNode, observeLease, type LeaseSighting, type Verdict } from '../../src/fleet/readiness.ts';
import {
  linesWith, metricValue, microTimeToMicros, pollUntil, sampleStatus, startAgentProcess, startStandIn,
} from '../support/agent-process.ts';

const NODE = 'fault-wall-step';
const HOUR_MS = 3_600_000;
const THRESHOLD_MS = 4_000;
const RENEW_INTERVAL_MS = 1_000;
/** The reader's grace: two renew intervals, so a single renewal that fails to advance turns it Stale. */
const READER_GRACE_MS = 2 * RENEW_INTERVAL_MS + 500;
/** Hold each step this long: longer than the threshold and the reader's grace. */
const HOLD_MS = Math.max(THRESHOLD_MS, READER_GRACE_MS) + 1_000;
/** The reader looks every 100 ms. */
const READER_INTERVAL_MS = 100;
/** The hook logs its step within a moment of the signal. */
const STEP_LOG_BOUND_MS = 5_000;
const FIRST_RENEWAL_BOUND_MS = 10_000;
/** The readers' default node selector. */
const LINUX = parseLabelSelector('kubernetes.io/os=linux');

test('the wall clock stepped an hour forward and back changes no judgement, never moves renewTime back, and keeps the node Fresh', async (t) => {
  const clock = new SystemClock();
  const world = await startStandIn(t, { nodeName: NODE });
  const sim = await startSimRuntime({ clock: world.clock, socketPath: join(world.dir, 'cri.sock'), pods: 2, containersPerPod: 2 });
  t.after(() => sim.close());
  const offsetFile = join(world.dir, 'wall-offset-ms');
  writeFileSync(offsetFile, '0');
  const agent = await startAgentProcess(t, {
    args: [
      `--node-name=${NODE}`, `--cri-endpoint=${sim.endpoint}`, `--kubeconfig=${world.kubeconfig}`,
      `--relist-threshold=${THRESHOLD_MS / 1000}s`, '--relist-deadline=2s', '--lease-duration=4s',
      `--renew-interval=${RENEW_INTERVAL_MS / 1000}s`, '--api-timeout=2s',
    ],
    env: { NODEPULSE_DEBUG_WALL_OFFSET_FILE: offsetFile },
  });
  const sampler = sampleStatus(t, agent);
  await pollUntil('the first renewal', () => world.lease()?.spec.renewTime, { timeoutMs: FIRST_RENEWAL_BOUND_MS });
  await pollUntil('precondition: runtime Healthy and lease renewing', async () => {
    const s = await agent.status();
    return s.runtime.state === 'Healthy' && s.lease.renewing && s.loops.every((l) => l.state === 'Alive');
  }, { timeoutMs: FIRST_RENEWAL_BOUND_MS });

  // The fleet reader, in the background, on this process's monotonic clock.
  const verdicts: Verdict[] = [];
  let sighting: LeaseSighting | undefined;
  const reading = new AbortController();
  const reader = (async () => {
    while (!reading.signal.aborted) {
      const rt = world.lease()?.spec.renewTime;
      const now = clock.monotonicMs();
      sighting = observeLease(sighting, rt === undefined ? undefined : microTimeToMicros(rt), now);
      const node = { name: NODE, labels: { 'kubernetes.io/os': 'linux' }, createdWallMicros: undefined, unschedulable: false, condition: undefined };
      verdicts.push(judgeNode(node, sighting, now, clock.wallMicros(), { graceMs: READER_GRACE_MS, selector: LINUX, basis: 'reader-clock' }).verdict);
      await clock.sleep(READER_INTERVAL_MS, reading.signal).catch(() => undefined);
    }
  })();
  t.after(async () => {
    reading.abort();
    await reader;
  });

  const withheldBefore = metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0;
  const mark = agent.logMark();
  const steppedFromMs = clock.monotonicMs();
  const firstWrite = world.leaseWrites().length;
  const step = async (offsetMs: number): Promise<void> => {
    const before = agent.logMark();
    writeFileSync(offsetFile, String(offsetMs));
    agent.signal('SIGUSR1');
    const line = await agent.waitForLog((l) => l['msg'] === 'Debug hook: wall clock stepped', STEP_LOG_BOUND_MS, before);
    assert.equal(line.line['offsetMs'], offsetMs, 'precondition: the agent took the step');
    await clock.sleep(HOLD_MS);
  };

  await step(HOUR_MS);
  const ahead = world.leaseWrites().slice(firstWrite).filter((w) => (w.renewMicros ?? 0) > clock.wallMicros() + (HOUR_MS - 60_000) * 1000);
  assert.ok(ahead.length > 0, 'precondition: renewals after the forward step carry the stepped wall time');
  await step(0);
  const backAt = world.leaseWrites().length;
  await step(-HOUR_MS);
  reading.abort();
  await reader;

  const writes = world.leaseWrites().slice(firstWrite);
  t.diagnostic(`${writes.length} renewals across the steps; reader verdicts: ${[...new Set(verdicts)].join(', ')}`);
  for (let i = 1; i < writes.length; i++) {
    const prev = writes[i - 1]?.renewMicros ?? 0;
    const cur = writes[i]?.renewMicros ?? 0;
    assert.ok(cur > prev, `renewTime never goes backwards: ${writes[i - 1]?.renewTime} then ${writes[i]?.renewTime}`);
  }
  const afterBack = world.leaseWrites().slice(backAt);
  assert.ok(afterBack.length >= 2, 'precondition: renewals went on after the steps back');
  assert.ok(verdicts.length > 0 && verdicts.every((v) => v === 'Fresh'), `the fleet reader saw Fresh throughout (saw ${[...new Set(verdicts)].join(', ')})`);

  const metrics = await agent.metrics();
  assert.equal((metricValue(metrics, 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0) - withheldBefore, 0, 'no check withheld the lease');
  assert.deepEqual(linesWith(agent, 'Runtime judgement changed', mark), [], 'the runtime judgement never changed');
  assert.deepEqual(linesWith(agent, 'Loop liveness changed', mark), [], 'no loop left Alive');
  assert.deepEqual(linesWith(agent, 'Lease renewal withheld', mark), [], 'no withhold was logged');
  for (const s of sampler.between(steppedFromMs)) assert.equal(s.status.runtime.state, 'Healthy', 'Healthy at every /status read');
  assert.ok(agent.running, `the agent never exits; stderr: ${agent.stderrTail()}`);
});
