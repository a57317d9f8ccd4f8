// A real Prometheus (Debian's) scrapes the agent's HTTP server on loopback. Prometheus asks for
// OpenMetrics first, so this proves the OpenMetrics body is one the real parser accepts, and that
// the histogram and counters arrive with the names dashboards query.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { SystemClock } from '../../src/clock/clock.ts';
import { createHttpServer } from '../../src/http/http-server.ts';
import { createAgentMetrics } from '../../src/metrics/metrics.ts';
import { requireExecutables } from '../support/require.ts';

/** Bound on waiting for Prometheus to start and scrape twice. */
const SCRAPE_WAIT_MS = 30_000;

async function freePort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function query(promPort: number, promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(promql)}`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { data?: { result?: Array<{ metric: Record<string, string>; value: [number, string] }> } };
  return body.data?.result ?? [];
}

test('a real Prometheus scrapes /metrics as OpenMetrics and reads every series it needs', async (t) => {
  const tools = requireExecutables(t, ['prometheus']);
  if (tools === undefined) return;
  const clock = new SystemClock();

  const registry = new Registry();
  const metrics = createAgentMetrics(registry, { relistDeadlineMs: 60_000, version: '0.1.0-scrape' });
  metrics.relistDuration.observe({ result: 'success' }, 15);
  metrics.relistFailures.inc({ reason: 'unavailable' }, 2);
  const accepts: string[] = [];
  const agent = createHttpServer({
    loops: () => [],
    withinStartupGrace: () => true,
    ready: () => ({ ready: true, reason: 'serving' }),
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

  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-prom-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: nodepulse\n    static_configs:\n      - targets: ['127.0.0.1:${agentPort}']\n`,
  );
  const promPort = await freePort();
  const prom = spawn(
    tools['prometheus'] ?? 'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${promPort}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  prom.stderr.on('data', (c: Buffer) => {
    if (log.length < 64 * 1024) log += c.toString('utf8');
  });
  t.after(async () => {
    if (prom.exitCode === null && prom.signalCode === null) {
      const exited = new Promise((resolve) => prom.once('exit', resolve));
      prom.kill('SIGTERM');
      await Promise.race([exited, clock.sleep(5_000).then(() => prom.kill('SIGKILL'))]);
    }
  });

  const deadline = clock.monotonicMs() + SCRAPE_WAIT_MS;
  let buckets: Awaited<ReturnType<typeof query>> = [];
  while (clock.monotonicMs() < deadline) {
    assert.equal(prom.exitCode, null, `prometheus exited early:\n${log}`);
    buckets = await query(promPort, 'nodepulse_relist_duration_seconds_bucket{result="success",le="30"}').catch(() => []);
    if (buckets.length > 0) break;
    await clock.sleep(250);
  }
  assert.equal(buckets.length, 1, `Prometheus stored the histogram within ${SCRAPE_WAIT_MS} ms; its log:\n${log}`);
  assert.equal(buckets[0]?.value[1], '1', 'the 15 s relist is in the le="30" bucket');

  assert.ok(accepts.some((a) => a.includes('application/openmetrics-text')), `Prometheus asked for OpenMetrics: ${JSON.stringify(accepts)}`);
  const up = await query(promPort, 'up{job="nodepulse"}');
  assert.equal(up[0]?.value[1], '1', 'the target is up: the scrape parsed');
  const failures = await query(promPort, 'nodepulse_relist_failures_total{reason="unavailable"}');
  assert.equal(failures[0]?.value[1], '2');
  const info = await query(promPort, 'nodepulse_build_info');
  assert.equal(info[0]?.metric['version'], '0.1.0-scrape');
});
