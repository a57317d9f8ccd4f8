import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { formatDuration } from '../clock/duration.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { desiredCondition, sameState } from './desired-condition.ts';

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

// The inputs of each row of docs/design.md's table ("The Node condition the agent writes"), by
// the row's first cell: [the ledger's judgement, how long the agent has been up]. Each must give
// the row's condition, or nothing.
const CASES: Readonly<Record<string, ReadonlyArray<readonly [RuntimeHealth, number]>>> = {
  Healthy: [[healthy, 1_000], [healthy, 10 * THRESHOLD]],
  Unhealthy: [[unhealthy, 1_000], [unhealthy, 10 * THRESHOLD]],
  'NotYetObserved, agent up for more than the threshold': [[never, THRESHOLD + 1], [never, 10 * THRESHOLD]],
  'NotYetObserved, agent up for no more than the threshold': [[never, 0], [never, THRESHOLD]],
  'CannotObserve, agent up for more than the threshold': [[blind, THRESHOLD + 1], [blindAfterSuccess, 10 * THRESHOLD]],
  'CannotObserve, agent up for no more than the threshold': [[blind, 0], [blind, THRESHOLD]],
};

/** The row's cell as a condition: `status / reason (…)`, or "nothing written". */
function documented(cell: string): { status: string; reason: string } | undefined {
  if (cell === 'nothing written') return undefined;
  const m = /^(True|False|Unknown) \/ (\w+)/.exec(cell);
  assert.ok(m, `precondition: "${cell}" reads "status / reason" or "nothing written"`);
  return { status: m[1] ?? '', reason: m[2] ?? '' };
}

/** The message each condition carries, from the ledger's words and the threshold. */
function messageOf(health: RuntimeHealth, sinceStart: number, reason: string): string {
  if (reason === 'RelistHealthy') return 'relist succeeded within the threshold of 3m0s';
  if (reason === 'RelistNeverSucceeded') return `${health.message}; agent started ${formatDuration(sinceStart)} ago; threshold is 3m0s`;
  return health.message;
}

describe("desiredCondition: docs/design.md's table", () => {
  for (const { key, expected, case: inputs } of casesOf(designTable('The Node condition the agent writes', 'runtime (the ledger\'s judgement)'), 1, CASES)) {
    test(`${key}: ${expected[0]}`, () => {
      const want = documented(expected[0] ?? '');
      for (const [health, sinceStart] of inputs) {
        const got = desiredCondition(health, sinceStart, THRESHOLD);
        const shown = `${health.state}, up ${sinceStart} ms`;
        if (want === undefined) assert.equal(got, undefined, shown);
        else assert.deepEqual(got, { ...want, message: messageOf(health, sinceStart, want.reason) }, shown);
      }
    });
  }
});

test('the message of AgentCannotObserve says what could not be observed, in the runtime\'s words', () => {
  assert.match(desiredCondition(blind, THRESHOLD + 1, THRESHOLD)?.message ?? '', /^the agent cannot observe the runtime \(permission-denied\): .*connect EACCES \/run\/containerd\/containerd\.sock/);
});

test('no state of the ledger makes an agent that cannot observe say True', () => {
  for (const sinceStart of [0, THRESHOLD, THRESHOLD + 1, 100 * THRESHOLD]) {
    for (const health of [blind, blindAfterSuccess]) assert.notEqual(desiredCondition(health, sinceStart, THRESHOLD)?.status, 'True');
  }
});

test('the state is status and reason; the message is not part of it', () => {
  assert.ok(sameState({ status: 'True', reason: 'RelistStale' }, { status: 'True', reason: 'RelistStale' }));
  assert.ok(!sameState({ status: 'True', reason: 'RelistStale' }, { status: 'True', reason: 'RelistNeverSucceeded' }));
  assert.ok(!sameState({ status: 'Unknown', reason: 'AgentLeaseStale' }, { status: 'False', reason: 'AgentLeaseStale' }));
});
