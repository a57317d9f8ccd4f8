import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { desiredCondition, sameState, type DesiredCondition } from './desired-condition.ts';

const THRESHOLD = 180_000;
const stamp = { monotonicMs: 0, wallMicros: 0 };
const healthy: RuntimeHealth = { state: 'Healthy', lastSuccess: stamp, lastFault: undefined, message: 'relist was last seen active 1s ago' };
const unhealthy: RuntimeHealth = {
  state: 'Unhealthy',
  why: 'silent',
  lastSuccess: stamp,
  lastFault: undefined,
  message: 'relist was last seen active 3m5s ago; threshold is 3m0s; no relist has finished since',
};
const never: RuntimeHealth = { state: 'NotYetObserved', why: 'silent', message: 'relist has yet to be successful' };

// docs/design.md's table of the agent's rows, with the start-up boundary.
const TABLE: ReadonlyArray<[string, RuntimeHealth, number, DesiredCondition | undefined]> = [
  ['a healthy runtime', healthy, 1_000, { status: 'False', reason: 'RelistHealthy', message: 'relist succeeded within the threshold of 3m0s' }],
  ['a healthy runtime long after start', healthy, 10 * THRESHOLD, { status: 'False', reason: 'RelistHealthy', message: 'relist succeeded within the threshold of 3m0s' }],
  ['an unhealthy runtime, with upstream’s message shape', unhealthy, 1_000, { status: 'True', reason: 'RelistStale', message: unhealthy.message }],
  ['a runtime not yet observed just after start', never, 0, undefined],
  ['a runtime not yet observed at exactly the threshold since start', never, THRESHOLD, undefined],
  [
    'a runtime not yet observed 1 ms past the threshold since start',
    never,
    THRESHOLD + 1,
    { status: 'True', reason: 'RelistNeverSucceeded', message: 'relist has yet to be successful; agent started 3m0.001s ago; threshold is 3m0s' },
  ],
];

for (const [name, health, sinceStart, expected] of TABLE) {
  test(`${name}: ${expected === undefined ? 'nothing is written' : `${expected.status}/${expected.reason}`}`, () => {
    assert.deepEqual(desiredCondition(health, sinceStart, THRESHOLD), expected);
  });
}

test('the state is status and reason; the message is not part of it', () => {
  assert.ok(sameState({ status: 'True', reason: 'RelistStale' }, { status: 'True', reason: 'RelistStale' }));
  assert.ok(!sameState({ status: 'True', reason: 'RelistStale' }, { status: 'True', reason: 'RelistNeverSucceeded' }));
  assert.ok(!sameState({ status: 'Unknown', reason: 'AgentLeaseStale' }, { status: 'False', reason: 'AgentLeaseStale' }));
});
