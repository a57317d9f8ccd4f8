import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { ScriptedRuntimeClient } from '../stand-ins/doubles/scripted-runtime-client.ts';
import type { CriFault } from '../cri/cri-error.ts';
import type { FaultCause } from '../cri/fault-cause.ts';
import { judgeRuntime, type LedgerRecord, type RuntimeHealth } from './relist-ledger.ts';
import { Relister } from './relister.ts';

const THRESHOLD = 180_000;
const DEADLINE = 60_000;

function setup(): { clock: ManualClock; client: ScriptedRuntimeClient; relister: Relister } {
  const clock = new ManualClock();
  const client = new ScriptedRuntimeClient();
  const relister = new Relister({ client, clock, deadlineMs: DEADLINE, thresholdMs: THRESHOLD });
  return { clock, client, relister };
}

/** Starts a relist, lets it reach the client, and returns the pending call plus the tick's promise. */
async function ask(s: ReturnType<typeof setup>): Promise<{ tick: Promise<unknown> }> {
  const tick = s.relister.tick();
  await Promise.resolve();
  assert.equal(s.client.pending.length, 1, 'precondition: the relist reached the runtime');
  return { tick };
}

async function succeed(s: ReturnType<typeof setup>): Promise<void> {
  const { tick } = await ask(s);
  s.client.next().answer();
  await tick;
}

async function fail(s: ReturnType<typeof setup>, message = 'connection refused'): Promise<void> {
  const { tick } = await ask(s);
  s.client.next().fail('unavailable', message);
  await tick;
}

test('a runtime no relist has answered is NotYetObserved(silent) and not healthy', () => {
  const s = setup();
  const h = s.relister.ledger.health(s.clock.monotonicMs());
  assert.deepEqual(h, { state: 'NotYetObserved', why: 'silent', message: 'relist has yet to be successful' });
});

test('a first relist that fails leaves it NotYetObserved(failing) with the runtime error', async () => {
  const s = setup();
  await fail(s, 'dial unix /run/containerd/containerd.sock: connect: no such file or directory');
  const h = s.relister.ledger.health(s.clock.monotonicMs());
  assert.equal(h.state, 'NotYetObserved');
  assert.equal(h.state === 'NotYetObserved' && h.why, 'failing');
  assert.deepEqual(h.state === 'NotYetObserved' && h.why === 'failing' && h.fault, {
    code: 'unavailable',
    message: 'dial unix /run/containerd/containerd.sock: connect: no such file or directory',
    cause: 'runtime-error',
  });
  assert.match(h.message, /relist has yet to be successful: unavailable: dial unix/);
});

test('an answered relist makes it healthy', async () => {
  const s = setup();
  await succeed(s);
  const h = s.relister.ledger.health(s.clock.monotonicMs());
  assert.equal(h.state, 'Healthy');
  assert.equal(h.message, 'relist was last seen active 0s ago');
});

test('relists failing inside the threshold leave it healthy at every step', async () => {
  const s = setup();
  await succeed(s);
  for (let second = 1; second <= 180; second++) {
    await s.clock.advance(1000);
    await fail(s);
    assert.equal(s.relister.ledger.health(s.clock.monotonicMs()).state, 'Healthy', `at ${second}s`);
  }
});

test('failing past the threshold is Unhealthy(failing), naming the last success, not the last attempt', async () => {
  const s = setup();
  await s.clock.advance(5000);
  await succeed(s); // last success began at 5 s
  for (let i = 0; i < 190; i++) {
    await s.clock.advance(1000);
    await fail(s, 'rpc error: connection reset');
  }
  const now = s.clock.monotonicMs();
  assert.equal(now, 195_000, 'precondition: 190 s after the last success');
  const h = s.relister.ledger.health(now);
  assert.equal(h.state, 'Unhealthy');
  assert.equal(h.state === 'Unhealthy' && h.why, 'failing');
  assert.equal(h.state === 'Unhealthy' && h.lastSuccess.monotonicMs, 5000);
  assert.equal(
    h.message,
    'relist was last seen active 3m10s ago; threshold is 3m0s; last relist failed: unavailable: rpc error: connection reset',
  );
});

test('a hung relist ages out as Unhealthy(silent)', async () => {
  const s = setup();
  await succeed(s);
  await s.clock.advance(1000);
  const { tick } = await ask(s); // never answered
  await s.clock.advance(THRESHOLD);
  const h = s.relister.ledger.health(s.clock.monotonicMs());
  assert.equal(h.state, 'Unhealthy');
  assert.equal(h.state === 'Unhealthy' && h.why, 'silent');
  assert.equal(h.message, 'relist was last seen active 3m1s ago; threshold is 3m0s; no relist has finished since');
  assert.ok(s.relister.ledger.record().inFlightSince !== undefined, 'the hung relist is still in flight');
  s.client.next().fail('deadline_exceeded');
  await tick;
});

test('a runtime that answers again is healthy again', async () => {
  const s = setup();
  await succeed(s);
  await s.clock.advance(THRESHOLD + 10_000);
  await fail(s);
  assert.equal(s.relister.ledger.health(s.clock.monotonicMs()).state, 'Unhealthy');
  await s.clock.advance(1000);
  await succeed(s);
  assert.equal(s.relister.ledger.health(s.clock.monotonicMs()).state, 'Healthy');
});

test('a slow relist vouches for the moment it asked', async () => {
  const s = setup();
  await s.clock.advance(10_000);
  const { tick } = await ask(s); // asked at 10 s
  await s.clock.advance(50_000); // answered at 60 s
  s.client.next().answer();
  await tick;
  assert.equal(s.relister.ledger.record().lastSuccess?.monotonicMs, 10_000);
  // Healthy until 10 s + threshold, not 60 s + threshold.
  assert.equal(s.relister.ledger.health(10_000 + THRESHOLD).state, 'Healthy');
  assert.equal(s.relister.ledger.health(10_000 + THRESHOLD + 1).state, 'Unhealthy');
});

test('at exactly the threshold it is still healthy, and one millisecond past it is not', () => {
  const record: LedgerRecord = {
    lastSuccess: { monotonicMs: 1000, wallMicros: 0 },
    lastFinished: { began: { monotonicMs: 1000, wallMicros: 0 }, fault: undefined },
    inFlightSince: undefined,
  };
  assert.equal(judgeRuntime(record, 1000 + THRESHOLD, THRESHOLD).state, 'Healthy');
  assert.equal(judgeRuntime(record, 1000 + THRESHOLD + 1, THRESHOLD).state, 'Unhealthy');
});

test('a relist stopped by its signal is not written as a runtime fault', async () => {
  const s = setup();
  await succeed(s);
  const controller = new AbortController();
  const tick = s.relister.tick(controller.signal);
  await Promise.resolve();
  controller.abort(new Error('stopping'));
  assert.equal(await tick, undefined);
  assert.equal(s.relister.ledger.record().lastFinished?.fault, undefined);
});

// judgeRuntime's table (the module header of relist-ledger.ts), row by row, on records built by
// hand: [row, last success began at, last to finish (began at, its fault's cause or success),
// in flight since, now, state, why].
const T = THRESHOLD;
const at = (monotonicMs: number) => ({ monotonicMs, wallMicros: monotonicMs * 1000 });
const faultOf = (cause: FaultCause): CriFault => ({ code: cause === 'hung' ? 'deadline_exceeded' : 'unavailable', message: `a ${cause} fault`, cause });
type Finished = [number, FaultCause | 'success'];
const JUDGE_TABLE: ReadonlyArray<[string, number | undefined, Finished | undefined, number | undefined, number, RuntimeHealth['state'], string | undefined]> = [
  ['none has finished', undefined, undefined, undefined, 5_000, 'NotYetObserved', 'silent'],
  ['none has finished, one in flight', undefined, undefined, 1_000, 5_000, 'NotYetObserved', 'silent'],
  ['none has succeeded, the last failed blaming the runtime (refused)', undefined, [1_000, 'refused'], undefined, 2_000, 'NotYetObserved', 'failing'],
  ['none has succeeded, the last failed blaming the runtime, long after start', undefined, [10 * T, 'hung'], undefined, 10 * T + 1, 'NotYetObserved', 'failing'],
  ['none has succeeded, the last failed blaming the agent (EACCES): at once', undefined, [0, 'permission-denied'], undefined, 1, 'CannotObserve', 'permission-denied'],
  ['none has succeeded, the last failed blaming the agent (no socket)', undefined, [0, 'no-socket'], 1_000, 1_500, 'CannotObserve', 'no-socket'],
  ['the last success ≤ threshold ago, the last failed blaming the agent after it', 1_000, [2_000, 'undecodable'], undefined, 1_000 + T, 'Healthy', undefined],
  ['the last success ≤ threshold ago, the last failed blaming the runtime after it', 1_000, [2_000, 'refused'], undefined, 1_000 + T, 'Healthy', undefined],
  ['the last success > threshold ago, the last failed blaming the agent after it', 1_000, [T, 'unimplemented'], undefined, 1_000 + T + 1, 'CannotObserve', 'unimplemented'],
  ['the last success > threshold ago, the last failed blaming the agent (oversized)', 1_000, [T, 'oversized'], undefined, 1_000 + T + 1, 'CannotObserve', 'oversized'],
  ['the last success > threshold ago, the last failed blaming the runtime after it', 1_000, [T, 'vanished'], undefined, 1_000 + T + 1, 'Unhealthy', 'failing'],
  ['the last success > threshold ago, none finished since it (a hung relist)', 1_000, [1_000, 'success'], 2_000, 1_000 + T + 1, 'Unhealthy', 'silent'],
  ['the last success > threshold ago, none finished since it (a loop that stopped asking)', 1_000, [1_000, 'success'], undefined, 1_000 + T + 1, 'Unhealthy', 'silent'],
];

for (const [row, success, finished, inFlight, now, state, why] of JUDGE_TABLE) {
  test(`judgeRuntime: ${row} → ${state}${why === undefined ? '' : ` (${why})`}`, () => {
    const record: LedgerRecord = {
      lastSuccess: success === undefined ? undefined : at(success),
      lastFinished: finished === undefined ? undefined : { began: at(finished[0]), fault: finished[1] === 'success' ? undefined : faultOf(finished[1]) },
      inFlightSince: inFlight === undefined ? undefined : at(inFlight),
    };
    const health = judgeRuntime(record, now, T);
    assert.equal(health.state, state);
    assert.equal('why' in health ? health.why : undefined, why);
  });
}

test('judgeRuntime: CannotObserve keeps the runtime\'s words, and says since when nothing succeeded', () => {
  const eacces: CriFault = { code: 'unavailable', message: 'RuntimeService/ListPodSandbox: rpc error: code = Unavailable desc = connect EACCES /run/containerd/containerd.sock', cause: 'permission-denied' };
  const never = judgeRuntime({ lastSuccess: undefined, lastFinished: { began: at(0), fault: eacces }, inFlightSince: undefined }, 10, T);
  assert.deepEqual(never, {
    state: 'CannotObserve',
    why: 'permission-denied',
    fault: eacces,
    lastSuccess: undefined,
    message: `the agent cannot observe the runtime (permission-denied): ${eacces.message}; no relist has succeeded since the agent started`,
  });
  const past = judgeRuntime({ lastSuccess: at(0), lastFinished: { began: at(5_000), fault: eacces }, inFlightSince: undefined }, T + 5_000, T);
  assert.equal(past.message, `the agent cannot observe the runtime (permission-denied): ${eacces.message}; relist was last seen active 3m5s ago; threshold is 3m0s`);
  assert.equal(past.state === 'CannotObserve' && past.lastSuccess?.monotonicMs, 0);
});

test('a relist the agent cannot decode, through the relister: CannotObserve at once, then Healthy when one succeeds', async () => {
  const s = setup();
  const { tick } = await ask(s);
  s.client.next().fail('other', 'RuntimeService/ListContainers: answer could not be decoded: field 1 has wire type 0, not its own at byte 1', { knownCause: 'undecodable' });
  await tick;
  const h = s.relister.ledger.health(s.clock.monotonicMs());
  assert.equal(h.state, 'CannotObserve');
  assert.equal(h.state === 'CannotObserve' && h.why, 'undecodable');
  await s.clock.advance(1000);
  await succeed(s);
  assert.equal(s.relister.ledger.health(s.clock.monotonicMs()).state, 'Healthy');
});
