// The list-watch informer against the API stand-in: it restarts after errors, relists after a
// 410 Expired, and reports what changed while it was away; it starts with one streaming list where
// the server serves it, and lists in pages where the server refuses it (WatchList off).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import type { Lease } from '../../src/kube/kube-types.ts';
import { Informer, kubeListWatch, type InformerEvent } from '../../src/kube/list-watch.ts';
import { authFor } from './election-harness.ts';
import { agentLease, LEASE_NAMESPACE } from './fleet-fixtures.ts';

const real = new SystemClock();
const PATH = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`;

async function until(what: string, ok: () => boolean, clock: ManualClock): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (ok()) return;
    await real.sleep(5);
    await clock.advance(250);
  }
  assert.fail(`precondition: ${what} within the poll bound`);
}

test('informer, listing in pages: restarts after the API goes away and after a failed list, relists after 410 Expired, and replays deletions', async (t) => {
  const server = await startApiServer({ clock: real, historySize: 3, watchTimeoutMs: 300 });
  const clock = new ManualClock();
  const client = new KubeClient({ auth: authFor(server.url, clock), clock });
  const abort = new AbortController();
  const events: Array<InformerEvent<string | undefined>> = [];
  const put = (name: string, micros: number): void => {
    server.store.put(agentLease(name, micros) as Parameters<typeof server.store.put>[0]);
  };
  put('a', 1_000_000);
  put('b', 1_000_000);
  const informer = new Informer<Lease, string | undefined>({
    source: kubeListWatch<Lease>({ client, path: PATH, labelSelector: 'nodepulse.io/role=node-lease', streamingList: false }),
    clock,
    project: (l) => l.spec?.renewTime,
    onEvent: (e) => events.push(e),
  });
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
    client.close();
    await server.close();
  });

  await until('the first list', () => informer.synced && informer.store.size === 2, clock);
  put('a', 2_000_000);
  await until('a watch event', () => informer.store.get('a') === '1970-01-01T00:00:02.000000Z', clock);
  assert.deepEqual(informer.counts, { lists: 1, watches: 1 });

  // The API server goes away; meanwhile more changes than its watch history holds.
  server.faults.failNext(2, `GET ${PATH}`, 500);
  await server.stopListening();
  for (let i = 3; i < 10; i++) put('a', i * 1_000_000);
  server.store.delete('leases', LEASE_NAMESPACE, 'b');
  await real.sleep(20);
  await clock.advance(1_000);
  await server.startListening();
  await until('recovery', () => informer.store.get('a') === '1970-01-01T00:00:09.000000Z' && !informer.store.has('b'), clock);
  assert.ok(informer.counts.lists >= 2, `relisted (${JSON.stringify(informer.counts)})`);
  assert.ok(events.some((e) => e.type === 'delete' && e.key === 'b'), 'the deletion while away was reported');

  // Writes elsewhere push the leases' resourceVersion out of the server's history; when the
  // server ends the watch (its timeout), the informer's re-watch gets 410 Expired and relists.
  const lists = informer.counts.lists;
  for (let i = 0; i < 5; i++) server.store.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: `n${i}` } });
  await until('a relist after 410', () => informer.counts.lists === lists + 1, clock);
  assert.equal(informer.store.get('a'), '1970-01-01T00:00:09.000000Z');
});

test('informer, streaming: one WATCH with sendInitialEvents and no LIST, changes on the same stream, and after the API goes away a new stream that reports the deletion', async (t) => {
  const server = await startApiServer({ clock: real });
  const clock = new ManualClock();
  const client = new KubeClient({ auth: authFor(server.url, clock), clock });
  const abort = new AbortController();
  const events: Array<InformerEvent<string | undefined>> = [];
  const put = (name: string, micros: number): void => {
    server.store.put(agentLease(name, micros) as Parameters<typeof server.store.put>[0]);
  };
  put('a', 1_000_000);
  put('b', 1_000_000);
  const informer = new Informer<Lease, string | undefined>({
    source: kubeListWatch<Lease>({ client, path: PATH, labelSelector: 'nodepulse.io/role=node-lease' }),
    clock,
    project: (l) => l.spec?.renewTime,
    onEvent: (e) => events.push(e),
  });
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
    client.close();
    await server.close();
  });
  await until('the streaming list', () => informer.synced && informer.store.size === 2, clock);
  put('a', 2_000_000);
  await until('a change on the same stream', () => informer.store.get('a') === '1970-01-01T00:00:02.000000Z', clock);
  const asked = server.requests.all().filter((r) => r.path === PATH).map((r) => `${r.method} ${JSON.stringify(r.query)}`);
  assert.equal(asked.length, 1, `one request: ${asked.join(', ')}`);
  assert.match(asked[0] ?? '', /^GET \{.*"sendInitialEvents":"true","resourceVersionMatch":"NotOlderThan","allowWatchBookmarks":"true".*"watch":"true"\}$/);
  assert.doesNotMatch(asked[0] ?? '', /"resourceVersion"/, 'no resourceVersion: a consistent list');
  assert.deepEqual(informer.counts, { lists: 1, watches: 1 });

  await server.stopListening();
  server.store.delete('leases', LEASE_NAMESPACE, 'b');
  await real.sleep(20);
  await clock.advance(1_000);
  await server.startListening();
  await until('a new stream', () => !informer.store.has('b'), clock);
  assert.ok(events.some((e) => e.type === 'delete' && e.key === 'b'), 'the deletion while away was reported');
  assert.equal(server.requests.all().filter((r) => r.path === PATH && r.query['watch'] !== 'true').length, 0, 'never a LIST');
});

test('informer, streaming refused (the WatchList gate off): the 422, then a LIST in pages and a WATCH from its resourceVersion', async (t) => {
  const server = await startApiServer({ clock: real, watchList: false });
  const clock = new ManualClock();
  const client = new KubeClient({ auth: authFor(server.url, clock), clock });
  const abort = new AbortController();
  server.store.put(agentLease('a', 1_000_000) as Parameters<typeof server.store.put>[0]);
  const informer = new Informer<Lease, string | undefined>({
    source: kubeListWatch<Lease>({ client, path: PATH, labelSelector: 'nodepulse.io/role=node-lease' }),
    clock,
    project: (l) => l.spec?.renewTime,
  });
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
    client.close();
    await server.close();
  });
  await until('the paged list', () => informer.synced && server.requests.all().filter((r) => r.path === PATH).length === 3, clock);
  const asked = server.requests.all().filter((r) => r.path === PATH).map((r) => [r.status, r.query['sendInitialEvents'] ?? '', r.query['limit'] ?? '', r.query['watch'] ?? '', r.query['resourceVersion'] ?? '']);
  const listRv = String(server.store.resourceVersion());
  assert.deepEqual(asked, [[422, 'true', '', 'true', ''], [200, '', '500', '', ''], [200, '', '', 'true', listRv]]);
  assert.equal(informer.store.get('a'), '1970-01-01T00:00:01.000000Z');
});
