// docs/design.md's "Defaults", held to what the code starts with: each row's default, read from
// the document, is the agent's own (its config loaded with nothing given but a node name), or
// the constant of the module that owns it. A default changed in one place and not the other
// fails here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { DEFAULT_MONITOR_PERIOD_MS } from '../controller/fleet-controller.ts';
import { parseControllerFlags } from '../cli/controller-command.ts';
import { DEFAULT_GRACE_MS } from '../fleet/fleet-view.ts';
import { LEASE_LABELS } from '../lease/lease-writer.ts';
import { RENEW_FRACTION, RENEW_JITTER } from '../lease/node-lease.ts';
import { relistDurationBuckets } from '../metrics/metrics.ts';
import type { AgentConfig } from './agent-config-schema.ts';
import { STUCK_WINDOW_SLACK_MS } from './agent-config-schema.ts';
import { loadAgentConfig } from './load-agent-config.ts';

// Awaited, so the test reads the same whether the loader answers at once or with a promise.
async function defaults(): Promise<AgentConfig> {
  const loaded = await loadAgentConfig({ argv: ['--node-name', 'node-a'], env: {}, readFile: () => assert.fail('no file is read') });
  if (!loaded.ok) assert.fail(loaded.error.lines.join('\n'));
  return loaded.config;
}
const config = await defaults();

/** Every `<n> s`, `<n> min` or `<n> MiB` a cell names, in order, in ms (or bytes). */
function amounts(cell: string): number[] {
  const unit: Record<string, number> = { s: 1_000, min: 60_000, MiB: 1 << 20 };
  return [...cell.matchAll(/(\d+(?:\.\d+)?) (s|min|MiB)\b/g)].map((m) => Number(m[1]) * (unit[m[2] ?? ''] ?? Number.NaN));
}

const CHECKS: Readonly<Record<string, (cell: string) => void>> = {
  'relist period': (cell) => assert.deepEqual([amounts(cell), cell.endsWith(', sliding')], [[config.relistPeriodMs], true]),
  'relist threshold': (cell) => assert.deepEqual(amounts(cell), [config.relistThresholdMs]),
  'relist deadline (both calls)': (cell) => assert.deepEqual(amounts(cell), [config.relistDeadlineMs]),
  'runtime Status poll': (cell) => assert.deepEqual(amounts(cell), [config.statusPeriodMs, config.statusDeadlineMs]),
  'heartbeat idle window': (cell) => assert.deepEqual(amounts(cell), [config.idleWindowMs]),
  'heartbeat stuck window': (cell) => {
    assert.deepEqual([cell.startsWith('relist deadline + '), amounts(cell)], [true, [STUCK_WINDOW_SLACK_MS]]);
    assert.equal(config.stuckWindowMs, config.relistDeadlineMs + STUCK_WINDOW_SLACK_MS);
  },
  'start-up grace for /livez': (cell) => assert.deepEqual(amounts(cell), [config.startupGraceMs]),
  lease: (cell) => assert.match(cell, new RegExp(`\\(default ${config.leaseNamespace}\\), named after the node$`)),
  'lease labels': (cell) => assert.equal(cell, Object.entries(LEASE_LABELS).map(([k, v]) => `${k}: ${v}`).join(', ')),
  leaseDurationSeconds: (cell) => assert.equal(Number(cell), config.leaseDurationMs / 1000),
  'renew interval': (cell) => {
    assert.equal(cell, `lease duration × ${RENEW_FRACTION} (${config.renewIntervalMs / 1000} s), plus 0–${RENEW_JITTER * 100} % jitter`);
    assert.equal(config.renewIntervalMs, config.leaseDurationMs * RENEW_FRACTION);
  },
  'RECHECK while withheld': (cell) => assert.deepEqual(amounts(cell), [config.leaseRecheckMs]),
  'API request timeout': (cell) => assert.deepEqual(amounts(cell), [config.apiTimeoutMs]),
  'condition refresh': (cell) => assert.deepEqual(amounts(cell), [config.conditionRefreshMs]),
  'reader grace': (cell) => assert.deepEqual(amounts(cell), [DEFAULT_GRACE_MS]),
  'controller monitor period': (cell) => assert.deepEqual(amounts(cell), [DEFAULT_MONITOR_PERIOD_MS]),
  'gRPC max receive': (cell) => assert.deepEqual(amounts(cell), [config.maxMessageSizeBytes]),
  'HTTP address': (cell) => {
    const controller = parseControllerFlags([], {});
    assert.ok('flags' in controller, 'precondition: the controller starts with its defaults');
    const port = 'flags' in controller ? controller.flags.http.port : undefined;
    assert.equal(cell, `${config.httpAddress} (the controller :${port})`);
  },
  'relist histogram buckets': (cell) => {
    assert.equal(cell, 'up to the relist deadline');
    assert.ok(relistDurationBuckets(config.relistDeadlineMs).includes(config.relistDeadlineMs / 1000), 'a bucket at the relist deadline');
  },
};

for (const { key, row, case: check } of casesOf(designTable('Defaults'), 1, CHECKS)) {
  test(`docs/design.md's default of ${key} (${row[1]}) is the code's`, () => check(row[1] ?? ''));
}
