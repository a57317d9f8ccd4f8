// Process fault: memory pressure (issue 6). The agent runs under --max-old-space-size=64 against
// a simulated runtime reporting 10,000 containers (1,000 pods × 10), with the message limit
// raised so the listing is accepted. It must keep relisting and renewing, and must not crash
// (a V8 heap-limit crash would end the process with a fatal error on stderr). It runs as in a pod
// (in-cluster, over TLS; test/support/in-cluster.ts) when it can, so the heap it is squeezed into
// holds what production's holds; without root it is given a kubeconfig, which also loads
// client-node's KubeConfig.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { metricValue, pollUntil, renewalsWhileUnhealthy, sampleStatus, startAgentProcess, startStandIn } from '../support/agent-process.ts';
import { isRoot } from '../support/require.ts';

const NODE = 'fault-memory';
const PODS = 1_000;
const CONTAINERS_PER_POD = 10;
const THRESHOLD_MS = 10_000;
/** Watch the agent under pressure this long: some ten relists of the full listing. */
const WATCH_MS = 10_000;
/** At least this many renewals in the watch (one a second when all is well; half allows for GC pauses). */
const MIN_RENEWALS = WATCH_MS / 1_000 / 2;
/** The first full relist of 10,000 containers, then a renewal; generous for a 64 MB heap on a loaded machine. */
const FIRST_RENEWAL_BOUND_MS = 20_000;

test('under --max-old-space-size=64, 10,000 containers are relisted and the lease renews without a crash', async (t) => {
  const clock = new SystemClock();
  const world = await startStandIn(t, { nodeName: NODE, inCluster: isRoot() });
  const account = world.serviceAccount;
  const sim = await startSimRuntime({ clock: world.clock, socketPath: join(world.dir, 'cri.sock'), pods: PODS, containersPerPod: CONTAINERS_PER_POD });
  t.after(() => sim.close());
  const agent = await startAgentProcess(t, {
    nodeArgs: ['--max-old-space-size=64'],
    args: [
      `--node-name=${NODE}`, `--cri-endpoint=${sim.endpoint}`, ...(account === undefined ? [`--kubeconfig=${world.kubeconfig}`] : []),
      `--relist-threshold=${THRESHOLD_MS / 1000}s`, '--relist-deadline=5s', '--lease-duration=4s', '--renew-interval=1s',
      '--api-timeout=2s', '--max-message-size=64Mi',
    ],
    ...(account === undefined ? {} : { inCluster: account }),
  });
  const sampler = sampleStatus(t, agent);
  await pollUntil('the first renewal', () => world.lease()?.spec.renewTime, { timeoutMs: FIRST_RENEWAL_BOUND_MS });
  const status = await agent.status();
  assert.equal(status.counts.containers, PODS * CONTAINERS_PER_POD, 'the relist saw every container');
  assert.equal(status.counts.pods, PODS);

  const from = clock.monotonicMs();
  const writesBefore = world.leaseWrites().length;
  await clock.sleep(WATCH_MS);
  const renewals = world.leaseWrites().length - writesBefore;
  const metrics = await agent.metrics();
  const rssMb = (metricValue(metrics, 'process_resident_memory_bytes') ?? 0) / 2 ** 20;
  const heapMb = (metricValue(metrics, 'nodejs_heap_size_used_bytes') ?? 0) / 2 ** 20;
  t.diagnostic(`${renewals} renewals in ${WATCH_MS} ms; RSS ${rssMb.toFixed(1)} MiB, heap used ${heapMb.toFixed(1)} MiB`);

  assert.ok(agent.running, `the agent does not crash; stderr: ${agent.stderrTail()}`);
  assert.ok(renewals >= MIN_RENEWALS, `the lease keeps renewing (${renewals} renewals in ${WATCH_MS} ms)`);
  const during = sampler.between(from);
  assert.ok(during.length > 0, 'precondition: /status was read during the watch');
  for (const s of during) assert.equal(s.status.runtime.state, 'Healthy', `Healthy at every read: ${s.status.runtime.message}`);
  assert.equal(metricValue(metrics, 'nodepulse_relist_failures_total', { reason: 'resource_exhausted' }) ?? 0, 0);
  assert.deepEqual(renewalsWhileUnhealthy(world.leaseWrites(), sampler.samples(), THRESHOLD_MS), []);
});
