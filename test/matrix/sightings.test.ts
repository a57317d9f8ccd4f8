// sightings(), row by row of its table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sightings } from './sightings.ts';

test('readings become signals when they change, renewals at their own time, and the first stop after the onset', () => {
  const out = sightings({
    nodes: [
      { atMs: -500, ready: { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }, condition: { status: 'False', reason: 'RelistHealthy', message: 'ok' } },
      { atMs: 5_000, ready: { status: 'True' }, condition: { status: 'False', reason: 'RelistHealthy' } },
      { atMs: 10_300, ready: { status: 'True' }, condition: { status: 'True', reason: 'RelistStale', message: 'relist was last seen active 10.2s ago' } },
      { atMs: 26_000, ready: { status: 'False', reason: 'KubeletNotReady', message: 'container runtime is down' }, condition: { status: 'True', reason: 'RelistStale' } },
      { atMs: 40_000, ready: { status: 'True' }, condition: undefined },
    ],
    renewalsMs: [-2_000, -1_000, 0, 0, 2_500, 5_000, 7_500, 9_000, 41_000, 42_000],
    fleet: [
      { atMs: -400, verdict: 'Fresh' },
      { atMs: 24_000, verdict: 'Stale' },
      { atMs: 25_000, verdict: 'Stale' },
      { atMs: 41_500, verdict: 'Fresh' },
    ],
    endOfWatchMs: 45_000,
    leaseAllowedMs: 3_000,
  });
  assert.deepEqual(out.map((x) => [x.atMs, x.signal]), [
    [-2_000, 'lease renewed'],
    [-1_000, 'lease renewed'],
    [-500, 'kubelet Ready=True'],
    [-500, 'condition False/RelistHealthy'],
    [-400, 'fleet Fresh'],
    [0, 'lease renewed'],
    [2_500, 'lease renewed'],
    [5_000, 'lease renewed'],
    [7_500, 'lease renewed'],
    [9_000, 'lease renewed'],
    [9_000, 'lease stopped'],
    [10_300, 'condition True/RelistStale'],
    [24_000, 'fleet Stale'],
    [26_000, 'kubelet Ready=False'],
    [40_000, 'kubelet Ready=True'],
    [41_000, 'lease renewed'],
    [41_000, 'lease moves'],
    [41_500, 'fleet Fresh'],
    [42_000, 'lease renewed'],
  ]);
  assert.equal(out.find((x) => x.signal === 'kubelet Ready=False')?.detail, 'KubeletNotReady: container runtime is down');
  assert.equal(out.find((x) => x.signal === 'condition True/RelistStale')?.detail, 'relist was last seen active 10.2s ago');
});

test('a gap of 1 s to 5 s between renewals is no stop at a 3 s allowance; none is reported while they keep coming', () => {
  const out = sightings({ nodes: [], renewalsMs: [0, 1_000, 3_500, 6_000, 8_000], fleet: [], endOfWatchMs: 9_000, leaseAllowedMs: 3_000 });
  assert.deepEqual(out.filter((x) => x.signal !== 'lease renewed'), []);
});
