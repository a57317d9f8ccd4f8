import { test } from 'node:test';
import assert from 'node:assert/strict';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import type { NodeReadiness, Verdict } from '../fleet/readiness.ts';
import { CANNOT_OBSERVE_REASON } from '../condition/desired-condition.ts';
import { AGENT_CANNOT_OBSERVE_REASON, conditionChangedByOther, decideMark, shouldPause, type MarkAction } from './mark-decision.ts';

function reading(verdict: Verdict, over: Partial<NodeReadiness> = {}): NodeReadiness {
  return {
    node: 'n',
    verdict,
    judged: true,
    notJudged: undefined,
    cordoned: false,
    markable: true,
    basis: 'reader-clock',
    leaseWallAgeMs: 1,
    sinceMovedMs: 1,
    seenMoving: true,
    renewTimeMicros: 1,
    condition: undefined,
    ...over,
  };
}

const ours = { status: 'Unknown', reason: 'AgentLeaseStale', message: '', lastTransitionTime: undefined };
const agentTrue = { status: 'True', reason: 'RelistStale', message: '', lastTransitionTime: undefined };
const healthy = { status: 'False', reason: 'RelistHealthy', message: '', lastTransitionTime: undefined };
const blind = { status: 'Unknown', reason: 'AgentCannotObserve', message: 'the agent cannot observe the runtime (permission-denied): …', lastTransitionTime: undefined };

interface Mark {
  readonly r: NodeReadiness;
  readonly paused?: boolean;
  readonly otherWrote?: boolean;
}

// The readings of each row of docs/design.md's table ("What the controller does about a node"),
// by the row's first two cells; each must get the row's action (its first word).
const CASES: Readonly<Record<string, readonly Mark[]>> = {
  'not markable (not judged, or cordoned) | any': [
    { r: reading('Stale', { cordoned: true, markable: false }) },
    { r: reading('Missing', { cordoned: true, markable: false, condition: healthy }) },
    { r: reading('Stale', { judged: false, notJudged: 'selector', markable: false }) },
    { r: reading('Fresh', { judged: false, notJudged: 'too-young', markable: false, condition: ours }) },
  ],
  "Stale or Missing | True (the agent's own word)": [{ r: reading('Stale', { condition: agentTrue }) }, { r: reading('Missing', { condition: agentTrue }) }],
  "Stale or Missing | Unknown/AgentCannotObserve (the agent's own, more specific word)": [
    { r: reading('Stale', { condition: blind }) },
    { r: reading('Missing', { condition: blind }) },
  ],
  'Stale or Missing | Unknown/AgentLeaseStale (already ours)': [{ r: reading('Stale', { condition: ours }) }, { r: reading('Missing', { condition: ours }) }],
  'Stale or Missing | changed by another writer ≤ grace ago': [
    { r: reading('Stale', { condition: healthy }), otherWrote: true },
    { r: reading('Missing', { condition: healthy }), otherWrote: true },
  ],
  'Stale or Missing | anything else, marking not paused': [{ r: reading('Stale', { condition: healthy }) }, { r: reading('Missing') }],
  'Stale or Missing | anything else, marking paused': [{ r: reading('Stale', { condition: healthy }), paused: true }, { r: reading('Missing'), paused: true }],
  'Fresh, seen to move | Unknown/AgentLeaseStale': [
    { r: reading('Fresh', { condition: ours }) },
    // Whoever wrote last, and even while marking is paused: clearing never waits.
    { r: reading('Fresh', { condition: ours }), otherWrote: true },
    { r: reading('Fresh', { condition: ours }), paused: true },
  ],
  'Fresh, only first sighting | Unknown/AgentLeaseStale': [{ r: reading('Fresh', { condition: ours, seenMoving: false }) }],
  'Fresh | anything else': [
    { r: reading('Fresh', { condition: blind }) },
    { r: reading('Fresh', { condition: agentTrue }) },
    { r: reading('Fresh', { condition: healthy }) },
    { r: reading('Fresh') },
  ],
};

for (const { key, expected, case: marks } of casesOf(designTable('What the controller does about a node'), 2, CASES)) {
  const action = (expected[0] ?? '').split(' ')[0] as MarkAction;
  test(`mark decision, docs/design.md's table: ${key} → ${expected[0]}`, () => {
    for (const m of marks) assert.equal(decideMark(m.r, m.paused ?? false, m.otherWrote ?? false).action, action, JSON.stringify(m));
  });
}

const CHANGES: ReadonlyArray<{ name: string; prev: NodeReadiness['condition'] | 'unseen'; next: NodeReadiness['condition']; changed: boolean }> = [
  { name: 'the agent repairs our mark to False/RelistHealthy', prev: ours, next: healthy, changed: true },
  { name: 'the agent writes True over our mark', prev: ours, next: agentTrue, changed: true },
  { name: 'the agent writes that it cannot observe', prev: healthy, next: blind, changed: true },
  { name: 'the agent writes its first condition', prev: undefined, next: healthy, changed: true },
  { name: 'our own mark lands', prev: healthy, next: ours, changed: false },
  { name: 'the same state again (a heartbeat refresh, or another field)', prev: healthy, next: { ...healthy, message: 'other' }, changed: false },
  { name: 'the first sighting of the Node', prev: 'unseen', next: healthy, changed: false },
  { name: 'the condition is removed', prev: healthy, next: undefined, changed: false },
];

for (const row of CHANGES) {
  test(`condition changed by another writer: ${row.name} → ${row.changed}`, () => {
    const prev = row.prev === 'unseen' ? undefined : { condition: row.prev };
    assert.equal(conditionChangedByOther(prev, { condition: row.next }), row.changed);
  });
}

test('mark decision: marking pauses only when MORE than half the judged fleet is silent', () => {
  const fresh = reading('Fresh');
  const stale = reading('Stale');
  const windows = reading('Stale', { judged: false, notJudged: 'selector', markable: false });
  assert.deepEqual(shouldPause([fresh, stale]), { paused: false, judged: 2, silent: 1 });
  assert.deepEqual(shouldPause([fresh, stale, reading('Missing')]), { paused: true, judged: 3, silent: 2 });
  assert.deepEqual(shouldPause([fresh, fresh, stale, windows, windows]), { paused: false, judged: 3, silent: 1 });
  assert.deepEqual(shouldPause([]), { paused: false, judged: 0, silent: 0 });
});

test('the reason the controller leaves standing is the one the agent writes', () => {
  assert.equal(AGENT_CANNOT_OBSERVE_REASON, CANNOT_OBSERVE_REASON);
});
