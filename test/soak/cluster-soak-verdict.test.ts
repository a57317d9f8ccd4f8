// judgeClusterSoak, row by row of its table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeClusterSoak, type NodeSoakRecord, type SoakRun } from '../../scripts/cluster-soak-verdict.ts';

const every10s = (fromMs: number, toMs: number): number[] => {
  const out: number[] = [];
  for (let t = fromMs; t <= toMs; t += 10_200) out.push(t);
  return out;
};

const healthy = (node: string): NodeSoakRecord => ({
  node,
  conditions: [{ atMs: 0, status: 'False', reason: 'RelistHealthy' }],
  renewalsMs: every10s(0, 3_600_000),
  observable: [{ atMs: 30_000, value: 1 }, { atMs: 3_590_000, value: 1 }],
});

const run = (nodes: NodeSoakRecord[], over: Partial<SoakRun> = {}): SoakRun => ({ askedMs: 3_600_000, ranMs: 3_600_000, renewIntervalMs: 10_000, nodes, ...over });

test('an hour of steady renewals, only False, observable throughout: a pass', () => {
  const j = judgeClusterSoak(run([healthy('node-1'), healthy('node-2')]));
  assert.deepEqual(j.problems, []);
  assert.equal(j.ok, true);
  assert.equal(j.allowedGapMs, 11_000);
  assert.deepEqual(j.nodes[0]?.longestGap?.lengthMs, 10_200);
});

test('each false verdict and each gap is a problem naming the node, the time and the rule', () => {
  const n = healthy('node-1');
  const rows: Array<[string, SoakRun, string[]]> = [
    ['a True', run([{ ...n, conditions: [...n.conditions, { atMs: 61_000, status: 'True', reason: 'RelistStale' }] }]), ['node-1: condition True/RelistStale at 61.0 s must never be written (the runtime was fine)']],
    ['a cannot-observe', run([{ ...n, conditions: [...n.conditions, { atMs: 5_000, status: 'Unknown', reason: 'AgentCannotObserve' }] }]), ['node-1: condition Unknown/AgentCannotObserve at 5.0 s must never be written']],
    ['the controller\'s Unknown is not the agent\'s cannot-observe', run([{ ...n, conditions: [...n.conditions, { atMs: 5_000, status: 'Unknown', reason: 'AgentLeaseStale' }] }]), []],
    ['observable 0', run([{ ...n, observable: [{ atMs: 1_000, value: 1 }, { atMs: 2_000, value: 0 }, { atMs: 3_000, value: undefined }] }]), ['node-1: nodepulse_runtime_observable was 0 in 1 scrapes (first at 2.0 s); it must stay 1']],
    ['a gap of 11.1 s', run([{ ...n, renewalsMs: [...every10s(0, 1_000_000), 1_010_700, ...every10s(1_021_500, 3_600_000)] }]), ['node-1: lease gap 11.1 s from 999.6 s must be at most 11.0 s (the renew interval + 1 s)']],
    ['a gap of exactly 11 s is within', run([{ ...n, renewalsMs: [0, 11_000, ...every10s(21_200, 3_600_000)] }]), []],
    ['renewals that stop before the end', run([{ ...n, renewalsMs: every10s(0, 3_500_000) }]), ['node-1: no renewal in the last 101.4 s of the run; must be at most 11.0 s']],
    ['never renewed, never scraped', run([{ ...n, renewalsMs: [], observable: [] }]), ['node-1: scrapes: none must be missing (nothing was watched)', 'node-1: renewals: none must be missing (the lease never moved)']],
    ['cut short', run([{ ...n, renewalsMs: every10s(0, 3_000_000) }], { ranMs: 3_000_000 }), ['run: 3000.0 s must last the 3600.0 s asked for']],
    ['no nodes', run([]), ['nodes: none must be watched']],
  ];
  for (const [name, r, problems] of rows) {
    const j = judgeClusterSoak(r);
    assert.deepEqual(j.problems, problems, name);
    assert.equal(j.ok, problems.length === 0, `${name}: ok`);
  }
});
