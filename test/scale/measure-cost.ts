// What a fleet's lease renewals cost the API server and etcd, beside what the kubelets' own node
// leases cost, on the scale control plane:
//
// | window   | what renews, through the byte relay (byte-relay.ts)                                   |
// |----------|---------------------------------------------------------------------------------------|
// | idle     | nothing: the control plane's own work (the controller manager's loops, its GC's       |
// |          | watches), subtracted from the two below                                               |
// | agents   | N agents (agent-fleet.ts): the agent's merge PATCH every 10 s + 0–4 %, each with its  |
// |          | own bound token and connection, through the admission policy and nodepulse's priority|
// |          | level                                                                                 |
// | kubelets | N kubelets (kubelet-leases/, Go): the kubelet's own lease controller, an Update (PUT) |
// |          | with resourceVersion every 10 s + 0–4 %, protobuf over HTTP/2, each with its own     |
// |          | node certificate, through the Node authorizer and the node-high level                |
//
// Each window starts only once every client has written at least once and one renew interval
// more has passed (first writes create or read objects a steady renewal does not), and reads at
// both ends: the API server's and etcd's CPU time (/proc), etcd's metrics (puts, committed raft
// proposals), the API server's metrics (requests, and the seat time API Priority and Fairness
// measures per priority level), and the relay's bytes each way. Figures are given per 1,000
// clients, after the idle window's rates are taken away.
//
// Failure modes: a client process that exits early, or clients that never all write within the
// bound, throw naming them.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import { NODE_24 } from '../support/agent-process.ts';
import type { AdminApi } from './admin-api.ts';
import { RENEW_INTERVAL_MS, type FleetCounts } from './agent-fleet.ts';
import { startByteRelay, type RelayCounts } from './byte-relay.ts';
import { API_PORT, ETCD_METRICS_URL, SCALE_ADDRESS } from './layout.ts';
import { NODE_NAME_FORMAT } from './kubelet-node.ts';
import { cpuSeconds } from './proc-stats.ts';
import { parseProm, sumOf, type Samples } from './prom-text.ts';
import { daemonOf, type ScaleState } from './scale-control-plane.ts';

const READY_MS = 180_000;
const POLL_MS = 500;

interface Reading {
  readonly atMs: number;
  readonly apiserverCpu: number;
  readonly etcdCpu: number;
  readonly etcd: Samples;
  readonly api: Samples;
  readonly relay: RelayCounts;
}

export interface WindowCost {
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** Lease writes per second, by the API server's count (PATCH or PUT of leases). */
  readonly leaseWritesPerSecond: number;
  readonly bytesUpPerSecond: number;
  readonly bytesDownPerSecond: number;
  readonly newConnections: number;
  /** CPU, % of one core. */
  readonly apiserverCpuPercent: number;
  readonly etcdCpuPercent: number;
  readonly etcdPutsPerSecond: number;
  readonly etcdProposalsPerSecond: number;
  /** Mean seat time of one request in the priority level, ms (apiserver_flowcontrol_request_execution_seconds). */
  readonly seatMs: number | undefined;
  readonly seatLevel: string | undefined;
  /** Mean time a request of that level waited in its queue, ms. */
  readonly queueWaitMs: number | undefined;
}

export interface CostReport {
  readonly clients: number;
  readonly idle: WindowCost;
  readonly agents: WindowCost & { readonly renewals: number; readonly failures: Readonly<Record<string, number>>; readonly meanRenewalMs: number };
  readonly kubelets: WindowCost;
}

async function read(state: ScaleState, api: AdminApi, relay: () => RelayCounts, clock: Clock): Promise<Reading> {
  const [etcdText, apiAnswer] = await Promise.all([
    fetch(ETCD_METRICS_URL, { signal: AbortSignal.timeout(10_000) }).then((r) => r.text()),
    api.request('GET', '/metrics'),
  ]);
  return {
    atMs: clock.monotonicMs(),
    apiserverCpu: cpuSeconds(daemonOf(state, 'kube-apiserver').pid) ?? Number.NaN,
    etcdCpu: cpuSeconds(daemonOf(state, 'etcd').pid) ?? Number.NaN,
    etcd: parseProm(etcdText),
    api: parseProm(apiAnswer.body),
    relay: relay(),
  };
}

function cost(a: Reading, b: Reading, level: string | undefined): WindowCost {
  const s = (b.atMs - a.atMs) / 1000;
  const d = (samples: 'etcd' | 'api', name: string, match: Record<string, string> = {}): number => sumOf(b[samples], name, match) - sumOf(a[samples], name, match);
  const leaseWrites = d('api', 'apiserver_request_total', { resource: 'leases', verb: 'PATCH' }) + d('api', 'apiserver_request_total', { resource: 'leases', verb: 'PUT' });
  const levelMatch = level === undefined ? undefined : { priority_level: level };
  const seatCount = levelMatch === undefined ? 0 : d('api', 'apiserver_flowcontrol_request_execution_seconds_count', levelMatch);
  const waitCount = levelMatch === undefined ? 0 : d('api', 'apiserver_flowcontrol_request_wait_duration_seconds_count', { ...levelMatch, execute: 'true' });
  return {
    seconds: s,
    requestsPerSecond: d('api', 'apiserver_request_total') / s,
    leaseWritesPerSecond: leaseWrites / s,
    bytesUpPerSecond: (b.relay.up - a.relay.up) / s,
    bytesDownPerSecond: (b.relay.down - a.relay.down) / s,
    newConnections: b.relay.connections - a.relay.connections,
    apiserverCpuPercent: ((b.apiserverCpu - a.apiserverCpu) / s) * 100,
    etcdCpuPercent: ((b.etcdCpu - a.etcdCpu) / s) * 100,
    etcdPutsPerSecond: d('etcd', 'etcd_mvcc_put_total') / s,
    etcdProposalsPerSecond: d('etcd', 'etcd_server_proposals_committed_total') / s,
    seatMs: seatCount > 0 && levelMatch !== undefined ? (d('api', 'apiserver_flowcontrol_request_execution_seconds_sum', levelMatch) / seatCount) * 1000 : undefined,
    seatLevel: level,
    queueWaitMs: waitCount > 0 && levelMatch !== undefined ? (d('api', 'apiserver_flowcontrol_request_wait_duration_seconds_sum', { ...levelMatch, execute: 'true' }) / waitCount) * 1000 : undefined,
  };
}

async function stop(child: ChildProcess, clock: Clock): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const until = clock.monotonicMs() + 15_000;
  while (child.exitCode === null && clock.monotonicMs() < until) await clock.sleep(100);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** Measures the three windows of the header with `clients` agents, then as many kubelets. */
export async function measureCost(options: {
  readonly state: ScaleState;
  readonly api: AdminApi;
  readonly clients: number;
  readonly windowMs: number;
  readonly tokensFile: string;
  readonly kubeletLeasesBinary: string;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}): Promise<CostReport> {
  const { state, api, clock, log, clients, windowMs } = options;
  const relay = await startByteRelay({ host: SCALE_ADDRESS, targetHost: SCALE_ADDRESS, targetPort: API_PORT });
  const relayUrl = `https://${SCALE_ADDRESS}:${relay.port}`;
  const window = async (level: string | undefined): Promise<WindowCost> => {
    const a = await read(state, api, relay.counts, clock);
    await clock.sleep(windowMs);
    const b = await read(state, api, relay.counts, clock);
    return cost(a, b, level);
  };
  try {
    log(`idle window: ${windowMs / 1000} s`);
    const idle = await window(undefined);

    log(`agents: ${clients} renewing through the relay at ${relayUrl}`);
    const agents = spawn(NODE_24, [join(import.meta.dirname, 'agent-fleet-main.ts'), '--server', relayUrl, '--ca', join(state.pkiDir, 'ca.crt'), '--tokens', options.tokensFile, '--agents', String(clients)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let latest: FleetCounts | undefined;
    let buffered = '';
    agents.stdout.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line !== '') latest = JSON.parse(line) as FleetCounts;
    });
    let agentCost: CostReport['agents'];
    try {
      const t0 = clock.monotonicMs();
      while ((latest?.renewedOnce ?? 0) < clients) {
        if (agents.exitCode !== null) throw new Error(`agent fleet exited ${agents.exitCode}`);
        if (clock.monotonicMs() - t0 > READY_MS) throw new Error(`agents: ${latest?.renewedOnce ?? 0} of ${clients} renewed within ${READY_MS} ms (failures ${JSON.stringify(latest?.failures)})`);
        await clock.sleep(POLL_MS);
      }
      await clock.sleep(RENEW_INTERVAL_MS);
      log(`agents window: ${windowMs / 1000} s`);
      const before = latest;
      const w = await window('nodepulse');
      const after = latest;
      const renewals = (after?.renewals ?? 0) - (before?.renewals ?? 0);
      const failures: Record<string, number> = {};
      for (const [k, v] of Object.entries(after?.failures ?? {})) {
        const n = v - (before?.failures[k] ?? 0);
        if (n > 0) failures[k] = n;
      }
      agentCost = { ...w, renewals, failures, meanRenewalMs: renewals > 0 ? ((after?.latencySumMs ?? 0) - (before?.latencySumMs ?? 0)) / renewals : Number.NaN };
    } finally {
      await stop(agents, clock);
    }

    log(`kubelets: ${clients} renewing through the relay`);
    const kubelets = spawn(options.kubeletLeasesBinary, [
      '-server', relayUrl, '-ca', join(state.pkiDir, 'ca.crt'), '-ca-key', join(state.pkiDir, 'ca.key'), '-nodes', String(clients), '-name-format', NODE_NAME_FORMAT,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let kubeletErr = '';
    kubelets.stderr.on('data', (d: Buffer) => {
      kubeletErr = (kubeletErr + d.toString('utf8')).slice(-20_000);
    });
    let kubeletCost: WindowCost;
    try {
      // Every kubelet Lease exists (created, or found from an earlier run) once kube-node-lease holds them all.
      const t0 = clock.monotonicMs();
      for (;;) {
        if (kubelets.exitCode !== null) throw new Error(`kubelet-leases exited ${kubelets.exitCode}: ${kubeletErr.slice(-2000)}`);
        const list = await api.request('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?limit=1');
        const remaining = (list.json as { metadata?: { remainingItemCount?: number } } | undefined)?.metadata?.remainingItemCount ?? 0;
        if (remaining + 1 >= clients) break;
        if (clock.monotonicMs() - t0 > READY_MS) throw new Error(`kubelets: ${remaining + 1} of ${clients} leases within ${READY_MS} ms: ${kubeletErr.slice(-2000)}`);
        await clock.sleep(POLL_MS);
      }
      // One interval for the first renewals (the owner reference's GET of the Node), one more to settle.
      await clock.sleep(2 * RENEW_INTERVAL_MS);
      log(`kubelets window: ${windowMs / 1000} s`);
      kubeletCost = await window('node-high');
    } finally {
      await stop(kubelets, clock);
    }
    return { clients, idle, agents: agentCost, kubelets: kubeletCost };
  } finally {
    await relay.close();
  }
}

/** A window's rates with the idle window's taken away, scaled to 1,000 clients. */
export function per1000(w: WindowCost, idle: WindowCost, clients: number): WindowCost {
  const k = 1000 / clients;
  const net = (x: number, y: number): number => (x - y) * k;
  return {
    ...w,
    requestsPerSecond: net(w.requestsPerSecond, idle.requestsPerSecond),
    leaseWritesPerSecond: net(w.leaseWritesPerSecond, idle.leaseWritesPerSecond),
    bytesUpPerSecond: net(w.bytesUpPerSecond, idle.bytesUpPerSecond),
    bytesDownPerSecond: net(w.bytesDownPerSecond, idle.bytesDownPerSecond),
    newConnections: w.newConnections * k,
    apiserverCpuPercent: net(w.apiserverCpuPercent, idle.apiserverCpuPercent),
    etcdCpuPercent: net(w.etcdCpuPercent, idle.etcdCpuPercent),
    etcdPutsPerSecond: net(w.etcdPutsPerSecond, idle.etcdPutsPerSecond),
    etcdProposalsPerSecond: net(w.etcdProposalsPerSecond, idle.etcdProposalsPerSecond),
  };
}
