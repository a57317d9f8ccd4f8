// Bad input from the API: answers that are not JSON. A proxy in front of the API server may
// answer 200 with an HTML page (a captive portal, a misrouted ingress), or a 502 with its own
// error page. Neither is a Lease: each is a counted, logged renewal failure (bad_response for the
// 2xx, unavailable for the 502, the message quoting a bounded snippet of the body), retried on
// the backoff, and the first renewal after it comes within the step in force + RECHECK.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { metricValue, pollUntil } from '../support/agent-process.ts';
import { assertAgentAlive, firstRenewalAfter, logsWith, RECHECK_MS, report, sleep, startApiWorld, stepInForce } from './api-world.ts';

describe('bad input from the API: a body that is not JSON', { timeout: 30_000 }, () => {
  test('a 200 with an HTML page, then a 502 from a proxy: counted and logged failures, retried, renewed within the step + RECHECK', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-html' });
    const { agent, standIn } = world;
    const { api } = standIn;
    const pid = agent.pid;
    await sleep(1_500);
    const mark = agent.logMark();
    const errorsBefore = metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'error' }) ?? 0;

    const from = api.requests.lastSeq();
    api.faults.nonJsonNext(1, `PATCH ${world.leasePath}`, '<html><body><h1>Welcome to the proxy</h1></body></html>');
    api.faults.add(`PATCH ${world.leasePath}`, { kind: 'nonJson', status: 502, body: '<html><body>502 Bad Gateway</body></html>' });
    const faulted = await pollUntil('both faulted answers used', () => {
      const hits = api.requests.since(from).filter((r) => r.fault === 'nonJson');
      return hits.length === 2 ? hits : undefined;
    }, { timeoutMs: 10_000 });
    const last = faulted.value[1];
    assert.ok(last !== undefined);
    const bound = stepInForce(2) + RECHECK_MS;
    const first = await firstRenewalAfter(world, last.atMs, bound + 3_000);
    report(t, 'non-JSON answers', { failures: 2, boundMs: bound, firstRenewalAfterMs: first.atMs - last.atMs });
    assert.ok(first.atMs - last.atMs <= bound, `first renewal ${(first.atMs - last.atMs).toFixed(0)} ms after the last non-JSON answer; bound ${bound} ms`);

    const failing = logsWith(world, 'Lease renewal failing', mark);
    assert.equal(failing.length, 1, 'one warn line for the run');
    assert.equal(failing[0]?.['code'], 'bad_response');
    // pino's error serializer appends the cause (the JSON parser's own words).
    assert.match(
      String((failing[0]?.['err'] as { message?: string } | undefined)?.message),
      /^PATCH leases nodepulse\/node-html: HTTP 200 with a body that is not a JSON object: "<html><body><h1>Welcome to the proxy<\/h1><\/body><\/html>": Unexpected token '<'/,
    );
    const recovered = await agent.waitForLog((l) => l['msg'] === 'Lease renewal recovered', 3_000, mark);
    assert.equal(recovered.line['failures'], 2);
    assert.equal((metricValue(await agent.metrics(), 'nodepulse_lease_renewals_total', { result: 'error' }) ?? 0) - errorsBefore, 2);
    await assertAgentAlive(world, pid);
    assert.equal((await agent.status()).lease.renewing, true);
  });
});
