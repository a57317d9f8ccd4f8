import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventBuffer } from './event-buffer.ts';

test('below its capacity the buffer keeps every item, oldest first, and drops none', () => {
  const b = new EventBuffer<number>(3);
  b.push(1);
  b.push(2);
  assert.deepEqual(b.toArray(), [1, 2]);
  assert.equal(b.dropped, 0);
});

test('past its capacity the ring wraps: the oldest item goes, the order stays oldest first, and each drop is counted', () => {
  const b = new EventBuffer<number>(3);
  const seen: Array<[number[], number]> = [];
  for (let i = 1; i <= 8; i++) {
    b.push(i);
    seen.push([b.toArray(), b.dropped]);
  }
  assert.deepEqual(seen, [
    [[1], 0],
    [[1, 2], 0],
    [[1, 2, 3], 0],
    [[2, 3, 4], 1],
    [[3, 4, 5], 2],
    [[4, 5, 6], 3], // wrapped once: the write position is back at the start
    [[5, 6, 7], 4],
    [[6, 7, 8], 5],
  ]);
});

test('a buffer of one keeps only the newest', () => {
  const b = new EventBuffer<string>(1);
  for (const s of ['a', 'b', 'c']) b.push(s);
  assert.deepEqual(b.toArray(), ['c']);
  assert.equal(b.dropped, 2);
});

test('a capacity that is not a whole number of at least 1 is refused', () => {
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new EventBuffer(bad), RangeError, String(bad));
});
