// The matrix's rows as matrix-rows.ts's table derives them, for a CI-like and a full-run-like set
// of timings, checked to the millisecond on the rows whose windows carry the claims.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KUBELET_DEFAULTS } from './kubelet-model.ts';
import { matrixRows, SIG, type MatrixRow, type MatrixTimings } from './matrix-rows.ts';
import { matrixSettings } from './matrix-settings.ts';
import { shippedAgentConfig } from './shipped-defaults.ts';

const CI: MatrixTimings = {
  relistPeriodMs: 1_000,
  relistThresholdMs: 10_000,
  relistDeadlineMs: 3_000,
  renewIntervalMs: 1_000,
  leaseRecheckMs: 1_000,
  conditionPeriodMs: 1_000,
  graceMs: 15_000,
  monitorPeriodMs: 1_000,
  fleetTickMs: 1_000,
  livenessPeriodMs: 10_000,
  livenessTimeoutMs: 5_000,
  livenessFailures: 3,
  terminationGraceMs: 10_000,
  kubelet: KUBELET_DEFAULTS,
  apiLatencyMs: 1_500,
  apiTimeoutMs: 4_000,
  slowestRelistMs: 600,
  agentStartMs: 5_000,
  podRestartMs: 10_000,
  slackMs: 4_000,
  kubeletInFull: false,
};

const FULL: MatrixTimings = { ...CI, relistThresholdMs: 60_000, relistDeadlineMs: 20_000, renewIntervalMs: 10_000, graceMs: 50_000, monitorPeriodMs: 5_000, slackMs: 5_000, kubeletInFull: true };

function row(t: MatrixTimings, id: MatrixRow['id']): MatrixRow {
  const r = matrixRows(t).find((x) => x.id === id);
  assert.ok(r !== undefined, `precondition: row ${id} exists`);
  return r;
}

function window(r: MatrixRow, signal: string): [number, number] | undefined {
  const m = r.expect.must.find((x) => x.signal === signal);
  return m === undefined ? undefined : [m.loMs, m.hiMs];
}

test('every row, in both timings, has windows that can be met and a fault long enough for its onset-anchored windows', () => {
  for (const t of [CI, FULL]) {
    const rows = matrixRows(t);
    assert.deepEqual(rows.map((r) => r.id), [
      'runtime-hangs', 'lists-hang', 'lists-slow', 'runtime-refuses', 'start-while-hung', 'start-while-refused',
      'socket-eacces', 'answer-undecodable', 'no-socket', 'agent-wedged', 'kubelet-stopped', 'api-unreachable',
    ]);
    for (const r of rows) {
      for (const m of [...r.expect.must, ...(r.expect.may ?? [])]) {
        assert.ok(m.loMs <= m.hiMs, `${r.id} ${m.signal}: ${m.loMs} ≤ ${m.hiMs}`);
        if (m.from === 'onset') assert.ok(m.hiMs <= r.faultMs, `${r.id} ${m.signal}: window ends ${m.hiMs} within the fault ${r.faultMs}`);
      }
    }
  }
});

test('runtime-hangs in CI: True, the lease stop and the fleet from the settings; the kubelet asserted Ready until the end', () => {
  const r = row(CI, 'runtime-hangs');
  assert.deepEqual(window(r, SIG.condition('True', 'RelistStale')), [8_400, 19_500]);
  assert.deepEqual(window(r, SIG.leaseStopped), [5_860, 10_000]);
  assert.deepEqual(window(r, SIG.fleet('Stale')), [15_000, 20_000]);
  assert.equal(r.faultMs, 34_000);
  assert.deepEqual(window(r, SIG.condition('False', 'RelistHealthy')), [0, 9_100]);
  assert.equal(window(r, SIG.ready('False')), undefined);
  assert.deepEqual(r.expect.mustNot.find((n) => n.signal === SIG.ready('False'))?.untilMs, 34_000);
  assert.ok(r.expect.mustNot.some((n) => n.signal === SIG.condition('Unknown', 'AgentLeaseStale')), 'the controller never marks');
  assert.deepEqual(r.expect.order, []);
});

test('runtime-hangs in the full run: the kubelet in [119 s, 136.9 s], after nodepulse', () => {
  const r = row(FULL, 'runtime-hangs');
  assert.deepEqual(window(r, SIG.condition('True', 'RelistStale')), [58_400, 70_500]);
  assert.deepEqual(window(r, SIG.ready('False')), [119_000, 136_900]);
  assert.deepEqual(r.expect.order, [[SIG.leaseStopped, SIG.ready('False')], [SIG.condition('True', 'RelistStale'), SIG.ready('False')]]);
  assert.deepEqual(window(r, SIG.ready('True')), [0, 10_400 + 5_000 + 1_500 + 5_000]);
});

test('runtime-refuses: in CI, Ready asserted until just before the kubelet\'s earliest; in the full run its window, before nodepulse\'s', () => {
  const ci = row(CI, 'runtime-refuses');
  assert.equal(window(ci, SIG.ready('False')), undefined);
  assert.deepEqual(ci.expect.mustNot.find((n) => n.signal === SIG.ready('False'))?.untilMs, 24_000, 'the fault (34 s) outlasts the kubelet\'s earliest (25 s)');
  const full = row(FULL, 'runtime-refuses');
  assert.deepEqual(window(full, SIG.ready('False')), [24_000, 40_400 + 1_500 + 5_000]);
  assert.deepEqual(full.expect.order, [[SIG.ready('False'), SIG.condition('True', 'RelistStale')]]);
});

test('readerRows: a row outside it does not wait for fleet\'s Stale, and ends once nodepulse spoke', () => {
  const t = { ...CI, readerRows: ['runtime-hangs'] as const };
  assert.deepEqual(window(row(t, 'runtime-hangs'), SIG.fleet('Stale')), [15_000, 20_000]);
  const lists = row(t, 'lists-hang');
  assert.equal(window(lists, SIG.fleet('Stale')), undefined);
  assert.equal(lists.faultMs, 19_500 + 4_000, 'the verdict\'s latest + slack');
});

test('the CI run and the recorded run build every row from their settings; the recorded one at the shipped defaults', () => {
  const ci = matrixSettings('ci');
  const defaults = matrixSettings('defaults');
  assert.equal(matrixRows(ci.timings).length, 12);
  assert.equal(matrixRows(defaults.timings).length, 12);
  const shipped = shippedAgentConfig();
  assert.deepEqual([defaults.timings.relistThresholdMs, defaults.timings.relistDeadlineMs, defaults.timings.renewIntervalMs], [shipped.relistThresholdMs, shipped.relistDeadlineMs, shipped.renewIntervalMs]);
  assert.deepEqual([defaults.agentArgs, defaults.controllerArgs, defaults.timings.kubeletInFull], [[], [], true]);
  assert.deepEqual([ci.timings.relistThresholdMs, ci.timings.graceMs, ci.timings.kubeletInFull], [6_000, 15_000, false]);
});

test('lists-slow: the delay is the deadline + 2 s, and the kubelet never turns', () => {
  const r = row(FULL, 'lists-slow');
  assert.equal(r.listDelayMs, 22_000);
  assert.ok(r.expect.mustNot.some((n) => n.signal === SIG.ready('False') && n.untilMs === Number.MAX_SAFE_INTEGER));
  assert.deepEqual(window(r, SIG.condition('False', 'RelistHealthy')), [0, 20_000 + 2_600 + 1_000 + 1_500 + 5_000]);
});

test('the cannot-observe rows never allow True for twice the threshold, and watch at least that long', () => {
  for (const t of [CI, FULL]) {
    for (const id of ['socket-eacces', 'answer-undecodable', 'no-socket'] as const) {
      const r = row(t, id);
      assert.ok(r.faultMs >= 2 * t.relistThresholdMs, `${id}: watched ${r.faultMs} ≥ 2T`);
      for (const reason of ['RelistStale', 'RelistNeverSucceeded']) {
        const n = r.expect.mustNot.find((x) => x.signal === SIG.condition('True', reason));
        assert.ok(n !== undefined && n.untilMs >= 2 * t.relistThresholdMs, `${id}: no True/${reason} through 2T`);
      }
      assert.ok(r.expect.mustNot.some((x) => x.signal === SIG.condition('Unknown', 'AgentLeaseStale') && typeof x.from === 'object'), `${id}: the controller leaves the agent's Unknown`);
    }
  }
  assert.deepEqual(window(row(CI, 'socket-eacces'), SIG.condition('Unknown', 'AgentCannotObserve')), [10_000, 10_000 + 5_000 + 1_000 + 4_500 + 4_000]);
  assert.deepEqual(window(row(CI, 'answer-undecodable'), SIG.condition('Unknown', 'AgentCannotObserve')), [8_400, 19_500]);
});

test('agent-wedged: the liveness kill bounds the lease moving again; the controller marks first only when its grace is shorter', () => {
  const ci = row(CI, 'agent-wedged');
  assert.deepEqual(window(ci, SIG.leaseMoves), [35_000, 45_000 + 10_000 + 5_000 + 1_000 + 1_500 + 4_000]);
  assert.deepEqual(window(ci, SIG.condition('Unknown', 'AgentLeaseStale')), [15_000, 20_000]);
  const full = row(FULL, 'agent-wedged');
  assert.equal(window(full, SIG.condition('Unknown', 'AgentLeaseStale')), undefined, 'grace 50 s: the restart comes first');
  assert.deepEqual(full.expect.order, [[SIG.leaseStopped, SIG.leaseMoves]]);
});

test('kubelet-stopped: Unknown from the node lifecycle controller; nothing of nodepulse moves', () => {
  const r = row(FULL, 'kubelet-stopped');
  assert.deepEqual(window(r, SIG.ready('Unknown')), [38_600, 61_500]);
  assert.ok(r.expect.mustNot.some((n) => n.signal === SIG.leaseStopped));
  assert.ok(r.expect.mustNot.some((n) => n.signal === SIG.fleet('Stale')));
});

test('api-unreachable: 60 s in the full run, shorter in CI; marked and cleared by the controller', () => {
  assert.equal(row(FULL, 'api-unreachable').faultMs, 60_000);
  const ci = row(CI, 'api-unreachable');
  assert.equal(ci.faultMs, 15_000 + 1_000 + 8_000);
  assert.deepEqual(ci.expect.order, [
    [SIG.leaseStopped, SIG.condition('Unknown', 'AgentLeaseStale')],
    [SIG.condition('Unknown', 'AgentLeaseStale'), SIG.leaseMoves],
    [SIG.leaseMoves, SIG.condition('False', 'RelistHealthy')],
  ]);
});

test('a grace too short for the agent to speak first is refused, naming the bound', () => {
  assert.throws(() => matrixRows({ ...CI, graceMs: 13_000 }), /graceMs: 13000 must exceed 13640/);
});

test('where a fault stops every write at once, the lease\'s stop window opens before the onset: the last renewal came before it', () => {
  for (const id of ['agent-wedged', 'api-unreachable'] as const) {
    const row = matrixRows(CI).find((r) => r.id === id) as MatrixRow;
    const stopped = row.expect.must.find((m) => m.signal === SIG.leaseStopped);
    assert.deepEqual(stopped === undefined ? undefined : [stopped.from, stopped.loMs, stopped.hiMs], ['onset', -1_000 * 1.04 - 1_500, 1_500], id);
  }
});

test('the API server row counts a renewal stamped up to one request timeout before the end: written then, it landed after the path came back', () => {
  const moves = matrixRows(CI).find((r) => r.id === 'api-unreachable')?.expect.must.find((m) => m.signal === SIG.leaseMoves);
  assert.deepEqual(moves === undefined ? undefined : [moves.from, moves.loMs], ['end', -4_000]);
});
