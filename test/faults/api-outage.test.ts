// API fault: the API server is down, at the agent's start and for 30 s mid-run (the stand-in's
// stopListening()/startListening(): connections are refused, as with a dead apiserver).
//
// What must hold: the agent never exits and stays live; /status, the metrics and one log line
// say the lease is failing; and once the API is back, the first renewal comes within the
// backoff step in force + RECHECK. This file is the suite's long one (the 30 s outage is the
// issue's number); the rest of it is idle waiting, so it loads the machine very little.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { metricValue, pollUntil } from '../support/agent-process.ts';
import {
  assertAgentAlive, clock, firstRenewalAfter, leaseRenewals, logsWith, RECHECK_MS, report, sleep, startApiWorld, stepInForce,
} from './api-world.ts';

/** The mid-run outage. */
const OUTAGE_MS = 30_000;
/** The outage at start: long enough for several failed attempts (200 + 400 + 800 + 1600 ms of backoff). */
const START_OUTAGE_MS = 3_000;

async function leaseErrors(agent: { metrics(): Promise<string> }): Promise<number> {
  return metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'error' }) ?? 0;
}

describe('API fault: the API server is down', { timeout: 90_000 }, () => {
  test('down when the agent starts: it runs, reports the failing lease, and renews within the backoff step + RECHECK once the API is up', async (t) => {
    const world = await startApiWorld(t, {
      nodeName: 'node-down-at-start',
      beforeAgent: (standIn) => standIn.api.stopListening(),
      waitForRenewal: false,
    });
    const { agent, standIn } = world;
    const pid = agent.pid;
    await sleep(START_OUTAGE_MS);

    await assertAgentAlive(world, pid);
    const status = await agent.status();
    assert.equal(status.runtime.state, 'Healthy', 'precondition: the runtime is healthy, so only the API holds the lease back');
    assert.equal(status.lease.renewing, false);
    assert.match(status.lease.lastError ?? '', /ECONNREFUSED/);
    const metrics = await agent.metrics();
    assert.equal(metricValue(metrics, 'nodepulse_lease_renewing'), 0);
    assert.equal(metricValue(metrics, 'nodepulse_lease_renewals_total', { result: 'success' }), 0);
    const failures = metricValue(metrics, 'nodepulse_lease_renewals_total', { result: 'error' }) ?? 0;
    assert.ok(failures >= 3, `several attempts were made and failed (${failures})`);
    assert.equal(logsWith(world, 'Lease renewal failing').length, 1, 'a run of failures is logged once');

    // One more attempt may fail between the reading above and the port opening: the step after
    // failures + 1 is the longest that can be in force.
    const bound = stepInForce(failures + 1) + RECHECK_MS;
    const upAt = clock.monotonicMs();
    await standIn.api.startListening();
    const first = await firstRenewalAfter(world, upAt, bound + 5_000);
    const backMs = first.atMs - upAt;
    report(t, 'API down at start', { failedAttempts: failures, boundMs: bound, firstRenewalAfterUpMs: backMs });
    assert.ok(backMs <= bound, `first renewal ${backMs.toFixed(0)} ms after the API came back; bound ${bound} ms (step after ${failures + 1} failures + RECHECK)`);
    const lease = standIn.lease();
    assert.equal(lease?.spec.holderIdentity, 'node-down-at-start');
    const recovered = await agent.waitForLog((l) => l['msg'] === 'Lease renewal recovered', 5_000);
    assert.ok(Number(recovered.line['failures']) >= failures, 'the recovery line counts the failures');
    await assertAgentAlive(world, pid);
  });

  test('down for 30 s mid-run: the lease stops moving at once, the agent stays up, and renews within the backoff step + RECHECK after', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-outage' });
    const { agent, standIn } = world;
    const pid = agent.pid;
    await sleep(1_500);
    const mark = agent.logMark();

    const downAt = clock.monotonicMs();
    await standIn.api.stopListening();
    const lastBefore = leaseRenewals(world).at(-1);
    assert.ok(lastBefore !== undefined, 'precondition: the lease was renewed before the outage');
    // The agent notices at its next write: within one renew interval (1 s) + the write.
    const noticed = await pollUntil('/status shows the lease failing', async () => (await agent.status()).lease.renewing === false, { timeoutMs: 5_000 });

    await sleep(OUTAGE_MS / 2);
    await assertAgentAlive(world, pid);
    const mid = await agent.status();
    assert.equal(mid.runtime.state, 'Healthy', 'the runtime judgement does not depend on the API');
    assert.match(mid.lease.lastError ?? '', /ECONNREFUSED|ECONNRESET|socket hang up/);
    assert.equal(metricValue(await agent.metrics(), 'nodepulse_lease_renewing'), 0);
    await sleep(OUTAGE_MS - (clock.monotonicMs() - downAt));

    const failures = await leaseErrors(agent);
    const bound = stepInForce(failures + 1) + RECHECK_MS;
    const upAt = clock.monotonicMs();
    await standIn.api.startListening();
    const first = await firstRenewalAfter(world, upAt, bound + 5_000);
    const backMs = first.atMs - upAt;
    report(t, 'API down 30 s mid-run', {
      lastRenewalBeforeOutageMs: downAt - lastBefore.atMs,
      statusShowsFailingAfterMs: noticed.elapsedMs,
      outageMs: upAt - downAt,
      failedAttempts: failures,
      boundMs: bound,
      firstRenewalAfterUpMs: backMs,
    });
    assert.ok(failures >= 7, `the backoff reached its cap during 30 s (${failures} failed attempts)`);
    assert.ok(backMs <= bound, `first renewal ${backMs.toFixed(0)} ms after the API came back; bound ${bound} ms (the backoff's cap, the renew interval, + RECHECK)`);
    assert.equal(logsWith(world, 'Lease renewal failing', mark).length, 1, 'the outage is one warn line, not one per attempt');
    await agent.waitForLog((l) => l['msg'] === 'Lease renewal recovered', 5_000, mark);
    await assertAgentAlive(world, pid);
    assert.equal((await agent.status()).lease.renewing, true);
  });
});
