// Leader election against the API stand-in, on manual clocks (acceptance 2 of the fleet issue).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { FencedError, type Term } from '../../src/election/term.ts';
import { ELECTION_LEASE_NAME } from '../../src/election/leader-elector.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import type { Lease } from '../../src/kube/kube-types.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { Election, NAMESPACE, authFor, type Candidate } from './election-harness.ts';

const LEASE_MS = 15_000;
const RENEW_MS = 10_000;
const RETRY_MS = 2_000;
const TARGET = 'fenced-target';

async function setup(t: TestContext): Promise<{ server: ApiServerHandle; election: Election; raw: KubeClient }> {
  const server = await startApiServer({ clock: new SystemClock() });
  const election = new Election(server.url);
  const rawClock = new SystemClock();
  const raw = new KubeClient({ auth: authFor(server.url, rawClock), clock: rawClock });
  t.after(async () => {
    await election.close();
    raw.close();
    await server.close();
  });
  await raw.createLease(NAMESPACE, { metadata: { name: TARGET, namespace: NAMESPACE }, spec: { holderIdentity: 'nobody' } });
  return { server, election, raw };
}

/** A leader task that writes the target lease every 500 ms of its clock, through its fence. */
function writer(options: { ignoresSignal: boolean; stop: { now: boolean }; refused: Map<string, number> }) {
  return (term: Term, c: Candidate): void => {
    const key = `${c.id}#${term.number}`;
    void (async () => {
      while (!options.stop.now && (options.ignoresSignal || !term.signal.aborted)) {
        c.inFlight++;
        try {
          await term.fenced(`PATCH leases ${TARGET}`, (signal) =>
            c.client.patchLease(NAMESPACE, TARGET, { spec: { holderIdentity: key } }, { signal }));
        } catch (err) {
          if (err instanceof FencedError) options.refused.set(key, (options.refused.get(key) ?? 0) + 1);
        } finally {
          c.inFlight--;
        }
        await c.clock.sleep(500);
      }
    })();
  };
}

/** The writers of the target lease, in the order the server received them (successful writes). */
function targetWrites(server: ApiServerHandle): Array<{ key: string; seq: number }> {
  return server.requests
    .filter({ method: 'PATCH', path: new RegExp(`/leases/${TARGET}$`) })
    .filter((r) => r.status === 200)
    .map((r) => ({ key: String((r.parsed as { spec: { holderIdentity: string } }).spec.holderIdentity), seq: r.seq }));
}

/** The overlap detector: every term's writes form one unbroken run in arrival order. */
function assertNoOverlap(server: ApiServerHandle): void {
  const writes = targetWrites(server);
  const finished = new Set<string>();
  let current: string | undefined;
  for (const w of writes) {
    if (w.key === current) continue;
    assert.ok(!finished.has(w.key), `term ${w.key} wrote again after ${current ?? '?'} had written (seq ${w.seq}): two terms overlapped`);
    if (current !== undefined) finished.add(current);
    current = w.key;
  }
}

async function holder(raw: KubeClient): Promise<Lease> {
  return raw.getLease(NAMESPACE, ELECTION_LEASE_NAME);
}

test('election: of three electors started together, exactly one leads, and keeps leading through renewals', async (t) => {
  const { election, raw } = await setup(t);
  const [a, b, c] = ['a', 'b', 'c'].map((id) => election.add(id));
  for (const x of [a, b, c]) x?.elector.start();
  await election.run(300);
  assert.equal(election.leaders().length, 1, 'one leader after the first round');
  const first = election.leaders()[0];
  await election.run(60_000, () => assert.deepEqual(election.leaders(), [first], 'the same single leader at every step'), 250);
  const lease = await holder(raw);
  assert.equal(lease.spec?.holderIdentity, first);
  assert.equal(lease.spec?.leaseDurationSeconds, 15);
  assert.equal(lease.metadata.labels?.['nodepulse.io/role'], 'leader-election');
});

test('election: a write conflict ends belief at once, long before the renew deadline', async (t) => {
  const { election, raw } = await setup(t);
  const a = election.add('a');
  a.elector.start();
  await election.run(200);
  assert.ok(a.elector.isLeader(), 'precondition: a leads');
  const term = a.elector.term;
  // Someone else writes the lease behind a's back (a newer resourceVersion).
  const current = await holder(raw);
  await raw.patchLease(NAMESPACE, ELECTION_LEASE_NAME, { metadata: { annotations: { touched: 'yes' } } });
  assert.ok(current.metadata.resourceVersion !== undefined);
  // a's next renewal (one retry period later) is a PUT with the old resourceVersion: 409.
  await election.run(RETRY_MS);
  assert.equal(a.elector.isLeader(), false, 'belief ended on the conflict');
  assert.equal(term?.signal.aborted, true, "the term's signal aborted");
  const renewals = a.clock.monotonicMs();
  assert.ok(renewals < RENEW_MS, `precondition: still within the renew deadline (${renewals} ms)`);
});

test('election: an elector starved past renewDeadline reads not-leading on its own clock before its loop runs again', async (t) => {
  const { election } = await setup(t);
  const a = election.add('a');
  a.elector.start();
  await election.run(200);
  assert.ok(a.elector.isLeader(), 'precondition: a leads');
  const term = a.elector.term;
  const pending = a.clock.pendingTimers();
  a.clock.jump(RENEW_MS); // no timer fires: the event loop was "blocked"
  assert.equal(a.clock.pendingTimers(), pending, 'precondition: no timer ran');
  assert.equal(a.elector.isLeader(), false);
  assert.equal(term?.isCurrent(), false);
  await assert.rejects(term?.fenced('PATCH x', () => Promise.resolve(1)) ?? Promise.resolve(), FencedError);
});

test('election: an aborted leader is replaced once the lease duration passes on the others\' clocks, and not before', async (t) => {
  const { election } = await setup(t);
  const a = election.add('a');
  a.elector.start();
  await election.run(200, () => {}, 100, [a]);
  assert.ok(a.elector.isLeader(), 'precondition: a leads');
  // The followers start on clocks with other origins: only their own elapsed time matters.
  const b = election.add('b', undefined, 5_000_000);
  const c = election.add('c', undefined, 77);
  b.elector.start();
  c.elector.start();
  await election.run(10_000, () => assert.deepEqual(election.leaders(), ['a']));
  await a.elector.abort(); // a crash: nothing is released
  const followers = [b, c];
  let elapsed = 0;
  let tookOverAt: number | undefined;
  await election.run(
    LEASE_MS + 3 * RETRY_MS,
    () => {
      elapsed += 100;
      const leaders = election.leaders();
      if (tookOverAt === undefined && leaders.length > 0) tookOverAt = elapsed;
      assert.ok(leaders.length <= 1, `at most one leader (${leaders.join(',')})`);
      // a's last renewal was at most one retry period before the crash, and the followers saw it
      // at most a jittered retry period after: nobody may lead before duration − retry period.
      if (elapsed < LEASE_MS - RETRY_MS) assert.deepEqual(leaders, [], `nobody leads ${elapsed} ms after the crash`);
    },
    100,
    followers,
  );
  assert.ok(tookOverAt !== undefined, 'someone took over');
  assert.ok(tookOverAt <= LEASE_MS + 2 * RETRY_MS, `took over ${tookOverAt} ms after the crash, within duration + 2 retry periods`);
  assert.ok(tookOverAt >= LEASE_MS - RETRY_MS, `and not before (${tookOverAt} ms)`);
});

test('election: a stopped leader releases the lease, and another takes over at its next retry', async (t) => {
  const { election, raw } = await setup(t);
  const a = election.add('a');
  a.elector.start();
  await election.run(200, () => {}, 100, [a]);
  const b = election.add('b');
  b.elector.start();
  await election.run(3_000);
  assert.deepEqual(election.leaders(), ['a'], 'precondition: a leads, b follows');
  await a.elector.stop();
  const released = await holder(raw);
  assert.equal(released.spec?.holderIdentity, '', 'the lease was released');
  let elapsed = 0;
  let tookOverAt: number | undefined;
  await election.run(
    2 * RETRY_MS,
    () => {
      elapsed += 100;
      if (tookOverAt === undefined && b.elector.isLeader()) tookOverAt = elapsed;
    },
    100,
    [b],
  );
  assert.ok(tookOverAt !== undefined && tookOverAt <= RETRY_MS * 1.2 + 100, `b took over at its next retry (${tookOverAt} ms)`);
});

test('election: leader-task writes never come from two electors in the same term, across crashes, stops and starvation', async (t) => {
  const { server, election } = await setup(t);
  const stop = { now: false };
  t.after(() => {
    stop.now = true;
  });
  const refused = new Map<string, number>();
  const task = writer({ ignoresSignal: true, stop, refused });
  const [a, b, c] = ['a', 'b', 'c'].map((id) => election.add(id, task));
  if (a === undefined || b === undefined || c === undefined) throw new Error('precondition: three electors');
  for (const x of [a, b, c]) x.elector.start();
  await election.run(5_000, () => assert.ok(election.leaders().length <= 1));
  // Starve whoever leads, let the others move on, then let the starved one run again.
  const starved = election.candidates.find((x) => x.elector.isLeader());
  assert.ok(starved !== undefined, 'precondition: someone leads');
  const others = election.candidates.filter((x) => x !== starved);
  // Its clock runs on (time passes) but its event loop is blocked: no timer of its fires.
  await election.run(LEASE_MS + 3 * RETRY_MS, () => starved.clock.jump(100), 100, others);
  await election.run(5_000, () => assert.ok(election.leaders().length <= 1));
  // Crash the leader now, and later stop the next one cleanly.
  const crashed = election.candidates.find((x) => x.elector.isLeader());
  await crashed?.elector.abort();
  await election.run(LEASE_MS + 3 * RETRY_MS, () => assert.ok(election.leaders().length <= 1));
  await election.candidates.find((x) => x.elector.isLeader())?.elector.stop();
  await election.run(5_000, () => assert.ok(election.leaders().length <= 1));

  const terms = new Set(targetWrites(server).map((w) => w.key));
  assert.ok(terms.size >= 3, `precondition: at least three terms wrote (${[...terms].join(', ')})`);
  assertNoOverlap(server);
  assert.ok([...refused.values()].some((n) => n > 0), 'precondition: a task that ignored its signal was refused');
});

test('election: a leader task that ignores its signal can write nothing after belief ends', async (t) => {
  const { server, election } = await setup(t);
  const stop = { now: false };
  t.after(() => {
    stop.now = true;
  });
  const refused = new Map<string, number>();
  const a = election.add('a', writer({ ignoresSignal: true, stop, refused }));
  a.elector.start();
  await election.run(2_000);
  const term = a.elector.term;
  assert.ok(term !== undefined, 'precondition: a leads');
  const key = `a#${term.number}`;
  assert.ok(targetWrites(server).some((w) => w.key === key), 'precondition: the task wrote while leading');
  a.clock.jump(RENEW_MS); // starved: belief ends on a's clock
  const endedAt = server.requests.all().at(-1)?.seq ?? 0;
  await election.run(5_000);
  const late = targetWrites(server).filter((w) => w.key === key && w.seq > endedAt);
  assert.deepEqual(late, [], 'no write of the ended term reached the server');
  assert.ok((refused.get(key) ?? 0) >= 5, `the task kept trying and was refused (${refused.get(key) ?? 0} times)`);
});
