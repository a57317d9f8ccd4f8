// docs/design.md's tables of the kubelet's side and of the defaults from data, held to what they
// are written from: the kubelet's timers and Ready windows (kubelet-model.ts), the recorded relist
// latency (docs/relist-latency.json), and the rules verdict-order.ts computes at the shipped
// defaults. Each table's rows come from the document (test/support/design-tables.ts), so a row
// changed, added or dropped on one side alone fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { casesOf, designTable, REPO_ROOT } from '../support/design-tables.ts';
import { KUBELET_DEFAULTS as K, kubeletReadyWindow, type KubeletFault } from './kubelet-model.ts';
import { shippedAgentConfig, shippedTimings } from './shipped-defaults.ts';
import { FALSE_VERDICT_FACTOR, falseVerdictMargins, nodepulseLatestMs, verdictOrder } from './verdict-order.ts';

/** Every `<n> s`, `<n> min` or `<n> ms` a cell names, in order, in ms. */
function amounts(cell: string): number[] {
  const unit: Record<string, number> = { ms: 1, s: 1_000, min: 60_000 };
  return [...cell.matchAll(/(\d[\d,]*(?:\.\d+)?) (ms|s|min)\b/g)].map((m) => Number((m[1] ?? '').replaceAll(',', '')) * (unit[m[2] ?? ''] ?? Number.NaN));
}

/** A figure as the document rounds it: `written` within half its last digit of `actual`. */
function rounded(written: string, actual: number, what: string): void {
  const m = /^([\d,]+)(?:\.(\d+))?/.exec(written);
  assert.ok(m, `precondition: "${written}" starts with a number`);
  const value = Number(`${(m[1] ?? '').replaceAll(',', '')}.${m[2] ?? '0'}`);
  const half = 0.5 * 10 ** -(m[2]?.length ?? 0);
  assert.ok(Math.abs(value - actual) <= half + 1e-9, `${what}: the document says ${written}, the record ${actual}`);
}

test("docs/design.md's kubelet timers are the model's", () => {
  const checks: Record<string, (cell: string) => void> = {
    'runtime Status poll': (c) => assert.deepEqual(amounts(c), [K.runtimeStatusPeriodMs]),
    'runtime sync threshold': (c) => assert.deepEqual(amounts(c), [K.runtimeSyncThresholdMs]),
    'node status update': (c) => assert.deepEqual([amounts(c), c.includes(`${K.jitterFraction * 100} % jitter`)], [[K.nodeStatusUpdateMs], true]),
    "every CRI call's deadline": (c) => assert.deepEqual(amounts(c), [K.runtimeRequestTimeoutMs]),
    'PLEG relist period, threshold': (c) => assert.deepEqual(amounts(c), [K.plegRelistPeriodMs, K.plegRelistThresholdMs]),
    "the kubelet's own node Lease": (c) => {
      const [duration, renew] = amounts(c);
      assert.deepEqual([renew, (duration ?? 0) * 0.25, c.includes(`${K.jitterFraction * 100} % jitter`)], [K.leaseRenewMs, K.leaseRenewMs, true]);
    },
    'node-monitor-grace-period, node-monitor-period': (c) => assert.deepEqual(amounts(c), [K.nodeMonitorGraceMs, K.nodeMonitorPeriodMs]),
  };
  for (const { key, row, case: check } of casesOf(designTable('What the kubelet does about a sick runtime', 'timer'), 1, checks)) {
    assert.doesNotThrow(() => check(row[1] ?? ''), `${key}: ${row[1]}`);
  }
});

test("docs/design.md's kubelet Ready windows are the model's", () => {
  const faults: Record<string, readonly [KubeletFault, { listDelayMs?: number }]> = {
    'every call hangs (containerd stopped)': ['runtime-hangs', {}],
    'the two lists hang, Status and Version answer': ['lists-hang', {}],
    "the lists answer slower than nodepulse's deadline, up to 89.5 s each": ['lists-slow', { listDelayMs: 89_500 }],
    'every call refused (containerd killed)': ['runtime-refuses', {}],
    'the kubelet stopped': ['kubelet-stopped', {}],
    'a fault of the agent alone': ['agent-only', {}],
  };
  for (const { key, row, case: [fault, options] } of casesOf(designTable('What the kubelet does about a sick runtime', 'fault'), 1, faults)) {
    const window = kubeletReadyWindow(fault, K, options);
    const [ready = '', when = ''] = row.slice(1);
    const status = ready.startsWith('stays True') ? undefined : ready.split(/[ ,]/)[0];
    const bounds = when.startsWith('never') ? [] : amounts(when.split(':')[0] ?? '');
    assert.deepEqual([status, bounds], [window.status, window.earliestMs === undefined ? [] : [window.earliestMs, window.latestMs]], key);
  }
});

test("docs/design.md's relist latency row is the record's", () => {
  const { summary: s } = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'relist-latency.json'), 'utf8')) as {
    summary: { relists: number; failed: number; p50Ms: number; p90Ms: number; p99Ms: number; p999Ms: number; maxMs: number; over1s: number; longestGapMs: number };
  };
  const table = designTable('Defaults from data', 'relists');
  assert.equal(table.rows.length, 1, 'precondition: one recorded run');
  const [relists, failed, p50, p90, p99, p999, slowest, over1s, gap] = (table.rows[0] ?? []).map((c) => c);
  rounded(relists ?? '', s.relists, 'relists');
  rounded(failed ?? '', s.failed, 'failed');
  rounded(p50 ?? '', s.p50Ms, 'p50');
  rounded(p90 ?? '', s.p90Ms, 'p90');
  rounded(p99 ?? '', s.p99Ms, 'p99');
  rounded(p999 ?? '', s.p999Ms, 'p99.9');
  rounded(slowest ?? '', s.maxMs, 'slowest');
  rounded(over1s ?? '', s.over1s, 'over 1 s');
  rounded(gap ?? '', s.longestGapMs / 1000, 'longest gap (s)');
});

test("docs/design.md's rules for the threshold and the deadline are verdict-order.ts's, at the shipped defaults", () => {
  const config = shippedAgentConfig();
  const { summary } = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'relist-latency.json'), 'utf8')) as { summary: { maxMs: number } };
  const table = designTable('Defaults from data', 'rule');
  const [T, D, P] = [config.relistThresholdMs, config.relistDeadlineMs, config.relistPeriodMs];
  assert.equal(table.header[2], `at T = ${T / 1000} s, D = ${D / 1000} s`, 'the table is computed at the shipped defaults');
  const m = falseVerdictMargins({ relistThresholdMs: T, relistDeadlineMs: D, relistPeriodMs: P }, summary.maxMs);
  const s = (ms: number): string => (ms / 1000).toFixed(1).replace(/\.0$/, '');
  const orders = (['runtime-hangs', 'lists-hang'] as const).map((cls) => verdictOrder(cls, shippedTimings(config), undefined));
  const attempts: number[] = [];
  for (let at = 0; at < T; at += D + P) attempts.push(at / 1000);
  const checks: Record<string, string> = {
    [`T ≥ ${FALSE_VERDICT_FACTOR} × (period + the slowest relist)`]: `${s(T)} s ≥ ${s(FALSE_VERDICT_FACTOR * m.longestGapMs)} s (${Math.floor(m.thresholdRatio)}×)`,
    [`D ≥ ${FALSE_VERDICT_FACTOR} × the slowest relist`]: `${s(D)} s ≥ ${s(FALSE_VERDICT_FACTOR * summary.maxMs)} s (${Math.floor(m.deadlineRatio)}×)`,
    "T + condition period + 3 × API timeout < the kubelet's earliest Ready=False, in both classes": `full hang: ${s(nodepulseLatestMs(shippedTimings(config)))} s < ${s(orders[0]?.kubeletEarliestMs ?? 0)} s (${s(orders[0]?.marginMs ?? 0)} s to spare); lists hang: ${s(orders[1]?.nodepulseLatestMs ?? 0)} s < ${s(orders[1]?.kubeletEarliestMs ?? 0)} s (${s(orders[1]?.marginMs ?? 0)} s)`,
    'D < T, with ≥ 3 attempts per threshold': `${s(D)} s, ${attempts.length} attempts (${attempts.join(', ')} s)`,
  };
  for (const { key, row, case: expected } of casesOf(table, 1, checks)) assert.equal(row[2], expected, key);
  assert.ok(D < T && attempts.length >= 3, 'the last rule holds');
});
