// The judgement over a relist ledger's record, judgeRuntime(), row by row from docs/design.md;
// the Relister that writes the record is tested in relister.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import type { CriFault } from '../cri/cri-error.ts';
import type { FaultCause } from '../cri/fault-cause.ts';
import { judgeRuntime, type LedgerRecord } from './relist-ledger.ts';

const THRESHOLD = 180_000;

test('at exactly the threshold it is still healthy, and one millisecond past it is not', () => {
  const record: LedgerRecord = {
    lastSuccess: { monotonicMs: 1000, wallMicros: 0 },
    lastFinished: { began: { monotonicMs: 1000, wallMicros: 0 }, fault: undefined },
    inFlightSince: undefined,
  };
  assert.equal(judgeRuntime(record, 1000 + THRESHOLD, THRESHOLD).state, 'Healthy');
  assert.equal(judgeRuntime(record, 1000 + THRESHOLD + 1, THRESHOLD).state, 'Unhealthy');
});

// judgeRuntime's table, read from docs/design.md ("The runtime, from the relists"): each row's
// records, built by hand, at both sides of the threshold where it has one, must be judged as the
// row says. A record: [last success began at, last to finish (began at, its fault's cause or
// success), in flight since, now].
const T = THRESHOLD;
const at = (monotonicMs: number) => ({ monotonicMs, wallMicros: monotonicMs * 1000 });
const faultOf = (cause: FaultCause): CriFault => ({ code: cause === 'hung' ? 'deadline_exceeded' : 'unavailable', message: `a ${cause} fault`, cause });
type Finished = [number, FaultCause | 'success'];
type Judged = readonly [number | undefined, Finished | undefined, number | undefined, number];
const JUDGE_CASES: Readonly<Record<string, readonly Judged[]>> = {
  'none has finished | –': [
    [undefined, undefined, undefined, 5_000],
    [undefined, undefined, 1_000, 5_000],
  ],
  'none has succeeded | failed, blaming the runtime': [
    [undefined, [1_000, 'refused'], undefined, 2_000],
    [undefined, [10 * T, 'hung'], undefined, 10 * T + 1],
  ],
  'none has succeeded | failed, blaming the agent': [
    [undefined, [0, 'permission-denied'], undefined, 1],
    [undefined, [0, 'no-socket'], 1_000, 1_500],
  ],
  'the last success began ≤ threshold ago | anything': [
    [1_000, [2_000, 'undecodable'], undefined, 1_000 + T],
    [1_000, [2_000, 'refused'], undefined, 1_000 + T],
    [1_000, [1_000, 'success'], 2_000, 1_000 + T],
  ],
  'the last success began > threshold ago (strict >) | failed after it, blaming the agent': [
    [1_000, [T, 'unimplemented'], undefined, 1_000 + T + 1],
    [1_000, [T, 'oversized'], undefined, 1_000 + T + 1],
  ],
  'the last success began > threshold ago | failed after it, blaming the runtime': [[1_000, [T, 'vanished'], undefined, 1_000 + T + 1]],
  'the last success began > threshold ago | none since it (a hung relist, or a loop that stopped asking)': [
    [1_000, [1_000, 'success'], 2_000, 1_000 + T + 1],
    [1_000, [1_000, 'success'], undefined, 1_000 + T + 1],
  ],
};

/** The row's judgement: its state, and the why in its parentheses ("its cause": the fault's). */
function documentedHealth(cell: string, record: LedgerRecord): { state: string; why: string | undefined } {
  const m = /^(\w+)(?: \(([^,)]+))?/.exec(cell);
  assert.ok(m, `precondition: "${cell}" starts with a state`);
  const why = m[2] === 'its cause' ? record.lastFinished?.fault?.cause : m[2];
  return { state: m[1] ?? '', why };
}

describe("judgeRuntime: docs/design.md's table", () => {
  for (const { key, expected, case: records } of casesOf(designTable('The runtime, from the relists'), 2, JUDGE_CASES)) {
    test(`${key} → ${expected[0]}`, () => {
      for (const [success, finished, inFlight, now] of records) {
        const record: LedgerRecord = {
          lastSuccess: success === undefined ? undefined : at(success),
          lastFinished: finished === undefined ? undefined : { began: at(finished[0]), fault: finished[1] === 'success' ? undefined : faultOf(finished[1]) },
          inFlightSince: inFlight === undefined ? undefined : at(inFlight),
        };
        const health = judgeRuntime(record, now, T);
        assert.deepEqual({ state: health.state, why: 'why' in health ? health.why : undefined }, documentedHealth(expected[0] ?? '', record), JSON.stringify({ record, now }));
      }
    });
  }
});

test('judgeRuntime: CannotObserve keeps the runtime\'s words, and says since when nothing succeeded', () => {
  const eacces: CriFault = { code: 'unavailable', message: 'RuntimeService/ListPodSandbox: rpc error: code = Unavailable desc = connect EACCES /run/containerd/containerd.sock', cause: 'permission-denied' };
  const never = judgeRuntime({ lastSuccess: undefined, lastFinished: { began: at(0), fault: eacces }, inFlightSince: undefined }, 10, T);
  assert.deepEqual(never, {
    state: 'CannotObserve',
    why: 'permission-denied',
    fault: eacces,
    lastSuccess: undefined,
    message: `the agent cannot observe the runtime (permission-denied): ${eacces.message}; no relist has succeeded since the agent started`,
  });
  const past = judgeRuntime({ lastSuccess: at(0), lastFinished: { began: at(5_000), fault: eacces }, inFlightSince: undefined }, T + 5_000, T);
  assert.equal(past.message, `the agent cannot observe the runtime (permission-denied): ${eacces.message}; relist was last seen active 3m5s ago; threshold is 3m0s`);
  assert.equal(past.state === 'CannotObserve' && past.lastSuccess?.monotonicMs, 0);
});
