import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../clock/manual-clock.ts';
import { TokenBucket } from './token-bucket.ts';

test('token bucket: a burst goes at once, then one write per 1/rate seconds', async () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket(clock, 2, 2);
  const signal = new AbortController().signal;
  const at: number[] = [];
  const writes = (async () => {
    for (let i = 0; i < 5; i++) {
      await bucket.take(signal);
      at.push(clock.monotonicMs());
    }
  })();
  await clock.advance(3_000);
  await writes;
  assert.deepEqual(at, [0, 0, 500, 1000, 1500]);
});

test('token bucket: a waiting take rejects when its signal aborts', async () => {
  const clock = new ManualClock();
  const bucket = new TokenBucket(clock, 1, 1);
  const abort = new AbortController();
  await bucket.take(abort.signal);
  const waiting = bucket.take(abort.signal);
  abort.abort(new Error('stop'));
  await assert.rejects(waiting, /stop/);
});

test('token bucket: a rate of 0 is refused with the key and the rule', () => {
  assert.throws(() => new TokenBucket(new ManualClock(), 0), /^RangeError: maxWritesPerSecond: 0 must be more than 0$/);
});
