// The node lease against the API stand-in over real HTTP, on a manual clock, with a real
// Relister (scripted runtime) and real heartbeats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../clock/clock.ts';
import { Heartbeat } from '../liveness/heartbeat.ts';
import { runLoop } from '../loop/run-loop.ts';
import {
  DEADLINE_MS,
  harness,
  LEASE_PATH,
  LeaseReader,
  NAMESPACE,
  NODE,
  nodeLeaseOptions,
  READER_GRACE_MS,
  THRESHOLD_MS,
  until,
  WINDOWS,
  type Harness,
} from '../stand-ins/doubles/lease-test-harness.ts';
import { NodeLease, NodeLeaseConfigError, RECHECK_MS, type NodeLeaseOptions, type RenewalResult } from './node-lease.ts';

const INTERVAL = 10_000;
/** Real time, for polls while HTTP is in flight and the manual clock stands still. */
const real = new SystemClock();

function nodeLease(h: Harness, extra: Partial<NodeLeaseOptions> = {}): { lease: NodeLease; results: RenewalResult[] } {
  const results: RenewalResult[] = [];
  const lease = new NodeLease({
    ...nodeLeaseOptions(h),
    hooks: { renewal: (r) => results.push(r) },
    ...extra,
  });
  return { lease, results };
}

function renewTimeOf(h: Harness): string | undefined {
  return h.storedLease()?.spec?.renewTime;
}

test('a live loop gets its node a fresh lease: 6 fractional digits, holder = node, both labels', async (t) => {
  const h = await harness(t);
  const { lease } = nodeLease(h);
  await h.relist('answer');
  const delay = await lease.tick(h.signal);
  assert.equal(delay, INTERVAL, 'renewed: next in one renew interval (no jitter with random() = 0)');
  const stored = h.storedLease();
  assert.ok(stored !== undefined);
  assert.match(stored.spec?.renewTime ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  // The first PATCH (a 404: no lease yet) was stamped with the wall clock; the create that
  // followed is 1 µs later, since every stamp moves past the last one sent.
  assert.equal(stored.spec?.renewTime, '2026-01-02T03:04:05.000001Z');
  assert.equal(stored.spec?.holderIdentity, NODE);
  assert.equal(stored.spec?.leaseDurationSeconds, 40);
  assert.deepEqual(stored.metadata.labels, { 'app.kubernetes.io/name': 'nodepulse', 'nodepulse.io/role': 'node-lease' });
  const uid = (h.api.store.get('nodes', undefined, NODE)?.['metadata'] as { uid: string }).uid;
  assert.deepEqual(stored.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: NODE, uid }]);
  assert.deepEqual(lease.snapshot(), { namespace: NAMESPACE, name: NODE, renewing: true, lastRenewTime: '2026-01-02T03:04:05.000001Z', lastError: undefined });
  const reader = new LeaseReader();
  assert.equal(reader.observe(stored, h.clock.monotonicMs()), 'fresh');
});

test('a renew interval gets 0–4 % jitter', async (t) => {
  const h = await harness(t);
  await h.relist('answer');
  assert.equal(await nodeLease(h, { random: () => 0.999_999 }).lease.tick(h.signal), 10_000 + 0.999_999 * 400);
  assert.equal(await nodeLease(h, { random: () => 0.5 }).lease.tick(h.signal), 10_200);
});

test('a loop that has never ticked gets no lease and is looked at again in 1 s; a loop in its first tick is alive', async (t) => {
  const h = await harness(t);
  const { lease, results } = nodeLease(h);
  assert.equal(await lease.tick(h.signal), RECHECK_MS);
  assert.deepEqual(lease.gate(), { action: 'withhold', reason: 'relister-unknown', message: 'relister loop: no tick has begun yet' });
  assert.equal(h.requests().length, 0, 'nothing at all was sent');
  assert.equal(h.storedLease(), undefined);

  const first = h.beginRelist();
  await h.clock.advance(5_000);
  assert.equal(h.relisterLiveness().state, 'Alive', 'a loop in its first tick is alive');
  assert.equal(await lease.tick(h.signal), RECHECK_MS);
  // Withheld for the runtime's sake now (no relist has answered yet), not the loop's.
  assert.equal(lease.gate().action === 'withhold' ? (lease.gate() as { reason: string }).reason : 'renew', 'runtime-not-yet-observed');
  assert.equal(h.requests().length, 0);
  await first.answer();
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.deepEqual(results, ['withheld', 'withheld', 'success']);
  assert.equal(h.leaseRequests().filter((r) => r.method === 'PATCH' || r.method === 'POST').length, 2, 'one PATCH (404) and one POST');
});

test('a long tick inside the stuck window keeps the lease fresh at every check, past the grace period', async (t) => {
  const h = await harness(t);
  const { lease } = nodeLease(h);
  const reader = new LeaseReader();
  await h.relist('answer');
  await lease.tick(h.signal);
  const long = h.beginRelist(); // hangs for 85 s: inside the 90 s stuck window
  let last = renewTimeOf(h);
  for (let at = INTERVAL; at <= 85_000; at += INTERVAL / 2) {
    await h.clock.advance(INTERVAL / 2);
    assert.equal(h.relisterLiveness().state, 'Alive', `precondition: the loop is alive at ${at} ms`);
    assert.equal(await lease.tick(h.signal), INTERVAL, `renewed at ${at} ms`);
    assert.ok((renewTimeOf(h) ?? '') > (last ?? ''), `renewTime advanced at ${at} ms`);
    last = renewTimeOf(h);
    assert.equal(reader.observe(h.storedLease(), h.clock.monotonicMs()), 'fresh', `fresh to a reader at ${at} ms`);
  }
  assert.ok(h.clock.monotonicMs() > READER_GRACE_MS, 'precondition: the test ran past the reader grace');
  await long.answer();
});

test('a tick wedged past the stuck window stops the renewals, and the lease is then stale to a reader', async (t) => {
  const h = await harness(t);
  const { lease } = nodeLease(h);
  const reader = new LeaseReader();
  await h.relist('answer');
  h.beginRelist(); // never answered
  let lastWrite = 0;
  for (let at = 0; at <= WINDOWS.stuckWindowMs + READER_GRACE_MS + 5_000; at += RECHECK_MS) {
    const before = h.leaseRequests().length;
    const delay = await lease.tick(h.signal);
    const wrote = h.leaseRequests().length > before;
    if (wrote) lastWrite = h.clock.monotonicMs();
    if (h.clock.monotonicMs() <= WINDOWS.stuckWindowMs) assert.ok(wrote, `renewed at ${at} ms`);
    else {
      assert.equal(wrote, false, `no write at ${at} ms, past the stuck window`);
      assert.equal(delay, RECHECK_MS);
      assert.equal(h.relisterLiveness().state, 'Stalled');
    }
    reader.observe(h.storedLease(), h.clock.monotonicMs());
    await h.clock.advance(RECHECK_MS);
  }
  assert.equal(lastWrite, WINDOWS.stuckWindowMs, 'the last renewal was at the edge of the stuck window');
  assert.equal(reader.observe(h.storedLease(), h.clock.monotonicMs()), 'stale');
  assert.equal(h.runtimeHealth().state, 'Healthy', 'precondition: only the loop, not the ledger, stopped the lease');
  assert.equal(h.lines('Lease renewal withheld').length, 1, 'the withhold is logged once');
  assert.equal(h.lines('Lease renewal withheld')[0]?.['reason'], 'relister-stalled');
});

test('a dead loop stops the renewals at the next check, even with a fresh beat', async (t) => {
  const h = await harness(t);
  const { lease } = nodeLease(h);
  const loop = h.startRelisterLoop();
  h.runtime.next().answer();
  await h.clock.advance(0);
  assert.equal(await lease.tick(h.signal), INTERVAL);
  await loop.stop(); // the loop ends right after a tick that just ended: the freshest beat there is
  assert.equal(h.relisterBeat.snapshot().lastEndedMs, h.clock.monotonicMs(), 'precondition: the last beat is fresh');
  const writes = h.leaseRequests().length;
  assert.equal(await lease.tick(h.signal), RECHECK_MS);
  assert.deepEqual(lease.gate(), { action: 'withhold', reason: 'relister-dead', message: 'relister loop: loop ended: stopped' });
  assert.equal(h.leaseRequests().length, writes, 'no write');
  assert.equal(lease.snapshot().renewing, false);
});

test('a loop that recovers is renewed again', async (t) => {
  const h = await harness(t);
  const { lease, results } = nodeLease(h);
  await h.relist('answer');
  await lease.tick(h.signal);
  const wedged = h.beginRelist();
  await h.clock.advance(WINDOWS.stuckWindowMs + 1);
  assert.equal(await lease.tick(h.signal), RECHECK_MS, 'withheld while wedged');
  await wedged.answer(); // the wedged relist finally answers: the loop is alive and the runtime healthy
  assert.equal(await lease.tick(h.signal), INTERVAL, 'renewed again');
  assert.deepEqual(results, ['success', 'withheld', 'success']);
  assert.equal(renewTimeOf(h), '2026-01-02T03:05:35.001000Z');
  assert.equal(h.lines('Lease renewing').length, 2, 'renewing is logged at start and after the withhold');
});

test("the lease renews exactly when the relister's row is alive: idle 0 s, 30 s, 60 s, 150 s, then a fresh tick", async (t) => {
  const h = await harness(t);
  const { lease } = nodeLease(h);
  await h.relist('answer');
  const seen: Array<[number, string, number]> = [];
  for (const idle of [0, 30_000, 60_000, 150_000]) {
    await h.clock.advance(idle - (h.clock.monotonicMs() - (h.relisterBeat.snapshot().lastEndedMs ?? 0)));
    const before = h.leaseRequests().length;
    await lease.tick(h.signal);
    seen.push([idle, h.relisterLiveness().state, h.leaseRequests().length - before]);
  }
  await h.relist('answer');
  const before = h.leaseRequests().length;
  await lease.tick(h.signal);
  seen.push([0, h.relisterLiveness().state, h.leaseRequests().length - before]);
  // [idle ms, the row, requests sent]; the first renewal also creates the Lease (PATCH 404, GET node, POST).
  assert.deepEqual(seen, [
    [0, 'Alive', 2],
    [30_000, 'Alive', 1],
    [60_000, 'Stalled', 0],
    [150_000, 'Stalled', 0],
    [0, 'Alive', 1],
  ]);
  assert.equal(h.runtimeHealth().state, 'Healthy', 'precondition: the ledger never aged out (150 s < 180 s)');
});

test('a node whose runtime has never answered a relist gets no lease until it answers', async (t) => {
  const h = await harness(t);
  const { lease, results } = nodeLease(h);
  for (let i = 0; i < 30; i++) {
    await h.relist('fail');
    assert.equal(await lease.tick(h.signal), RECHECK_MS);
    await h.clock.advance(1_000);
  }
  assert.equal(h.requests().length, 0, 'nothing was written, nor read');
  assert.equal(h.runtimeHealth().state, 'NotYetObserved');
  await h.relist('answer');
  assert.equal(await lease.tick(h.signal), INTERVAL);
  assert.ok(h.storedLease() !== undefined);
  assert.deepEqual(results.slice(-2), ['withheld', 'success']);
  assert.equal(h.lines('Lease renewal withheld').length, 1);
  assert.equal(h.lines('Lease renewal withheld')[0]?.['reason'], 'runtime-not-yet-observed');
});

test('with the loop ticking every second and every relist failing, every check inside the threshold renews and none after', async (t) => {
  const h = await harness(t);
  const { lease } = nodeLease(h);
  const reader = new LeaseReader();
  await h.relist('answer'); // the last success began at 0
  const checks: Array<[number, boolean]> = [];
  let nextCheck = 0;
  for (let now = 0; now <= THRESHOLD_MS + READER_GRACE_MS + 10_000; now += 1_000) {
    if (now > 0) {
      await h.clock.advance(1_000);
      await h.relist('fail');
    }
    if (now >= nextCheck) {
      const before = h.leaseRequests().length;
      nextCheck = now + (await lease.tick(h.signal));
      checks.push([now, h.leaseRequests().length > before]);
    }
    reader.observe(h.storedLease(), h.clock.monotonicMs());
  }
  const inside = checks.filter(([at]) => at <= THRESHOLD_MS);
  const after = checks.filter(([at]) => at > THRESHOLD_MS);
  assert.deepEqual(inside.map(([at]) => at), Array.from({ length: 19 }, (_, i) => i * INTERVAL), 'a check every renew interval, up to and at the threshold');
  assert.ok(inside.every(([, wrote]) => wrote), 'every check inside the threshold renewed');
  assert.ok(after.length > 50, 'precondition: checks went on every second after the threshold');
  assert.ok(after.every(([, wrote]) => !wrote), 'no check after the threshold renewed');
  assert.equal(reader.observe(h.storedLease(), h.clock.monotonicMs()), 'stale', 'the node then reads stale');
  assert.equal(h.lines('Lease renewal withheld')[0]?.['reason'], 'runtime-unhealthy');
});

test('through the real scheduler: about one renewal per interval, none once the runtime is silent for the threshold, and renewal within RECHECK + period of an answer', async (t) => {
  const h = await harness(t);
  const leaseBeat = new Heartbeat('lease');
  const { lease } = nodeLease(h, { random: () => 0.5 });
  const stop = new AbortController();
  t.after(() => stop.abort());
  let answering = true;
  const relisterLoop = runLoop(async (signal) => { await h.relister.tick(signal); }, { clock: h.clock, heartbeat: h.relisterBeat, periodMs: 1_000, signal: stop.signal });
  const leaseLoop = runLoop((signal) => lease.tick(signal), { clock: h.clock, heartbeat: leaseBeat, periodMs: INTERVAL, signal: stop.signal });
  let lastAnswerBegan = 0;
  /** Moves manual time in 100 ms steps; between steps, lets HTTP finish and the runtime answer. */
  const run = async (ms: number): Promise<void> => {
    for (let i = 0; i < ms / 100; i++) {
      const pending = h.runtime.pending[0];
      if (pending !== undefined) {
        if (answering) {
          lastAnswerBegan = h.relister.ledger.record().inFlightSince?.monotonicMs ?? lastAnswerBegan;
          pending.answer();
        } else pending.fail('deadline_exceeded', 'context deadline exceeded');
      }
      await until(real, () => leaseBeat.snapshot().inFlightSinceMs === undefined, 'the lease tick to finish');
      await h.clock.advance(100);
    }
  };
  const patches = (from: number, to: number): number[] =>
    h.api.requests.filter({ method: 'PATCH', path: LEASE_PATH }).map((r) => r.atMs).filter((at) => at >= from && at < to);

  await run(60_000);
  const healthy = patches(0, 60_000);
  // The lease loop's first tick (at 0) finds no relist answered yet and looks again 1 s later;
  // from then on 10.2 s apart (random() = 0.5).
  assert.deepEqual(healthy, [1_000, 11_200, 21_400, 31_600, 41_800, 52_000]);

  answering = false; // every relist now fails; the loop itself stays alive
  const silentFrom = lastAnswerBegan;
  await run(THRESHOLD_MS + 20_000);
  const silent = patches(60_000, h.clock.monotonicMs());
  assert.ok(silent.length >= 10, 'renewals went on inside the threshold');
  assert.ok(silent.every((at) => at <= silentFrom + THRESHOLD_MS), `no renewal later than the threshold after the last answer (${silent.join(', ')})`);
  assert.equal(h.relisterLiveness().state, 'Alive', 'precondition: the relister loop stayed alive; only the runtime was silent');
  assert.equal(h.runtimeHealth().state, 'Unhealthy');

  answering = true;
  const answeredAt = h.clock.monotonicMs();
  await run(5_000);
  const back = patches(answeredAt, h.clock.monotonicMs());
  assert.ok(back.length >= 1, 'renewed again');
  assert.ok((back[0] ?? Infinity) <= answeredAt + RECHECK_MS + 1_000, `renewed within RECHECK + period (${back[0]} vs answer at ${answeredAt})`);
  stop.abort();
  await Promise.all([relisterLoop, leaseLoop]);
  assert.equal(leaseBeat.snapshot().ended, 'stopped');
  assert.ok(DEADLINE_MS < THRESHOLD_MS);
});

test('kube-node-lease is refused at construction', () => {
  const options = {
    client: { patchLease: () => Promise.reject(new Error('unexpected')), createLease: () => Promise.reject(new Error('unexpected')), getNode: () => Promise.reject(new Error('unexpected')) },
    clock: { monotonicMs: () => 0, wallMicros: () => 0, after: () => ({ cancel: () => undefined }), sleep: () => Promise.resolve() },
    nodeName: NODE,
    relisterLiveness: () => ({ name: 'relister', state: 'Alive' as const, reason: '' }),
    runtimeHealth: () => ({ state: 'NotYetObserved' as const, why: 'silent' as const, message: '' }),
    logger: undefined as never,
  };
  assert.throws(() => new NodeLease({ ...options, namespace: 'kube-node-lease' }), (err: unknown) => {
    assert.ok(err instanceof NodeLeaseConfigError);
    assert.equal(err.code, 'lease_config_invalid');
    assert.equal(err.message, 'leaseNamespace: kube-node-lease must not be used (the kubelet owns the leases there)');
    return true;
  });
  assert.throws(() => new NodeLease({ ...options, namespace: NAMESPACE, leaseDurationSeconds: 4.5 }), /leaseDuration: 4.5s must be a whole number of seconds/);
  assert.throws(() => new NodeLease({ ...options, namespace: NAMESPACE, renewIntervalMs: 40_000 }), /renewInterval: 40000ms must be more than 0 and shorter than leaseDuration \(40s\)/);
});
