// The figures README.md and docs/comparison.md quote of nodepulse's defaults, of the kubelet's
// windows and of the relist-latency record, held to where each comes from:
//
// | figure in the docs                                  | held to                                            |
// |-----------------------------------------------------|----------------------------------------------------|
// | comparison.md's defaults table (flag → default)     | the agent's own defaults (shippedAgentConfig)      |
// | "by N s" after True/RelistStale, "at the latest N s" | nodepulseLatestMs() at the shipped defaults        |
// | "Lease withheld by N s"                             | the threshold + the lease's recheck period         |
// | "N s and M s to spare"                              | verdictOrder()'s margins, both runtime classes     |
// | the relist deadline "(N s)", the threshold "N s"    | the shipped deadline and threshold                 |
// | the kubelet's "no sooner than", "at A to B s",      | kubeletReadyWindow() at the v1.34 defaults         |
// | "under N s" for slow lists                          |                                                    |
// | README's relist-latency figures and ratios          | docs/relist-latency.json and falseVerdictMargins() |
// | the recorded matrix's table (README, install,       | docs/fault-matrix.json, rendered by                |
// | comparison, fault-matrix.md)                        | renderMatrixTable()                                |
//
// A default changed without its docs, or a doc figure changed without its source, fails here.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { KUBELET_DEFAULTS, kubeletReadyWindow, type KubeletFault } from './kubelet-model.ts';
import { renderMatrixTable, type RecordedRow } from './matrix-record.ts';
import { shippedAgentConfig, shippedTimings } from './shipped-defaults.ts';
import { falseVerdictMargins, nodepulseLatestMs, RUNTIME_CLASSES, verdictOrder } from './verdict-order.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** A doc with its lines joined, so a sentence wrapped over two lines still matches. */
function doc(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8').replace(/\n\s*/g, ' ');
}

/** Seconds as the docs write them: whole, or to one decimal. */
function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function all(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((m) => m[1] ?? '');
}

const config = shippedAgentConfig();
const latestMs = nodepulseLatestMs(shippedTimings(config));
const DOCS = ['README.md', 'docs/comparison.md'] as const;

test('docs/comparison.md: every row of its defaults table is the agent\'s default for that flag', () => {
  const text = readFileSync(join(ROOT, 'docs/comparison.md'), 'utf8');
  const rows = [...text.matchAll(/^\| [^|]+ \| `--([a-z-]+)` \| ([\d.]+) s \|$/gm)];
  assert.ok(rows.length >= 7, `precondition: the defaults table is where this test looks (${rows.length} rows)`);
  for (const [, flag = '', value = ''] of rows) {
    const key = `${flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())}Ms`;
    const ms = (config as unknown as Record<string, unknown>)[key];
    assert.equal(typeof ms, 'number', `--${flag}: ${key} must be a duration of the agent's config`);
    assert.equal(value, seconds(ms as number), `--${flag}: the table's default`);
  }
});

test('nodepulse\'s latest True, its Lease, the threshold, the deadline and the margins, as the docs quote them', () => {
  const margins = RUNTIME_CLASSES.map((cls) => seconds(verdictOrder(cls, shippedTimings(config), undefined).marginMs));
  for (const name of DOCS) {
    const text = doc(name);
    const by = all(text, /`True\/RelistStale` by (\d+) s/g);
    assert.ok(by.length >= 4, `precondition: ${name} quotes nodepulse's latest True per fault (${by.length})`);
    assert.deepEqual(new Set(by), new Set([seconds(latestMs)]), `${name}: "True/RelistStale by N s"`);
    assert.deepEqual(new Set(all(text, /Lease withheld by (\d+) s/g)), new Set([seconds(config.relistThresholdMs + config.leaseRecheckMs)]), `${name}: "Lease withheld by N s"`);
    assert.deepEqual(new Set(all(text, /relist deadline \((\d+) s\)/g)), new Set([seconds(config.relistDeadlineMs)]), `${name}: the deadline`);
    const spare = /\((\d+) s and (\d+) s to spare/.exec(text);
    assert.ok(spare, `precondition: ${name} gives the margins`);
    assert.deepEqual([spare[1], spare[2]], margins, `${name}: the margins, ${RUNTIME_CLASSES.join(' and ')}`);
  }
  assert.match(doc('docs/comparison.md'), new RegExp(`at the latest ${seconds(latestMs)} s after`));
  assert.match(doc('docs/comparison.md'), new RegExp(`nodepulse's ${seconds(config.relistThresholdMs)} s threshold`));
  assert.match(doc('README.md'), new RegExp(`within the threshold \\(${seconds(config.relistThresholdMs)} s by default`));
});

test('the kubelet\'s windows, as the docs quote them, are the model\'s at the v1.34 defaults', () => {
  const window = (fault: KubeletFault): { earliest: string; latest: string } => {
    const w = kubeletReadyWindow(fault, KUBELET_DEFAULTS);
    assert.ok(w.earliestMs !== undefined && w.latestMs !== undefined, `${fault} has a window`);
    return { earliest: seconds(w.earliestMs), latest: seconds(w.latestMs) };
  };
  const hang = window('runtime-hangs');
  const lists = window('lists-hang');
  const refused = window('runtime-refuses');
  const stopped = window('kubelet-stopped');
  // The longest delay of each list at which a PLEG relist of two still succeeds in time.
  const slowMax = seconds((KUBELET_DEFAULTS.plegRelistThresholdMs - KUBELET_DEFAULTS.plegRelistPeriodMs) / 2);
  assert.equal(kubeletReadyWindow('lists-slow', KUBELET_DEFAULTS, { listDelayMs: 89_500 }).status, undefined, 'precondition: lists of 89.5 s each leave Ready alone');
  for (const name of DOCS) {
    const text = doc(name);
    assert.deepEqual(new Set(all(text, /"container runtime is down"\) no sooner than ([\d.]+) s/g)), new Set([hang.earliest]), `${name}: a full hang`);
    assert.deepEqual(new Set(all(text, /"PLEG is not healthy"\) no sooner than ([\d.]+) s/g)), new Set([lists.earliest]), `${name}: the lists hang`);
    assert.deepEqual(new Set(all(text, /"container runtime is down"\) at ([\d.]+ to [\d.]+) s/g)), new Set([`${refused.earliest} to ${refused.latest}`]), `${name}: refused`);
    assert.deepEqual(new Set(all(text, /node lifecycle controller, at ([\d.]+ to [\d.]+) s/g)), new Set([`${stopped.earliest} to ${stopped.latest}`]), `${name}: the kubelet stopped`);
    assert.deepEqual(new Set(all(text, /and under ([\d.]+) s \|/g)), new Set([slowMax]), `${name}: slow lists`);
  }
});

test('README.md\'s relist-latency figures and ratios are the record\'s', () => {
  const record = JSON.parse(readFileSync(join(ROOT, 'docs/relist-latency.json'), 'utf8')) as { runtime: string; options: { minutes: number }; summary: { relists: number; failed: number; p999Ms: number; maxMs: number } };
  const m = falseVerdictMargins(config, record.summary.maxMs);
  const text = doc('README.md');
  const want = [
    `(${record.runtime.replace(/^containerd ([\d.]+).*$/, '$1')})`,
    `${record.summary.relists.toLocaleString('en-US')} relists over ${record.options.minutes} minutes`,
    record.summary.failed === 0 ? 'none failed' : `${record.summary.failed} failed`,
    `p99.9 ${Math.round(record.summary.p999Ms)} ms`,
    `the slowest ${(record.summary.maxMs / 1000).toFixed(2)} s`,
    `The ${seconds(config.relistThresholdMs)} s threshold is ${Math.floor(m.thresholdRatio)} times`,
    `the ${seconds(config.relistDeadlineMs)} s deadline ${Math.floor(m.deadlineRatio)} times`,
  ];
  for (const phrase of want) assert.ok(text.includes(phrase), `README.md must say "${phrase}"`);
});

test('README.md, docs/install.md and docs/comparison.md show the recorded fault matrix as docs/fault-matrix.json renders it', () => {
  const record = JSON.parse(readFileSync(join(ROOT, 'docs/fault-matrix.json'), 'utf8')) as { rows: RecordedRow[] };
  assert.ok(record.rows.length > 0, 'precondition: the record holds rows (npm run matrix:cluster)');
  const table = renderMatrixTable(record.rows);
  for (const name of ['README.md', 'docs/install.md', 'docs/comparison.md', 'docs/fault-matrix.md']) {
    assert.ok(readFileSync(join(ROOT, name), 'utf8').includes(table), `${name} must hold the recorded table, as renderMatrixTable renders docs/fault-matrix.json`);
  }
});
