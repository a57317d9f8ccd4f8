// The agent as users run it: the image's bundle (scripts/bundle.ts, made from the built dist/ by
// bench/run.ts into its temporary folder) run as the image's entrypoint runs it (`node <the
// agent's Node.js settings> dist/src/cli/main.js agent …`, src/cli/agent-node-flags.ts) from the
// bundle's folder, with no node_modules, in a process of its own, against a runtime in another
// process and the Kubernetes API stand-in in this one:
//
// - steady state: after the first renewal and a settling pause, a window (60 s; shorter with
//   --quick) at the default 1 s relist period. CPU % of one core and the event-loop lag p99 are
//   read from the agent's own /metrics at both ends of the window (prom-client's
//   process_cpu_*_seconds_total, and nodejs_eventloop_lag_p99_seconds, whose samples are reset
//   at every scrape, so the end scrape covers the window); RSS from
//   /proc/<pid>/status and the V8 heap from /metrics at the end.
// - lease write cost: every request the stand-in recorded in the window, grouped, per renewal;
//   the bytes are the request bodies (the record) and the whole requests on the wire (TLS
//   records, headers included, counted by a loopback TCP relay the agent's API address points at).
//
// The agent runs as in a pod: in-cluster, with a service account mounted in a private mount
// namespace (test/support/in-cluster.ts) and the stand-in serving HTTPS with a test CA, so what
// is measured is the production path, which never loads client-node's KubeConfig. That needs
// root; without it the agent is given a kubeconfig instead, which loads KubeConfig (~80 MiB of
// RSS), and the run says so on stderr.
// - latencies, reported and not asserted: agent spawn → first lease write, with a runtime that
//   answers; and, with a short relist threshold (so the lease is withheld while the runtime is
//   gone), the runtime serving again → the next lease write.
//
// Times are on this process's monotonic clock; the stand-in records arrivals on the same clock.
// Every process started here is stopped in a finally, and killed at exit if that fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { startApiServer, type ApiServerHandle } from '../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../src/stand-ins/api-server/kubeconfig.ts';
import { kubeletLabels } from '../src/stand-ins/api-server/register-node.ts';
import { createTestPki } from '../src/stand-ins/api-server/test-pki.ts';
import { AGENT_ENV, AGENT_NODE_FLAGS } from '../src/cli/agent-node-flags.ts';
import { SystemClock } from '../src/clock/clock.ts';
import { inPodCommand, writeServiceAccount, type ServiceAccount } from '../test/support/in-cluster.ts';
import { isRoot } from '../test/support/require.ts';
import { startServer, type Server as ChildServer } from './child-process.ts';
import { readLines } from '../test/support/line-reader.ts';

export const BENCH_NODE = 'bench-node';
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases/${BENCH_NODE}`;
const LEASES_PATH = '/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases';
/** Bounds on waiting for things that take about a second. */
const AGENT_START_TIMEOUT_MS = 30_000;
const RENEWAL_TIMEOUT_MS = 30_000;
const SIM_START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const POLL_MS = 5;
/** After the first renewal: the agent's start-up garbage and JIT settle before the window opens. */
const SETTLE_MS = 5_000;
/** A short threshold for the recovery latency, so the lease is withheld within seconds. */
const SHORT_THRESHOLD = ['--relist-threshold=3s', '--relist-deadline=1s', '--stuck-window=20s'] as const;
const MIB = 1024 * 1024;

const clock = new SystemClock();

export interface SteadyState {
  readonly runtime: 'containerd' | 'simulated';
  readonly windowSeconds: number;
  readonly containers: number;
  readonly cpuPercentOfOneCore: number;
  readonly rssMiB: number;
  /** The parts of rssMiB: anonymous memory (heap, malloc, JIT code) and file-backed pages (Node's binary). */
  readonly rssAnonMiB: number;
  readonly rssFileMiB: number;
  readonly heapUsedMiB: number;
  readonly heapTotalMiB: number;
  /** nodejs_eventloop_lag_p99_seconds over the window: how late the p99 delay sample fired. */
  readonly eventLoopLagP99Ms: number;
  readonly relists: number;
}

export interface LeaseCost {
  readonly renewals: number;
  /** Every request the agent sent in the window, per renewal. */
  readonly requestsPerRenewal: number;
  /** Requests in the window by "METHOD path". */
  readonly requests: Readonly<Record<string, number>>;
  readonly bodyBytesPerRenewal: number;
  readonly wireBytesPerRenewal: number;
}

export interface Latencies {
  readonly spawnToFirstRenewalMs: number;
  readonly spawnToListeningMs: number;
  readonly runtimeBackToRenewalMs: number;
}

/** A loopback TCP relay that counts the bytes clients send through it. */
interface CountingRelay {
  readonly port: number;
  sentBytes(): number;
  close(): Promise<void>;
}

function startRelay(targetPort: number): Promise<CountingRelay> {
  let sent = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => (sent += chunk.length));
    client.pipe(upstream).pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        sentBytes: () => sent,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

interface RunningAgent {
  readonly child: ChildProcess;
  readonly spawnedAtMs: number;
  /** Resolves with the HTTP base URL once the agent logs that it started. */
  readonly listening: Promise<{ url: string; atMs: number }>;
  stop(): Promise<void>;
}

/** How the agent's process is started: the image's Node.js settings and environment unless a measurement replaces them. */
export interface AgentShape {
  readonly nodeFlags?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

function spawnAgent(agentDir: string, endpoint: string, access: ApiAccess, extra: readonly string[], log: (line: string) => void, shape: AgentShape = {}): RunningAgent {
  const args = [...(shape.nodeFlags ?? AGENT_NODE_FLAGS), 'dist/src/cli/main.js', 'agent', `--node-name=${BENCH_NODE}`, `--cri-endpoint=${endpoint}`, '--http-address=127.0.0.1:0', '--log-level=info', ...extra];
  const inCluster = isRoot();
  if (!inCluster) log('not root: the agent is given a kubeconfig, which loads client-node\'s KubeConfig (~80 MiB): its RSS is not the in-cluster figure');
  const command = inCluster ? inPodCommand(access.account, process.execPath, args) : { file: process.execPath, args: [...args, `--kubeconfig=${access.kubeconfig}`] };
  const spawnedAtMs = clock.monotonicMs();
  // In a pod's shape, a pod's environment: the image's (PATH, NODE_ENV, the agent's AGENT_ENV) and
  // the service's address; nothing of this machine's (its NODE_EXTRA_CA_CERTS, say, would load a
  // CA bundle).
  const agentEnv = shape.env ?? AGENT_ENV;
  const env = inCluster ? { PATH: process.env['PATH'] ?? '/usr/bin:/bin', NODE_ENV: 'production', ...agentEnv, ...access.account.env } : { ...process.env, ...agentEnv };
  const child = spawn(command.file, command.args, { cwd: agentDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const onExit = (): void => void child.kill('SIGKILL');
  process.once('exit', onExit);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const listening = new Promise<{ url: string; atMs: number }>((resolve, reject) => {
    readLines(child.stdout, (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; http?: string };
        if (entry.msg === 'Agent started' && typeof entry.http === 'string') resolve({ url: `http://${entry.http}`, atMs: clock.monotonicMs() });
      } catch {
        // Not a log line of ours; ignore it.
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`agent exited ${code ?? signal} before it listened: ${stderr.trim()}`)));
    clock.after(AGENT_START_TIMEOUT_MS, () => reject(new Error(`agent did not listen within ${AGENT_START_TIMEOUT_MS} ms: ${stderr.trim()}`)));
  });
  listening.catch(() => undefined);
  return {
    child,
    spawnedAtMs,
    listening,
    async stop() {
      process.off('exit', onExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = clock.after(STOP_GRACE_MS, () => child.kill('SIGKILL'));
      await exited;
      timer.cancel();
    },
  };
}

/** The first lease write (create or renewal) the stand-in received after `afterMs`. */
async function nextLeaseWrite(api: ApiServerHandle, afterMs: number, timeoutMs: number): Promise<number> {
  const until = clock.monotonicMs() + timeoutMs;
  for (;;) {
    const write = api.requests
      .all()
      .find((r) => r.atMs >= afterMs && ((r.method === 'PATCH' && r.path === LEASE_PATH) || (r.method === 'POST' && r.path === LEASES_PATH)) && r.status !== undefined && r.status < 300);
    if (write !== undefined) return write.atMs;
    if (clock.monotonicMs() > until) throw new Error(`no lease write within ${timeoutMs} ms`);
    await clock.sleep(POLL_MS);
  }
}

/** Metric samples by name (labels ignored: the ones read here have none). */
async function scrape(url: string): Promise<Map<string, number>> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status}`);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (match !== null && !samples.has(match[1] as string)) samples.set(match[1] as string, Number(match[2]));
  }
  return samples;
}

function sample(samples: Map<string, number>, name: string): number {
  const value = samples.get(name);
  if (value === undefined) throw new Error(`/metrics: ${name} must be exported`);
  return value;
}

/** VmRSS and its parts (anonymous memory; file-backed pages, mostly Node's own binary), in MiB. */
function rssOf(pid: number): { rssMiB: number; rssAnonMiB: number; rssFileMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    if (match === null) throw new Error(`/proc/${pid}/status: ${name} must be present`);
    return (Number(match[1]) * 1024) / MIB;
  };
  return { rssMiB: field('VmRSS'), rssAnonMiB: field('RssAnon'), rssFileMiB: field('RssFile') };
}

export function startSim(root: string, socket: string, pods: number, containersPerPod: number, timeoutMs = SIM_START_TIMEOUT_MS): Promise<ChildServer<{ endpoint: string }>> {
  return startServer<{ endpoint: string }>(
    ['src/stand-ins/cri-runtime/main.ts', '--socket', socket, '--pods', String(pods), '--containers-per-pod', String(containersPerPod)],
    timeoutMs,
    root,
  );
}

/** How the agent reaches the stand-in: in-cluster as root, else through a kubeconfig. */
interface ApiAccess {
  readonly account: ServiceAccount;
  readonly kubeconfig: string;
}

/** An API stand-in (HTTPS) with the bench Node, reached through a counting relay, with a service account and a kubeconfig for it. */
async function startApi(dir: string, name: string): Promise<{ api: ApiServerHandle; relay: CountingRelay; access: ApiAccess; close(): Promise<void> }> {
  const pki = createTestPki();
  const api = await startApiServer({ clock, tls: pki.server });
  const relay = await startRelay(api.port);
  api.store.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: BENCH_NODE, labels: kubeletLabels(BENCH_NODE) } });
  const server = `https://127.0.0.1:${relay.port}`;
  // A folder of its own per stand-in: the latencies start one per runtime under the same name.
  const own = mkdtempSync(join(dir, `${name}-`));
  const kubeconfig = join(own, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server, ca: pki.ca });
  mkdirSync(join(own, 'serviceaccount'));
  const account = writeServiceAccount(join(own, 'serviceaccount'), { server, ca: pki.ca, token: 'bench-token', namespace: 'nodepulse' });
  return {
    api,
    relay,
    access: { account, kubeconfig },
    async close() {
      await relay.close();
      await api.close();
    },
  };
}

export interface SteadyOptions {
  /** The folder the agent runs from: the bundle (scripts/bundle.ts), as the image holds it. */
  readonly agentDir: string;
  readonly dir: string;
  readonly windowMs: number;
  /** The runtime the agent relists, and what it holds. */
  readonly endpoint: string;
  readonly runtime: 'containerd' | 'simulated';
  readonly containers: number;
  /** Agent flags beyond the defaults (a raised --max-message-size for 10,000 containers). */
  readonly agentArgs?: readonly string[];
  /** Another Node.js shape, for measuring a candidate setting alone (bench/ab-steady.ts). */
  readonly shape?: AgentShape;
  readonly log: (line: string) => void;
}

export async function runSteadyState(options: SteadyOptions): Promise<{
  steady: SteadyState;
  lease: LeaseCost;
  spawnToFirstRenewalMs: number;
  spawnToListeningMs: number;
}> {
  const { agentDir, dir, windowMs, log, containers } = options;
  const stand = await startApi(dir, `steady-${options.runtime}-${containers}`);
  let agent: RunningAgent | undefined;
  try {
    agent = spawnAgent(agentDir, options.endpoint, stand.access, options.agentArgs ?? [], log, options.shape);
    const { url, atMs: listeningAtMs } = await agent.listening;
    const firstWriteMs = await nextLeaseWrite(stand.api, agent.spawnedAtMs, RENEWAL_TIMEOUT_MS);
    log(`agent (pid ${agent.child.pid ?? '?'}): listening after ${(listeningAtMs - agent.spawnedAtMs).toFixed(0)} ms, first lease write after ${(firstWriteMs - agent.spawnedAtMs).toFixed(0)} ms`);
    await clock.sleep(SETTLE_MS);

    const before = await scrape(url);
    const openedMs = clock.monotonicMs();
    const seq = stand.api.requests.lastSeq();
    const wireBefore = stand.relay.sentBytes();
    log(`steady state: ${(windowMs / 1000).toFixed(0)} s window at 1 Hz, ${containers} containers on ${options.runtime}`);
    await clock.sleep(windowMs);
    const wireAfter = stand.relay.sentBytes();
    const inWindow = stand.api.requests.since(seq);
    // RSS before the last scrape: building the exposition is not steady-state work.
    const rss = rssOf(agent.child.pid ?? 0);
    const after = await scrape(url);
    const closedMs = clock.monotonicMs();

    const cpuSeconds = (s: Map<string, number>): number => sample(s, 'process_cpu_user_seconds_total') + sample(s, 'process_cpu_system_seconds_total');
    const relists = (s: Map<string, number>): number => s.get('nodepulse_relist_duration_seconds_count') ?? 0;
    const steady: SteadyState = {
      windowSeconds: (closedMs - openedMs) / 1000,
      runtime: options.runtime,
      containers,
      cpuPercentOfOneCore: ((cpuSeconds(after) - cpuSeconds(before)) / ((closedMs - openedMs) / 1000)) * 100,
      ...rss,
      heapUsedMiB: sample(after, 'nodejs_heap_size_used_bytes') / MIB,
      heapTotalMiB: sample(after, 'nodejs_heap_size_total_bytes') / MIB,
      eventLoopLagP99Ms: sample(after, 'nodejs_eventloop_lag_p99_seconds') * 1000,
      relists: relists(after) - relists(before),
    };

    const requests: Record<string, number> = {};
    for (const r of inWindow) requests[`${r.method} ${r.path}`] = (requests[`${r.method} ${r.path}`] ?? 0) + 1;
    const renewals = inWindow.filter((r) => r.method === 'PATCH' && r.path === LEASE_PATH && r.status === 200);
    const lease: LeaseCost = {
      renewals: renewals.length,
      requestsPerRenewal: renewals.length === 0 ? Number.NaN : inWindow.length / renewals.length,
      requests,
      bodyBytesPerRenewal: renewals.length === 0 ? Number.NaN : inWindow.reduce((n, r) => n + r.bodyBytes, 0) / renewals.length,
      wireBytesPerRenewal: renewals.length === 0 ? Number.NaN : (wireAfter - wireBefore) / renewals.length,
    };
    return { steady, lease, spawnToFirstRenewalMs: firstWriteMs - agent.spawnedAtMs, spawnToListeningMs: listeningAtMs - agent.spawnedAtMs };
  } finally {
    await agent?.stop();
    await stand.close();
  }
}

/** A runtime the latency run can take away and bring back. */
export interface RuntimeControl {
  readonly name: string;
  readonly endpoint: string;
  /** Makes the runtime stop answering (its socket refuses). */
  stop(): Promise<void>;
  /** Brings it back; resolves once it serves again. */
  start(): Promise<void>;
  /** Stops it for good. */
  close(): Promise<void>;
}

/** The simulated runtime (110 pods × 3 containers) as a RuntimeControl. */
export async function simRuntime(root: string, dir: string): Promise<RuntimeControl> {
  const socket = join(dir, 'latency-cri.sock');
  let sim: ChildServer<{ endpoint: string }> | undefined = await startSim(root, socket, 110, 3);
  const endpoint = sim.ready.endpoint;
  return {
    name: 'simulated runtime',
    endpoint,
    async stop() {
      await sim?.stop();
      sim = undefined;
    },
    async start() {
      sim = await startSim(root, socket, 110, 3);
    },
    async close() {
      await sim?.stop();
      sim = undefined;
    },
  };
}

/**
 * Both latencies against one runtime: agent spawn → first lease write; then the runtime goes
 * away long enough for the lease to be withheld (a 3 s threshold here) and comes back: the time
 * from it serving again to the next lease write.
 */
export async function runLatencies(options: { agentDir: string; dir: string; runtime: RuntimeControl; log: (line: string) => void }): Promise<Latencies> {
  const { agentDir, dir, runtime, log } = options;
  const stand = await startApi(dir, 'latency');
  let agent: RunningAgent | undefined;
  try {
    agent = spawnAgent(agentDir, runtime.endpoint, stand.access, SHORT_THRESHOLD, log);
    const { url, atMs: listeningAtMs } = await agent.listening;
    const firstWriteMs = await nextLeaseWrite(stand.api, agent.spawnedAtMs, RENEWAL_TIMEOUT_MS);
    await runtime.stop();
    await waitWithheld(url);
    await runtime.start();
    const answeringMs = clock.monotonicMs();
    const writeMs = await nextLeaseWrite(stand.api, answeringMs, RENEWAL_TIMEOUT_MS);
    const latencies: Latencies = {
      spawnToListeningMs: listeningAtMs - agent.spawnedAtMs,
      spawnToFirstRenewalMs: firstWriteMs - agent.spawnedAtMs,
      runtimeBackToRenewalMs: writeMs - answeringMs,
    };
    log(`latencies (${runtime.name}): spawn → first lease write ${latencies.spawnToFirstRenewalMs.toFixed(0)} ms, runtime back → lease write ${latencies.runtimeBackToRenewalMs.toFixed(0)} ms`);
    return latencies;
  } finally {
    await agent?.stop();
    await stand.close();
  }
}

/** Waits until the agent's /status says the lease is not being renewed. */
async function waitWithheld(url: string): Promise<void> {
  const until = clock.monotonicMs() + RENEWAL_TIMEOUT_MS;
  for (;;) {
    const res = await fetch(`${url}/status`, { signal: AbortSignal.timeout(5_000) });
    const body = (await res.json()) as { lease?: { renewing?: boolean } };
    if (body.lease?.renewing === false) return;
    if (clock.monotonicMs() > until) throw new Error(`the lease was still renewed ${RENEWAL_TIMEOUT_MS} ms after the runtime went away`);
    await clock.sleep(100);
  }
}
