// API faults of identity: the bearer token rotated under the agent (401), and RBAC revoked (403).
//
// Token rotation is what a projected service-account token does every hour: kubelet writes a
// new token into the file, and the old one stops being accepted. The stand-in's token table and
// the file change at the same moment here, the harshest case. The bound is "the next request":
// the request that meets the 401 makes the client re-read the file before it fails, so the
// retry 200 ms later carries the new token, with no restart. A client that kept its first
// token (or re-read only on its 60 s timer) fails this test.
//
// RBAC revoked: the lease writes are answered 403. The agent logs the denial once (naming what
// was denied), keeps running and retrying at its capped backoff, and renews within the step in
// force + RECHECK once the permission is back.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { AccessRule } from '../../src/stand-ins/api-server/auth.ts';
import { metricValue } from '../support/agent-process.ts';
import {
  assertAgentAlive, clock, failedLeaseWrites, firstRenewalAfter, leaseRequests, RECHECK_MS, RENEW_INTERVAL_MS, report, sleep, startApiWorld, stepInForce,
} from './api-world.ts';

const USER = 'system:serviceaccount:nodepulse:nodepulse';
const OLD_TOKEN = 'rotation-old-0123456789abcdef';
const NEW_TOKEN = 'rotation-new-fedcba9876543210';
/** How long RBAC stays revoked: long enough for five attempts (200 + 400 + 800 + 1600 ms …). */
const REVOKED_MS = 5_000;

function tokenDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'np-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('API faults: token rotation (401) and RBAC revoked (403)', { timeout: 60_000 }, () => {
  test('a rotated token file: one 401 at most, and the next request carries the new token; no restart', async (t) => {
    const tokenFile = join(tokenDir(t), 'token');
    writeFileSync(tokenFile, `${OLD_TOKEN}\n`, { mode: 0o600 });
    const world = await startApiWorld(t, {
      nodeName: 'node-rotate',
      tokenFile,
      // Authentication on once the Node is registered (the harness registers it without a token).
      beforeAgent: (standIn) => standIn.api.auth.setTokens({ [OLD_TOKEN]: USER }),
    });
    const { agent, standIn } = world;
    const pid = agent.pid;
    const api = standIn.api;
    assert.equal(api.requests.count({}) > 0, true);
    assert.deepEqual(
      api.requests.all().filter((r) => r.status === 401).map((r) => `${r.method} ${r.path}`),
      [],
      'every request before the rotation carried the token (the concurrent first requests of several loops too)',
    );
    await sleep(1_500);

    const rotateSeq = api.requests.lastSeq();
    const rotatedAt = clock.monotonicMs();
    writeFileSync(tokenFile, `${NEW_TOKEN}\n`);
    api.auth.setTokens({ [NEW_TOKEN]: USER });

    // A renewal comes at most one renew interval after the rotation, then one 401, then the retry.
    const first = await firstRenewalAfter(world, rotatedAt, RENEW_INTERVAL_MS + stepInForce(1) + RECHECK_MS + 2_000);
    const after = api.requests.since(rotateSeq);
    const unauthorized = after.filter((r) => r.status === 401);
    const leaseAfter = leaseRequests(world).filter((r) => r.seq > rotateSeq);
    const lease401 = leaseAfter.filter((r) => r.status === 401);
    report(t, 'token rotation', {
      requestsWith401: unauthorized.length,
      lease401: lease401.length,
      firstRenewalAfterRotationMs: first.atMs - rotatedAt,
      renewalAfterLease401Ms: lease401[0] === undefined ? 0 : first.atMs - lease401[0].atMs,
    });
    // Each loop that had a request on the wire with the old token may meet one 401; no more.
    assert.ok(lease401.length <= 1, `the lease met ${lease401.length} 401s; the re-read after the first must fix the next request`);
    assert.ok(unauthorized.length <= 3, `at most one 401 per loop talking to the API (lease, condition): got ${unauthorized.length}`);
    // The request after the lease's 401 (if it met one) is the renewal, and it succeeded.
    if (lease401[0] !== undefined) {
      const next = leaseAfter.find((r) => r.seq > (lease401[0]?.seq ?? 0));
      assert.equal(next?.seq, first.seq, 'the next lease request after the 401 is the successful renewal');
      assert.ok(first.atMs - lease401[0].atMs <= stepInForce(1) + RECHECK_MS, 'and it came one backoff step later');
    }
    await sleep(2_000);
    assert.deepEqual(api.requests.since(first.seq).filter((r) => r.status === 401).map((r) => r.path), [], 'no 401 after the re-read');
    assert.equal(failedLeaseWrites(world, first.atMs).length, 0);
    await assertAgentAlive(world, pid);
  });

  test('RBAC revoked: 403 logged once with what was denied; the agent keeps running and renews within the step + RECHECK once restored', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-rbac' });
    const { agent, standIn } = world;
    const pid = agent.pid;
    await sleep(1_500);
    const mark = agent.logMark();
    // Everything the agent needs except leases (its Node, its status and Events stay allowed).
    const withoutLeases: AccessRule[] = [{ verbs: ['*'], resources: ['nodes', 'nodes/status', 'events'] }];
    const revokedAt = clock.monotonicMs();
    standIn.api.auth.setRules(withoutLeases);
    await sleep(REVOKED_MS);

    await assertAgentAlive(world, pid);
    const status = await agent.status();
    assert.equal(status.lease.renewing, false);
    assert.match(status.lease.lastError ?? '', /HTTP 403 Forbidden: leases.coordination.k8s.io "node-rbac" is forbidden: User "system:admin" cannot patch resource "leases"/);
    assert.equal(metricValue(await agent.metrics(), 'nodepulse_lease_renewing'), 0);
    const forbidden = failedLeaseWrites(world, revokedAt);
    assert.ok(forbidden.length >= 4 && forbidden.every((r) => r.status === 403), `every attempt was refused with 403 (${forbidden.map((r) => r.status).join(',')})`);
    const warnLines = agent.keptLogs().filter((k) => k.seq > mark && k.line['level'] === 'warn').map((k) => k.line);
    assert.equal(warnLines.length, 1, `the denial is one warn line for the whole run: ${JSON.stringify(warnLines)}`);
    assert.equal(warnLines[0]?.['denied'], 'PATCH leases nodepulse/node-rbac', 'the line names what was denied');
    assert.equal(warnLines[0]?.['code'], 'forbidden');

    const failures = forbidden.length;
    const restoredAt = clock.monotonicMs();
    standIn.api.auth.setRules(undefined);
    const bound = stepInForce(failures + 1) + RECHECK_MS;
    const first = await firstRenewalAfter(world, restoredAt, bound + 5_000);
    report(t, 'RBAC revoked 5 s', { forbiddenWrites: failures, boundMs: bound, firstRenewalAfterRestoreMs: first.atMs - restoredAt });
    assert.ok(first.atMs - restoredAt <= bound, `first renewal ${(first.atMs - restoredAt).toFixed(0)} ms after RBAC was restored; bound ${bound} ms`);
    await agent.waitForLog((l) => l['msg'] === 'Lease renewal recovered', 5_000, mark);
    await assertAgentAlive(world, pid);
  });
});
