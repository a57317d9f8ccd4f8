// API fault: a request that hangs past the timeout (the stand-in accepts the Lease PATCH and
// never answers, as an API server behind a stuck proxy or an etcd stall would).
//
// - Alone: the request ends at the API timeout (1 s here) as `unavailable`, /status and the log
//   say so, and the retry one backoff step (200 ms) later renews: the bound is the step in force
//   + RECHECK, counted from the moment the timeout ended the request.
// - Together with a runtime that stops answering: the runtime ages out WHILE the write hangs
//   (API timeout 3 s > relist threshold 2 s). The gate is checked again before the retry, so the
//   retry is withheld and nothing renews until the runtime answers again (docs/design.md: "a
//   renewal held up by a slow API must not land after the runtime has aged out"). Once it
//   answers, the lease renews within the relist deadline + relist period + RECHECK.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { metricValue, pollUntil } from '../support/agent-process.ts';
import {
  API_TIMEOUT_MS, assertAgentAlive, clock, firstRenewalAfter, leaseRenewals, leaseRequests, logsWith, RECHECK_MS, report, sleep, startApiWorld, stepInForce,
} from './api-world.ts';

const RELIST_PERIOD_MS = 100;
const RELIST_DEADLINE_MS = 1_000;
const RELIST_THRESHOLD_MS = 2_000;
/** The API timeout of the second test: longer than the relist threshold, so the runtime ages out during the hung write. */
const LONG_API_TIMEOUT_MS = 3_000;
/** How long the runtime stays silent in the second test. */
const RUNTIME_SILENT_MS = 6_000;


describe('API fault: a request that hangs past the timeout', { timeout: 60_000 }, () => {
  test('a hung Lease PATCH ends at the API timeout; the retry one backoff step later renews', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-hang' });
    const { agent, standIn } = world;
    const pid = agent.pid;
    await sleep(1_500);
    const mark = agent.logMark();
    const from = standIn.api.requests.lastSeq();
    standIn.api.faults.hangNext(1, `PATCH ${world.leasePath}`);
    const hung = await pollUntil('the hung PATCH', () => standIn.api.requests.since(from).find((r) => r.fault === 'hang'), { timeoutMs: 5_000 });
    const endedAt = hung.value.atMs + API_TIMEOUT_MS;
    const first = await firstRenewalAfter(world, hung.value.atMs, API_TIMEOUT_MS + stepInForce(1) + RECHECK_MS + 2_000);
    const backMs = first.atMs - endedAt;
    report(t, 'hung request', { apiTimeoutMs: API_TIMEOUT_MS, firstRenewalAfterTimeoutMs: backMs, boundMs: stepInForce(1) + RECHECK_MS });
    assert.ok(backMs >= stepInForce(1) - 50, `the retry came ${backMs.toFixed(0)} ms after the timeout, before the ${stepInForce(1)} ms step`);
    assert.ok(backMs <= stepInForce(1) + RECHECK_MS, `first renewal ${backMs.toFixed(0)} ms after the timeout; bound ${stepInForce(1) + RECHECK_MS} ms`);
    const failing = logsWith(world, 'Lease renewal failing', mark);
    assert.equal(failing.length, 1);
    assert.equal(failing[0]?.['code'], 'unavailable');
    assert.match(String((failing[0]?.['err'] as { message?: string } | undefined)?.message), /PATCH leases nodepulse\/node-hang: no answer within 1000ms/);
    assert.equal(metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'error' }), 1);
    await assertAgentAlive(world, pid);
  });

  test('a hung write while the runtime ages out: the retry is withheld, nothing renews until the runtime answers again', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-hang-gate', args: ['--api-timeout', `${LONG_API_TIMEOUT_MS}ms`] });
    const { agent, standIn, sim } = world;
    const pid = agent.pid;
    await sleep(1_500);
    const mark = agent.logMark();
    const from = standIn.api.requests.lastSeq();
    // The runtime stops answering, and the next lease write hangs.
    const silentAt = clock.monotonicMs();
    sim.addFault({ method: 'ListPodSandbox', hang: true });
    standIn.api.faults.hangNext(1, `PATCH ${world.leasePath}`);
    const hung = await pollUntil('the hung PATCH', () => standIn.api.requests.since(from).find((r) => r.fault === 'hang'), { timeoutMs: 5_000 });
    const status = await pollUntil('/status shows the runtime Unhealthy', async () => {
      const s = await agent.status();
      return s.runtime.state === 'Unhealthy' ? s : undefined;
    }, { timeoutMs: RELIST_THRESHOLD_MS + RELIST_DEADLINE_MS + 2_000 });
    assert.match(status.value.runtime.message, /relist was last seen active .* ago; threshold is 2s/);

    await sleep(Math.max(0, silentAt + RUNTIME_SILENT_MS - clock.monotonicMs()));
    // The hung write timed out long ago; its retry met the closed gate.
    assert.ok(clock.monotonicMs() > hung.value.atMs + LONG_API_TIMEOUT_MS + stepInForce(1), 'precondition: the hung write has timed out and its retry is due');
    const renewedWhileSilent = leaseRenewals(world).filter((r) => r.atMs > silentAt + RELIST_THRESHOLD_MS);
    assert.deepEqual(renewedWhileSilent.map((r) => r.atMs - silentAt), [], 'no renewal lands once the runtime is past the threshold');
    assert.deepEqual(
      leaseRequests(world).filter((r) => r.atMs > hung.value.atMs && r.method !== 'GET').map((r) => `${r.method} ${r.status}`),
      [],
      'the retry after the hung write never went out: the gate withheld it',
    );
    const withheld = logsWith(world, 'Lease renewal withheld', mark);
    assert.equal(withheld.length, 1, 'withholding is logged once');
    assert.equal(withheld[0]?.['reason'], 'runtime-unhealthy');
    const during = await agent.status();
    assert.equal(during.lease.renewing, false);
    assert.ok((metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'withheld' }) ?? 0) >= 1);

    const answersAt = clock.monotonicMs();
    sim.clearFaults();
    const first = await firstRenewalAfter(world, answersAt, RELIST_DEADLINE_MS + RELIST_PERIOD_MS + RECHECK_MS + 2_000);
    const bound = RELIST_DEADLINE_MS + RELIST_PERIOD_MS + RECHECK_MS;
    report(t, 'hung write + silent runtime', {
      lastRenewalBeforeSilenceMs: silentAt - (leaseRenewals(world).filter((r) => r.atMs <= silentAt).at(-1)?.atMs ?? silentAt),
      unhealthyAfterMs: status.elapsedMs + (hung.value.atMs - silentAt),
      firstRenewalAfterRuntimeBackMs: first.atMs - answersAt,
      boundMs: bound,
    });
    assert.ok(first.atMs - answersAt <= bound, `first renewal ${(first.atMs - answersAt).toFixed(0)} ms after the runtime answered; bound ${bound} ms`);
    await assertAgentAlive(world, pid);
  });
});
