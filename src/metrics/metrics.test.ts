import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { register as globalRegistry, Registry } from 'prom-client';
import { ManualClock } from '../clock/manual-clock.ts';
import { renderOpenMetrics, wantsOpenMetrics } from './exposition.ts';
import { AGENT_METRIC_NAMES, createAgentMetrics, DROPPED_DEFAULT_METRICS, relistDurationBuckets } from './metrics.ts';

function fresh(options: { relistDeadlineMs?: number; defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  const base = { relistDeadlineMs: options.relistDeadlineMs ?? 60_000, version: '1.2.3' };
  const metrics = createAgentMetrics(registry, options.defaultMetrics === true ? { ...base, clock: new ManualClock() } : { ...base, defaultMetrics: false });
  return { registry, metrics };
}

/** The value of one sample line in Prometheus text, e.g. sample(text, 'x_bucket{le="30",result="success"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('createAgentMetrics', () => {
  it('defines every agent metric, each with help text, on the injected registry only', async () => {
    const { registry } = fresh();
    const text = await registry.metrics();
    for (const name of AGENT_METRIC_NAMES) {
      assert.match(text, new RegExp(`^# HELP ${name} \\S.{10,}$`, 'm'), `${name} has help`);
      assert.match(text, new RegExp(`^# TYPE ${name} (counter|gauge|histogram)$`, 'm'), `${name} has a type`);
    }
    assert.equal(globalRegistry.getSingleMetric('nodepulse_build_info'), undefined, 'the global registry is untouched');
  });

  it('a 15 s relist with a 60 s deadline lands in a finite bucket', async () => {
    const { registry, metrics } = fresh();
    metrics.relistDuration.observe({ result: 'success' }, 15);
    const text = await registry.metrics();
    assert.equal(sample(text, 'nodepulse_relist_duration_seconds_bucket{le="10",result="success"}'), 0);
    assert.equal(sample(text, 'nodepulse_relist_duration_seconds_bucket{le="30",result="success"}'), 1);
    assert.equal(sample(text, 'nodepulse_relist_duration_seconds_bucket{le="60",result="success"}'), 1);
  });

  it('a relist ended by its deadline, a hair late, still lands in a finite bucket', async () => {
    const { registry, metrics } = fresh();
    metrics.relistDuration.observe({ result: 'deadline_exceeded' }, 60.004);
    const text = await registry.metrics();
    assert.equal(sample(text, 'nodepulse_relist_duration_seconds_bucket{le="60",result="deadline_exceeded"}'), 0);
    assert.equal(sample(text, 'nodepulse_relist_duration_seconds_bucket{le="66",result="deadline_exceeded"}'), 1);
  });

  it('duration buckets reach the deadline, then one overrun bucket', () => {
    assert.deepEqual(relistDurationBuckets(60_000), [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 66]);
    assert.deepEqual(relistDurationBuckets(2_000), [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 2.2]);
    assert.deepEqual(relistDurationBuckets(10_000).slice(-2), [10, 11]);
  });

  it('reads the relist in flight at scrape time, and 0 when none is', async () => {
    const { registry, metrics } = fresh();
    assert.equal(sample(await registry.metrics(), 'nodepulse_relist_in_flight_seconds'), 0);
    let age = 12.5;
    metrics.setRelistInFlightProvider(() => age);
    assert.equal(sample(await registry.metrics(), 'nodepulse_relist_in_flight_seconds'), 12.5);
    age = 0;
    assert.equal(sample(await registry.metrics(), 'nodepulse_relist_in_flight_seconds'), 0);
  });

  it('pre-initialises every failure reason, renewal result, event type and CRI state at 0', async () => {
    const text = await fresh().registry.metrics();
    for (const reason of ['unavailable', 'deadline_exceeded', 'resource_exhausted', 'unimplemented', 'other']) {
      assert.equal(sample(text, `nodepulse_relist_failures_total{reason="${reason}"}`), 0, reason);
    }
    for (const result of ['success', 'error', 'withheld']) assert.equal(sample(text, `nodepulse_lease_renewals_total{result="${result}"}`), 0, result);
    for (const type of ['ContainerStarted', 'ContainerDied', 'ContainerRemoved', 'ContainerChanged']) {
      assert.equal(sample(text, `nodepulse_lifecycle_events_total{type="${type}"}`), 0, type);
    }
    assert.equal(sample(text, 'nodepulse_pods{state="SANDBOX_READY"}'), 0);
    assert.equal(sample(text, 'nodepulse_containers{state="CONTAINER_RUNNING"}'), 0);
    assert.equal(sample(text, 'nodepulse_build_info{version="1.2.3"}'), 1);
  });

  it('the runtime verdict gauges are read at scrape time, and have no sample at all while they read none', async () => {
    const { registry, metrics } = fresh();
    let text = await registry.metrics();
    assert.match(text, /^# TYPE nodepulse_runtime_healthy gauge$/m, 'declared from the start');
    assert.equal(sample(text, 'nodepulse_runtime_healthy'), undefined, 'no sample before a provider');
    assert.equal(sample(text, 'nodepulse_runtime_observable'), undefined);
    let values: { healthy: 0 | 1 | undefined; observable: 0 | 1 | undefined } = { healthy: 1, observable: 1 };
    metrics.setRuntimeGaugesProvider(() => values);
    text = await registry.metrics();
    assert.deepEqual([sample(text, 'nodepulse_runtime_healthy'), sample(text, 'nodepulse_runtime_observable')], [1, 1]);
    values = { healthy: undefined, observable: 0 };
    text = await registry.metrics();
    assert.deepEqual([sample(text, 'nodepulse_runtime_healthy'), sample(text, 'nodepulse_runtime_observable')], [undefined, 0]);
    assert.doesNotMatch(text, /^nodepulse_runtime_healthy/m, 'not even a 0: an alert on == 0 must not see the agent\'s blindness');
    const om = await renderOpenMetrics(registry);
    assert.doesNotMatch(om, /^nodepulse_runtime_healthy /m, 'the same in OpenMetrics');
    assert.match(om, /^nodepulse_runtime_observable 0$/m);
    values = { healthy: 0, observable: 1 };
    assert.equal(sample(await registry.metrics(), 'nodepulse_runtime_healthy'), 0);
  });

  it('runtime conditions are replaced as a set, and capped', async () => {
    const { registry, metrics } = fresh();
    metrics.setRuntimeConditions([{ type: 'RuntimeReady', status: true }, { type: 'NetworkReady', status: false }]);
    let text = await registry.metrics();
    assert.equal(sample(text, 'nodepulse_runtime_condition{type="RuntimeReady"}'), 1);
    assert.equal(sample(text, 'nodepulse_runtime_condition{type="NetworkReady"}'), 0);
    metrics.setRuntimeConditions([{ type: 'RuntimeReady', status: false }]);
    text = await registry.metrics();
    assert.equal(sample(text, 'nodepulse_runtime_condition{type="RuntimeReady"}'), 0);
    assert.equal(sample(text, 'nodepulse_runtime_condition{type="NetworkReady"}'), undefined, 'a vanished type is removed');
    metrics.setRuntimeConditions(Array.from({ length: 40 }, (_, i) => ({ type: `T${i}`, status: true })));
    text = await registry.metrics();
    assert.equal(text.split('\n').filter((l) => l.startsWith('nodepulse_runtime_condition{')).length, 16);
  });

  it('adds the process and Node.js default metrics, without the gauges named _total', async () => {
    const { registry } = fresh({ defaultMetrics: true });
    const text = await registry.metrics();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    }
    for (const name of DROPPED_DEFAULT_METRICS) assert.doesNotMatch(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
    assert.match(text, /^# TYPE nodejs_active_handles gauge$/m, 'the per-type gauge stays');
  });
});

describe('OpenMetrics', () => {
  it('is asked for by Prometheus-style Accept headers, not by plain ones', () => {
    assert.equal(wantsOpenMetrics('application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5'), true);
    assert.equal(wantsOpenMetrics('application/openmetrics-text; q=0'), false);
    assert.equal(wantsOpenMetrics('text/plain'), false);
    assert.equal(wantsOpenMetrics(undefined), false);
  });

  it('names counter families without _total and samples with it, ends buckets at +Inf and the body at # EOF', async () => {
    const { registry, metrics } = fresh();
    metrics.relistFailures.inc({ reason: 'unavailable' }, 2);
    metrics.relistDuration.observe({ result: 'success' }, 15);
    metrics.setRuntimeConditions([{ type: 'Odd"Type\\', status: true }]);
    const om = await renderOpenMetrics(registry);
    assert.match(om, /^# TYPE nodepulse_relist_failures counter$/m);
    assert.match(om, /^nodepulse_relist_failures_total\{reason="unavailable"\} 2$/m);
    assert.match(om, /^nodepulse_relist_duration_seconds_bucket\{le="\+Inf",result="success"\} 1$/m);
    assert.match(om, /^nodepulse_runtime_condition\{type="Odd\\"Type\\\\"\} 1$/m);
    assert.ok(om.endsWith('\n# EOF\n'));
    assert.match(await registry.metrics(), /^# TYPE nodepulse_relist_failures_total counter$/m, 'rendering OpenMetrics leaves the registry as it was');
  });
});
