import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { Heartbeat } from '../liveness/heartbeat.ts';
import { liveness } from '../liveness/liveness.ts';
import { jittered, runLoop } from './run-loop.ts';

test('the period slides: the next tick begins one period after the previous one ended', async () => {
  const clock = new ManualClock();
  const heartbeat = new Heartbeat('t');
  const controller = new AbortController();
  const starts: number[] = [];
  let release: (() => void) | undefined;
  const loop = runLoop(
    async () => {
      starts.push(clock.monotonicMs());
      if (starts.length === 2) await new Promise<void>((r) => { release = r; }); // the 2nd tick is slow
    },
    { clock, heartbeat, periodMs: 1000, signal: controller.signal },
  );
  await clock.advance(1000); // tick 2 begins at 1000 and hangs
  await clock.advance(5000); // still in flight: no overlap, no new tick
  assert.deepEqual(starts, [0, 1000]);
  assert.equal(heartbeat.snapshot().inFlightSinceMs, 1000);
  release?.(); // ends at 6000
  await clock.advance(999);
  assert.deepEqual(starts, [0, 1000]);
  await clock.advance(1);
  assert.deepEqual(starts, [0, 1000, 7000]);
  controller.abort();
  await loop;
  assert.equal(heartbeat.snapshot().ended, 'stopped');
});

test('a tick may choose the next delay', async () => {
  const clock = new ManualClock();
  const controller = new AbortController();
  const starts: number[] = [];
  const loop = runLoop(
    async () => {
      starts.push(clock.monotonicMs());
      return starts.length === 1 ? 10_000 : undefined;
    },
    { clock, heartbeat: new Heartbeat('t'), periodMs: 1000, signal: controller.signal },
  );
  await clock.advance(11_000);
  assert.deepEqual(starts, [0, 10_000, 11_000]);
  controller.abort();
  await loop;
});

test("a wait a tick chooses is judged by the idle window like any other: liveness does not trust a loop's claim about its next tick", async () => {
  const clock = new ManualClock();
  const heartbeat = new Heartbeat('lease');
  const controller = new AbortController();
  const windows = { idleWindowMs: 30_000, stuckWindowMs: 90_000 };
  // The tick says it will be back in a minute (as a loop honouring a long Retry-After would).
  const loop = runLoop(async () => 60_000, { clock, heartbeat, periodMs: 1000, signal: controller.signal });
  await clock.advance(30_000);
  assert.equal(liveness(heartbeat.snapshot(), clock.monotonicMs(), windows).state, 'Alive', 'idle exactly the idle window');
  await clock.advance(1);
  assert.deepEqual(liveness(heartbeat.snapshot(), clock.monotonicMs(), windows), {
    name: 'lease',
    state: 'Stalled',
    reason: 'last tick ended 30.001s ago; idle window is 30s',
  });
  controller.abort();
  await loop;
});

test('a tick that throws is reported and the loop goes on', async () => {
  const clock = new ManualClock();
  const controller = new AbortController();
  const errors: unknown[] = [];
  let n = 0;
  const loop = runLoop(
    async () => {
      n++;
      throw new Error(`boom ${n}`);
    },
    { clock, heartbeat: new Heartbeat('t'), periodMs: 1000, signal: controller.signal, onError: (e) => errors.push(e) },
  );
  await clock.advance(2000);
  assert.equal(n, 3);
  assert.deepEqual(errors.map((e) => (e as Error).message), ['boom 1', 'boom 2', 'boom 3']);
  controller.abort();
  await loop;
});

test('jitter adds up to the given fraction of the period', () => {
  assert.equal(jittered(10_000, 0.04, () => 0), 10_000);
  assert.equal(jittered(10_000, 0.04, () => 0.5), 10_200);
  assert.equal(jittered(10_000, 0, () => 0.5), 10_000);
});
