import assert from 'node:assert/strict';
import { test } from 'node:test';
import { designTable } from '../../test/support/design-tables.ts';
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

const LIVENESS_STATES: readonly LivenessState[] = ['Alive', 'Unknown', 'Stalled', 'Dead'];
const RUNTIME_STATES = Object.keys(RUNTIME) as Array<RuntimeHealth['state']>;

/** docs/design.md's table of the lease gate, each row expanded ("any": every runtime state). */
function documented(): Array<[LivenessState, RuntimeHealth['state'], 'renew' | WithholdReason]> {
  return designTable('The lease gate', "relister's Liveness").rows.flatMap(([loop = '', runtime = '', lease = '']) => {
    assert.ok((LIVENESS_STATES as readonly string[]).includes(loop), `precondition: "${loop}" is a Liveness state`);
    const runtimes = runtime === 'any' ? RUNTIME_STATES : [runtime as RuntimeHealth['state']];
    for (const r of runtimes) assert.ok(r in RUNTIME, `precondition: "${r}" is a runtime state`);
    const outcome = lease === 'renew' ? 'renew' : (lease.replace(/^withhold: /, '') as WithholdReason);
    return runtimes.map((r) => [loop as LivenessState, r, outcome] as [LivenessState, RuntimeHealth['state'], 'renew' | WithholdReason]);
  });
}

test("the document's table gives every combination of the relister's Liveness and the runtime, once", () => {
  const combos = documented().map(([loop, runtime]) => `${loop}/${runtime}`);
  assert.equal(new Set(combos).size, combos.length, `a combination twice: ${combos.join(', ')}`);
  assert.equal(combos.length, LIVENESS_STATES.length * RUNTIME_STATES.length);
});

for (const [loop, runtime, expected] of documented()) {
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
