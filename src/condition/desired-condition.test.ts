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
const blind: RuntimeHealth = {
  state: 'CannotObserve',
  why: 'permission-denied',
  fault: { code: 'unavailable', message: 'RuntimeService/ListPodSandbox: rpc error: code = Unavailable desc = connect EACCES /run/containerd/containerd.sock', cause: 'permission-denied' },
  lastSuccess: undefined,
  message: 'the agent cannot observe the runtime (permission-denied): RuntimeService/ListPodSandbox: rpc error: code = Unavailable desc = connect EACCES /run/containerd/containerd.sock; no relist has succeeded since the agent started',
};
const blindAfterSuccess: RuntimeHealth = { ...blind, lastSuccess: stamp, message: 'the agent cannot observe the runtime (undecodable): …; relist was last seen active 3m1s ago; threshold is 3m0s' } as RuntimeHealth;

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
  ['an agent that cannot observe, just after start', blind, 0, undefined],
  ['an agent that cannot observe, at exactly the threshold since start', blind, THRESHOLD, undefined],
  ['an agent that cannot observe, 1 ms past the threshold since start', blind, THRESHOLD + 1, { status: 'Unknown', reason: 'AgentCannotObserve', message: blind.message }],
  ['an agent that cannot observe long after a success', blindAfterSuccess, 10 * THRESHOLD, { status: 'Unknown', reason: 'AgentCannotObserve', message: blindAfterSuccess.message }],
];

test('the message of AgentCannotObserve says what could not be observed, in the runtime\'s words', () => {
  assert.match(desiredCondition(blind, THRESHOLD + 1, THRESHOLD)?.message ?? '', /^the agent cannot observe the runtime \(permission-denied\): .*connect EACCES \/run\/containerd\/containerd\.sock/);
});

test('no state of the ledger makes an agent that cannot observe say True', () => {
  for (const sinceStart of [0, THRESHOLD, THRESHOLD + 1, 100 * THRESHOLD]) {
    for (const health of [blind, blindAfterSuccess]) assert.notEqual(desiredCondition(health, sinceStart, THRESHOLD)?.status, 'True');
  }
});

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
