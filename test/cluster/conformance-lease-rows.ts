// The conformance table's rows on Leases: the agent's node lease (lease/lease-writer.ts) and the
// controller's election lease (election/leader-elector.ts through election-lease-api.ts), and
// the readers' list and watch of the agent leases. conformance-table.ts says what a row is.
import assert from 'node:assert/strict';
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { OUR_LEASES_SELECTOR } from '../../src/cli/cleanup-command.ts';
import { electionLeaseApi } from '../../src/election/election-lease-api.ts';
import { releasedSpec } from '../../src/election/election-step.ts';
import { ELECTION_LABELS, LeaderElector } from '../../src/election/leader-elector.ts';
import { AGENT_LEASE_SELECTOR } from '../../src/fleet/fleet-view.ts';
import type { Lease } from '../../src/kube/kube-types.ts';
import { KubeApiError } from '../../src/kube/kube-api-error.ts';
import { kubeListWatch, StreamingListRefusedError, WatchExpiredError, type WatchEvent } from '../../src/kube/list-watch.ts';
import { formatMicroTime } from '../../src/kube/meta-time.ts';
import { LeaseWriter } from '../../src/lease/lease-writer.ts';
import { errorAsRead, leaseAsRead, listAsRead, observe, watchAsRead, type Outcome } from './conformance-read.ts';
import {
  agentLease, CLOCK_START, createLease, kubeletNode, LEASE, LEASES, leasesPath, LIST_QUERY, MERGE, NODE, PUMP_MAX, PUMP_MAX_MS, PUMP_STEP, recording, OPEN,
  renewalPatch, type Row, STREAMING_LIST_QUERY, streamingListUntil, WATCH_QUERY, watchToEnd,
} from './conformance-row.ts';

export const LEASE_ROWS: readonly Row[] = [
  {
    name: 'lease GET of a lease that does not exist: 404 NotFound',
    sends: [`GET ${LEASE}`],
    product: 'election/leader-elector.ts tick (the read before it creates)',
    expect: { code: 'not_found', status: 404, reason: 'NotFound' },
    run: (ctx) => observe(() => ctx.client().getLease(ctx.namespace, ctx.name('none'))),
  },
  {
    name: 'lease merge PATCH of a lease that does not exist: 404 NotFound',
    sends: [`PATCH ${LEASE} ${MERGE}`],
    product: 'lease/lease-writer.ts renew (a 404 leads to the create)',
    expect: { code: 'not_found', status: 404, reason: 'NotFound' },
    run: (ctx) => observe(() => ctx.client().patchLease(ctx.namespace, ctx.name('none'), renewalPatch(ctx.name('none'), ctx.clock))),
  },
  {
    name: 'the agent\'s first renewal: Node GET, PATCH 404, POST with labels and the owner reference',
    sends: [`GET ${NODE}`, `PATCH ${LEASE} ${MERGE}`, `POST ${LEASES} application/json`],
    product: 'lease/lease-writer.ts renew',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'first');
      const calls: Array<{ call: string; outcome: Outcome | string }> = [];
      const writer = new LeaseWriter({ client: recording(ctx.client(), calls), clock: ctx.clock, namespace: ctx.namespace, nodeName: node.name, leaseDurationSeconds: 40 });
      const observed = await observe(() => writer.renew(OPEN), (w) => w);
      const lease = await ctx.client().getLease(ctx.namespace, node.name);
      return { outcome: observed.outcome, read: { writer: observed.read, calls, lease: leaseAsRead(lease, ctx.rv, { [node.uid]: 'the Node\'s uid' }) } };
    },
  },
  {
    name: 'the agent\'s next renewal: one merge PATCH of renewTime, the answer read as written',
    sends: [`PATCH ${LEASE} ${MERGE}`],
    product: 'lease/lease-writer.ts renew',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'renew');
      const calls: Array<{ call: string; outcome: Outcome | string }> = [];
      const writer = new LeaseWriter({ client: recording(ctx.client(), calls), clock: ctx.clock, namespace: ctx.namespace, nodeName: node.name, leaseDurationSeconds: 40 });
      await writer.renew(OPEN);
      const before = await ctx.client().getLease(ctx.namespace, node.name);
      await ctx.clock.advance(10_000);
      calls.length = 0;
      const observed = await observe(() => writer.renew(OPEN), (w) => w);
      const after = await ctx.client().getLease(ctx.namespace, node.name);
      const roles = { [node.uid]: 'the Node\'s uid' };
      return { outcome: observed.outcome, read: { writer: observed.read, calls, before: leaseAsRead(before, ctx.rv, roles), after: leaseAsRead(after, ctx.rv, roles) } };
    },
  },
  {
    name: 'lease merge PATCH that adds the owner reference to a lease made without one',
    sends: [`PATCH ${LEASE} ${MERGE}`],
    product: 'lease/lease-writer.ts renew (the Node could not be read at create)',
    expect: 'ok',
    async run(ctx) {
      const node = await kubeletNode(ctx, 'owner');
      await createLease(ctx, agentLease(node.name, ctx.namespace, ctx.clock));
      const ref = { apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid };
      const patch = { metadata: { ownerReferences: [ref] }, ...(renewalPatch(node.name, ctx.clock) as object) };
      return observe(() => ctx.client().patchLease(ctx.namespace, node.name, patch), (l) => leaseAsRead(l, ctx.rv, { [node.uid]: 'the Node\'s uid' }));
    },
  },
  {
    name: 'lease POST of a lease that exists: 409 AlreadyExists',
    sends: [`POST ${LEASES} application/json`],
    product: 'lease/lease-writer.ts renew (a create race: PATCH again); election/leader-elector.ts (lost the race)',
    expect: { code: 'already_exists', status: 409, reason: 'AlreadyExists' },
    async run(ctx) {
      const lease = agentLease(ctx.name('twice'), ctx.namespace, ctx.clock);
      await createLease(ctx, lease);
      return observe(() => ctx.client().createLease(ctx.namespace, lease));
    },
  },
  {
    name: 'lease POST whose renewTime has three fractional digits: 400 BadRequest',
    sends: [`POST ${LEASES} application/json`],
    product: 'kube/meta-time.ts formatMicroTime (six digits, always): what the server refuses otherwise',
    expect: { code: 'bad_request', status: 400, reason: 'BadRequest' },
    async run(ctx) {
      const lease = agentLease(ctx.name('millis'), ctx.namespace, ctx.clock);
      return observe(() => ctx.client().createLease(ctx.namespace, { ...lease, spec: { ...lease.spec, renewTime: '2026-03-04T05:06:07.123Z' } }));
    },
  },
  {
    name: 'lease merge PATCH whose renewTime is not a time: 422 Invalid',
    sends: [`PATCH ${LEASE} ${MERGE}`],
    product: 'lease/lease-writer.ts renew: a renewTime the server cannot parse',
    expect: { code: 'invalid', status: 422, reason: 'Invalid' },
    async run(ctx) {
      const name = ctx.name('garbage');
      await createLease(ctx, agentLease(name, ctx.namespace, ctx.clock));
      return observe(() => ctx.client().patchLease(ctx.namespace, name, { spec: { renewTime: 'not a time' } }));
    },
  },
  {
    name: 'the elector\'s first terms: GET 404, POST, PUT renewals with the resourceVersion read, PUT release',
    sends: [`GET ${LEASE}`, `POST ${LEASES} application/json`, `PUT ${LEASE} application/json`],
    product: 'election/leader-elector.ts tick and stop',
    expect: 'ok',
    async run(ctx) {
      const calls: Array<{ call: string; outcome: Outcome | string }> = [];
      const name = ctx.name('election');
      const elector = new LeaderElector({ api: recording(electionLeaseApi(ctx.client()), calls), clock: ctx.clock, identity: 'conformance-a', namespace: ctx.namespace, name, random: () => 0 });
      const signal = new AbortController().signal;
      const leads: boolean[] = [];
      await elector.tick(signal);
      leads.push(elector.isLeader());
      await ctx.clock.advance(2_000);
      await elector.tick(signal);
      leads.push(elector.isLeader());
      const held = await ctx.client().getLease(ctx.namespace, name);
      await elector.stop();
      const released = await ctx.client().getLease(ctx.namespace, name);
      return { outcome: 'ok', read: { calls, leads, held: leaseAsRead(held, ctx.rv), released: leaseAsRead(released, ctx.rv) } };
    },
  },
  {
    name: 'the elector\'s take-over PUT after another replica renewed: 409 Conflict',
    sends: [`GET ${LEASE}`, `PUT ${LEASE} application/json`],
    product: 'election/leader-elector.ts tick (take-over with a stale resourceVersion)',
    expect: 'ok',
    async run(ctx) {
      const name = ctx.name('race');
      const signal = new AbortController().signal;
      const clockA = new ManualClock({ startWallMs: CLOCK_START });
      const a = new LeaderElector({ api: electionLeaseApi(ctx.client()), clock: clockA, identity: 'conformance-a', namespace: ctx.namespace, name, random: () => 0 });
      await a.tick(signal);
      assert.equal(a.isLeader(), true, 'precondition: replica a leads');
      const calls: Array<{ call: string; outcome: Outcome | string }> = [];
      let renewBetween = false;
      const api = recording(electionLeaseApi(ctx.client()), calls, {
        getLease: async () => {
          if (!renewBetween) return;
          await clockA.advance(2_000);
          await a.tick(signal); // a renews between b's read and b's write
        },
      });
      const b = new LeaderElector({ api, clock: ctx.clock, identity: 'conformance-b', namespace: ctx.namespace, name, random: () => 0 });
      await b.tick(signal);
      await ctx.clock.advance(16_000); // past a's lease duration, on b's clock: a's lease never moved as b saw it
      renewBetween = true;
      const observed = await observe(() => b.tick(signal));
      const lease = await ctx.client().getLease(ctx.namespace, name);
      await a.abort();
      return { outcome: observed.outcome, read: { calls, bLeads: b.isLeader(), holder: lease.spec?.holderIdentity, lease: leaseAsRead(lease, ctx.rv) } };
    },
  },
  {
    name: 'lease PUT with a stale resourceVersion: 409 Conflict',
    sends: [`PUT ${LEASE} application/json`],
    product: 'election/election-lease-api.ts replaceLease',
    expect: { code: 'conflict', status: 409, reason: 'Conflict' },
    async run(ctx) {
      const name = ctx.name('stale');
      const api = electionLeaseApi(ctx.client());
      const first = await createLease(ctx, agentLease(name, ctx.namespace, ctx.clock));
      await api.replaceLease(ctx.namespace, name, { ...first, spec: { ...first.spec, renewTime: formatMicroTime(ctx.clock.wallMicros() + 1) } }, {});
      return observe(() => api.replaceLease(ctx.namespace, name, { ...first, spec: { ...first.spec, renewTime: formatMicroTime(ctx.clock.wallMicros() + 2) } }, {}));
    },
  },
  {
    name: 'lease PUT without a resourceVersion: 422 Invalid (Leases allow no unconditional update)',
    sends: [`PUT ${LEASE} application/json`],
    product: 'docs/design.md "Writing the Lease": why the renewal is a merge PATCH',
    expect: { code: 'invalid', status: 422, reason: 'Invalid' },
    async run(ctx) {
      const lease = agentLease(ctx.name('unconditional'), ctx.namespace, ctx.clock);
      await createLease(ctx, lease);
      return observe(() => electionLeaseApi(ctx.client()).replaceLease(ctx.namespace, lease.metadata.name ?? '', lease, {}));
    },
  },
  {
    name: 'lease PUT of a lease deleted since it was read (its uid a precondition): 409 Conflict',
    sends: [`PUT ${LEASE} application/json`],
    product: 'election/leader-elector.ts stop or renew after someone deleted the lease (a lost race: read again)',
    expect: { code: 'conflict', status: 409, reason: 'Conflict' },
    async run(ctx) {
      const name = ctx.name('deleted');
      const read = await createLease(ctx, agentLease(name, ctx.namespace, ctx.clock));
      const gone = await ctx.target.send({ method: 'DELETE', path: `${leasesPath(ctx)}/${name}` });
      assert.equal(gone.status, 200, `precondition: lease ${name} must be deleted: ${gone.body}`);
      return observe(
        () => electionLeaseApi(ctx.client()).replaceLease(ctx.namespace, name, { ...read, spec: releasedSpec(read.spec ?? {}, formatMicroTime(ctx.clock.wallMicros())) }, {}),
        (l) => leaseAsRead(l, ctx.rv),
      );
    },
  },
  {
    name: 'lease merge PATCH by a user RBAC does not allow: 403 Forbidden',
    sends: [`PATCH ${LEASE} ${MERGE}`],
    product: 'lease/lease-writer.ts renew, as an agent whose Role is missing',
    expect: { code: 'forbidden', status: 403, reason: 'Forbidden' },
    async run(ctx) {
      const name = ctx.name('refused');
      await createLease(ctx, agentLease(name, ctx.namespace, ctx.clock));
      return observe(() => ctx.client('nobody').patchLease(ctx.namespace, name, renewalPatch(name, ctx.clock)));
    },
  },
  {
    name: 'lease GET with a token no authenticator knows: 401 Unauthorized',
    sends: [`GET ${LEASE}`],
    product: 'kube/kube-client.ts: a 401 makes the credentials read again',
    expect: { code: 'unauthorized', status: 401, reason: 'Unauthorized' },
    run: (ctx) => observe(() => ctx.client('stranger').getLease(ctx.namespace, ctx.name('any'))),
  },
  {
    name: 'lease LIST by label, one page (fleet and the controller)',
    sends: [`GET ${LEASES}${LIST_QUERY}`],
    product: 'kube/list-watch.ts kubeListWatch list, path and selector from cli/fleet-command.ts and cli/controller-command.ts',
    expect: 'ok',
    async run(ctx) {
      for (const what of ['list-a', 'list-b']) await createLease(ctx, agentLease(ctx.name(what), ctx.namespace, ctx.clock));
      const other = agentLease(ctx.name('list-other'), ctx.namespace, ctx.clock);
      await createLease(ctx, { ...other, metadata: { ...other.metadata, labels: { 'app.kubernetes.io/name': 'nodepulse' } } });
      const source = kubeListWatch<Lease>({ client: ctx.client(), path: leasesPath(ctx), labelSelector: AGENT_LEASE_SELECTOR });
      return observe(() => source.list({ signal: new AbortController().signal, limit: 500 }), (page) => listAsRead(page, (l) => leaseAsRead(l, ctx.rv), (l) => l.metadata.name?.includes('-list-') === true));
    },
  },
  {
    name: 'lease LIST in pages: limit, then continue',
    sends: [`GET ${LEASES}${LIST_QUERY}`, `GET ${LEASES}?continue&labelSelector&limit`],
    product: 'kube/list-watch.ts list pages (LIST_PAGE_SIZE) and listAll',
    expect: 'ok',
    async run(ctx) {
      for (const what of ['page-a', 'page-b', 'page-c']) await createLease(ctx, agentLease(ctx.name(what), ctx.namespace, ctx.clock));
      const source = kubeListWatch<Lease>({ client: ctx.client(), path: leasesPath(ctx), labelSelector: AGENT_LEASE_SELECTOR });
      const signal = new AbortController().signal;
      const pages: unknown[] = [];
      const rvs: Array<string | undefined> = [];
      let continueToken: string | undefined;
      for (let i = 0; i < 3; i++) {
        const page = await source.list({ signal, limit: 2, continueToken });
        rvs.push(page.metadata.resourceVersion);
        pages.push(listAsRead(page, (l) => l.metadata.name));
        continueToken = page.metadata.continue === undefined || page.metadata.continue === '' ? undefined : page.metadata.continue;
        if (continueToken === undefined) break;
      }
      return { outcome: 'ok', read: { pages, samePageVersion: rvs.every((rv) => rv === rvs[0]) } };
    },
  },
  {
    name: 'cleanup: LIST of our leases by a set-based selector (the agents\' and the election\'s), then DELETE each',
    sends: [`GET ${LEASES}${LIST_QUERY}`, `DELETE ${LEASE}`],
    product: 'cli/cleanup-command.ts #listLeases (OUR_LEASES_SELECTOR) and #deleteLease',
    expect: 'ok',
    async run(ctx) {
      await createLease(ctx, agentLease(ctx.name('ours-agent'), ctx.namespace, ctx.clock));
      const election = agentLease(ctx.name('ours-election'), ctx.namespace, ctx.clock);
      await createLease(ctx, { ...election, metadata: { ...election.metadata, labels: { ...ELECTION_LABELS } } });
      const other = agentLease(ctx.name('not-ours'), ctx.namespace, ctx.clock);
      await createLease(ctx, { ...other, metadata: { ...other.metadata, labels: { 'nodepulse.io/role': 'something-else' } } });
      const source = kubeListWatch<Lease>({ client: ctx.client(), path: leasesPath(ctx), labelSelector: OUR_LEASES_SELECTOR });
      const listed = await source.list({ signal: new AbortController().signal, limit: 500 });
      const deleted = await Promise.all(listed.items.map((l) => observe(
        () => ctx.client().request<Lease>({ method: 'DELETE', path: `${leasesPath(ctx)}/${l.metadata.name ?? ''}`, what: `DELETE leases ${l.metadata.name ?? ''}` }),
        (answer) => ({ kind: answer.kind, name: answer.metadata.name }),
      )));
      const left = await source.list({ signal: new AbortController().signal, limit: 500 });
      return { outcome: 'ok', read: { listed: listAsRead(listed, (l) => l.metadata.name), deleted, left: listAsRead(left, (l) => l.metadata.name) } };
    },
  },
  {
    name: 'cleanup: DELETE of a lease already gone: 404 NotFound (counted as deleted)',
    sends: [`DELETE ${LEASE}`],
    product: 'cli/cleanup-command.ts #deleteLease',
    expect: { code: 'not_found', status: 404, reason: 'NotFound' },
    run: (ctx) => observe(() => ctx.client().request({ method: 'DELETE', path: `${leasesPath(ctx)}/${ctx.name('gone')}`, what: 'DELETE leases gone' })),
  },
  {
    name: 'lease WATCH from the list\'s resourceVersion, with bookmarks (the readers\' informer)',
    sends: [`GET ${LEASES}${WATCH_QUERY}`],
    product: 'kube/list-watch.ts kubeListWatch watch (its query, with a short timeoutSeconds)',
    expect: 'ok',
    async run(ctx) {
      const a = ctx.name('watch-a');
      const b = ctx.name('watch-b');
      await createLease(ctx, agentLease(a, ctx.namespace, ctx.clock));
      const source = kubeListWatch<Lease>({ client: ctx.client(), path: leasesPath(ctx), labelSelector: AGENT_LEASE_SELECTOR });
      const listed = await source.list({ signal: new AbortController().signal, limit: 500 });
      await createLease(ctx, agentLease(b, ctx.namespace, ctx.clock));
      await ctx.clock.advance(10_000);
      await ctx.client().patchLease(ctx.namespace, a, renewalPatch(a, ctx.clock));
      const gone = await ctx.target.send({ method: 'DELETE', path: `${leasesPath(ctx)}/${b}` });
      assert.equal(gone.status, 200, `precondition: lease ${b} must be deleted: ${gone.body}`);
      const unlabeled = agentLease(ctx.name('watch-unlabeled'), ctx.namespace, ctx.clock);
      const events = await watchToEnd(ctx.client(), leasesPath(ctx), { labelSelector: AGENT_LEASE_SELECTOR, resourceVersion: listed.metadata.resourceVersion ?? '' }, {
        live: () => createLease(ctx, { ...unlabeled, metadata: { ...unlabeled.metadata, labels: {} } }),
      });
      return { outcome: 'ok', read: watchAsRead(events as WatchEvent<Lease>[], (l) => leaseAsRead(l, ctx.rv)) };
    },
  },
  {
    name: 'lease streaming list (WATCH with sendInitialEvents): each agent lease ADDED, the BOOKMARK that ends the initial events, then a renewal',
    sends: [`GET ${LEASES}${STREAMING_LIST_QUERY}`],
    product: 'kube/list-watch.ts kubeListWatch watchList: the informer\'s first read and fleet\'s one listing (readAll)',
    expect: 'ok',
    async run(ctx) {
      const a = ctx.name('stream-a');
      for (const name of [a, ctx.name('stream-b')]) await createLease(ctx, agentLease(name, ctx.namespace, ctx.clock));
      const unlabeled = agentLease(ctx.name('stream-unlabeled'), ctx.namespace, ctx.clock);
      await createLease(ctx, { ...unlabeled, metadata: { ...unlabeled.metadata, labels: {} } });
      const source = kubeListWatch<Lease>({ client: ctx.client(), path: leasesPath(ctx), labelSelector: AGENT_LEASE_SELECTOR, random: () => 0 });
      const events = await streamingListUntil(source, {
        live: async () => {
          await ctx.clock.advance(10_000);
          return ctx.client().patchLease(ctx.namespace, a, renewalPatch(a, ctx.clock));
        },
        done: (seen) => seen.some((e) => e.type === 'MODIFIED' && e.object.metadata.name === a),
      });
      return { outcome: 'ok', read: watchAsRead(events, (l) => leaseAsRead(l, ctx.rv)) };
    },
  },
  {
    name: 'lease streaming list as a user RBAC refuses: 403 Forbidden, which the readers take as "list in pages"',
    sends: [`GET ${LEASES}${STREAMING_LIST_QUERY}`],
    product: 'kube/list-watch.ts streamWatch: a 400, 403 or 422 to a streaming list is StreamingListRefusedError, and the informer lists in pages for good',
    expect: { code: 'forbidden', status: 403, reason: 'Forbidden' },
    async run(ctx) {
      const source = kubeListWatch<Lease>({ client: ctx.client('nobody'), path: leasesPath(ctx), labelSelector: AGENT_LEASE_SELECTOR, random: () => 0 });
      try {
        await streamingListUntil(source, { done: () => true });
      } catch (err) {
        if (!(err instanceof StreamingListRefusedError) || !(err.cause instanceof KubeApiError)) throw err;
        return { outcome: errorAsRead(err.cause), read: { product: err.code } };
      }
      return { outcome: 'ok', read: { product: 'not refused' } };
    },
  },
  {
    name: 'lease WATCH from a resourceVersion the server no longer keeps: ERROR 410 Expired, a relist',
    sends: [`GET ${LEASES}${WATCH_QUERY}`],
    product: 'kube/list-watch.ts watchError: WatchExpiredError, and the informer relists',
    expect: 'ok',
    async run(ctx) {
      const name = ctx.name('pump');
      await createLease(ctx, agentLease(name, ctx.namespace, ctx.clock));
      const query = { labelSelector: AGENT_LEASE_SELECTOR, resourceVersion: '1' };
      const clock = new SystemClock();
      const started = clock.monotonicMs();
      let probe: WatchEvent<unknown>[] = [];
      for (let writes = 0; ; writes += PUMP_STEP) {
        probe = await watchToEnd(ctx.client(), leasesPath(ctx), query, { seconds: 1 });
        if (probe[0]?.type === 'ERROR') {
          ctx.note(`resourceVersion 1 was forgotten after ${writes} lease writes of this row, ${Math.round(clock.monotonicMs() - started)} ms`);
          break;
        }
        assert.ok(writes < PUMP_MAX && clock.monotonicMs() - started < PUMP_MAX_MS,
          `precondition: the server must forget resourceVersion 1 within ${PUMP_MAX} writes and ${PUMP_MAX_MS} ms (${writes} writes so far)`);
        for (let i = 0; i < PUMP_STEP; i++) {
          await ctx.clock.advance(1);
          await ctx.client().patchLease(ctx.namespace, name, renewalPatch(name, ctx.clock));
        }
      }
      const source = kubeListWatch<Lease>({ client: ctx.client(), path: leasesPath(ctx), labelSelector: AGENT_LEASE_SELECTOR });
      const abort = new AbortController();
      const bound = clock.after(20_000, () => abort.abort(new Error('the product\'s watch must end within 20 s')));
      let product: string;
      try {
        await source.watch('1', abort.signal, () => {});
        product = 'ended without an error';
      } catch (err) {
        product = err instanceof WatchExpiredError ? 'WatchExpiredError' : `${(err as Error).name}: ${(err as Error).message}`;
      } finally {
        bound.cancel();
      }
      return { outcome: 'ok', read: { probe: watchAsRead(probe, () => 'an object'), product } };
    },
  },

];
