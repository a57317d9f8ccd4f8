// The inequality "nodepulse's verdict before the kubelet's" and the false-verdict floor, as tables
// mirroring verdict-order.ts's header; the kubelet's windows as kubelet-model.ts's table gives them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KUBELET_DEFAULTS, kubeletReadyWindow } from './kubelet-model.ts';
import { falseVerdictMargins, nodepulseLatestMs, verdictOrder } from './verdict-order.ts';

const S = 1_000;

test('nodepulse writes True at the latest threshold + condition period + three API timeouts after the onset', () => {
  assert.equal(nodepulseLatestMs({ relistThresholdMs: 60 * S, conditionPeriodMs: 1 * S, apiTimeoutMs: 10 * S }), 91 * S);
  assert.equal(nodepulseLatestMs({ relistThresholdMs: 180 * S, conditionPeriodMs: 1 * S, apiTimeoutMs: 10 * S }), 211 * S);
});

test('the kubelet model gives each fault its window from the v1.34 timers', () => {
  const rows: Array<[Parameters<typeof kubeletReadyWindow>[0], { listDelayMs?: number; relistMs?: number }, string | undefined, number | undefined, number | undefined]> = [
    ['runtime-hangs', {}, 'False', 120 * S, 130.4 * S],
    ['lists-hang', { relistMs: 50 }, 'False', 178.95 * S, 190.4 * S],
    ['lists-slow', { listDelayMs: 30 * S }, undefined, undefined, undefined],
    ['lists-slow', { listDelayMs: 89.5 * S }, undefined, undefined, undefined],
    ['lists-slow', { listDelayMs: 90 * S }, 'False', 179 * S, 190.4 * S],
    ['lists-slow', { listDelayMs: 120 * S }, 'False', 179 * S, 190.4 * S],
    ['runtime-refuses', {}, 'False', 25 * S, 40.4 * S],
    ['kubelet-stopped', {}, 'Unknown', 39.6 * S, 55 * S],
    ['agent-only', {}, undefined, undefined, undefined],
  ];
  for (const [fault, options, status, earliest, latest] of rows) {
    const w = kubeletReadyWindow(fault, KUBELET_DEFAULTS, options);
    assert.equal(w.status, status, `${fault} ${JSON.stringify(options)}: status`);
    assert.equal(w.earliestMs === undefined ? undefined : Math.round(w.earliestMs), earliest, `${fault}: earliest`);
    assert.equal(w.latestMs === undefined ? undefined : Math.round(w.latestMs), latest, `${fault}: latest`);
  }
});

test('a hang window is refused for a request timeout shorter than the sync threshold, which the source does not bound that way', () => {
  assert.throws(() => kubeletReadyWindow('runtime-hangs', { ...KUBELET_DEFAULTS, runtimeRequestTimeoutMs: 20 * S }), /runtimeRequestTimeoutMs: 20000 must be at least runtimeSyncThresholdMs \(30000\)/);
});

test('verdictOrder: the table of classes, settings and measurements', () => {
  const fast = { relistThresholdMs: 60 * S, conditionPeriodMs: 1 * S, apiTimeoutMs: 10 * S };
  const upstream = { ...fast, relistThresholdMs: 180 * S };
  const rows: Array<[string, Parameters<typeof verdictOrder>[0], typeof fast, number | undefined, number, boolean]> = [
    // class, settings, measured kubelet, expected kubeletEarliest, before
    ['hang, 60 s, measured 125 s', 'runtime-hangs', fast, 125 * S, 120 * S, true],
    ['hang, 60 s, measured sooner than the model', 'runtime-hangs', fast, 100 * S, 100 * S, true],
    ['hang, 60 s, measured 85 s: after nodepulse latest 91 s', 'runtime-hangs', fast, 85 * S, 85 * S, false],
    ['hang, 180 s (upstream PLEG)', 'runtime-hangs', upstream, 125 * S, 120 * S, false],
    ['lists, 60 s, measured 185 s', 'lists-hang', fast, 185 * S, 179 * S, true],
    ['lists, 180 s (upstream PLEG)', 'lists-hang', upstream, 185 * S, 179 * S, false],
    ['lists, not measured: the model alone', 'lists-hang', fast, undefined, 179 * S, true],
  ];
  for (const [name, cls, settings, measured, earliest, before] of rows) {
    const o = verdictOrder(cls, settings, measured);
    assert.equal(o.kubeletEarliestMs, earliest, `${name}: kubeletEarliestMs`);
    assert.equal(o.before, before, `${name}: before`);
    assert.equal(o.marginMs, earliest - nodepulseLatestMs(settings), `${name}: margin`);
  }
});

test('the margin is exactly zero at equality, and equality is not before', () => {
  const o = verdictOrder('runtime-hangs', { relistThresholdMs: 89 * S, conditionPeriodMs: 1 * S, apiTimeoutMs: 10 * S }, undefined);
  assert.equal(o.nodepulseLatestMs, 120 * S);
  assert.equal(o.marginMs, 0);
  assert.equal(o.before, false);
});

test('falseVerdictMargins: the threshold against period + slowest relist, the deadline against the slowest relist', () => {
  const rows: Array<[number, number, number, number, number, number, boolean]> = [
    // threshold, deadline, period, slowest, thresholdRatio, deadlineRatio, ok
    [60 * S, 20 * S, 1 * S, 500, 40, 40, true],
    [60 * S, 20 * S, 1 * S, 2 * S, 20, 10, true],
    [60 * S, 20 * S, 1 * S, 2.5 * S, 60 / 3.5, 8, false],
    [10 * S, 5 * S, 1 * S, 200, 10 / 1.2, 25, false],
  ];
  for (const [threshold, deadline, period, slowest, tr, dr, ok] of rows) {
    const m = falseVerdictMargins({ relistThresholdMs: threshold, relistDeadlineMs: deadline, relistPeriodMs: period }, slowest);
    assert.equal(m.longestGapMs, period + slowest);
    assert.ok(Math.abs(m.thresholdRatio - tr) < 1e-9, `threshold ratio ${m.thresholdRatio} must be ${tr}`);
    assert.ok(Math.abs(m.deadlineRatio - dr) < 1e-9, `deadline ratio ${m.deadlineRatio} must be ${dr}`);
    assert.equal(m.ok, ok, `${threshold}/${deadline}/${slowest}: ok`);
  }
  assert.throws(() => falseVerdictMargins({ relistThresholdMs: 1, relistDeadlineMs: 1, relistPeriodMs: 1 }, 0), /slowestRelistMs: 0 must be above 0/);
});
