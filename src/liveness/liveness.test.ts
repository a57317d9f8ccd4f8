import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Heartbeat, type HeartbeatSnapshot } from './heartbeat.ts';
import { liveness, type LivenessState } from './liveness.ts';

const WINDOWS = { idleWindowMs: 30_000, stuckWindowMs: 90_000 };

function beat(partial: Partial<HeartbeatSnapshot>): HeartbeatSnapshot {
  return { name: 'relister', inFlightSinceMs: undefined, lastEndedMs: undefined, begun: false, ended: undefined, ...partial };
}

// The table in liveness.ts, row by row, with its boundaries.
const TABLE: ReadonlyArray<[string, HeartbeatSnapshot, number, LivenessState]> = [
  ['never begun a tick', beat({}), 1_000_000, 'Unknown'],
  ['in its first tick', beat({ begun: true, inFlightSinceMs: 0 }), 0, 'Alive'],
  ['a tick in flight for exactly the stuck window', beat({ begun: true, inFlightSinceMs: 0 }), 90_000, 'Alive'],
  ['a tick in flight 1 ms past the stuck window', beat({ begun: true, inFlightSinceMs: 0 }), 90_001, 'Stalled'],
  ['idle for exactly the idle window', beat({ begun: true, lastEndedMs: 0 }), 30_000, 'Alive'],
  ['idle 1 ms past the idle window', beat({ begun: true, lastEndedMs: 0 }), 30_001, 'Stalled'],
  ['ended with a fresh beat', beat({ begun: true, lastEndedMs: 0, ended: 'stopped' }), 0, 'Dead'],
  ['ended before it ever ticked', beat({ ended: 'task rejected' }), 0, 'Dead'],
  ['ended mid-tick', beat({ begun: true, inFlightSinceMs: 0, ended: 'stopped' }), 1, 'Dead'],
];

for (const [name, snapshot, now, expected] of TABLE) {
  test(`a loop ${name} is ${expected}`, () => {
    assert.equal(liveness(snapshot, now, WINDOWS).state, expected);
  });
}

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
