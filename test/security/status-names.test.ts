// /status answers anyone who can reach the pod, so it names nothing the runtime runs: the built
// agent relists a simulated runtime whose pods and containers churn, and nothing it serves over
// HTTP (/status, /metrics, /healthz?verbose, /livez?verbose, /readyz?verbose) holds any pod's or
// container's id, name, uid or image, or a sandbox id a container points at. Its lifecycle
// events say only what happened and when (type, kind, time).
//
// Precondition, asserted: the agent saw lifecycle events and counted the containers, so the
// events it serves are the ones that would have carried the names.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { STATUS_EVENT_FIELDS } from '../../src/http/status-snapshot.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { pollUntil, startAgentProcess, startStandIn } from '../support/agent-process.ts';

/** Churn steps, one every 300 ms: each relist (every 100 ms here) sees a few of them. */
const STEPS = 12;
const STEP_EVERY_MS = 300;
/** The first relist lands within a second of start; 15 s covers a loaded machine. */
const SEEN_WITHIN_MS = 15_000;

interface StatusBody {
  readonly counts: { readonly containers: number };
  readonly recentEvents: ReadonlyArray<Record<string, unknown>>;
}

test('/status and every other route name no pod or container the runtime runs, and its events are type, kind and time only', { timeout: 60_000 }, async (t) => {
  const standIn = await startStandIn(t, { nodeName: 'node-names' });
  const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 4, containersPerPod: 2, seed: 7 });
  t.after(() => sim.close());
  const agent = await startAgentProcess(t, {
    args: ['--node-name', 'node-names', '--cri-endpoint', sim.endpoint, '--kubeconfig', standIn.kubeconfig, '--relist-period', '100ms'],
  });

  // Everything the runtime has named, over the whole run: churn removes some, so collect as it goes.
  const secrets = new Set<string>();
  const collect = (): void => {
    for (const s of sim.sandboxes()) for (const v of [s.id, s.name, s.uid, `${s.namespace}/${s.name}`, s.ip]) secrets.add(v);
    for (const c of sim.containers()) for (const v of [c.id, c.podSandboxId, c.image, c.imageRef, c.logPath]) secrets.add(v);
  };
  collect();
  await pollUntil('the first relist', async () => (await agent.status()).counts.containers > 0, { timeoutMs: SEEN_WITHIN_MS });
  for (let i = 0; i < STEPS; i++) {
    sim.step(2);
    collect();
    await standIn.clock.sleep(STEP_EVERY_MS);
  }
  await pollUntil('four lifecycle events', async () => ((JSON.parse((await agent.get('/status')).body) as StatusBody).recentEvents.length >= 4), { timeoutMs: SEEN_WITHIN_MS });

  const status = JSON.parse((await agent.get('/status')).body) as StatusBody;
  assert.ok(status.counts.containers > 0, 'precondition: the agent counted the runtime\'s containers');
  assert.ok(status.recentEvents.length >= 4, `precondition: the agent saw lifecycle events, got ${status.recentEvents.length}`);
  assert.ok(secrets.size > 40, `precondition: the runtime named many things, got ${secrets.size}`);
  for (const event of status.recentEvents) assert.deepEqual(Object.keys(event).sort(), [...STATUS_EVENT_FIELDS].sort(), JSON.stringify(event));

  for (const path of ['/status', '/metrics', '/healthz?verbose', '/livez?verbose', '/readyz?verbose']) {
    const { status: code, body } = await agent.get(path);
    assert.ok(code === 200 || code === 503, `${path}: ${code}`);
    const found = [...secrets].filter((s) => s !== '' && body.includes(s));
    assert.deepEqual(found, [], `${path} must name nothing the runtime runs`);
  }
});
