// API fault: a storm of 429s whose Retry-After is longer than the lease can wait.
//
// The built agent runs with `--renew-interval 5s --lease-duration 20s`, and for 50 s the API
// stand-in answers every PATCH of its Lease with 429 and `Retry-After: 45`. A server that asks
// for 45 s is asking politely, and the agent is healthy all along, so:
//
// | what                                      | must hold                                          |
// |-------------------------------------------|----------------------------------------------------|
// | /livez, probed through the storm          | 200 every time: a deliberate wait is not a stall   |
// | the retries during the storm              | one renew interval apart: Retry-After is honoured  |
// |                                           | up to the renew interval, and no longer            |
// | the first renewal after the storm         | within one renew interval of the storm's end       |
//
// With Retry-After honoured up to a minute, the lease loop would sit idle for 45 s: past the
// 30 s idle window its liveness reads Stalled and /livez answers 503, and the 20 s lease runs out
// while the agent waits.
//
// Wall time is the scenario's own: the 50 s storm, the agent's start and one renew interval.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROBE_TIMEOUT_MS } from '../support/agent-process.ts';
import { clock, failedLeaseWrites, leaseRenewals, report, sleep, startApiWorld } from './api-world.ts';

const RENEW_INTERVAL_MS = 5_000;
const STORM_MS = 50_000;
const RETRY_AFTER_SECONDS = 45;
/** How often /livez is probed through the storm (the kubelet probes every 10 s; this is finer). */
const PROBE_EVERY_MS = 500;
/** A real process on a loaded 2-core machine: timer lateness and one loopback PATCH. */
const PROCESS_SLACK_MS = 1_000;
/** Arrival times at the stand-in differ from the agent's send times by delivery jitter: a few ms. */
const ARRIVAL_JITTER_MS = 30;
/** How long past the recovery bound the lease is still watched, to say how late a late renewal was. */
const WATCH_PAST_BOUND_MS = 2_000;

test('a 50 s storm of 429 with Retry-After 45: /livez stays 200 and the lease moves within one renew interval of its end', { timeout: 120_000 }, async (t) => {
  const world = await startApiWorld(t, {
    nodeName: 'node-storm',
    args: ['--renew-interval', '5s', '--lease-duration', '20s'],
  });
  const pid = world.agent.pid;
  const route = `PATCH ${world.leasePath}`;

  const stormFrom = clock.monotonicMs();
  world.standIn.api.faults.add(route, { kind: 'status', status: 429, retryAfterSeconds: RETRY_AFTER_SECONDS }, Infinity);
  const probes: string[] = [];
  while (clock.monotonicMs() - stormFrom < STORM_MS) {
    const at = ((clock.monotonicMs() - stormFrom) / 1000).toFixed(1);
    try {
      const { status, body } = await world.agent.get('/livez');
      if (status !== 200) probes.push(`+${at}s ${status} ${body.trim()}`);
    } catch (err) {
      probes.push(`+${at}s no answer within ${PROBE_TIMEOUT_MS} ms: ${(err as Error).message}`);
    }
    await sleep(PROBE_EVERY_MS);
  }
  world.standIn.api.faults.clear();
  const stormEnd = clock.monotonicMs();

  const failed = failedLeaseWrites(world, stormFrom, stormEnd);
  // Watched a little past the bound, so a late renewal shows by how much it was late.
  await sleep(RENEW_INTERVAL_MS + PROCESS_SLACK_MS + WATCH_PAST_BOUND_MS);
  const first = leaseRenewals(world).find((r) => r.atMs > stormEnd);
  const back = first === undefined ? Number.POSITIVE_INFINITY : first.atMs - stormEnd;
  const gaps = failed.slice(1).map((r, i) => r.atMs - (failed[i]?.atMs ?? r.atMs));
  report(t, '429 storm, Retry-After 45', {
    failedWrites: failed.length,
    gapsMs: gaps.map((g) => g.toFixed(0)).join('/'),
    firstRenewalAfterStormMs: first === undefined ? 'none' : back,
    livezNot200: probes.length,
  });

  assert.deepEqual(probes, [], '/livez answered 200 to every probe through the storm');
  assert.ok(failed.length >= 2, `precondition: the storm met the lease's writes (${failed.length} failed)`);
  assert.ok(failed.every((r) => r.status === 429), 'precondition: every failed write was one of the storm\'s 429s');
  for (const gap of gaps) {
    assert.ok(
      gap >= RENEW_INTERVAL_MS - ARRIVAL_JITTER_MS && gap <= RENEW_INTERVAL_MS + PROCESS_SLACK_MS,
      `retries come one renew interval (${RENEW_INTERVAL_MS} ms) apart: Retry-After honoured up to it and no longer (gaps ${gaps.map((g) => g.toFixed(0)).join(', ')} ms)`,
    );
  }
  assert.ok(back <= RENEW_INTERVAL_MS + PROCESS_SLACK_MS, `the lease moved ${back.toFixed(0)} ms after the storm; bound: one renew interval (${RENEW_INTERVAL_MS} ms) + ${PROCESS_SLACK_MS} ms slack`);
  assert.equal(world.agent.running, true, `the agent never exits:\n${world.agent.stderrTail()}`);
  assert.equal(world.agent.pid, pid);
});
