// The Relister driven through a scripted runtime on a manual clock: what each relist's answer,
// failure, hang or abort writes to its ledger, and so how the runtime is judged. The judgement
// itself, row by row, is relist-ledger.test.ts's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { ScriptedRuntimeClient, testContainer, testSandbox } from '../stand-ins/doubles/scripted-runtime-client.ts';
import { Relister, type RelistOutcome } from './relister.ts';

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

// judgeRuntime's table, read from docs/design.md ("The runtime, from the relists"): each row's
// records, built by hand, at both sides of the threshold where it has one, must be judged as the
// row says. A record: [last success began at, last to finish (began at, its fault's cause or

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

test('an outcome carries what its readers need: the counts of the last success, and how many older events this relist pushed out of the buffer', async () => {
  const clock = new ManualClock();
  const client = new ScriptedRuntimeClient();
  const outcomes: RelistOutcome[] = [];
  const relister = new Relister({ client, clock, deadlineMs: DEADLINE, thresholdMs: THRESHOLD, eventCapacity: 2, onOutcome: (o) => outcomes.push(o) });
  const running = (...ids: string[]) => ids.map((id) => testContainer(id, 'CONTAINER_RUNNING'));
  const relist = async (how: 'answer' | 'fail', ids: string[] = []): Promise<void> => {
    const tick = relister.tick();
    await Promise.resolve();
    if (how === 'answer') client.next().answer({ sandboxes: [testSandbox('pod-1', 'SANDBOX_READY')], containers: running(...ids) });
    else client.next().fail('unavailable', 'connection refused');
    await tick;
  };
  await relist('answer'); // the baseline
  await relist('answer', ['a', 'b', 'c']); // 3 events into a buffer of 2: 1 dropped
  await relist('fail');
  await relist('answer', ['a', 'b', 'c', 'd', 'e']); // 2 more events, 2 dropped
  assert.deepEqual(outcomes.map((o) => [o.result, o.counts?.containers, o.eventsDropped]), [
    ['success', 0, 0],
    ['success', 3, 1],
    ['unavailable', 3, 0], // a failure keeps the last success's counts and drops nothing
    ['success', 5, 2],
  ]);
  assert.deepEqual(outcomes.at(-1)?.counts, relister.counts(), 'the same counts the relister shows');
});
