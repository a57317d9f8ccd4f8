// decideConditionStep's table, read from docs/design.md ("How it is written", under "The Node
// condition the agent writes"): every row of the document has its inputs here, each input is
// judged, and the step must be the row's own. "any" rows run every state; windows run at both
// sides of their boundary.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { decideConditionStep, type ConditionMemory, type ConditionRead } from './condition-step.ts';
import type { ConditionState } from './desired-condition.ts';

const REFRESH_MS = 300_000;
const VERDICT: ConditionState = { status: 'False', reason: 'RelistHealthy' };
const OTHER: ConditionState = { status: 'Unknown', reason: 'AgentLeaseStale' };
const SAME_STATUS_OTHER_REASON: ConditionState = { status: 'False', reason: 'SomethingElse' };
/** Every state the Node's condition can be in, as the loop sees it. */
const ANY: ReadonlyArray<ConditionState | undefined> = [VERDICT, OTHER, SAME_STATUS_OTHER_REASON, undefined];

interface Input {
  readonly desired: ConditionState | undefined;
  readonly seen: ConditionMemory | ConditionRead;
  readonly nowMs: number;
}

const memory = (read: boolean, lastRefreshMs: number, known: ConditionState | undefined): ConditionMemory => ({ via: 'memory', read, lastRefreshMs, known });
const aRead = (atStart: boolean, onNode: ConditionState | undefined): ConditionRead => ({ via: 'read', atStart, onNode });

/** The inputs of each row of the document's table, by the row's first two cells. */
const CASES: Readonly<Record<string, readonly Input[]>> = {
  'no verdict yet | any': ANY.flatMap((known) => [
    { desired: undefined, seen: memory(false, 0, known), nowMs: 1_000 },
    { desired: undefined, seen: memory(true, 0, known), nowMs: REFRESH_MS * 3 },
    { desired: undefined, seen: aRead(true, known), nowMs: 1_000 },
    { desired: undefined, seen: aRead(false, known), nowMs: REFRESH_MS },
  ]),
  'memory: the Node not read since start | any': ANY.map((known) => ({ desired: VERDICT, seen: memory(false, 0, known), nowMs: 1_000 })),
  'memory: refresh due (≥ refresh period ago) | any': ANY.flatMap((known) => [
    { desired: VERDICT, seen: memory(true, 1_000, known), nowMs: 1_000 + REFRESH_MS },
    { desired: VERDICT, seen: memory(true, 1_000, known), nowMs: 1_000 + REFRESH_MS * 2 },
  ]),
  "memory: refresh not due | in the verdict's state": [
    { desired: VERDICT, seen: memory(true, 1_000, VERDICT), nowMs: 1_000 },
    { desired: VERDICT, seen: memory(true, 1_000, VERDICT), nowMs: 1_000 + REFRESH_MS - 1 },
  ],
  'memory: refresh not due | missing, or in another state': [OTHER, SAME_STATUS_OTHER_REASON, undefined].flatMap((known) => [
    { desired: VERDICT, seen: memory(true, 1_000, known), nowMs: 2_000 },
    { desired: VERDICT, seen: memory(true, 1_000, known), nowMs: 1_000 + REFRESH_MS - 1 },
  ]),
  "a read at start | in the verdict's state": [{ desired: VERDICT, seen: aRead(true, VERDICT), nowMs: 1_000 }],
  "a read at a refresh | in the verdict's state": [{ desired: VERDICT, seen: aRead(false, VERDICT), nowMs: REFRESH_MS }],
  'a read, at start or at a refresh | missing, or in another state': [OTHER, SAME_STATUS_OTHER_REASON, undefined].flatMap((onNode) => [
    { desired: VERDICT, seen: aRead(true, onNode), nowMs: 1_000 },
    { desired: VERDICT, seen: aRead(false, onNode), nowMs: REFRESH_MS },
  ]),
};

const show = (s: ConditionState | undefined): string => (s === undefined ? 'none' : `${s.status}/${s.reason}`);

describe("decideConditionStep: docs/design.md's table", () => {
  for (const { key, expected, case: inputs } of casesOf(designTable('The Node condition the agent writes', 'what the loop has to go on'), 2, CASES)) {
    const [step] = expected;
    test(`${key} → ${step}`, () => {
      assert.ok(inputs.length > 0, `precondition: the row "${key}" has inputs`);
      for (const { desired, seen, nowMs } of inputs) {
        const what = seen.via === 'memory' ? `read ${seen.read}, last refresh ${seen.lastRefreshMs}, known ${show(seen.known)}` : `at start ${seen.atStart}, on the Node ${show(seen.onNode)}`;
        assert.equal(decideConditionStep(desired, seen, nowMs, REFRESH_MS), step, `verdict ${show(desired)}, ${seen.via}: ${what}, now ${nowMs}`);
      }
    });
  }
});
