import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { Heartbeat, type HeartbeatSnapshot } from './heartbeat.ts';
import { liveness, type LivenessState } from './liveness.ts';

const WINDOWS = { idleWindowMs: 30_000, stuckWindowMs: 90_000 };

function beat(partial: Partial<HeartbeatSnapshot>): HeartbeatSnapshot {
  return { name: 'relister', inFlightSinceMs: undefined, lastEndedMs: undefined, begun: false, ended: undefined, ...partial };
}

// The heartbeats of each row of docs/design.md's table ("Every loop's own liveness"), by the
// row's first cell, with the boundaries of each window: each must be judged as the row says.
const CASES: Readonly<Record<string, ReadonlyArray<readonly [HeartbeatSnapshot, number]>>> = {
  'the loop has ended (stopped, or its task rejected)': [
    [beat({ begun: true, lastEndedMs: 0, ended: 'stopped' }), 0],
    [beat({ ended: 'task rejected' }), 0],
    [beat({ begun: true, inFlightSinceMs: 0, ended: 'stopped' }), 1],
  ],
  'never begun a tick (booting)': [[beat({}), 1_000_000]],
  'a tick in flight for ≤ the stuck window': [
    [beat({ begun: true, inFlightSinceMs: 0 }), 0],
    [beat({ begun: true, inFlightSinceMs: 0 }), 90_000],
  ],
  'a tick in flight for > the stuck window': [[beat({ begun: true, inFlightSinceMs: 0 }), 90_001]],
  'idle, last tick ended ≤ the idle window ago': [
    [beat({ begun: true, lastEndedMs: 0 }), 0],
    [beat({ begun: true, lastEndedMs: 0 }), 30_000],
  ],
  'idle, last tick ended > the idle window ago': [[beat({ begun: true, lastEndedMs: 0 }), 30_001]],
};

describe("liveness: docs/design.md's table", () => {
  for (const { key, expected, case: beats } of casesOf(designTable("Every loop's own liveness"), 1, CASES)) {
    test(`${key} → ${expected[0]}`, () => {
      for (const [snapshot, now] of beats) assert.equal(liveness(snapshot, now, WINDOWS).state, expected[0] as LivenessState, `${JSON.stringify(snapshot)} at ${now}`);
    });
  }
});

test('the reason names the window that was exceeded', () => {
  const l = liveness(beat({ begun: true, inFlightSinceMs: 0 }), 95_000, WINDOWS);
  assert.deepEqual(l, { name: 'relister', state: 'Stalled', reason: 'tick in flight for 1m35s; stuck window is 1m30s' });
});

test('a heartbeat records begin, end and a single end of the loop', () => {
  const hb = new Heartbeat('lease');
  hb.begin(10);
  assert.deepEqual(hb.snapshot(), { name: 'lease', inFlightSinceMs: 10, lastEndedMs: undefined, begun: true, ended: undefined });
  hb.end(20);
  hb.markEnded('stopped');
  hb.markEnded('later reason is ignored');
  assert.deepEqual(hb.snapshot(), { name: 'lease', inFlightSinceMs: undefined, lastEndedMs: 20, begun: true, ended: 'stopped' });
});
