import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { isoFromWallMicros, runtimeStatusView, STATUS_EVENT_FIELDS, STATUS_FIELDS, statusEvent, statusSnapshot } from './status-snapshot.ts';

const stamp = { monotonicMs: 5_000, wallMicros: 1_767_323_045_123_456 };
const fault = { code: 'unavailable' as const, message: 'connection refused', cause: 'refused' as const };
const eacces = { code: 'unavailable' as const, message: 'connect EACCES /run/containerd/containerd.sock', cause: 'permission-denied' as const };

it('maps every runtime judgement to /status, absent values as null', () => {
  const table: ReadonlyArray<[RuntimeHealth, ReturnType<typeof runtimeStatusView>]> = [
    [
      { state: 'NotYetObserved', why: 'silent', message: 'relist has yet to be successful' },
      { state: 'NotYetObserved', why: 'silent', lastSuccessBegan: null, lastFault: null, message: 'relist has yet to be successful' },
    ],
    [
      { state: 'NotYetObserved', why: 'failing', fault, message: 'relist has yet to be successful' },
      { state: 'NotYetObserved', why: 'failing', lastSuccessBegan: null, lastFault: fault, message: 'relist has yet to be successful' },
    ],
    [
      { state: 'Healthy', lastSuccess: stamp, lastFault: undefined, message: 'ok' },
      { state: 'Healthy', why: null, lastSuccessBegan: '2026-01-02T03:04:05.123Z', lastFault: null, message: 'ok' },
    ],
    [
      { state: 'Unhealthy', why: 'failing', lastSuccess: stamp, lastFault: fault, message: 'relist was last seen active 3m5s ago; threshold is 3m0s' },
      { state: 'Unhealthy', why: 'failing', lastSuccessBegan: '2026-01-02T03:04:05.123Z', lastFault: fault, message: 'relist was last seen active 3m5s ago; threshold is 3m0s' },
    ],
    [
      { state: 'CannotObserve', why: 'permission-denied', fault: eacces, lastSuccess: undefined, message: 'the agent cannot observe the runtime (permission-denied): …' },
      { state: 'CannotObserve', why: 'permission-denied', lastSuccessBegan: null, lastFault: eacces, message: 'the agent cannot observe the runtime (permission-denied): …' },
    ],
    [
      { state: 'CannotObserve', why: 'undecodable', fault: eacces, lastSuccess: stamp, message: 'm' },
      { state: 'CannotObserve', why: 'undecodable', lastSuccessBegan: '2026-01-02T03:04:05.123Z', lastFault: eacces, message: 'm' },
    ],
  ];
  for (const [health, view] of table) assert.deepEqual(runtimeStatusView(health), view, health.state);
});

it('writes wall microseconds as ISO 8601', () => {
  assert.equal(isoFromWallMicros(0), '1970-01-01T00:00:00.000Z');
  assert.equal(isoFromWallMicros(1_767_323_045_123_999), '2026-01-02T03:04:05.123Z');
});

it('shows a lifecycle event as its type, kind and time, and none of the names and ids the runtime gave', () => {
  const recorded = {
    type: 'ContainerDied' as const,
    kind: 'container' as const,
    id: 'c0ffee',
    podSandboxId: 'beef01',
    name: 'payments-api',
    seenWallMicros: 1_767_323_045_123_456,
  };
  const shown = statusEvent(recorded);
  assert.deepEqual(shown, { type: 'ContainerDied', kind: 'container', time: '2026-01-02T03:04:05.123Z' });
  assert.deepEqual(Object.keys(shown).sort(), [...STATUS_EVENT_FIELDS].sort());
  assert.doesNotMatch(JSON.stringify(shown), /c0ffee|beef01|payments-api/);
});

it('assembles /status from the readings: every field present, absent ones null, no counts before a success as zeros, events named by nothing', () => {
  const snapshot = statusSnapshot({
    node: 'node-1',
    criEndpoint: { endpoint: 'unix:///run/containerd/containerd.sock', rule: 'configured', reason: 'given', held: false, nodeRuntime: null, probed: [] },
    runtime: { state: 'NotYetObserved', why: 'silent', message: 'relist has yet to be successful' },
    runtimeConditions: [],
    loops: [{ name: 'relister', state: 'Unknown', reason: 'no tick has begun yet' }],
    lease: { namespace: 'nodepulse', name: 'node-1', renewing: false, lastRenewTime: undefined, lastError: undefined },
    counts: undefined,
    recentEvents: [{ type: 'ContainerStarted', kind: 'container', id: 'c1', podSandboxId: 'p1', name: 'web', seenWallMicros: stamp.wallMicros }],
  });
  assert.deepEqual(Object.keys(snapshot), [...STATUS_FIELDS]);
  assert.deepEqual(snapshot.lease, { namespace: 'nodepulse', name: 'node-1', renewing: false, lastRenewTime: null, lastError: null });
  assert.deepEqual(snapshot.counts, { pods: 0, podsReady: 0, podsByState: {}, containers: 0, containersByState: {} });
  assert.deepEqual(snapshot.recentEvents, [{ type: 'ContainerStarted', kind: 'container', time: '2026-01-02T03:04:05.123Z' }]);
  assert.equal(snapshot.runtime.lastSuccessBegan, null);
});
