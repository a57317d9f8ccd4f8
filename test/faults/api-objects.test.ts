// API faults of the objects themselves: a competing writer storming the same Lease, the Lease
// deleted, and the Node deleted and re-created under the same name.
//
// - The storm: the agent's write is an unconditional merge patch of renewTime (docs/design.md
//   "Writing the Lease"), so another writer, however busy, cannot make it conflict: every one
//   of its renewals lands, on time, and none is counted as a conflict.
// - The Lease deleted (by a person, or by the garbage collector): the next PATCH meets 404, and
//   the agent creates the Lease again with its labels and an ownerReference to its Node.
// - The Node deleted and re-created: a new Node has a new uid. The garbage collector deletes the
//   old Lease with the old Node (the stand-in has no collector, so the test deletes it as the
//   collector would); the next Lease the agent creates must carry the NEW uid, or the collector
//   would delete it too. While the Node is missing, the Lease is created without a reference,
//   and the reference is added once the Node is back.
// Bound for each: these faults are instants, so the first renewal after one comes within one
// renew interval (+ its 4 % jitter) + RECHECK.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { metricValue, createNode } from '../support/agent-process.ts';
import {
  assertAgentAlive, clock, failedLeaseWrites, firstRenewalAfter, leaseRenewals, logsWith, RECHECK_MS, RENEW_INTERVAL_MS, report, sleep, startApiWorld,
} from './api-world.ts';

/** One renew interval with its 4 % jitter, + RECHECK: the bound after an instant fault. */
const INSTANT_FAULT_BOUND_MS = RENEW_INTERVAL_MS * 1.04 + RECHECK_MS;
/** The competing writer: a write every 20 ms (50 a second) for 5 s. */
const STORM_MS = 5_000;
const STORM_EVERY_MS = 20;

interface OwnerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

function ownerRefsOf(lease: unknown): OwnerRef[] | undefined {
  return (lease as { metadata?: { ownerReferences?: OwnerRef[] } } | undefined)?.metadata?.ownerReferences;
}

function holderOf(body: unknown): string | undefined {
  return (body as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
}

describe('API faults: a competing writer, the Lease deleted, the Node re-created', { timeout: 60_000 }, () => {
  test('a storm of writes to the same Lease: every renewal of the agent lands on time and none conflicts', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-storm' });
    const { agent, standIn } = world;
    const pid = agent.pid;
    const url = `${standIn.api.url}${world.leasePath}`;
    const stormFrom = clock.monotonicMs();
    let writes = 0;
    let refused = 0;
    while (clock.monotonicMs() - stormFrom < STORM_MS) {
      // Half unconditional merge patches, half read-modify-write PUTs carrying resourceVersion
      // (the competitor's own conflicts are its problem, not the agent's).
      const patch = writes % 2 === 0;
      const body = patch
        ? JSON.stringify({ spec: { holderIdentity: 'intruder', renewTime: new Date(clock.wallMicros() / 1000).toISOString().replace('Z', '000Z') } })
        : JSON.stringify({ ...((await (await fetch(url, { signal: AbortSignal.timeout(2_000) })).json()) as object), spec: { holderIdentity: 'intruder', leaseDurationSeconds: 1 } });
      const res = await fetch(url, {
        method: patch ? 'PATCH' : 'PUT',
        headers: { 'Content-Type': patch ? 'application/merge-patch+json' : 'application/json' },
        body,
        signal: AbortSignal.timeout(2_000),
      });
      await res.arrayBuffer();
      writes++;
      if (res.status >= 300) refused++;
      await sleep(STORM_EVERY_MS);
    }
    const stormTo = clock.monotonicMs();
    const ours = leaseRenewals(world).filter((r) => r.atMs >= stormFrom && r.atMs <= stormTo && holderOf(r.parsed) === 'node-storm');
    const gaps = ours.slice(1).map((r, i) => r.atMs - (ours[i]?.atMs ?? r.atMs));
    report(t, 'competing writer storm', { competitorWrites: writes, competitorRefused: refused, agentRenewals: ours.length, maxGapMs: Math.max(...gaps) });
    assert.ok(writes >= 100, `precondition: the storm wrote ${writes} times`);
    assert.equal(failedLeaseWrites(world, stormFrom, stormTo).filter((r) => holderOf(r.parsed) === 'node-storm').length, 0, 'no renewal of the agent failed');
    assert.ok(ours.length >= Math.floor(STORM_MS / (RENEW_INTERVAL_MS * 1.04)) - 1, `the agent renewed ${ours.length} times in ${STORM_MS} ms`);
    for (const gap of gaps) assert.ok(gap <= INSTANT_FAULT_BOUND_MS, `renewals ${gap.toFixed(0)} ms apart during the storm`);
    assert.equal(metricValue(await agent.metrics(), 'nodepulse_lease_conflicts_total'), 0);
    const after = await firstRenewalAfter(world, stormTo, INSTANT_FAULT_BOUND_MS + 2_000);
    assert.equal(holderOf(after.parsed), 'node-storm');
    assert.equal(standIn.lease()?.spec.holderIdentity, 'node-storm', 'the agent holds its Lease again after the storm');
    await assertAgentAlive(world, pid);
  });

  test('the Lease deleted: recreated at the next renewal, with its labels and the ownerReference to its Node', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-lease-gone' });
    const { agent, standIn } = world;
    const pid = agent.pid;
    await sleep(1_500);
    const nodeUid = (standIn.api.store.get('nodes', undefined, 'node-lease-gone') as { metadata: { uid: string } }).metadata.uid;
    const mark = agent.logMark();
    const deletedAt = clock.monotonicMs();
    assert.ok(standIn.api.store.delete('leases', standIn.leaseNamespace, 'node-lease-gone'));
    const created = await firstRenewalAfter(world, deletedAt, INSTANT_FAULT_BOUND_MS + 2_000);
    report(t, 'lease deleted', { recreatedAfterMs: created.atMs - deletedAt, boundMs: INSTANT_FAULT_BOUND_MS });
    assert.equal(created.method, 'POST');
    assert.ok(created.atMs - deletedAt <= INSTANT_FAULT_BOUND_MS);
    const lease = standIn.api.store.get('leases', standIn.leaseNamespace, 'node-lease-gone') as { metadata: { labels: Record<string, string> } };
    assert.deepEqual(ownerRefsOf(lease), [{ apiVersion: 'v1', kind: 'Node', name: 'node-lease-gone', uid: nodeUid }]);
    assert.deepEqual(lease.metadata.labels, { 'app.kubernetes.io/name': 'nodepulse', 'nodepulse.io/role': 'node-lease' });
    const line = await agent.waitForLog((l) => l['msg'] === 'Lease created', 2_000, mark);
    assert.equal(line.line['ownerReference'], true);
    await assertAgentAlive(world, pid);
  });

  test('the Node deleted and re-created: the next Lease carries the new uid; while the Node is gone, the reference is added once it is back', async (t) => {
    const world = await startApiWorld(t, { nodeName: 'node-reborn' });
    const { agent, standIn } = world;
    const { api, leaseNamespace } = standIn;
    const pid = agent.pid;
    await sleep(1_500);
    const uidOf = (): string | undefined => (api.store.get('nodes', undefined, 'node-reborn') as { metadata: { uid: string } } | undefined)?.metadata.uid;
    const oldUid = uidOf();

    // Deleted and re-created at once (the collector takes the Lease with the old Node).
    let mark = agent.logMark();
    let at = clock.monotonicMs();
    api.store.delete('nodes', undefined, 'node-reborn');
    api.store.delete('leases', leaseNamespace, 'node-reborn');
    await createNode(api.url, 'node-reborn');
    const newUid = uidOf();
    assert.notEqual(newUid, oldUid, 'precondition: a re-created Node has a new uid');
    const created = await firstRenewalAfter(world, at, INSTANT_FAULT_BOUND_MS + 2_000);
    report(t, 'node re-created', { leaseRecreatedAfterMs: created.atMs - at, boundMs: INSTANT_FAULT_BOUND_MS });
    assert.equal(created.method, 'POST');
    assert.deepEqual(ownerRefsOf(created.parsed), [{ apiVersion: 'v1', kind: 'Node', name: 'node-reborn', uid: newUid }]);
    await agent.waitForLog((l) => l['msg'] === 'Lease created' && l['ownerReference'] === true, 2_000, mark);

    // Deleted, and away for 3 s: the Lease comes back at once without a reference, and gets the
    // third Node's uid when it registers.
    mark = agent.logMark();
    at = clock.monotonicMs();
    api.store.delete('nodes', undefined, 'node-reborn');
    api.store.delete('leases', leaseNamespace, 'node-reborn');
    const orphan = await firstRenewalAfter(world, at, INSTANT_FAULT_BOUND_MS + 2_000);
    assert.equal(orphan.method, 'POST');
    assert.equal(ownerRefsOf(orphan.parsed), undefined, 'no Node to refer to: the Lease is created without a reference');
    await sleep(3_000);
    const backAt = clock.monotonicMs();
    await createNode(api.url, 'node-reborn');
    const thirdUid = uidOf();
    const set = await agent.waitForLog((l) => l['msg'] === 'Lease owner reference set', INSTANT_FAULT_BOUND_MS + 2_000, mark);
    report(t, 'node away 3 s', { referenceSetAfterNodeBackMs: set.atMs - backAt });
    assert.deepEqual(ownerRefsOf(standIn.lease()), [{ apiVersion: 'v1', kind: 'Node', name: 'node-reborn', uid: thirdUid }]);
    assert.equal(logsWith(world, 'Lease renewal failing', mark).length, 0, 'a missing Node is not a failed renewal');
    await assertAgentAlive(world, pid);
  });
});
