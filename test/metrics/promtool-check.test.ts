// The agent's /metrics body, populated as a running agent populates it, linted by the real
// `promtool check metrics` (Prometheus from Debian): no findings allowed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { AGENT_METRIC_NAMES, createAgentMetrics } from '../../src/metrics/metrics.ts';
import { requireExecutables } from '../support/require.ts';

async function populatedExposition(): Promise<string> {
  const registry = new Registry();
  const m = createAgentMetrics(registry, { relistDeadlineMs: 60_000, version: '0.1.0', clock: new ManualClock() });
  m.relistDuration.observe({ result: 'success' }, 0.012);
  m.relistDuration.observe({ result: 'success' }, 15);
  m.relistDuration.observe({ result: 'deadline_exceeded' }, 60.003);
  m.relistInterval.observe(1.01);
  m.relistLastSuccessTimestamp.set(1_767_323_045.123);
  m.setRelistInFlightProvider(() => 3.2);
  m.relistFailures.inc({ reason: 'deadline_exceeded' });
  m.setRuntimeGaugesProvider(() => ({ healthy: 1, observable: 1 }));
  m.setRuntimeConditions([{ type: 'RuntimeReady', status: true }, { type: 'NetworkReady', status: false }]);
  m.pods.set({ state: 'SANDBOX_READY' }, 3);
  m.containers.set({ state: 'CONTAINER_RUNNING' }, 5);
  m.lifecycleEvents.inc({ type: 'ContainerStarted' }, 5);
  m.lifecycleEventsDropped.inc(0);
  m.agentAlive.set(1);
  m.leaseRenewing.set(1);
  m.leaseRenewals.inc({ result: 'success' }, 4);
  m.leaseRenewals.inc({ result: 'withheld' });
  m.leaseConflicts.inc();
  m.leaseLastRenewTimestamp.set(1_767_323_050.5);
  return registry.metrics();
}

test('promtool check metrics finds nothing in a populated /metrics, which has every agent metric', async (t) => {
  const tools = requireExecutables(t, ['promtool']);
  if (tools === undefined) return;
  const body = await populatedExposition();
  for (const name of AGENT_METRIC_NAMES) assert.match(body, new RegExp(`^# TYPE ${name} `, 'm'), `${name} is exported`);

  const lint = spawnSync(tools['promtool'] ?? 'promtool', ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 30_000 });
  assert.equal(lint.error, undefined, 'promtool ran');
  assert.equal(`${lint.stdout}${lint.stderr}`.trim(), '', 'promtool has no findings');
  assert.equal(lint.status, 0);
});

test('promtool would flag a _total gauge, so the check is not vacuous', (t) => {
  const tools = requireExecutables(t, ['promtool']);
  if (tools === undefined) return;
  const bad = '# HELP nodejs_active_handles_total Total handles.\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n';
  const lint = spawnSync(tools['promtool'] ?? 'promtool', ['check', 'metrics'], { input: bad, encoding: 'utf8', timeout: 30_000 });
  assert.match(`${lint.stdout}${lint.stderr}`, /non-counter metrics should not have "_total" suffix/);
});
