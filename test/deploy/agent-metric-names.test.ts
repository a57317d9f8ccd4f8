import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentExposition, agentFamilyMismatch, declaredSeriesNamesOf, labelSetsOf, metricNamesIn, sampleNamesOf } from './agent-metric-names.ts';
import { parseSeries, unexposedLabelSets } from './metric-uses.ts';

const CASES: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['nodepulse_runtime_healthy{job="nodepulse"} == 0', ['nodepulse_runtime_healthy']],
  [
    'histogram_quantile(0.99, sum without (result) (rate(nodepulse_relist_duration_seconds_bucket{node=~"$node"}[$__rate_interval])))',
    ['nodepulse_relist_duration_seconds_bucket'],
  ],
  ['sum by (reason) (increase(nodepulse_relist_failures_total[5m]))', ['nodepulse_relist_failures_total']],
  ['up{job="nodepulse"} == 0 or absent(up{job="nodepulse"})', ['up']],
  ['time() - nodepulse_lease_last_renew_timestamp_seconds > 50', ['nodepulse_lease_last_renew_timestamp_seconds']],
  ['count(nodepulse_lease_renewing == 0) or vector(0)', ['nodepulse_lease_renewing']],
  ['sum(rate(container_cpu_usage_seconds_total{pod=~"nodepulse-.*"}[1m]) offset 5m)', ['container_cpu_usage_seconds_total']],
];

test('metricNamesIn finds exactly the selected metric names, not functions, labels or variables', () => {
  for (const [expr, expected] of CASES) {
    assert.deepEqual([...metricNamesIn(expr)].sort(), [...expected].sort(), expr);
  }
});

const BODY = [
  '# HELP nodepulse_relist_duration_seconds Time one relist took.',
  '# TYPE nodepulse_relist_duration_seconds histogram',
  'nodepulse_relist_duration_seconds_bucket{le="0.005",result="success"} 0',
  'nodepulse_relist_duration_seconds_sum{result="success"} 0',
  'nodepulse_relist_duration_seconds_count{result="success"} 0',
  '# TYPE nodepulse_runtime_condition gauge',
  '# TYPE nodepulse_relist_failures_total counter',
  'nodepulse_relist_failures_total{reason="unavailable"} 0',
  'nodepulse_relist_failures_total{reason="other",extra="a\\"b"} 0',
  '# TYPE nodepulse_runtime_healthy gauge',
  'nodepulse_runtime_healthy 1',
  '# TYPE nodejs_gc_duration_seconds histogram',
  '# TYPE nodejs_eventloop_lag_p99_seconds summary',
  '',
].join('\n');

test('sampleNamesOf reads only sample lines; declaredSeriesNamesOf adds what each TYPE line implies', () => {
  assert.deepEqual([...sampleNamesOf(BODY)].sort(), [
    'nodepulse_relist_duration_seconds_bucket',
    'nodepulse_relist_duration_seconds_count',
    'nodepulse_relist_duration_seconds_sum',
    'nodepulse_relist_failures_total',
    'nodepulse_runtime_healthy',
  ]);
  assert.deepEqual([...declaredSeriesNamesOf(BODY)].sort(), [
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_eventloop_lag_p99_seconds_count',
    'nodejs_eventloop_lag_p99_seconds_sum',
    'nodejs_gc_duration_seconds_bucket',
    'nodejs_gc_duration_seconds_count',
    'nodejs_gc_duration_seconds_sum',
    'nodepulse_relist_duration_seconds_bucket',
    'nodepulse_relist_duration_seconds_count',
    'nodepulse_relist_duration_seconds_sum',
    'nodepulse_relist_failures_total',
    'nodepulse_runtime_condition',
    'nodepulse_runtime_healthy',
  ]);
});

test('labelSetsOf gives every distinct label-name set per sample name, escaped quotes included', () => {
  const sets = labelSetsOf(BODY);
  assert.deepEqual([...(sets.get('nodepulse_relist_failures_total') ?? [])].sort(), ['extra,reason', 'reason']);
  assert.deepEqual([...(sets.get('nodepulse_relist_duration_seconds_bucket') ?? [])], ['le,result']);
  assert.deepEqual([...(sets.get('nodepulse_runtime_healthy') ?? [])], ['']);
  assert.equal(sets.has('nodepulse_runtime_condition'), false);
});

test('agentFamilyMismatch names the listed families a body lacks and the nodepulse_ families the list lacks', () => {
  const { missing, unlisted } = agentFamilyMismatch(`${BODY}# TYPE nodepulse_made_up gauge\n`);
  assert.deepEqual(unlisted, ['nodepulse_made_up']);
  assert.ok(missing.includes('nodepulse_lease_renewing'), 'a family the body lacks is missing');
  assert.equal(missing.includes('nodepulse_runtime_healthy'), false);
});

test('the agent\'s metrics module declares exactly the families of AGENT_METRIC_NAMES', async () => {
  assert.deepEqual(agentFamilyMismatch(await agentExposition()), { missing: [], unlisted: [] });
});

test('parseSeries reads promtool input series and rejects anything else', () => {
  assert.deepEqual(parseSeries('nodepulse_pods{job="nodepulse", node="n-1", state="SANDBOX_READY"}'), {
    name: 'nodepulse_pods',
    labels: { job: 'nodepulse', node: 'n-1', state: 'SANDBOX_READY' },
  });
  assert.deepEqual(parseSeries('up{job="nodepulse"}'), { name: 'up', labels: { job: 'nodepulse' } });
  assert.throws(() => parseSeries('nodepulse_pods'), /must be name\{label="value", \.\.\.\}/);
  assert.throws(() => parseSeries('nodepulse_pods{job=nodepulse}'), /must be name/);
});

test('unexposedLabelSets accepts target labels plus an exposed label set, and reports anything else', () => {
  const sets = labelSetsOf(BODY);
  const where = 'case';
  assert.deepEqual(unexposedLabelSets([
    { where, name: 'nodepulse_relist_failures_total', labels: { job: 'nodepulse', node: 'a', pod: 'p', reason: 'other' } },
    { where, name: 'nodepulse_runtime_healthy', labels: { job: 'nodepulse', instance: 'i', node: 'a' } },
    { where, name: 'up', labels: { job: 'nodepulse', instance: 'i' } },
  ], sets), []);
  assert.deepEqual(unexposedLabelSets([
    { where, name: 'nodepulse_runtime_healthy', labels: { job: 'nodepulse', result: 'x' } },
    { where, name: 'nodepulse_relist_failures_total', labels: { job: 'nodepulse' } },
  ], sets), [
    'case: nodepulse_runtime_healthy{result} (exposed: {})',
    'case: nodepulse_relist_failures_total{} (exposed: {reason} {extra,reason})',
  ]);
});
