// Bad input from the runtime: CRI answers with absurd values, and an answer that is not a valid
// protobuf message, served to the BUILT agent by a tiny scripted gRPC server on a unix socket
// (the simulated runtime only ever answers sane values).
//
// | the runtime answers                                             | the agent                              |
// |-----------------------------------------------------------------|----------------------------------------|
// | negative creation times, unknown state enums (7, 8 … 27), empty | takes the listing (the runtime DID     |
// | ids and sandbox ids, a 1 MB label and a 1 MB annotation         | answer): Healthy, renewing; the unknown|
// |                                                                 | states are counted under ONE bounded   |
// |                                                                 | metric label, shown verbatim in /status|
// | a ListContainers answer cut in the middle of a field            | a counted (reason="other") and logged  |
// |                                                                 | relist fault that is the agent's       |
// |                                                                 | (undecodable): past the threshold it   |
// |                                                                 | cannot observe, never Unhealthy, and   |
// |                                                                 | the lease is withheld, then renews     |
// |                                                                 | within period + deadline + RECHECK once|
// |                                                                 | the answers are whole again            |
// Neither crashes the agent.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadCriService } from '../../src/cri/cri-proto.ts';
import { metricValue, pollUntil, startAgentProcess, startStandIn } from '../support/agent-process.ts';
import { clock, firstRenewalAfter, leaseRenewals, RECHECK_MS, report, sleep, type ApiWorld } from './api-world.ts';

const RELIST_PERIOD_MS = 100;
const RELIST_DEADLINE_MS = 1_000;
const RELIST_THRESHOLD_MS = 2_000;
const ONE_MB = 1024 * 1024;
/** Unknown container states served at once: 7 … 26. */
const UNKNOWN_STATES = Array.from({ length: 20 }, (_, i) => 7 + i);

interface Script {
  pods: Buffer;
  containers: Buffer;
}

/** A runtime.v1 server answering the six read-only calls from a script the test changes at will. */
async function startScriptedRuntime(t: TestContext, socketPath: string, script: Script): Promise<void> {
  const service = await loadCriService();
  const server = new grpc.Server({ 'grpc.max_send_message_length': -1 });
  const raw = (b: unknown): Buffer => b as Buffer;
  const def = (name: string): grpc.MethodDefinition<object, object> => {
    const d = service[name];
    if (d === undefined) throw new Error(`proto/ declares no ${name}`);
    return d as grpc.MethodDefinition<object, object>;
  };
  const unary = (name: string, answer: () => unknown, serialize: (v: unknown) => Buffer): void => {
    const d = def(name);
    server.register(d.path, (_call: grpc.ServerUnaryCall<object, unknown>, cb: grpc.sendUnaryData<unknown>) => cb(null, answer()), serialize, d.requestDeserialize, 'unary');
  };
  unary('Version', () => ({ version: '0.1.0', runtimeName: 'scripted', runtimeVersion: '0', runtimeApiVersion: 'v1' }), (v) => def('Version').responseSerialize(v as object));
  unary('Status', () => ({ status: { conditions: [{ type: 'RuntimeReady', status: true }, { type: 'NetworkReady', status: true }] } }), (v) => def('Status').responseSerialize(v as object));
  unary('ListPodSandbox', () => script.pods, raw);
  unary('ListContainers', () => script.containers, raw);
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err === null ? resolve() : reject(err))));
  t.after(() => server.forceShutdown());
}

async function encode(method: 'ListPodSandbox' | 'ListContainers', value: object): Promise<Buffer> {
  const service = await loadCriService();
  const d = service[method];
  if (d === undefined) throw new Error(`proto/ declares no ${method}`);
  return d.responseSerialize(value);
}

const goodPod = (i: number): object => ({
  id: `pod-${i}`.padEnd(64, '0'),
  metadata: { name: `p${i}`, uid: `uid-${i}`, namespace: 'default', attempt: 0 },
  state: 'SANDBOX_READY',
  createdAt: '1700000000000000000',
});
const goodContainer = (i: number): object => ({
  id: `ctr-${i}`.padEnd(64, '0'),
  podSandboxId: `pod-${i}`.padEnd(64, '0'),
  metadata: { name: `c${i}`, attempt: 0 },
  state: 'CONTAINER_RUNNING',
  createdAt: '1700000000000000000',
});

async function goodScript(): Promise<Script> {
  return { pods: await encode('ListPodSandbox', { items: [goodPod(1), goodPod(2)] }), containers: await encode('ListContainers', { containers: [goodContainer(1), goodContainer(2)] }) };
}

async function startWorld(t: TestContext, nodeName: string, script: Script): Promise<ApiWorld> {
  const standIn = await startStandIn(t, { nodeName });
  const socket = join(standIn.dir, 'cri.sock');
  await startScriptedRuntime(t, socket, script);
  const agent = await startAgentProcess(t, {
    args: [
      '--node-name', nodeName, '--cri-endpoint', `unix://${socket}`, '--kubeconfig', standIn.kubeconfig,
      '--relist-period', `${RELIST_PERIOD_MS}ms`, '--relist-threshold', `${RELIST_THRESHOLD_MS}ms`, '--relist-deadline', `${RELIST_DEADLINE_MS}ms`,
      '--lease-duration', '4s', '--api-timeout', '1s', '--status-period', '1s',
    ],
  });
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${standIn.leaseNamespace}/leases/${nodeName}`;
  return { standIn, agent, leasePath, sim: undefined as never };
}

function seriesOf(metrics: string, name: string): string[] {
  return metrics.split('\n').filter((l) => l.startsWith(`${name}{`));
}

describe('bad input from the runtime', { timeout: 60_000 }, () => {
  test('absurd values (negative times, unknown states, empty ids, 1 MB labels) are taken as an answer, shown, and counted under bounded labels', async (t) => {
    const script = await goodScript();
    script.pods = await encode('ListPodSandbox', {
      items: [
        { ...goodPod(1), createdAt: '-9223372036854775808' },
        { ...goodPod(2), state: 7 },
        { ...goodPod(3), id: '', metadata: {} },
        { ...goodPod(4), labels: { big: 'l'.repeat(ONE_MB) }, annotations: { big: 'a'.repeat(ONE_MB) } },
      ],
    });
    script.containers = await encode('ListContainers', {
      containers: [
        ...UNKNOWN_STATES.map((state, i) => ({ ...goodContainer(100 + i), state })),
        { ...goodContainer(1), createdAt: '-1' },
        { ...goodContainer(2), id: '', podSandboxId: '' },
        { ...goodContainer(3), id: '', podSandboxId: '', state: 'CONTAINER_EXITED' },
        { ...goodContainer(4), labels: { big: 'l'.repeat(ONE_MB) } },
      ],
    });
    const world = await startWorld(t, 'node-absurd', script);
    const { agent } = world;
    const pid = agent.pid;
    await firstRenewalAfter(world, 0, 10_000);
    await sleep(1_500);

    assert.equal(agent.running, true);
    assert.equal(agent.pid, pid);
    const status = await agent.status();
    assert.equal(status.runtime.state, 'Healthy', 'the runtime answered: absurd values are still an answer');
    assert.equal(status.lease.renewing, true);
    assert.equal(status.counts.pods, 4);
    assert.equal(status.counts.containers, UNKNOWN_STATES.length + 4);
    const full = JSON.parse((await agent.get('/status')).body) as { counts: { podsByState: Record<string, number>; containersByState: Record<string, number> } };
    assert.equal(full.counts.podsByState['UNKNOWN_7'], 1, '/status shows the unknown state as the runtime sent it');
    assert.equal(full.counts.containersByState['UNKNOWN_26'], 1);

    const metrics = await agent.metrics();
    assert.equal(metricValue(metrics, 'nodepulse_relist_failures_total', { reason: 'other' }) ?? 0, 0, 'no relist failed');
    const containerSeries = seriesOf(metrics, 'nodepulse_containers');
    const podSeries = seriesOf(metrics, 'nodepulse_pods');
    report(t, 'absurd CRI values', { containerSeries: containerSeries.length, podSeries: podSeries.length, renewals: leaseRenewals(world).length });
    assert.ok(containerSeries.length <= 5, `nodepulse_containers must keep a bounded label set, whatever the runtime sends:\n${containerSeries.join('\n')}`);
    assert.ok(podSeries.length <= 3, `nodepulse_pods must keep a bounded label set:\n${podSeries.join('\n')}`);
    assert.equal(metricValue(metrics, 'nodepulse_containers', { state: 'unrecognized' }), UNKNOWN_STATES.length);
    assert.equal(metricValue(metrics, 'nodepulse_pods', { state: 'unrecognized' }), 1);
    assert.equal(metricValue(metrics, 'nodepulse_containers', { state: 'CONTAINER_RUNNING' }), 3);
    assert.equal((await agent.get('/livez')).status, 200);
  });

  test('an answer that is not a valid message: a counted, logged relist fault; the lease is withheld, and renews once answers are whole', async (t) => {
    const script = await goodScript();
    const world = await startWorld(t, 'node-malformed', script);
    const { agent } = world;
    const pid = agent.pid;
    await firstRenewalAfter(world, 0, 10_000);
    const mark = agent.logMark();

    const whole = script.containers;
    const badAt = clock.monotonicMs();
    // Cut inside the first container's id: the length prefix promises more than is there.
    script.containers = whole.subarray(0, 20);
    // The runtime answered; the agent could not read the answer: it cannot observe, and does not blame the runtime.
    const seen = new Set<string>();
    const blind = await pollUntil('the agent judged it cannot observe (undecodable)', async () => {
      const runtime = (await agent.status()).runtime;
      seen.add(runtime.state);
      return runtime.state === 'CannotObserve' && runtime.why === 'undecodable';
    }, {
      timeoutMs: RELIST_THRESHOLD_MS + 3_000,
    });
    assert.ok(!seen.has('Unhealthy'), `an answer the agent cannot decode never makes the runtime Unhealthy: ${[...seen].join(', ')}`);
    const failing = await agent.waitForLog((l) => l['msg'] === 'Relist failing', 1_000, mark);
    assert.match(String((failing.line['err'] as { message?: string } | undefined)?.message), /message truncated|exceeds the \d+ bytes left/);
    const withheld = await agent.waitForLog((l) => l['msg'] === 'Lease renewal withheld', RECHECK_MS + 2_000, mark);
    assert.equal(withheld.line['reason'], 'runtime-cannot-observe');
    await sleep(1_500);
    const metrics = await agent.metrics();
    assert.ok((metricValue(metrics, 'nodepulse_relist_failures_total', { reason: 'other' }) ?? 0) >= 10, 'each malformed answer is a counted relist fault');
    assert.equal(metricValue(metrics, 'nodepulse_lease_renewing'), 0);
    const late = leaseRenewals(world).filter((r) => r.atMs > badAt + RELIST_THRESHOLD_MS);
    assert.deepEqual(late.map((r) => r.atMs - badAt), [], 'no renewal while the runtime is not Healthy');
    assert.equal(agent.keptLogs().filter((k) => k.seq > mark && k.line['msg'] === 'Relist failing').length, 1, 'a run of malformed answers is one warn line');

    const goodAt = clock.monotonicMs();
    script.containers = whole;
    const first = await firstRenewalAfter(world, goodAt, RELIST_PERIOD_MS + RELIST_DEADLINE_MS + RECHECK_MS + 2_000);
    const bound = RELIST_PERIOD_MS + RELIST_DEADLINE_MS + RECHECK_MS;
    report(t, 'malformed CRI answer', { cannotObserveAfterMs: blind.elapsedMs, firstRenewalAfterWholeMs: first.atMs - goodAt, boundMs: bound });
    assert.ok(first.atMs - goodAt <= bound, `first renewal ${(first.atMs - goodAt).toFixed(0)} ms after the answers were whole; bound ${bound} ms`);
    assert.equal(agent.running, true);
    assert.equal(agent.pid, pid);
  });
});
