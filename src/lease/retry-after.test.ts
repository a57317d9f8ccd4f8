// A deliberate wait is not a stall: a server that answers every lease PATCH with 429 and
// `Retry-After: 45` for 50 s, on a manual clock, against the API stand-in over real HTTP, with
// the lease loop on the real scheduler and its liveness judged as /livez judges it.
//
// | timings                             | through the storm                 | after it                      |
// |-------------------------------------|-----------------------------------|-------------------------------|
// | default: lease 40 s, renew 10 s,    | the lease loop reads Alive at     | the lease moves within one    |
// | idle window 30 s                    | every step; retries come one      | renew interval of the storm's |
// | short: lease 4 s, renew 1 s,        | renew interval apart (Retry-After | end                           |
// | idle window 2 s                     | cut to it)                        |                               |
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { SystemClock } from '../clock/clock.ts';
import { loadAgentConfig } from '../config/load-agent-config.ts';
import { Heartbeat } from '../liveness/heartbeat.ts';
import { liveness } from '../liveness/liveness.ts';
import { runLoop } from '../loop/run-loop.ts';
import { harness, LEASE_PATH, nodeLeaseOptions, until, WINDOWS } from '../stand-ins/doubles/lease-test-harness.ts';
import { NodeLease, RECHECK_MS } from './node-lease.ts';

/** Real time, for polls while HTTP is in flight and the manual clock stands still. */
const real = new SystemClock();
const STORM_MS = 50_000;
const RETRY_AFTER_SECONDS = 45;
const STEP_MS = 100;

interface Timings {
  readonly name: string;
  readonly leaseDurationSeconds: number;
  readonly renewIntervalMs: number;
  readonly idleWindowMs: number;
  /** The agent flags that set these timings (checked to be a valid config). */
  readonly flags: readonly string[];
}

const TIMINGS: readonly Timings[] = [
  { name: 'default timings', leaseDurationSeconds: 40, renewIntervalMs: 10_000, idleWindowMs: 30_000, flags: [] },
  {
    name: 'short timings',
    leaseDurationSeconds: 4,
    renewIntervalMs: 1_000,
    idleWindowMs: 2_000,
    flags: ['--lease-duration', '4s', '--renew-interval', '1s', '--idle-window', '2s', '--status-period', '1s', '--api-timeout', '2s', '--node-condition=false'],
  },
];

async function storm(t: TestContext, timings: Timings) {
  const config = loadAgentConfig({ argv: ['--node-name', 'node-1', ...timings.flags], env: {}, readFile: () => '' });
  assert.ok(config.ok, `precondition: the ${timings.name} are a valid agent config`);
  assert.equal(config.config.idleWindowMs, timings.idleWindowMs, 'precondition: the idle window is the config\'s');
  assert.equal(config.config.renewIntervalMs, timings.renewIntervalMs, 'precondition: the renew interval is the config\'s');

  const h = await harness(t);
  const lease = new NodeLease({ ...nodeLeaseOptions(h), leaseDurationSeconds: timings.leaseDurationSeconds, renewIntervalMs: timings.renewIntervalMs });
  const beat = new Heartbeat('lease');
  const stop = new AbortController();
  t.after(() => stop.abort());
  await h.relist('answer');
  const loop = runLoop((signal) => lease.tick(signal), { clock: h.clock, heartbeat: beat, periodMs: RECHECK_MS, signal: stop.signal });
  const windows = { idleWindowMs: timings.idleWindowMs, stuckWindowMs: WINDOWS.stuckWindowMs };
  const notAlive: string[] = [];
  /** Moves the manual clock in steps: a relist every second, HTTP let through, the lease loop judged at every step. */
  const run = async (ms: number): Promise<void> => {
    for (let i = 0; i < ms / STEP_MS; i++) {
      if (h.clock.monotonicMs() % 1_000 === 0) await h.relist('answer');
      await until(real, () => beat.snapshot().inFlightSinceMs === undefined, 'the lease tick to finish');
      const row = liveness(beat.snapshot(), h.clock.monotonicMs(), windows);
      if (row.state !== 'Alive') notAlive.push(`${h.clock.monotonicMs()} ms: ${row.state}: ${row.reason}`);
      await h.clock.advance(STEP_MS);
    }
  };

  await run(2.5 * timings.renewIntervalMs); // the storm begins between two renewals
  const stormFrom = h.clock.monotonicMs();
  h.api.faults.add(`PATCH ${LEASE_PATH}`, { kind: 'status', status: 429, retryAfterSeconds: RETRY_AFTER_SECONDS }, Infinity);
  await run(STORM_MS);
  h.api.faults.clear();
  const stormEnd = h.clock.monotonicMs();
  await run(timings.renewIntervalMs + 1_000);
  stop.abort();
  await loop;

  const patches = h.api.requests.filter({ method: 'PATCH', path: LEASE_PATH });
  const during = patches.filter((r) => r.atMs >= stormFrom && r.atMs < stormEnd);
  const firstAfter = patches.find((r) => r.atMs >= stormEnd && r.status === 200);
  return { h, notAlive, during, stormEnd, firstAfter };
}

for (const timings of TIMINGS) {
  test(`${timings.name}: 50 s of 429 with Retry-After 45 keep the lease loop Alive, and the lease moves within one renew interval of the end`, async (t) => {
    const { h, notAlive, during, stormEnd, firstAfter } = await storm(t, timings);
    assert.equal(h.relisterLiveness().state, 'Alive', 'precondition: the relister stayed alive');
    assert.equal(h.runtimeHealth().state, 'Healthy', 'precondition: the runtime stayed healthy: only the API made the lease wait');
    assert.ok(during.length >= 1 && during.every((r) => r.status === 429), `precondition: the storm answered every write with 429 (${during.map((r) => r.status).join(',')})`);
    assert.deepEqual(notAlive, [], 'the lease loop read Alive at every step: its wait is not a stall');
    assert.equal(during.length, STORM_MS / timings.renewIntervalMs, 'one attempt per renew interval through the storm');
    const gaps = during.slice(1).map((r, i) => r.atMs - (during[i]?.atMs ?? r.atMs));
    assert.deepEqual(gaps, gaps.map(() => timings.renewIntervalMs), 'retries come one renew interval apart: Retry-After honoured up to it, and no longer');
    assert.ok(firstAfter !== undefined, 'the lease moved again after the storm');
    assert.ok(
      firstAfter.atMs - stormEnd <= timings.renewIntervalMs,
      `the lease moved ${firstAfter.atMs - stormEnd} ms after the storm ended; bound: one renew interval (${timings.renewIntervalMs} ms)`,
    );
  });
}
