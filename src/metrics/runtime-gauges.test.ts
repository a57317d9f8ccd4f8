import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RuntimeHealthState } from '../relist/relist-ledger.ts';
import { runtimeGaugeValues, type RuntimeGaugeValues } from './runtime-gauges.ts';

const THRESHOLD = 180_000;
const NONE = undefined;

// The table in runtime-gauges.ts's header, row by row, with the start-up boundary:
// [the ledger's judgement, agent up for (ms), runtime_healthy, runtime_observable].
const TABLE: ReadonlyArray<[RuntimeHealthState, number, RuntimeGaugeValues['healthy'], RuntimeGaugeValues['observable']]> = [
  ['Healthy', 1_000, 1, 1],
  ['Healthy', 10 * THRESHOLD, 1, 1],
  ['Unhealthy', THRESHOLD + 1, 0, 1],
  ['NotYetObserved', 0, NONE, NONE],
  ['NotYetObserved', THRESHOLD, NONE, NONE],
  ['NotYetObserved', THRESHOLD + 1, 0, 1],
  ['CannotObserve', 0, NONE, 0],
  ['CannotObserve', THRESHOLD + 1, NONE, 0],
  ['CannotObserve', 10 * THRESHOLD, NONE, 0],
];

for (const [state, upMs, healthy, observable] of TABLE) {
  test(`a runtime ${state} with the agent up ${upMs} ms: runtime_healthy ${healthy ?? 'no sample'}, runtime_observable ${observable ?? 'no sample'}`, () => {
    assert.deepEqual(runtimeGaugeValues(state, upMs, THRESHOLD), { healthy, observable });
  });
}

test('runtime_healthy reads 0 for no state the agent cannot observe in', () => {
  for (const upMs of [0, THRESHOLD, THRESHOLD + 1, 100 * THRESHOLD]) assert.equal(runtimeGaugeValues('CannotObserve', upMs, THRESHOLD).healthy, undefined);
});
