// The shipped defaults held to the figures they were chosen from:
//
// | figure                                  | source                           | what must hold at the shipped defaults               |
// |-----------------------------------------|----------------------------------|------------------------------------------------------|
// | the slowest relist under churn          | docs/relist-latency.json         | the threshold at least FALSE_VERDICT_FACTOR × the     |
// |                                         | (`npm run relist-latency --      | longest normal gap (period + the slowest relist),    |
// |                                         | --record`, a real containerd)    | the deadline FALSE_VERDICT_FACTOR × the slowest      |
// | the kubelet's earliest Ready=False      | its v1.34 source                 | nodepulse's latest True before it, in both           |
// |                                         | (kubelet-model.ts)               | runtime-caused classes                               |
//
// | the kubelet's first Ready=False in the  | docs/fault-matrix.json (`npm run | the same, with the smaller of the model and the      |
// | recorded run                            | matrix:cluster`)                 | measurement; and in the record itself, the agent's   |
// |                                         |                                  | True before the kubelet's Ready=False, both classes  |
//
// verdictOrder() takes the smaller of the model and the measurement, so a measurement can only
// tighten the inequality, never loosen it.
//
// A change of a default that breaks either (a threshold of 3m, say) fails here; so does a latency
// record too small for its p99.9.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { firstSeen, kubeletFirstNotReady, type RecordedRow } from './matrix-record.ts';
import { SIG } from './matrix-rows.ts';
import { FALSE_VERDICT_FACTOR, falseVerdictMargins, RUNTIME_CLASSES, verdictOrder } from './verdict-order.ts';
import { shippedAgentConfig, shippedTimings } from './shipped-defaults.ts';

const DOCS = join(import.meta.dirname, '..', '..', 'docs');

interface LatencyRecord {
  readonly summary: { readonly relists: number; readonly failed: number; readonly maxMs: number };
}

test(`the threshold and the deadline keep ${FALSE_VERDICT_FACTOR}× the relist latency measured under churn`, () => {
  const latency = JSON.parse(readFileSync(join(DOCS, 'relist-latency.json'), 'utf8')) as LatencyRecord;
  assert.ok(latency.summary.relists >= 10_000, `precondition: the record holds enough relists for a p99.9 (${latency.summary.relists})`);
  assert.equal(latency.summary.failed, 0, 'precondition: no relist failed in the recorded run');
  const config = shippedAgentConfig();
  const m = falseVerdictMargins({ relistThresholdMs: config.relistThresholdMs, relistDeadlineMs: config.relistDeadlineMs, relistPeriodMs: config.relistPeriodMs }, latency.summary.maxMs);
  assert.ok(m.ok, `threshold ${config.relistThresholdMs} ms is ${m.thresholdRatio.toFixed(1)}× the longest normal gap (${m.longestGapMs} ms); deadline ${config.relistDeadlineMs} ms is ${m.deadlineRatio.toFixed(1)}× the slowest relist (${latency.summary.maxMs} ms)`);
});

test('nodepulse\'s True comes before the kubelet\'s earliest Ready=False at the shipped defaults, in both runtime-caused classes, by the kubelet\'s source', () => {
  const margins: Record<string, number> = {};
  for (const cls of RUNTIME_CLASSES) {
    const o = verdictOrder(cls, shippedTimings(), undefined);
    assert.ok(o.before, `${cls}: nodepulse at the latest ${o.nodepulseLatestMs} ms, the kubelet at the earliest ${o.kubeletEarliestMs} ms`);
    margins[cls] = o.marginMs;
  }
  // The margins docs/design.md quotes ("29 s to spare", "88 s").
  assert.deepEqual(margins, { 'runtime-hangs': 29_000, 'lists-hang': 88_000 });
});

test('in the recorded run at the shipped defaults, nodepulse\'s True came before the kubelet\'s Ready=False in both runtime-caused classes, and the inequality holds with the measured kubelet', () => {
  const record = JSON.parse(readFileSync(join(DOCS, 'fault-matrix.json'), 'utf8')) as { meta: { settings: string }; rows: RecordedRow[] };
  assert.equal(record.meta.settings, 'the shipped defaults', 'precondition: the record is the defaults run');
  const measured = kubeletFirstNotReady(record.rows);
  for (const cls of RUNTIME_CLASSES) {
    const row = record.rows.find((r) => r.id === cls);
    assert.ok(row !== undefined && measured[cls] !== undefined, `precondition: the record holds ${cls} with the kubelet's Ready=False`);
    const agent = firstSeen(row, (sig) => sig === SIG.condition('True', 'RelistStale'), 0);
    assert.ok(agent !== undefined && agent.atMs < (measured[cls] as number), `${cls}: the agent's True (${agent?.atMs} ms) before the kubelet's Ready=False (${measured[cls]} ms)`);
    const o = verdictOrder(cls, shippedTimings(), measured[cls]);
    assert.ok(o.before, `${cls}: nodepulse at the latest ${o.nodepulseLatestMs} ms, the kubelet at the earliest ${o.kubeletEarliestMs} ms (measured ${o.kubeletMeasuredMs} ms)`);
  }
});
