import { test } from 'node:test';
import assert from 'node:assert/strict';
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

const ROWS: ReadonlyArray<{ name: string; r: NodeReadiness; paused?: boolean; otherWrote?: boolean; action: MarkAction }> = [
  { name: 'a stale node with a healthy condition is marked', r: reading('Stale', { condition: healthy }), action: 'mark-stale' },
  { name: 'a missing lease with no condition is marked', r: reading('Missing'), action: 'mark-stale' },
  { name: "a stale node whose agent says True keeps the agent's word", r: reading('Stale', { condition: agentTrue }), action: 'none' },
  { name: "a stale node whose agent says it cannot observe keeps the agent's word", r: reading('Stale', { condition: blind }), action: 'none' },
  { name: "a missing lease whose agent says it cannot observe keeps the agent's word", r: reading('Missing', { condition: blind }), action: 'none' },
  { name: "a fresh node whose agent said it cannot observe is left to the agent", r: reading('Fresh', { condition: blind }), action: 'none' },
  { name: 'a stale node already marked is not marked again', r: reading('Stale', { condition: ours }), action: 'none' },
  { name: 'a stale node whose agent just wrote its condition is not marked yet', r: reading('Stale', { condition: healthy }), otherWrote: true, action: 'none' },
  { name: 'a missing lease whose agent just wrote its condition is not marked yet', r: reading('Missing', { condition: healthy }), otherWrote: true, action: 'none' },
  { name: 'a marked node whose lease moves again is cleared, whoever wrote last', r: reading('Fresh', { condition: ours }), otherWrote: true, action: 'mark-healthy' },
  { name: 'a stale node is not marked while marking is paused', r: reading('Stale', { condition: healthy }), paused: true, action: 'none' },
  { name: 'a cordoned stale node is never marked', r: reading('Stale', { cordoned: true, markable: false }), action: 'none' },
  { name: 'a stale node not judged is never marked', r: reading('Stale', { judged: false, notJudged: 'selector', markable: false }), action: 'none' },
  { name: 'a marked node whose lease moves again is cleared', r: reading('Fresh', { condition: ours }), action: 'mark-healthy' },
  { name: 'a marked node is cleared even while paused', r: reading('Fresh', { condition: ours }), paused: true, action: 'mark-healthy' },
  { name: 'a marked node seen only once (no advance) is not cleared', r: reading('Fresh', { condition: ours, seenMoving: false }), action: 'none' },
  { name: "a fresh node with the agent's True is left alone", r: reading('Fresh', { condition: agentTrue }), action: 'none' },
  { name: 'a fresh healthy node is left alone', r: reading('Fresh', { condition: healthy }), action: 'none' },
];

for (const row of ROWS) {
  test(`mark decision: ${row.name}`, () => {
    assert.equal(decideMark(row.r, row.paused ?? false, row.otherWrote ?? false).action, row.action);
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
