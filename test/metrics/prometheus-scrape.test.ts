// A real Prometheus (Debian's) scrapes the agent's HTTP server on loopback. Prometheus asks for
// OpenMetrics first, so this proves the OpenMetrics body is one the real parser accepts, and that
// the histogram and counters arrive with the names dashboards query.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { SystemClock } from '../../src/clock/clock.ts';
import { createHttpServer } from '../../src/http/http-server.ts';
import { createAgentMetrics } from '../../src/metrics/metrics.ts';
import { startPrometheus, type InstantSample } from '../support/prometheus.ts';
import { requireExecutables } from '../support/require.ts';

/** Bound on waiting for Prometheus to start and scrape twice. */
const SCRAPE_WAIT_MS = 30_000;

test('a real Prometheus scrapes /metrics as OpenMetrics and reads every series it needs', async (t) => {
  const tools = requireExecutables(t, ['prometheus']);
  if (tools === undefined) return;
  const clock = new SystemClock();

  const registry = new Registry();
  const metrics = createAgentMetrics(registry, { relistDeadlineMs: 60_000, version: '0.1.0-scrape', clock });
  metrics.relistDuration.observe({ result: 'success' }, 15);
  metrics.relistFailures.inc({ reason: 'unavailable' }, 2);
  const accepts: string[] = [];
  const agent = createHttpServer({
    loops: () => [],
    withinStartupGrace: () => true,
    ready: () => [{ name: 'started', ok: true, reason: 'serving' }],
    checks: () => [],
    status: () => {
      throw new Error('not used');
    },
    registry,
  });
  agent.on('request', (req: { url?: string; headers: { accept?: string } }) => {
    if (req.url === '/metrics') accepts.push(req.headers.accept ?? '');
  });
  t.after(() => {
    agent.closeAllConnections();
    agent.close();
  });
  await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
  const agentPort = (agent.address() as AddressInfo).port;

  const prom = await startPrometheus(t, {
    binary: tools['prometheus'] ?? 'prometheus',
    scrapeConfigs: [{ job_name: 'nodepulse', static_configs: [{ targets: [`127.0.0.1:${agentPort}`] }] }],
    clock,
  });

  const deadline = clock.monotonicMs() + SCRAPE_WAIT_MS;
  let buckets: InstantSample[] = [];
  while (clock.monotonicMs() < deadline) {
    assert.ok(prom.running, `prometheus exited early:\n${prom.log()}`);
    buckets = await prom.query('nodepulse_relist_duration_seconds_bucket{result="success",le="30"}').catch(() => []);
    if (buckets.length > 0) break;
    await clock.sleep(250);
  }
  assert.equal(buckets.length, 1, `Prometheus stored the histogram within ${SCRAPE_WAIT_MS} ms; its log:\n${prom.log()}`);
  assert.equal(buckets[0]?.value[1], '1', 'the 15 s relist is in the le="30" bucket');

  assert.ok(accepts.some((a) => a.includes('application/openmetrics-text')), `Prometheus asked for OpenMetrics: ${JSON.stringify(accepts)}`);
  const up = await prom.query('up{job="nodepulse"}');
  assert.equal(up[0]?.value[1], '1', 'the target is up: the scrape parsed');
  const failures = await prom.query('nodepulse_relist_failures_total{reason="unavailable"}');
  assert.equal(failures[0]?.value[1], '2');
  const info = await prom.query('nodepulse_build_info');
  assert.equal(info[0]?.metric['version'], '0.1.0-scrape');
});
