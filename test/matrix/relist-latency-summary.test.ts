// summarizeRelists, row by row of its table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarizeRelists, type RelistSample } from '../../scripts/relist-latency-summary.ts';

const ok = (beganMs: number, durationMs: number): RelistSample => ({ beganMs, durationMs, result: 'success', pods: 50, containers: 100 });

test('percentiles by nearest rank over the successes; failures counted by code; the longest gap between successes', () => {
  const samples: RelistSample[] = [];
  for (let i = 0; i < 1000; i++) samples.push(ok(i * 1_000, i === 999 ? 2_500 : 1 + (i % 10)));
  samples.push({ beganMs: 1_000_500, durationMs: 20_000, result: 'deadline_exceeded', pods: 50, containers: 100 });
  samples.push(ok(1_021_600, 4));
  const s = summarizeRelists(samples, [10, 20, 30]);
  assert.deepEqual([s.relists, s.succeeded, s.failed], [1002, 1001, 1]);
  assert.deepEqual(s.byResult, { success: 1001, deadline_exceeded: 1 });
  assert.equal(s.p50Ms, 5, 'the 501st of 1,001');
  assert.equal(s.p999Ms, 10, 'the 1,000th of 1,001: the one slow relist stays above it');
  assert.equal(s.maxMs, 2_500);
  assert.deepEqual([s.over1s, s.over5s], [1, 0]);
  assert.equal(s.longestGapMs, 22_600, 'the failed relist does not end a gap: from the success at 999 s to the one at 1,021.6 s');
  assert.deepEqual([s.loadMean, s.loadMax, s.podsMax, s.containersMax], [20, 30, 50, 100]);
});

test('an empty run summarizes to zeros', () => {
  const s = summarizeRelists([], []);
  assert.deepEqual([s.relists, s.p99Ms, s.maxMs, s.longestGapMs, s.loadMean], [0, 0, 0, 0, 0]);
});
