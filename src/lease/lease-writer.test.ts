// How the node lease writes, asserted on the API stand-in's request record, over real HTTP on a
// manual clock; and the renewTime rule, against a table.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { harness, LEASE_PATH, LEASES_PATH, NAMESPACE, NODE, NODE_PATH, nodeLeaseOptions, seedNode, THRESHOLD_MS, until, WINDOWS, type Harness } from '../stand-ins/doubles/lease-test-harness.ts';
import { GATE_WATCH_MS, NodeLease, RECHECK_MS, type NodeLeaseOptions } from './node-lease.ts';
import { nextRenewMicros } from './lease-writer.ts';
import { SystemClock } from '../clock/clock.ts';

const INTERVAL = 10_000;
/** Real time, for polls while HTTP is in flight and the manual clock stands still. */
const real = new SystemClock();
const PATCH_ROUTE = `PATCH ${LEASE_PATH}`;

function nodeLease(h: Harness, extra: Partial<NodeLeaseOptions> = {}): { lease: NodeLease; conflicts: () => number } {
  let conflicts = 0;
  const lease = new NodeLease({
    ...nodeLeaseOptions(h),
    hooks: { conflict: () => conflicts++ },
    ...extra,
  });
  return { lease, conflicts: () => conflicts };
}

/** A live, healthy node whose lease exists: the state every writer test starts from. */
async function renewedOnce(h: Harness): Promise<NodeLease> {
  const { lease } = nodeLease(h);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL, 'precondition: the first renewal succeeds');
  assert.ok(h.storedLease() !== undefined, 'precondition: the lease exists');
  return lease;
}

function nodeUid(h: Harness): string {
  return (h.api.store.get('nodes', undefined, NODE)?.['metadata'] as { uid: string }).uid;
}

/** "METHOD path status" for every request after seq. */
function calls(h: Harness, afterSeq: number): string[] {
  return h.api.requests.since(afterSeq).map((r) => `${r.method} ${r.path} ${r.status ?? '-'}`);
}

test('steady state is one unconditional merge PATCH per renewal and no GET', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  const from = h.api.requests.lastSeq();
  for (let i = 0; i < 20; i++) {
    await h.clock.advance(INTERVAL);
    await h.relist('answer');
    assert.equal(await lease.tick(h.signal), INTERVAL);
  }
  assert.deepEqual(calls(h, from), Array.from({ length: 20 }, () => `PATCH ${LEASE_PATH} 200`));
  const last = h.api.requests.since(from).at(-1);
  assert.equal(last?.contentType, 'application/merge-patch+json');
  assert.deepEqual(last?.parsed, { spec: { holderIdentity: NODE, leaseDurationSeconds: 40, renewTime: '2026-01-02T03:07:25.000000Z' } });
  assert.equal(h.storedLease()?.spec?.renewTime, '2026-01-02T03:07:25.000000Z');
  assert.deepEqual(
    h.logs.filter((l) => l['level'] === 'info').map((l) => l['msg']),
    ['Lease created', 'Lease renewing'],
    'info lines only at the start, and nothing per tick',
  );
});

test('a deleted lease is recreated with its ownerReference', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  assert.ok(h.api.store.delete('leases', NAMESPACE, NODE));
  const from = h.api.requests.lastSeq();
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.deepEqual(calls(h, from), [`PATCH ${LEASE_PATH} 404`, `GET ${NODE_PATH} 200`, `POST ${LEASES_PATH} 201`]);
  const stored = h.storedLease();
  assert.deepEqual(stored?.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: nodeUid(h) }]);
  assert.deepEqual(stored?.metadata.labels, { 'app.kubernetes.io/name': 'nodepulse', 'nodepulse.io/role': 'node-lease' });
  assert.equal(stored?.spec?.acquireTime, stored?.spec?.renewTime);
  assert.equal(h.lines('Lease created').length, 2);
});

test('a Node re-created under the same name gets the new uid in the next created lease', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  const oldUid = nodeUid(h);
  assert.ok(h.api.store.delete('nodes', undefined, NODE));
  const newUid = seedNode(h.api);
  assert.notEqual(newUid, oldUid, 'precondition: the new Node has a new uid');
  assert.ok(h.api.store.delete('leases', NAMESPACE, NODE)); // the garbage collector would do this
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  await lease.tick(h.signal);
  assert.deepEqual(h.storedLease()?.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid: newUid }]);
});

test('a Node that cannot be read gets a lease without the reference, and the reference comes with a later renewal', async (t) => {
  const h = await harness(t, { node: false });
  const { lease } = nodeLease(h);
  await h.relist('answer');
  const from = h.api.requests.lastSeq();
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.deepEqual(calls(h, from), [`GET ${NODE_PATH} 404`, `PATCH ${LEASE_PATH} 404`, `POST ${LEASES_PATH} 201`]);
  assert.equal(h.storedLease()?.metadata.ownerReferences, undefined);
  const uid = seedNode(h.api);
  const next = h.api.requests.lastSeq();
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.deepEqual(calls(h, next), [`GET ${NODE_PATH} 200`, `PATCH ${LEASE_PATH} 200`]);
  assert.deepEqual(h.storedLease()?.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid }]);
  const after = h.api.requests.lastSeq();
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  await lease.tick(h.signal);
  assert.deepEqual(calls(h, after), [`PATCH ${LEASE_PATH} 200`], 'once set, no more Node reads');
});

test('a create that meets AlreadyExists falls back to the patch', async (t) => {
  const h = await harness(t);
  const { lease, conflicts } = nodeLease(h);
  await h.relist('answer');
  await lease.tick(h.signal);
  // The lease exists, but this PATCH is told 404 (as if it was deleted and re-created meanwhile).
  h.api.faults.failNext(1, PATCH_ROUTE, 404);
  const from = h.api.requests.lastSeq();
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.deepEqual(calls(h, from), [`PATCH ${LEASE_PATH} 404`, `GET ${NODE_PATH} 200`, `POST ${LEASES_PATH} 409`, `PATCH ${LEASE_PATH} 200`]);
  assert.equal(conflicts(), 1);
});

test('500s back off 200 ms → 7 s and renew once the server answers', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  h.api.faults.failNext(10, PATCH_ROUTE, 500);
  const delays: number[] = [];
  for (let i = 0; i < 11; i++) {
    await h.relist('answer');
    const delay = await lease.tick(h.signal);
    delays.push(delay);
    await h.clock.advance(delay);
  }
  assert.deepEqual(delays, [200, 400, 800, 1_600, 3_200, 6_400, 7_000, 7_000, 7_000, 7_000, INTERVAL]);
  assert.deepEqual(
    h.api.requests.filter({ method: 'PATCH' }).slice(1).map((r) => r.status),
    [500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 200],
  );
  const failing = h.lines('Lease renewal failing');
  const recovered = h.lines('Lease renewal recovered');
  assert.equal(failing.length, 1, 'the run is logged once when it starts');
  assert.equal(recovered.length, 1, 'and once when it ends');
  assert.equal(recovered[0]?.['failures'], 10);
  assert.equal(h.logs.filter((l) => l['level'] === 'warn' || l['level'] === 'error').length, 1);
  assert.equal(lease.snapshot().lastError, undefined, 'a success clears the last error');
});

test('a runtime that ages out during a run of 500s gets no write afterwards', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h); // the last relist to succeed began at 0
  h.api.faults.failNext(Infinity, PATCH_ROUTE, 500);
  let nextCheck = 0;
  for (let now = 0; now <= THRESHOLD_MS + 30_000; now += 100) {
    if (now % 1_000 === 0 && now > 0) await h.relist('fail'); // the loop goes on; the runtime does not answer
    if (now >= nextCheck) nextCheck = now + (await lease.tick(h.signal));
    await h.clock.advance(100);
  }
  const patches = h.api.requests.filter({ method: 'PATCH', path: LEASE_PATH }).slice(1);
  assert.ok(patches.length > 20, 'precondition: the writes were retried through the run');
  assert.ok(patches.every((r) => r.status === 500));
  const lastAt = patches.at(-1)?.atMs ?? Infinity;
  assert.ok(lastAt <= THRESHOLD_MS, `the last write attempt (${lastAt} ms) came before the runtime aged out`);
  assert.equal(h.runtimeHealth().state, 'Unhealthy');
  assert.match(lease.snapshot().lastError ?? '', /^PATCH leases nodepulse\/node-1: HTTP 500 InternalError/);
});

test('a 429 honours Retry-After', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  h.api.faults.failNext(1, PATCH_ROUTE, 429, { retryAfterSeconds: 3 });
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), 3_000, 'the next attempt waits the 3 s the server asked for');
  await h.clock.advance(3_000);
  assert.equal(await lease.tick(h.signal), INTERVAL);
  const patches = h.api.requests.filter({ method: 'PATCH', path: LEASE_PATH }).slice(1);
  assert.deepEqual(patches.map((r) => [r.status, r.atMs]), [[429, 10_000], [200, 13_000]]);
});

test('a 401 after the token file changes succeeds with the new token', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const h = await harness(t, { api: { tokens: { 'token-1': 'system:serviceaccount:nodepulse:agent' } }, tokenFile: { token: 'token-1', dir } });
  const lease = await renewedOnce(h);
  // The projected token rotates: the server accepts only the new one, and the file has it.
  writeFileSync(join(dir, 'token'), 'token-2\n');
  h.api.auth.setTokens({ 'token-2': 'system:serviceaccount:nodepulse:agent' });
  const from = h.api.requests.lastSeq();
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), 200, 'the 401 is retried after the first backoff step');
  await h.clock.advance(200);
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.deepEqual(calls(h, from), [`PATCH ${LEASE_PATH} 401`, `PATCH ${LEASE_PATH} 200`]);
  assert.equal(h.api.requests.since(from).at(-1)?.user, 'system:serviceaccount:nodepulse:agent');
  assert.ok(h.clock.monotonicMs() < 60_000, 'precondition: well before the 60 s re-read, so the 401 made it');
});

test('a 403 is logged once with what was denied, and the loop keeps going', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  h.api.auth.setRules([{ verbs: ['get', 'list', 'watch', 'create'], resources: ['*'] }]); // no patch
  const delays: number[] = [];
  for (let i = 0; i < 30; i++) {
    await h.relist('answer');
    const delay = await lease.tick(h.signal);
    delays.push(delay);
    await h.clock.advance(delay);
  }
  assert.deepEqual(delays.slice(0, 8), [200, 400, 800, 1_600, 3_200, 6_400, 7_000, 7_000]);
  assert.ok(delays.slice(6).every((d) => d === 7_000), 'retried at the capped backoff');
  const warns = h.logs.filter((l) => l['level'] === 'warn');
  assert.equal(warns.length, 1, 'one line for thirty denials');
  assert.equal(warns[0]?.['msg'], 'Lease renewal failing');
  assert.equal(warns[0]?.['denied'], `PATCH leases ${NAMESPACE}/${NODE}`);
  assert.equal(warns[0]?.['code'], 'forbidden');
  assert.match(
    String((warns[0]?.['err'] as { message?: string } | undefined)?.message),
    /leases\.coordination\.k8s\.io "node-1" is forbidden: User "system:admin" cannot patch resource "leases" in API group "coordination\.k8s\.io" in the namespace "nodepulse"/,
  );
  h.api.auth.setRules(undefined); // RBAC fixed: it heals with no restart
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.equal(h.lines('Lease renewal recovered')[0]?.['failures'], 30);
});

test('a 403 in the middle of a run of other failures is still logged, once', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  h.api.faults.failNext(2, PATCH_ROUTE, 503);
  h.api.auth.setRules([{ verbs: ['get', 'create'], resources: ['*'] }]);
  for (let i = 0; i < 6; i++) {
    await h.relist('answer');
    await h.clock.advance(await lease.tick(h.signal));
  }
  assert.deepEqual(h.logs.filter((l) => l['level'] === 'warn').map((l) => l['msg']), ['Lease renewal failing', 'Lease write forbidden']);
  assert.equal(h.lines('Lease write forbidden')[0]?.['denied'], `PATCH leases ${NAMESPACE}/${NODE}`);
});

test('a wall clock stepped back an hour still writes a renewTime later than the last one', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  const before = h.storedLease()?.spec?.renewTime ?? '';
  h.clock.wallOffsetMs = -3_600_000;
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL);
  const after = h.storedLease()?.spec?.renewTime ?? '';
  assert.equal(before, '2026-01-02T03:04:05.000001Z');
  assert.equal(after, '2026-01-02T03:04:05.000002Z', 'one microsecond past the last one written');
  assert.ok(after > before);
  h.clock.wallOffsetMs = 0;
  await h.clock.advance(INTERVAL);
  await h.relist('answer');
  await lease.tick(h.signal);
  assert.equal(h.storedLease()?.spec?.renewTime, '2026-01-02T03:04:25.000000Z', 'the wall clock is used again once it is ahead');
});

test('a tick whose signal aborts mid-request is not counted as a failure', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  h.api.faults.hangNext(1, PATCH_ROUTE);
  const controller = new AbortController();
  await h.relist('answer');
  const pending = lease.tick(controller.signal);
  await until(real, () => h.api.requests.count({ method: 'PATCH' }) === 2, 'the PATCH to reach the server');
  controller.abort();
  assert.equal(await pending, RECHECK_MS);
  // And one aborted before its request could go out at all.
  const early = new AbortController();
  const second = lease.tick(early.signal);
  early.abort();
  assert.equal(await second, RECHECK_MS);
  assert.equal(h.api.requests.count({ method: 'PATCH' }), 2, 'the early abort sent nothing');
  assert.equal(h.lines('Lease renewal failing').length, 0);
  assert.equal(lease.snapshot().lastError, undefined);
});

// The gate is asked again just before every write request of an attempt (lease-writer.ts). Each
// test below opens the attempt at the very edge of the stuck window, with the relister's tick in
// flight for exactly that long (Alive), and holds one answer for 1 ms, so the gate closes
// (Stalled) between two requests of the same attempt: the next write must not be sent.

/** Healthy and alive now, with a relist in flight since 0 that reaches the stuck window now. */
async function atTheStuckEdge(h: Harness): Promise<void> {
  h.beginRelist(); // never answered: the relister's tick stays in flight
  await h.clock.advance(WINDOWS.stuckWindowMs - h.clock.monotonicMs());
  assert.equal(h.relisterLiveness().state, 'Alive', 'precondition: a tick in flight for exactly the stuck window is Alive');
  assert.equal(h.runtimeHealth().state, 'Healthy', 'precondition: the runtime is Healthy, so only the loop closes the gate');
}

/** Starts a tick, lets `waitFor` reach the stand-in (which holds it 1 ms), moves 1 ms, and returns the tick's delay. */
async function tickAcrossTheEdge(h: Harness, lease: NodeLease, waitFor: { method: string; count: number }): Promise<number> {
  const pending = lease.tick(h.signal);
  await until(real, () => h.api.requests.count({ method: waitFor.method }) === waitFor.count, `the ${waitFor.method} to reach the stand-in`);
  await h.clock.advance(1);
  assert.equal(h.relisterLiveness().state, 'Stalled', 'precondition: the gate is now closed (the relister is past its stuck window)');
  return pending;
}

test('the gate is asked again before the PATCH: it closes during the Node read, and no PATCH is sent', async (t) => {
  const h = await harness(t);
  await h.relist('answer');
  const { lease } = nodeLease(h); // a new process: the owner reference's state is unknown, so the Node is read first
  await atTheStuckEdge(h);
  h.api.faults.delayNext(1, `GET ${NODE_PATH}`, 1);
  const from = h.api.requests.lastSeq();
  assert.equal(await tickAcrossTheEdge(h, lease, { method: 'GET', count: 1 }), RECHECK_MS);
  assert.deepEqual(calls(h, from), [`GET ${NODE_PATH} 200`], 'the Node was read, and nothing was written');
  assert.equal(h.lines('Lease renewal withheld')[0]?.['reason'], 'relister-stalled');
});

test('the gate is asked again before the POST: it closes while the PATCH meets 404, and no POST is sent', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  assert.ok(h.api.store.delete('leases', NAMESPACE, NODE), 'precondition: the lease is gone, so the PATCH meets 404');
  await atTheStuckEdge(h);
  h.api.faults.delayNext(1, PATCH_ROUTE, 1);
  const from = h.api.requests.lastSeq();
  const patches = h.api.requests.count({ method: 'PATCH' });
  assert.equal(await tickAcrossTheEdge(h, lease, { method: 'PATCH', count: patches + 1 }), RECHECK_MS);
  assert.deepEqual(calls(h, from), [`PATCH ${LEASE_PATH} 404`, `GET ${NODE_PATH} 200`], 'no POST after the gate closed');
  assert.equal(h.storedLease(), undefined);
});

test('the gate is asked again before the PATCH after a 409 on create: it closes while the POST is answered, and no PATCH follows', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  await atTheStuckEdge(h);
  h.api.faults.failNext(1, PATCH_ROUTE, 404); // the lease exists, but this PATCH is told 404
  h.api.faults.delayNext(1, `POST ${LEASES_PATH}`, 1);
  const from = h.api.requests.lastSeq();
  const renewTime = h.storedLease()?.spec?.renewTime;
  assert.equal(await tickAcrossTheEdge(h, lease, { method: 'POST', count: 2 }), RECHECK_MS);
  assert.deepEqual(calls(h, from), [`PATCH ${LEASE_PATH} 404`, `GET ${NODE_PATH} 200`, `POST ${LEASES_PATH} 409`], 'no PATCH after the 409');
  assert.equal(h.storedLease()?.spec?.renewTime, renewTime, 'the lease did not move');
});

test('a write in flight when the gate closes is cancelled: the tick ends withheld at the next look, and nothing counts as a failure', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  const renewTime = h.storedLease()?.spec?.renewTime;
  h.beginRelist(); // never answered: the relister reads Stalled once past the stuck window
  const startAt = WINDOWS.stuckWindowMs - 5 * GATE_WATCH_MS;
  await h.clock.advance(startAt - h.clock.monotonicMs());
  h.api.faults.hangNext(1, PATCH_ROUTE); // a slow API server: the PATCH is never answered
  const patches = h.api.requests.count({ method: 'PATCH' });
  let delay: number | undefined;
  const pending = lease.tick(h.signal).then((d) => (delay = d));
  await until(real, () => h.api.requests.count({ method: 'PATCH' }) === patches + 1, 'the PATCH to reach the stand-in');
  await h.clock.advance(WINDOWS.stuckWindowMs - startAt);
  assert.equal(h.relisterLiveness().state, 'Alive', 'precondition: the gate is still open at the edge of the stuck window');
  assert.equal(delay, undefined, 'precondition: the write is still in flight while the gate is open');
  await h.clock.advance(GATE_WATCH_MS);
  assert.equal(h.relisterLiveness().state, 'Stalled', 'precondition: the gate has closed');
  await until(real, () => delay !== undefined, 'the tick to end once the gate closed', 2_000);
  await pending;
  assert.equal(delay, RECHECK_MS, 'withheld: looked at again in RECHECK');
  assert.equal(h.lines('Lease renewal withheld')[0]?.['reason'], 'relister-stalled');
  assert.equal(h.lines('Lease renewal failing').length, 0, 'a cancelled write is not a failure of the API');
  assert.equal(lease.snapshot().lastError, undefined);
  assert.equal(lease.snapshot().renewing, false);
  assert.equal(h.storedLease()?.spec?.renewTime, renewTime, 'the lease did not move');
});

test('a write whose gate stays open leaves no watch behind', async (t) => {
  const h = await harness(t);
  const lease = await renewedOnce(h);
  const before = h.clock.pendingTimers();
  for (let i = 0; i < 5; i++) {
    await h.clock.advance(INTERVAL);
    await h.relist('answer');
    assert.equal(await lease.tick(h.signal), INTERVAL);
  }
  assert.equal(h.clock.pendingTimers(), before, 'no timer outlives its write');
});

// The renewTime rule (docs/design.md): never at or before the last stamp.
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5) * 1000; // µs
const NEXT: ReadonlyArray<[string, number, number | undefined, number]> = [
  ['the first stamp is the wall clock', T0, undefined, T0],
  ['a later wall clock is used as it is', T0 + 5_000_000, T0, T0 + 5_000_000],
  ['the same microsecond moves on by one', T0, T0, T0 + 1],
  ['a wall clock stepped back an hour still moves on by one', T0 - 3_600_000_000, T0, T0 + 1],
];

for (const [name, now, last, expected] of NEXT) {
  test(`renewTime: ${name}`, () => {
    assert.equal(nextRenewMicros(now, last), expected);
  });
}
