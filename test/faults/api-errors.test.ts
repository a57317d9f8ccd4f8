// API faults: the Lease write answered with 500s, 503s with Retry-After, and 429 with
// Retry-After (as a Status body, and as the plain text the max-in-flight and APF filters send).
//
// What must hold: each failed write is counted (metrics), shown (/status) and logged once per run;
// retries are spaced by the backoff (200 ms doubling, as kubelet's lease controller) or by the
// server's Retry-After when that is longer, never sooner; the agent never exits; and the first
// renewal after the fault ends comes within the step in force + RECHECK.
//
// These run with a 3 s renew interval (lease duration 12 s), longer than every step and every
// Retry-After here, so each is honoured in full; a Retry-After longer than the renew interval is
// cut to it (api-retry-after-storm.test.ts).
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import type { RecordedRequest } from '../../src/stand-ins/api-server/request-log.ts';
import { metricValue, pollUntil } from '../support/agent-process.ts';
import {
  assertAgentAlive, type ApiWorld, failedLeaseWrites, firstRenewalAfter, logsWith, RECHECK_MS, report, sleep, startApiWorld, stepInForce,
} from './api-world.ts';

/** Arrival times at the stand-in differ from the agent's send times by delivery jitter: a few ms. */
const ARRIVAL_JITTER_MS = 30;
/** Lease duration 12 s: renewals every 3 s (0.25 × duration). */
const LEASE_ARGS = ['--lease-duration', '12s'];
const RENEW_INTERVAL_MS = 3_000;

/**
 * Arms `times` faulted answers on the lease PATCH (or, with `arm` undefined, takes those armed
 * since request `from`), waits until all are used, and returns the faulted requests.
 */
async function faultLeaseWrites(world: ApiWorld, arm: (() => void) | number, times: number, timeoutMs: number): Promise<RecordedRequest[]> {
  const from = typeof arm === 'number' ? arm : world.standIn.api.requests.lastSeq();
  if (typeof arm === 'function') arm();
  for (let waited = 0; world.standIn.api.faults.pending() > 0; waited += 50) {
    if (waited > timeoutMs) assert.fail(`the ${times} faulted answers were not all used within ${timeoutMs} ms`);
    await sleep(50);
  }
  const faulted = world.standIn.api.requests.since(from).filter((r) => r.fault !== undefined);
  assert.equal(faulted.length, times, 'precondition: every armed fault met a lease write');
  return faulted;
}

function gaps(requests: readonly RecordedRequest[]): number[] {
  return requests.slice(1).map((r, i) => r.atMs - (requests[i]?.atMs ?? r.atMs));
}

async function errorCount(world: ApiWorld): Promise<number> {
  return metricValue(await world.agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'error' }) ?? 0;
}

async function checkRecovery(t: TestContext, world: ApiWorld, what: string, faulted: readonly RecordedRequest[], retryAfterMs?: number): Promise<void> {
  const last = faulted.at(-1);
  assert.ok(last !== undefined);
  const step = stepInForce(faulted.length, retryAfterMs, RENEW_INTERVAL_MS);
  const bound = step + RECHECK_MS;
  const first = await firstRenewalAfter(world, last.atMs, bound + 5_000);
  const backMs = first.atMs - last.atMs;
  report(t, what, { failedWrites: faulted.length, gapsMs: gaps(faulted).map((g) => g.toFixed(0)).join('/'), stepMs: step, boundMs: bound, firstRenewalAfterMs: backMs });
  assert.ok(backMs >= step - ARRIVAL_JITTER_MS, `the retry after the last failure came ${backMs.toFixed(0)} ms later, sooner than the ${step} ms step`);
  assert.ok(backMs <= bound, `first renewal ${backMs.toFixed(0)} ms after the fault ended; bound ${bound} ms`);
}

describe('API faults: 500, 503 and 429 on the Lease write', { timeout: 60_000 }, () => {
  test('four 500s: retried at 200, 400, 800 ms, renewed after the 1.6 s step; counted, shown and logged once', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-500', args: LEASE_ARGS });
    const pid = world.agent.pid;
    const errorsBefore = await errorCount(world);
    const mark = world.agent.logMark();
    const faulted = await faultLeaseWrites(world, () => world.standIn.api.faults.failNext(4, `PATCH ${world.leasePath}`, 500, { message: 'etcdserver: leader changed' }), 4, 10_000);
    const expected = [1, 2, 3].map((n) => stepInForce(n, undefined, RENEW_INTERVAL_MS));
    gaps(faulted).forEach((gap, i) => {
      const want = expected[i] ?? 0;
      assert.ok(gap >= want - ARRIVAL_JITTER_MS && gap <= want + RECHECK_MS, `retry ${i + 1} came ${gap.toFixed(0)} ms after the failure before it; backoff is ${want} ms`);
    });
    await checkRecovery(t, world, '4× HTTP 500', faulted);
    assert.equal((await errorCount(world)) - errorsBefore, 4, 'each failed write is counted once');
    const failing = logsWith(world, 'Lease renewal failing', mark);
    assert.equal(failing.length, 1, 'one warn line for the run');
    assert.equal(failing[0]?.['status'], 500);
    assert.equal(failing[0]?.['code'], 'unavailable');
    assert.match(String((failing[0]?.['err'] as { message?: string } | undefined)?.message), /HTTP 500 InternalError: etcdserver: leader changed/);
    const recovered = await world.agent.waitForLog((l) => l['msg'] === 'Lease renewal recovered', 5_000, mark);
    assert.equal(recovered.line['failures'], 4);
    await assertAgentAlive(world, pid);
  });

  test('503 with Retry-After 2: retried no sooner than 2 s, /status shows it, renewed within Retry-After + RECHECK', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-503', args: LEASE_ARGS });
    const pid = world.agent.pid;
    const from = world.standIn.api.requests.lastSeq();
    world.standIn.api.faults.failNext(3, `PATCH ${world.leasePath}`, 503, { retryAfterSeconds: 2 });
    // The first 503 meets the next renewal, up to one renew interval from now; the run then lasts 4 s.
    const { value: during } = await pollUntil('/status shows the lease failing', async () => {
      const s = await world.agent.status();
      return s.lease.renewing ? undefined : s;
    }, { timeoutMs: RENEW_INTERVAL_MS + 2_000 });
    assert.match(during.lease.lastError ?? '', /HTTP 503 ServiceUnavailable/);
    const faulted = await faultLeaseWrites(world, from, 3, 10_000);
    for (const gap of gaps(faulted)) assert.ok(gap >= 2_000 - ARRIVAL_JITTER_MS, `a retry came ${gap.toFixed(0)} ms after a 503 that asked for 2 s`);
    await checkRecovery(t, world, '3× HTTP 503 Retry-After 2', faulted, 2_000);
    await assertAgentAlive(world, pid);
  });

  test('429 with Retry-After 3 (Status body), then 429 as APF plain text with Retry-After 2: each honoured, renewed within Retry-After + RECHECK', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-429', args: LEASE_ARGS });
    const pid = world.agent.pid;
    const mark = world.agent.logMark();
    const startedAt = world.standIn.api.requests.all().at(-1)?.atMs ?? 0;
    const one = await faultLeaseWrites(world, () => world.standIn.api.faults.failNext(1, `PATCH ${world.leasePath}`, 429, { retryAfterSeconds: 3 }), 1, 10_000);
    await checkRecovery(t, world, '429 Retry-After 3 (Status)', one, 3_000);
    const failing = logsWith(world, 'Lease renewal failing', mark);
    assert.equal(failing[0]?.['code'], 'too_many_requests');

    await sleep(1_500);
    const two = await faultLeaseWrites(
      world,
      () => world.standIn.api.faults.failNext(1, `PATCH ${world.leasePath}`, 429, { retryAfterSeconds: 2, plainText: true, message: 'Too many requests, please try again later.' }),
      1,
      10_000,
    );
    await checkRecovery(t, world, '429 Retry-After 2 (plain text)', two, 2_000);
    assert.equal(failedLeaseWrites(world, startedAt).length, 2, 'no other write failed');
    await assertAgentAlive(world, pid);
  });
});
