import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentDaemonSet, readRollout, type AgentDaemonSet } from './agent-rollout.ts';

function ds(over: Partial<AgentDaemonSet> = {}): AgentDaemonSet {
  return { name: 'nodepulse/nodepulse', generation: 2, observedGeneration: 2, onDelete: false, desired: 10, updated: 10, available: 10, ...over };
}

const ROWS: ReadonlyArray<{ name: string; seen: AgentDaemonSet | undefined | 'unlisted'; remembered?: number; rolling: boolean; remember: number | undefined; why: string }> = [
  { name: 'not listed yet', seen: 'unlisted', rolling: true, remember: undefined, why: 'the agent DaemonSet has not been listed yet' },
  { name: 'not listed yet keeps what was remembered', seen: 'unlisted', remembered: 2, rolling: true, remember: 2, why: 'the agent DaemonSet has not been listed yet' },
  { name: 'no such DaemonSet', seen: undefined, remembered: 2, rolling: false, remember: undefined, why: 'no agent DaemonSet' },
  { name: 'OnDelete, pods not updated', seen: ds({ onDelete: true, updated: 3 }), rolling: false, remember: undefined, why: 'the agent DaemonSet updates OnDelete' },
  { name: 'a new spec not yet observed', seen: ds({ generation: 3 }), rolling: true, remember: 3, why: 'generation 3 not yet observed (observed 2)' },
  { name: 'old pods still being replaced', seen: ds({ updated: 2, available: 9 }), rolling: true, remember: 2, why: '2 of 10 agent pods updated' },
  { name: 'every pod updated, the last not yet available, after a rollout it watched', seen: ds({ available: 8 }), remembered: 2, rolling: true, remember: 2, why: '8 of 10 updated agent pods available' },
  { name: 'every pod updated and available: settled', seen: ds(), remembered: 2, rolling: false, remember: undefined, why: '10 of 10 agent pods available at generation 2' },
  { name: 'an unavailable pod after the rollout settled is not a rollout', seen: ds({ available: 9 }), rolling: false, remember: undefined, why: '9 of 10 agent pods available at generation 2' },
  { name: 'an unavailable pod, remembered rollout of an older generation', seen: ds({ available: 9 }), remembered: 1, rolling: false, remember: undefined, why: '9 of 10 agent pods available at generation 2' },
];

for (const row of ROWS) {
  test(`agent rollout: ${row.name} → ${row.rolling ? 'rolling' : 'not rolling'}`, () => {
    assert.deepEqual(readRollout(row.seen, row.remembered), { rolling: row.rolling, why: row.why, rollingGeneration: row.remember });
  });
}

test('agent rollout: the projection reads generation, status counts and the update strategy', () => {
  assert.deepEqual(
    agentDaemonSet({
      metadata: { name: 'nodepulse', namespace: 'ops', generation: 4 },
      spec: { updateStrategy: { type: 'RollingUpdate' } },
      status: { observedGeneration: 3, desiredNumberScheduled: 5, updatedNumberScheduled: 1, numberAvailable: 4 },
    }),
    { name: 'ops/nodepulse', generation: 4, observedGeneration: 3, onDelete: false, desired: 5, updated: 1, available: 4 },
  );
  assert.deepEqual(agentDaemonSet({ metadata: { name: 'x' }, spec: { updateStrategy: { type: 'OnDelete' } } }), {
    name: '/x', generation: 0, observedGeneration: 0, onDelete: true, desired: 0, updated: 0, available: 0,
  });
});
