// Process fault: SIGTERM while a relist hangs (issue 4 acceptance 6, issue 6 "SIGTERM during a
// hung relist").
//
// The built agent runs against the simulated runtime and the API stand-in until its lease is
// renewed; then every CRI call is made to hang (accepted, never answered), a relist is seen in
// flight, and the agent gets SIGTERM. It must exit 0 within 5 s (the hung call is aborted, not
// waited for), and leave the Lease as it was: same holderIdentity and renewTime, and the
// stand-in's request record shows no DELETE and no write of the Lease after the signal.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { metricValue, pollUntil, startAgentProcess, startStandIn } from '../support/agent-process.ts';

const NODE = 'fault-sigterm';
/** Issue 4: the agent exits within 5 s of SIGTERM. */
const EXIT_BOUND_MS = 5_000;
/** The first renewal comes within a relist and a lease tick of start; 10 s covers a loaded machine. */
const FIRST_RENEWAL_BOUND_MS = 10_000;
/** A hung relist shows as in flight within one relist period of the hang; bound with slack. */
const IN_FLIGHT_BOUND_MS = 5_000;

test('SIGTERM during a hung relist exits 0 within 5 s and leaves the lease unreleased', async (t) => {
  const clock = new SystemClock();
  const world = await startStandIn(t, { nodeName: NODE });
  const sim = await startSimRuntime({ clock: world.clock, socketPath: join(world.dir, 'cri.sock'), pods: 2, containersPerPod: 2 });
  t.after(() => sim.close());
  const agent = await startAgentProcess(t, {
    args: [
      `--node-name=${NODE}`,
      `--cri-endpoint=${sim.endpoint}`,
      `--kubeconfig=${world.kubeconfig}`,
      // A deadline far past the test, so the relist is truly hung when the signal comes.
      '--relist-threshold=60s',
      '--relist-deadline=50s',
      '--lease-duration=4s',
      '--renew-interval=1s',
      '--api-timeout=2s',
    ],
  });

  await pollUntil('the lease is renewed', () => world.lease()?.spec.renewTime, { timeoutMs: FIRST_RENEWAL_BOUND_MS });

  sim.addFault({ method: '*', hang: true });
  await pollUntil('a relist hangs in flight', async () => {
    const inFlight = metricValue(await agent.metrics(), 'nodepulse_relist_in_flight_seconds');
    return sim.hangingCalls() >= 2 && inFlight !== undefined && inFlight > 0.2;
  }, { timeoutMs: IN_FLIGHT_BOUND_MS });

  const before = world.lease();
  assert.ok(before !== undefined, 'precondition: the lease exists before SIGTERM');
  const lastSeq = world.api.requests.all().at(-1)?.seq ?? 0;
  const sentAt = clock.monotonicMs();
  const code = await agent.stop('SIGTERM');
  const tookMs = clock.monotonicMs() - sentAt;

  assert.equal(code, 0, `the agent exits 0 on SIGTERM; stderr: ${agent.stderrTail()}`);
  assert.ok(tookMs <= EXIT_BOUND_MS, `the agent exits within ${EXIT_BOUND_MS} ms of SIGTERM (took ${Math.round(tookMs)} ms)`);
  assert.ok(agent.logs().some((l) => l['msg'] === 'Agent stopped'), 'the agent logs that it stopped');

  const after = world.lease();
  assert.ok(after !== undefined, 'the lease is not deleted');
  assert.equal(after.spec.holderIdentity, before.spec.holderIdentity, 'holderIdentity is unchanged');
  assert.equal(after.spec.holderIdentity, NODE);
  assert.equal(after.spec.renewTime, before.spec.renewTime, 'renewTime is unchanged: the lease is left to expire');
  const leasePrefix = `/apis/coordination.k8s.io/v1/namespaces/${world.leaseNamespace}/leases`;
  const later = world.api.requests.all().filter((r) => r.seq > lastSeq && r.path.startsWith(leasePrefix));
  assert.deepEqual(later.map((r) => `${r.method} ${r.path}`), [], 'no request touches the lease after SIGTERM');
  assert.equal(world.api.requests.count({ method: 'DELETE' }), 0, 'nothing is ever deleted');
});
