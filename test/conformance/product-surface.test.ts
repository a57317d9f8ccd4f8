// The conformance table covers every request the product sends: the product's commands run as
// users run them, all against one API stand-in, and every request the stand-in recorded, named
// as requestSignature() names it (method, path with the namespace and name as placeholders, the
// query's keys, the body's media type), must be declared by some row of the table
// (test/cluster/conformance-table.ts), which the real API server answers.
//
// | who                         | how it runs here                                  | what it sends                            |
// |-----------------------------|---------------------------------------------------|------------------------------------------|
// | `nodepulse agent` (built)   | a process, on the simulated runtime               | its Node read, lease create and renewals,|
// |                             |                                                   | its condition, an Event                  |
// | `nodepulse controller`      | a process, --taint, test-shortened timings; one   | the election lease; lists and watches of |
// |                             | Node's lease never moves (marked), then moves     | leases, Nodes, the agent DaemonSet; the  |
// |                             | (cleared); SIGTERM (releases the lease)           | marks, the taint, Events; the release    |
// | `nodepulse fleet` (built)   | a single listing, and --observe                   | lists, and lists then watches            |
// | `nodepulse cleanup` (built) | once the Nodes carry our condition and a taint    | pods and Nodes listed; the $patch:delete |
// |                             |                                                   | and the taint's JSON patch; our Leases   |
// |                             |                                                   | listed and deleted                       |
//
// The test itself writes only through the stand-in's store (no HTTP), so every recorded request
// is the product's. A request the product sends that no row declares fails the test, naming it:
// add a row that sends it, so the real server answers it too.
//
// Real time passes (real processes run); every wait is a bounded poll of the stand-in's state.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { requestSignature, ROWS } from '../cluster/conformance-table.ts';
import { agentLease, LEASE_NAMESPACE, realisticNode } from '../fleet/fleet-fixtures.ts';
import { startControllerProcess } from '../fleet/controller-harness.ts';
import { startAgentProcess } from '../support/agent-process.ts';
import { runBuiltCli } from '../support/run-cli.ts';

const clock = new SystemClock();
const NS = LEASE_NAMESPACE;
const AGENT_NODE = 'surface-agent';
const SILENT_NODE = 'surface-silent';
/** Each wait of the walk: a process start, a grace period and a monitor period, with room on a loaded machine. */
const STEP_MS = 20_000;
const TIMINGS = { graceMs: 2_000, monitorPeriodMs: 250, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };

type Json = Record<string, unknown>;

async function until(what: string, check: () => boolean): Promise<void> {
  const started = clock.monotonicMs();
  while (!check()) {
    assert.ok(clock.monotonicMs() - started < STEP_MS, `precondition of the walk: ${what} within ${STEP_MS} ms`);
    await clock.sleep(50);
  }
}

test('every request the product\'s commands send is a row of the conformance table', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'np-conformance-surface-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const api = await startApiServer({ clock });
  t.after(() => api.close());
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: api.url });
  const created = clock.wallMicros() - 3_600_000_000;
  for (const [i, name] of [AGENT_NODE, SILENT_NODE].entries()) {
    api.store.put(realisticNode(name, i, { createdMicros: created }));
  }
  api.store.put(agentLease(SILENT_NODE, created));
  const condition = (node: string): Json | undefined =>
    ((api.store.get('nodes', undefined, node) as { status?: { conditions?: Json[] } } | undefined)?.status?.conditions ?? []).find((c) => c['type'] === 'RuntimeRelistUnhealthy');

  // The agent: its lease, its condition and Event.
  const sim = await startSimRuntime({ clock, socketPath: join(dir, 'cri.sock'), pods: 2, containersPerPod: 1 });
  t.after(() => sim.close());
  const agent = await startAgentProcess(t, {
    args: ['--node-name', AGENT_NODE, '--cri-endpoint', sim.endpoint, '--kubeconfig', kubeconfig, '--lease-duration', '4s', '--api-timeout', '2s', '--relist-period', '100ms'],
  });
  await until('the agent writes its condition', () => condition(AGENT_NODE)?.['reason'] === 'RelistHealthy');

  // The controller: it leads, marks the silent Node (and taints it), clears it once its lease moves, and releases on SIGTERM.
  const controller = await startControllerProcess(t, { kubeconfig, identity: 'surface-controller', namespace: NS, timings: TIMINGS, args: ['--taint'] });
  await until('the controller marks the silent Node', () => condition(SILENT_NODE)?.['reason'] === 'AgentLeaseStale');
  api.store.put(agentLease(SILENT_NODE, clock.wallMicros()));
  await until('the controller clears it', () => condition(SILENT_NODE)?.['reason'] === 'RelistHealthy');
  assert.equal(await controller.stop('SIGTERM'), 0, `the controller exits 0 on SIGTERM:\n${controller.stderrTail()}`);
  assert.equal(await agent.stop('SIGTERM'), 0, `the agent exits 0 on SIGTERM:\n${agent.stderrTail()}`);

  // The readers: a single listing, and a watch for a grace period.
  const fleet = await runBuiltCli(['fleet', '--kubeconfig', kubeconfig, '--lease-namespace', NS]);
  assert.ok(fleet.code === 0 || fleet.code === 1, `fleet answers a verdict: ${fleet.code} ${fleet.stderr}`);
  const observed = await runBuiltCli(['fleet', '--kubeconfig', kubeconfig, '--lease-namespace', NS, '--grace', '1s', '--observe', '1s']);
  assert.ok(observed.code === 0 || observed.code === 1, `fleet --observe answers a verdict: ${observed.code} ${observed.stderr}`);

  // Cleanup, once the silent Node carries the taint again.
  const silent = api.store.get('nodes', undefined, SILENT_NODE) as Json & { spec?: Json };
  api.store.put({ ...silent, spec: { ...silent.spec, taints: [{ key: 'nodepulse.io/agent-silent', effect: 'NoSchedule', timeAdded: '2026-03-04T05:02:00Z' }] } });
  const cleanup = await runBuiltCli(['cleanup', '--kubeconfig', kubeconfig, '--agent-namespace', NS, '--agent-selector', 'app.kubernetes.io/name=nodepulse', '--timeout', '30s'], { timeoutMs: 60_000 });
  assert.equal(cleanup.code, 0, `cleanup removes what it should: ${cleanup.stdout}${cleanup.stderr}`);

  const sent = new Map<string, number>();
  for (const r of api.requests.all()) sent.set(requestSignature(r), (sent.get(requestSignature(r)) ?? 0) + 1);
  const declared = new Set(ROWS.flatMap((row) => row.sends));
  const undeclared = [...sent.keys()].filter((s) => !declared.has(s)).sort();
  t.diagnostic(`the product sent ${api.requests.all().length} requests of ${sent.size} kinds: ${[...sent.entries()].map(([s, n]) => `${n} × ${s}`).sort().join('; ')}`);
  assert.deepEqual(undeclared, [], 'each request the product sends must be a row of the conformance table');
  assert.ok(sent.size >= 10, `precondition: the walk reached the product's requests (${sent.size} kinds)`);
});
