// judgeClusterSoak, row by row of its table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { around, judgeClusterSoak, type NodeSoakRecord, type SoakRun } from '../../scripts/cluster-soak-verdict.ts';

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

test('the kubelet Lease beside ours: its longest gap, and its gap across ours, are shown and never judged', () => {
  const n = healthy('node-1');
  // Ours stops from 909 s to 934.5 s; the kubelet's renewals stop from 905 s to 930 s (the API server stalled for both).
  const ours = [...every10s(0, 900_000).filter((w) => w <= 909_000), 909_000, 934_500, ...every10s(944_700, 3_600_000)];
  const kubelet = [...every10s(0, 900_000).filter((w) => w <= 905_000), 905_000, 930_000, ...every10s(940_000, 3_600_000)];
  const j = judgeClusterSoak(run([{ ...n, renewalsMs: ours, kubeletRenewalsMs: kubelet }]));
  assert.deepEqual(j.problems, ['node-1: lease gap 25.5 s from 909.0 s must be at most 11.0 s (the renew interval + 1 s)']);
  assert.deepEqual(j.nodes[0]?.kubeletGapAtOurs, { fromMs: 905_000, toMs: 930_000, lengthMs: 25_000 });
  assert.equal(j.nodes[0]?.kubeletLongestGap?.lengthMs, 25_000);
  const without = judgeClusterSoak(run([n]));
  assert.equal(without.nodes[0]?.kubeletGapAtOurs, undefined, 'no kubelet renewals recorded: nothing shown');
});

test('around: the renewals from the last at or before the start to the first at or after the end', () => {
  assert.deepEqual(around([0, 10, 20, 30, 40], 15, 25), [10, 20, 30]);
  assert.deepEqual(around([0, 10, 20, 30, 40], 10, 30), [10, 20, 30]);
  assert.deepEqual(around([20, 30], 5, 100), [20, 30]);
  assert.deepEqual(around([], 5, 100), []);
});
