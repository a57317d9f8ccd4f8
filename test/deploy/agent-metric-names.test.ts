import assert from 'node:assert/strict';
import { test } from 'node:test';
import { metricNamesIn } from './agent-metric-names.ts';

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
