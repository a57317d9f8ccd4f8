import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import type { HeartbeatSnapshot } from '../liveness/heartbeat.ts';
import { electionHealthCheck } from './election-health.ts';

const RETRY_MS = 2_000;

function beat(partial: Partial<HeartbeatSnapshot>): HeartbeatSnapshot {
  return { name: 'leader-election', inFlightSinceMs: undefined, lastEndedMs: undefined, begun: false, ended: undefined, ...partial };
}

// The heartbeats of each row of docs/design.md's table (under "Leader election"), by the row's
// first cell, at both edges of the two retry periods: each must give the check the row says.
const CASES: Readonly<Record<string, ReadonlyArray<readonly [HeartbeatSnapshot, number]>>> = {
  'ended (stopped, or its task rejected)': [
    [beat({ begun: true, lastEndedMs: 0, ended: 'stopped' }), 0],
    [beat({ begun: true, inFlightSinceMs: 0, ended: 'task rejected' }), 1],
  ],
  'no step begun yet (the loop is starting)': [[beat({}), 1_000_000]],
  'a step in flight for ≤ two retry periods': [
    [beat({ begun: true, inFlightSinceMs: 0 }), 0],
    [beat({ begun: true, inFlightSinceMs: 0 }), 2 * RETRY_MS],
  ],
  'a step in flight for > two retry periods': [[beat({ begun: true, inFlightSinceMs: 0 }), 2 * RETRY_MS + 1]],
  'idle, the last step ended ≤ two retry periods ago': [
    [beat({ begun: true, lastEndedMs: 0 }), 0],
    [beat({ begun: true, lastEndedMs: 0 }), 2 * RETRY_MS],
  ],
  'idle, the last step ended > two retry periods ago': [[beat({ begun: true, lastEndedMs: 0 }), 2 * RETRY_MS + 1]],
};

describe("electionHealthCheck: docs/design.md's table", () => {
  for (const { key, expected, case: beats } of casesOf(designTable('Leader election', "the election loop's heartbeat"), 1, CASES)) {
    test(`${key} → ${expected[0]}`, () => {
      assert.match(expected[0] ?? '', /^(ok|failed)$/, 'precondition: the row says ok or failed');
      for (const [snapshot, now] of beats) {
        for (const leading of [true, false]) {
          const check = electionHealthCheck(snapshot, now, RETRY_MS, leading);
          assert.equal(check.ok ? 'ok' : 'failed', expected[0], `${JSON.stringify(snapshot)} at ${now}, leading ${leading}`);
        }
      }
    });
  }
});

test('the check says whether the replica leads while ok, and why it failed otherwise', () => {
  assert.deepEqual(electionHealthCheck(beat({ begun: true, lastEndedMs: 0 }), 1_500, RETRY_MS, true), {
    name: 'leader-election',
    ok: true,
    reason: 'leading: last tick ended 1.5s ago',
  });
  assert.deepEqual(electionHealthCheck(beat({ begun: true, lastEndedMs: 0 }), 1_500, RETRY_MS, false).reason, 'standby: last tick ended 1.5s ago');
  assert.deepEqual(electionHealthCheck(beat({ begun: true, inFlightSinceMs: 0 }), 5_000, RETRY_MS, true), {
    name: 'leader-election',
    ok: false,
    reason: 'Stalled: tick in flight for 5s; stuck window is 4s',
  });
});
