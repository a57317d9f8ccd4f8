// The agent's wiring on a manual clock: the real loops, relister, lease, condition, HTTP and
// logger, with a scripted runtime and an in-memory API (MemoryKube), so that every tick is
// stepped by hand and nothing races real time. HTTP is real (port 0) and only read.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../clock/manual-clock.ts';
import { loadAgentConfig } from '../config/load-agent-config.ts';
import { CriError } from '../cri/cri-error.ts';
import { ScriptedRuntimeClient } from '../stand-ins/doubles/scripted-runtime-client.ts';
import type { CallOptions, RuntimeStatus } from '../cri/types.ts';
import { MemoryKube } from '../stand-ins/doubles/memory-kube.ts';
import { createLogger, memorySink } from '../log/logger.ts';
import { Agent } from './agent.ts';
import { ResolvingRuntimeClient } from '../cri/resolving-runtime-client.ts';

const NODE = 'node-a';
const EACCES = 'RuntimeService/ListPodSandbox: rpc error: code = Unavailable desc = connect EACCES /run/containerd/containerd.sock';

/** The scripted runtime, counting Status calls, and able to leave them hanging. */
class StatusRuntime extends ScriptedRuntimeClient {
  statusCalls = 0;
  statusHangs = false;

  override status(options: CallOptions): Promise<RuntimeStatus> {
    this.statusCalls++;
    if (!this.statusHangs) return super.status(options);
    // Never answered; only the caller's signal (the agent stopping) ends it.
    return new Promise<RuntimeStatus>((_, reject) => options.signal?.addEventListener('abort', () => reject(options.signal?.reason), { once: true }));
  }
}

/** The agent on a manual clock; `wired.runtime` replaces the scripted runtime (then argv gives no endpoint). */
async function startAgent(t: TestContext, extraArgs: string[] = [], wired: { runtime: ResolvingRuntimeClient; clock: ManualClock } | undefined = undefined) {
  const endpointArgs = wired === undefined ? ['--cri-endpoint', 'unix:///scripted.sock'] : [];
  const loaded = loadAgentConfig({
    argv: ['--node-name', NODE, '--http-address', '127.0.0.1:0', ...endpointArgs, ...extraArgs],
    env: {},
    readFile: () => '',
  });
  assert.ok(loaded.ok, 'precondition: the test config is valid');
  const clock = wired?.clock ?? new ManualClock();
  const runtime = new StatusRuntime();
  runtime.statusAnswer = { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] };
  const kube = new MemoryKube(NODE);
  const sink = memorySink();
  const registry = new Registry();
  const agent = new Agent({
    config: loaded.config,
    clock,
    logger: createLogger({ level: 'info', destination: sink, time: () => '' }),
    registry,
    runtime: wired?.runtime ?? runtime,
    kube,
    random: () => 0,
    ...(wired === undefined ? {} : { criEndpoint: () => wired.runtime.view() }),
  });
  const address = await agent.start();
  t.after(() => agent.close());
  const url = `http://127.0.0.1:${address.port}`;
  /** One second of the agent's life: answer (or fail) every relist asked so far, then move on. */
  const second = async (how: 'answer' | 'fail' | 'hang' | 'eacces' = 'answer'): Promise<void> => {
    for (const p of how === 'hang' ? [] : [...runtime.pending]) {
      if (how === 'answer') p.answer();
      else if (how === 'eacces') p.fail('unavailable', EACCES, { detail: `No connection established. Last error: Error: connect EACCES /run/containerd/containerd.sock. Resolution note: `, grpcCode: 14 });
      else p.fail('unavailable', 'connection refused');
    }
    await clock.advance(1000);
  };
  /** One sample of a metric, read as a scrape reads it. */
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number | undefined> => {
    const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want))?.value;
  };
  return { agent, clock, runtime, kube, sink, url, second, metric };
}

test('no info line in 60 quiet ticks once the agent has settled', async (t) => {
  const a = await startAgent(t);
  for (let i = 0; i < 15; i++) await a.second();
  assert.equal(a.agent.status().lease.renewing, true, 'precondition: the agent is renewing');
  const before = a.sink.lines.length;
  for (let i = 0; i < 60; i++) await a.second();
  assert.ok(a.runtime.relistCalls >= 75, `precondition: the relister ticked every second (${a.runtime.relistCalls} relists)`);
  assert.deepEqual(a.sink.lines.slice(before), []);
});

test('each change of state is logged once, and a run of relist failures is two lines', async (t) => {
  const a = await startAgent(t);
  for (let i = 0; i < 5; i++) await a.second();
  for (let i = 0; i < 200; i++) await a.second('fail'); // past the default 1 m threshold
  for (let i = 0; i < 5; i++) await a.second();
  const judged = a.sink.lines.filter((l) => l['msg'] === 'Runtime judgement changed').map((l) => l['state']);
  assert.deepEqual(judged, ['NotYetObserved', 'Healthy', 'Unhealthy', 'Healthy']);
  const relist = a.sink.lines.filter((l) => String(l['msg']).startsWith('Relist ')).map((l) => [l['msg'], l['failures']]);
  assert.deepEqual(relist, [['Relist failing', undefined], ['Relist recovered', 200]]);
  const conditions = a.kube.calls.filter((c) => c.method === 'patchNodeStatus').length;
  assert.equal(conditions, 3, 'the condition is written on each change of state (False, True, False) and never on an unchanged tick');
});

test('an agent that cannot observe (EACCES): /readyz 503 at once and /livez 200, the lease withheld, no runtime_healthy sample, then Unknown/AgentCannotObserve past the threshold, never True', async (t) => {
  const a = await startAgent(t);
  await a.second('eacces');
  assert.equal(a.agent.runtimeHealth().state, 'CannotObserve', 'precondition: the first relist failed for the agent\'s own reason');
  const ready = await fetch(`${a.url}/readyz`);
  assert.equal(ready.status, 503);
  assert.match(await ready.text(), /^\[-\]runtime-observable failed: the agent cannot observe the runtime \(permission-denied\): .*connect EACCES/);
  assert.equal((await fetch(`${a.url}/livez`)).status, 200, '/livez does not follow it');
  assert.deepEqual([await a.metric('nodepulse_runtime_healthy'), await a.metric('nodepulse_runtime_observable')], [undefined, 0]);
  const status = a.agent.status();
  assert.deepEqual([status.runtime.state, status.runtime.why, status.runtime.lastFault?.cause], ['CannotObserve', 'permission-denied', 'permission-denied']);
  for (let i = 0; i < 200; i++) await a.second('eacces'); // past the default 1 m threshold since start
  assert.equal(a.agent.status().lease.renewing, false, 'the lease is withheld');
  assert.equal(a.kube.calls.filter((c) => c.method === 'patchLease' || c.method === 'createLease').length, 0, 'no lease was ever written');
  const written = a.kube.calls.filter((c) => c.method === 'patchNodeStatus').map((c) => (c.body as { status: { conditions: Array<{ status: string; reason: string }> } }).status.conditions[0]);
  assert.deepEqual(written.map((c) => [c?.status, c?.reason]), [['Unknown', 'AgentCannotObserve']], 'written once, past the threshold; never True');
  assert.equal((await fetch(`${a.url}/readyz`)).status, 503);
  const judged = a.sink.lines.filter((l) => l['msg'] === 'Runtime judgement changed').map((l) => [l['state'], l['why'], l['level']]);
  assert.deepEqual(judged, [['NotYetObserved', 'silent', 'info'], ['CannotObserve', 'permission-denied', 'warn']], 'logged once, as a warning, with why');
  // Once it can observe again, it is ready again, and the condition says so.
  await a.second('answer');
  await a.second('answer');
  assert.equal((await fetch(`${a.url}/readyz`)).status, 200);
  assert.deepEqual([await a.metric('nodepulse_runtime_healthy'), await a.metric('nodepulse_runtime_observable')], [1, 1]);
});

test('/livez stays 200 while the runtime is dead and turns 503 naming the loop when the relister wedges', async (t) => {
  const a = await startAgent(t, ['--startup-grace', '5s']);
  for (let i = 0; i < 3; i++) await a.second();
  for (let i = 0; i < 200; i++) await a.second('fail');
  assert.equal(a.agent.runtimeHealth().state, 'Unhealthy', 'precondition: the runtime is judged dead');
  let res = await fetch(`${a.url}/livez`);
  assert.equal(res.status, 200);
  assert.equal((await fetch(`${a.url}/readyz`)).status, 200, '/readyz does not depend on the runtime');
  // A relist that never returns (the scripted runtime enforces no deadline) wedges the loop.
  for (let i = 0; i < 92; i++) await a.second('hang');
  assert.equal(a.agent.loopLiveness('relister').state, 'Stalled', 'precondition: past the 90 s stuck window');
  res = await fetch(`${a.url}/livez`);
  assert.equal(res.status, 503);
  assert.match(await res.text(), /relister/);
});

test('/status and the log say which socket was probed and chosen, and why, once', async (t) => {
  const clock = new ManualClock();
  const crio = new ScriptedRuntimeClient('unix:///run/crio/crio.sock');
  crio.versionAnswer = { version: '0.1.0', runtimeName: 'cri-o', runtimeVersion: '1.30.4', runtimeApiVersion: 'v1' };
  crio.statusAnswer = { conditions: [] };
  const dockerContainerd = new ScriptedRuntimeClient('unix:///run/containerd/containerd.sock');
  dockerContainerd.versionAnswer = new CriError('unimplemented', 'unknown service runtime.v1.RuntimeService');
  const clientSink = memorySink(); // the client logs its own choice
  const started: { agent?: Agent } = {}; // the socket is held once the agent's ledger records a success
  const runtime = new ResolvingRuntimeClient({
    relistSucceeded: () => started.agent?.relister.ledger.record().lastSuccess !== undefined,
    logger: createLogger({ level: 'info', destination: clientSink, time: () => '' }),
    configured: undefined,
    clock,
    candidates: [dockerContainerd.endpoint, crio.endpoint],
    exists: () => true,
    create: (endpoint) => (endpoint === crio.endpoint ? crio : dockerContainerd),
  });
  const a = await startAgent(t, [], { runtime, clock });
  started.agent = a.agent;
  for (let i = 0; i < 30; i++) {
    for (const p of [...crio.pending]) p.answer();
    await clock.advance(1000);
  }
  assert.ok(crio.relistCalls >= 29, `precondition: the agent relisted CRI-O every second (${crio.relistCalls})`);
  const body = (await (await fetch(`${a.url}/status`)).json()) as { criEndpoint: unknown };
  assert.deepEqual(body.criEndpoint, {
    endpoint: 'unix:///run/crio/crio.sock',
    rule: 'probe-order',
    reason: 'the first socket in probe order whose CRI Version answered (cri-o 1.30.4); without the Node\'s containerRuntimeVersion, probe order decides',
    held: true,
    nodeRuntime: null,
    probed: [
      { endpoint: 'unix:///run/containerd/containerd.sock', state: 'refused', fault: { code: 'unimplemented', message: 'unknown service runtime.v1.RuntimeService', cause: 'unimplemented' } },
      { endpoint: 'unix:///run/crio/crio.sock', state: 'answered', runtime: { name: 'cri-o', version: '1.30.4' } },
    ],
  });
  const chosen = clientSink.lines.filter((l) => l['msg'] === 'CRI endpoint chosen');
  assert.equal(chosen.length, 1, 'logged once, not per tick');
  assert.equal(chosen[0]?.['criEndpoint'], 'unix:///run/crio/crio.sock');
  assert.equal(chosen[0]?.['rule'], 'probe-order');
  assert.match(String(chosen[0]?.['reason']), /whose CRI Version answered \(cri-o 1\.30\.4\)/);
});

test("the runtime's Status is polled every 5 s, counted from the end of the last poll", async (t) => {
  const a = await startAgent(t);
  assert.equal(a.runtime.statusCalls, 1, 'the first poll comes at start');
  for (let i = 0; i < 60; i++) await a.second();
  assert.equal(a.runtime.statusCalls, 13, 'polls at 0, 5, 10, …, 60 s');
});

test('RuntimeReady=false and NetworkReady=false are shown, and never gate the lease', async (t) => {
  const a = await startAgent(t);
  a.runtime.statusAnswer = {
    conditions: [
      { type: 'RuntimeReady', status: false, reason: 'RuntimeDown', message: 'the runtime says it is not ready' },
      { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' },
    ],
  };
  for (let i = 0; i < 6; i++) await a.second();
  assert.deepEqual(a.agent.statusPoller.reading().conditions.map((c) => [c.type, c.status]), [['RuntimeReady', false], ['NetworkReady', false]], 'precondition: the poller read both as false');
  const before = a.kube.calls.filter((c) => c.method === 'patchLease').length;
  for (let i = 0; i < 30; i++) await a.second();
  assert.equal(a.agent.lease.gate().action, 'renew');
  assert.equal(a.agent.status().lease.renewing, true);
  assert.equal(a.kube.calls.filter((c) => c.method === 'patchLease').length - before, 3, 'renewed every 10 s as usual');
  assert.equal(await a.metric('nodepulse_runtime_condition', { type: 'RuntimeReady' }), 0, 'the condition is shown in the metrics');
  assert.equal(a.kube.condition('RuntimeRelistUnhealthy')?.status, 'False', 'and the Node condition follows the relists, not Status');
});

test('a failed Status call keeps the last conditions, records the fault, is logged as a run, and gates nothing', async (t) => {
  const a = await startAgent(t);
  for (let i = 0; i < 6; i++) await a.second();
  a.runtime.statusAnswer = new CriError('unavailable', 'connection refused');
  for (let i = 0; i < 30; i++) await a.second();
  const reading = a.agent.statusPoller.reading();
  assert.deepEqual(reading.conditions.map((c) => [c.type, c.status]), [['RuntimeReady', true]], 'the last answered conditions stay');
  assert.deepEqual(reading.lastFault, { code: 'unavailable', message: 'connection refused', cause: 'runtime-error' });
  assert.equal(await a.metric('nodepulse_runtime_condition', { type: 'RuntimeReady' }), 1, 'the metric keeps the last answer');
  assert.equal(a.sink.lines.filter((l) => l['msg'] === 'Runtime status poll failing').length, 1, 'six failed polls, one line');
  assert.equal(a.agent.loopLiveness('status').state, 'Alive', 'a failed poll ends at once: the loop stays alive');
  assert.equal(a.agent.status().lease.renewing, true, 'the lease is not gated by Status');
  a.runtime.statusAnswer = { conditions: [{ type: 'RuntimeReady', status: true, reason: '', message: '' }] };
  for (let i = 0; i < 5; i++) await a.second();
  assert.equal(a.sink.lines.find((l) => l['msg'] === 'Runtime status poll recovered')?.['failures'], 6);
  assert.equal(a.agent.statusPoller.reading().lastFault, undefined, 'an answer clears the fault');
});

test('nodepulse_agent_alive follows every loop, as /livez does: a wedged Status poller makes both fail', async (t) => {
  const a = await startAgent(t, ['--startup-grace', '5s']);
  for (let i = 0; i < 6; i++) await a.second();
  assert.equal(await a.metric('nodepulse_agent_alive'), 1);
  a.runtime.statusHangs = true; // the next poll never returns; the relister goes on answering
  for (let i = 0; i < 100; i++) await a.second();
  assert.equal(a.agent.loopLiveness('relister').state, 'Alive', 'precondition: the relister is alive');
  assert.equal(a.agent.loopLiveness('status').state, 'Stalled', 'precondition: the Status poller is past its stuck window');
  const livez = await fetch(`${a.url}/livez`);
  assert.equal(livez.status, 503);
  assert.match(await livez.text(), /status failed: Stalled/);
  assert.equal(await a.metric('nodepulse_agent_alive'), 0, 'the gauge says what /livez says');
});
