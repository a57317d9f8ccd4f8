import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Liveness, LivenessState } from '../liveness/liveness.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { leaseGate, type WithholdReason } from './lease-gate.ts';

const stamp = { monotonicMs: 0, wallMicros: 0 };
const RUNTIME: Record<RuntimeHealth['state'], RuntimeHealth> = {
  Healthy: { state: 'Healthy', lastSuccess: stamp, lastFault: undefined, message: 'relist was last seen active 1s ago' },
  NotYetObserved: { state: 'NotYetObserved', why: 'silent', message: 'relist has yet to be successful' },
  Unhealthy: {
    state: 'Unhealthy',
    why: 'silent',
    lastSuccess: stamp,
    lastFault: undefined,
    message: 'relist was last seen active 3m1s ago; threshold is 3m0s; no relist has finished since',
  },
  CannotObserve: {
    state: 'CannotObserve',
    why: 'permission-denied',
    fault: { code: 'unavailable', message: 'connect EACCES /run/containerd/containerd.sock', cause: 'permission-denied' },
    lastSuccess: undefined,
    message: 'the agent cannot observe the runtime (permission-denied): connect EACCES /run/containerd/containerd.sock; no relist has succeeded since the agent started',
  },
};

function row(state: LivenessState): Liveness {
  return { name: 'relister', state, reason: `reason for ${state}` };
}

// docs/design.md's table of the lease gate, every combination.
const TABLE: ReadonlyArray<[LivenessState, RuntimeHealth['state'], 'renew' | WithholdReason]> = [
  ['Alive', 'Healthy', 'renew'],
  ['Alive', 'NotYetObserved', 'runtime-not-yet-observed'],
  ['Alive', 'Unhealthy', 'runtime-unhealthy'],
  ['Alive', 'CannotObserve', 'runtime-cannot-observe'],
  ['Unknown', 'Healthy', 'relister-unknown'],
  ['Unknown', 'NotYetObserved', 'relister-unknown'],
  ['Unknown', 'Unhealthy', 'relister-unknown'],
  ['Unknown', 'CannotObserve', 'relister-unknown'],
  ['Stalled', 'Healthy', 'relister-stalled'],
  ['Stalled', 'NotYetObserved', 'relister-stalled'],
  ['Stalled', 'Unhealthy', 'relister-stalled'],
  ['Stalled', 'CannotObserve', 'relister-stalled'],
  ['Dead', 'Healthy', 'relister-dead'],
  ['Dead', 'NotYetObserved', 'relister-dead'],
  ['Dead', 'Unhealthy', 'relister-dead'],
  ['Dead', 'CannotObserve', 'relister-dead'],
];

for (const [loop, runtime, expected] of TABLE) {
  test(`a relister ${loop} with a runtime ${runtime}: ${expected === 'renew' ? 'the lease is renewed' : `the lease is withheld (${expected})`}`, () => {
    const verdict = leaseGate(row(loop), RUNTIME[runtime]);
    if (expected === 'renew') assert.deepEqual(verdict, { action: 'renew' });
    else {
      assert.equal(verdict.action, 'withhold');
      assert.equal(verdict.action === 'withhold' ? verdict.reason : undefined, expected);
    }
  });
}

test('a withhold carries the words of the reading that caused it', () => {
  assert.deepEqual(leaseGate(row('Stalled'), RUNTIME.Healthy), {
    action: 'withhold',
    reason: 'relister-stalled',
    message: 'relister loop: reason for Stalled',
  });
  assert.deepEqual(leaseGate(row('Alive'), RUNTIME.Unhealthy), {
    action: 'withhold',
    reason: 'runtime-unhealthy',
    message: 'relist was last seen active 3m1s ago; threshold is 3m0s; no relist has finished since',
  });
  assert.deepEqual(leaseGate(row('Alive'), RUNTIME.CannotObserve), {
    action: 'withhold',
    reason: 'runtime-cannot-observe',
    message: RUNTIME.CannotObserve.message,
  });
});
