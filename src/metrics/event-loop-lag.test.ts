import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { ManualClock } from '../clock/manual-clock.ts';
import { collectProcessMetrics, EventLoopLagSampler, PROM_CLIENT_COLLECTORS, registerEventLoopLag, REPLACED_COLLECTORS, type LatenessHistogram } from './event-loop-lag.ts';

const MS = 1e6;

/** A histogram of the given values (ns), computed the plain way, counting its resets. */
function histogramOf(valuesNs: number[]): LatenessHistogram & { resets: number; values: number[] } {
  const h = {
    values: valuesNs,
    resets: 0,
    get count() {
      return h.values.length;
    },
    get min() {
      return Math.min(...h.values);
    },
    get max() {
      return Math.max(...h.values);
    },
    get mean() {
      return h.values.reduce((a, b) => a + b, 0) / h.values.length;
    },
    get stddev() {
      const m = h.mean;
      return Math.sqrt(h.values.reduce((a, b) => a + (b - m) ** 2, 0) / h.values.length);
    },
    percentile(p: number) {
      const sorted = [...h.values].sort((a, b) => a - b);
      return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
    },
    reset() {
      h.resets += 1;
      h.values = [];
    },
  };
  return h;
}

/** Node's histogram keeps three significant digits: a value reads within 0.1 % of what was recorded. */
function near(actual: number | undefined, expected: number, message: string): void {
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= expected * 1e-3, `${message}: ${actual} is not ${expected} ± 0.1 %`);
}

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('EventLoopLagSampler', () => {
  it('records how late each sample fired, and takes the next one an interval after it fired', async () => {
    const clock = new ManualClock();
    const sampler = new EventLoopLagSampler(clock, 500);
    sampler.start();
    await clock.advance(1000); // two samples, each on time
    assert.equal(sampler.lateness.count, 2);
    assert.equal(sampler.lateness.max, 1, 'on time records the histogram\'s least value, 1 ns');
    clock.jump(800); // the loop is blocked past the sample due at 1500
    await clock.advance(0);
    assert.equal(sampler.lateness.count, 3);
    near(sampler.lateness.max, 300e6, 'fired at 1800, due at 1500');
    await clock.advance(499);
    assert.equal(sampler.lateness.count, 3, 'no catch-up burst: the next sample is due at 2300');
    await clock.advance(1);
    assert.equal(sampler.lateness.count, 4);
    sampler.stop();
    assert.equal(clock.pendingTimers(), 0);
  });

  it('refuses an interval that is not a positive number of ms', () => {
    assert.throws(() => new EventLoopLagSampler(new ManualClock(), 0), /intervalMs: 0 must be a positive number of milliseconds/);
    assert.throws(() => new EventLoopLagSampler(new ManualClock(), Number.NaN), /intervalMs: NaN must be/);
  });
});

describe('event-loop lag gauges', () => {
  it('read the lateness since the last scrape in seconds, in whole microseconds', async () => {
    const registry = new Registry();
    // Ten samples: eight on time (1 ns), one 20 ms late, one 1.2 s late.
    const h = histogramOf([...Array.from({ length: 8 }, () => 1), 20 * MS, 1200 * MS]);
    registerEventLoopLag(registry, h, new ManualClock(), 500);
    const text = await registry.metrics();
    assert.equal(sample(text, 'nodejs_eventloop_lag_min_seconds'), 0);
    assert.equal(sample(text, 'nodejs_eventloop_lag_max_seconds'), 1.2);
    assert.equal(sample(text, 'nodejs_eventloop_lag_p50_seconds'), 0);
    assert.equal(sample(text, 'nodejs_eventloop_lag_p90_seconds'), 0.02);
    assert.equal(sample(text, 'nodejs_eventloop_lag_p99_seconds'), 1.2);
    assert.equal(sample(text, 'nodejs_eventloop_lag_mean_seconds'), 0.122);
    const mean = (8 * 1 + 20 * MS + 1200 * MS) / 10;
    const variance = (8 * (1 - mean) ** 2 + (20 * MS - mean) ** 2 + (1200 * MS - mean) ** 2) / 10;
    assert.equal(sample(text, 'nodejs_eventloop_lag_stddev_seconds'), Math.floor(Math.sqrt(variance) / 1e3) / 1e6);
    assert.equal(h.resets, 1, 'each scrape starts the samples afresh');
    assert.match(text, /^# HELP nodejs_eventloop_lag_p99_seconds The 99th percentile of how late the event loop ran a timer due every 500 ms, since the last scrape, in seconds\.$/m);
  });

  it('a scrape with no sample since the last one keeps the last values', async () => {
    const registry = new Registry();
    const h = histogramOf([300 * MS]);
    registerEventLoopLag(registry, h, new ManualClock(), 500);
    assert.equal(sample(await registry.metrics(), 'nodejs_eventloop_lag_p99_seconds'), 0.3);
    assert.equal(h.count, 0, 'precondition: the first scrape reset the samples');
    assert.equal(sample(await registry.metrics(), 'nodejs_eventloop_lag_p99_seconds'), 0.3);
    assert.equal(h.resets, 1, 'an empty histogram is not reset again');
  });

  it('the sampler and the gauges together: a blocked loop reads as its lateness, then 0 again', async () => {
    const clock = new ManualClock();
    const registry = new Registry();
    const sampler = new EventLoopLagSampler(clock, 500);
    sampler.start();
    registerEventLoopLag(registry, sampler.lateness, clock, 500);
    await clock.advance(400);
    clock.jump(5000);
    await clock.advance(1000);
    const blocked = await registry.metrics();
    near(sample(blocked, 'nodejs_eventloop_lag_max_seconds'), 4.9, 'due at 500, fired at 5400');
    assert.equal(sample(blocked, 'nodejs_eventloop_lag_min_seconds'), 0);
    await clock.advance(2000);
    assert.equal(sample(await registry.metrics(), 'nodejs_eventloop_lag_max_seconds'), 0, 'the next scrape covers only the time since');
    sampler.stop();
  });

  it("nodejs_eventloop_lag_seconds reads how long the previous scrape's setImmediate waited", async () => {
    const clock = new ManualClock();
    const registry = new Registry();
    registerEventLoopLag(registry, histogramOf([]), clock, 500);
    assert.equal(sample(await registry.metrics(), 'nodejs_eventloop_lag_seconds'), 0, 'nothing measured before the first scrape');
    clock.jump(250); // the loop is busy before the immediate runs
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sample(await registry.metrics(), 'nodejs_eventloop_lag_seconds'), 0.25);
  });
});

describe('collectProcessMetrics', () => {
  it("registers every family prom-client collects by default, the lag ones being the agent's", async () => {
    const ours = new Registry();
    collectProcessMetrics(ours, new ManualClock(), 50);
    const theirs = new Registry();
    collectDefaultMetrics({ register: theirs });
    const families = async (r: Registry) => (await r.getMetricsAsJSON()).map((m) => m.name).sort();
    assert.deepEqual(await families(ours), await families(theirs));
    assert.ok((await families(ours)).includes('nodejs_eventloop_lag_p99_seconds'), 'precondition: prom-client has a lag family');
    const help = (await ours.getMetricsAsJSON()).find((m) => m.name === 'nodejs_eventloop_lag_p99_seconds')?.help;
    assert.match(help ?? '', /a timer due every 50 ms/);
  });

  it("leaves out none of prom-client's default collectors: each is registered or replaced by the agent's own", () => {
    const require = createRequire(import.meta.url);
    const { metricsList } = require('prom-client/lib/defaultMetrics.js') as { metricsList: readonly string[] };
    assert.deepEqual([...Object.keys(PROM_CLIENT_COLLECTORS), ...REPLACED_COLLECTORS].sort(), [...metricsList].sort());
  });

  it('counts the process CPU since the process started, under prom-client\'s names, user plus system making the total', async () => {
    const registry = new Registry();
    collectProcessMetrics(registry, new ManualClock(), 50);
    const before = process.cpuUsage();
    const text = await registry.metrics();
    const user = sample(text, 'process_cpu_user_seconds_total') ?? -1;
    const system = sample(text, 'process_cpu_system_seconds_total') ?? -1;
    assert.ok(user >= before.user / 1e6 - 1e-6, `user ${user} s covers the ${before.user / 1e6} s used before the first scrape`);
    near(sample(text, 'process_cpu_seconds_total'), user + system, 'total = user + system');
    const later = sample(await registry.metrics(), 'process_cpu_user_seconds_total') ?? -1;
    assert.ok(later >= user, 'a counter never goes down');
  });

  it('samples on the clock it is given: a loop blocked on that clock reads as late', async () => {
    const clock = new ManualClock();
    const registry = new Registry();
    collectProcessMetrics(registry, clock, 500);
    await clock.advance(400);
    clock.jump(5000);
    await clock.advance(0);
    near(sample(await registry.metrics(), 'nodejs_eventloop_lag_max_seconds'), 4.9, 'due at 500 on the given clock, fired at 5400');
  });
});
