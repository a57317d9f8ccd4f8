// The built agent as a real process, for the fault suite and the end-to-end tests.
//
// What it is: `node_modules/.bin/node [nodeArgs] dist/src/cli/main.js agent ARGS`, spawned with
// the project's Node 24, its stdout read as pino JSON lines (parsed, kept in a bounded ring),
// and a handle to probe it over HTTP (/status, /metrics), signal it and stop it. Plus the world
// around it: an API stand-in holding the Node and a kubeconfig pointing at it (startStandIn),
// the stand-in's view of the Lease and its writes (leaseWrites), and a bounded real-time poll
// (pollUntil) that returns how long the condition took.
//
// Real time is right here: these tests measure what a real process does. The timing semantics
// themselves are tested on a ManualClock by the unit tests. Every wait below is bounded, and
// each bound is a named constant with its reason.
//
// Assumptions and failure modes:
//   - dist/ is built (`npm run build`, which `npm test` runs first). A missing dist/ fails the
//     test with a precondition message; a stale dist/ is the caller's to avoid.
//   - The agent is started with `--http-address 127.0.0.1:0` unless the args say otherwise or
//     the test asks for the agent's own default (ownHttpAddress); its bound address is read from
//     the `Agent started` log line.
//   - An agent that exits before `Agent started` rejects start with its exit code and the tail
//     of its stderr and stdout.
//   - Every agent is SIGKILLed in t.after if it still runs (also after a failed test), and from
//     a synchronous process 'exit' handler as a last resort, so no agent outlives its test file.
//   - Log lines that are not JSON are kept as `{ raw: line }`; a single line longer than
//     MAX_LINE_BYTES is cut there (so one runaway line cannot grow memory without bound).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { startApiServer, type ApiServerHandle, type ApiServerOptions } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock, type Clock } from '../../src/clock/clock.ts';
import { kubeletLabels, registerNode } from '../../src/stand-ins/api-server/register-node.ts';
import { createTestPki } from '../../src/stand-ins/api-server/test-pki.ts';
import { inPodCommand, writeServiceAccount, type ServiceAccount } from './in-cluster.ts';
import { parseLogLine, readLines } from './line-reader.ts';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
/** The project's Node 24 (the machine's `node` is 20 and cannot run the agent). */
export const NODE_24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');
/** The built CLI, as the package's bin runs it. */
export const AGENT_MAIN = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/** The agent starts in about 0.3 s here; 15 s covers a loaded 2-core CI machine running 2 files at once. */
export const START_TIMEOUT_MS = 15_000;
/** A SIGTERMed agent must exit within 5 s (issue 4); stop() waits a little longer before it SIGKILLs and reports. */
export const STOP_TIMEOUT_MS = 8_000;
/** Every HTTP probe of the agent (/status, /metrics) has this deadline: the agent answers from memory. */
export const PROBE_TIMEOUT_MS = 2_000;
/** Log lines kept (the newest); a fault test produces a few hundred at info. */
export const MAX_LOG_LINES = 20_000;
/** Longest single log line kept; longer ones are cut. */
export const MAX_LINE_BYTES = 1024 * 1024;
/** stderr kept for failure messages (the newest bytes). */
const STDERR_TAIL_BYTES = 64 * 1024;
/** Default pause between polls of pollUntil: fine enough to time faults to ±0.1 s. */
export const POLL_INTERVAL_MS = 100;

/** One pino line from the agent, parsed (or `{ raw }` when it was not JSON). */
export type LogLine = Readonly<Record<string, unknown>>;

/** A LogLine as kept: with its 1-based arrival number and the test clock's monotonic ms. */
export interface KeptLine {
  readonly seq: number;
  readonly atMs: number;
  readonly line: LogLine;
}

export interface AgentProcessOptions {
  /** Arguments after `agent`, e.g. ['--node-name', 'n1', '--cri-endpoint', 'unix:///…']. */
  readonly args: readonly string[];
  /** Extra environment on top of a minimal one (PATH, HOME); the test's own env is NOT inherited. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Node options before the script, e.g. ['--max-old-space-size=64']. */
  readonly nodeArgs?: readonly string[];
  /**
   * A command the agent's command line is appended to, e.g. `unshare -m sh -c '…; exec "$@"' sh`.
   * It must exec the agent, so that the spawned pid is the agent's.
   */
  readonly launcher?: readonly string[];
  /** Run in-cluster, as in a pod: this service account mounted where pods have it (root only; in-cluster.ts). */
  readonly inCluster?: ServiceAccount;
  /** Override START_TIMEOUT_MS. */
  readonly startTimeoutMs?: number;
  /** Leave --http-address to the agent's default (`:9356`); for a network namespace of the test's own. */
  readonly ownHttpAddress?: boolean;
  /** Clock for every wait; the system clock by default. */
  readonly clock?: Clock;
}

export interface AgentExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface AgentProcess {
  readonly pid: number;
  /** `http://127.0.0.1:<port>`, from the `Agent started` line. */
  readonly url: string;
  /** Every kept log line, oldest first (a copy). */
  logs(): LogLine[];
  /** Every kept line with its seq and arrival time. */
  keptLogs(): KeptLine[];
  /** The seq of the newest line so far (0 before any): pass it to waitForLog to see only later lines. */
  logMark(): number;
  /** Resolves with the first line (after seq `after`, default 0) that matches; rejects after timeoutMs or on exit. */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs: number, after?: number): Promise<KeptLine>;
  /** GET /status, parsed. */
  status(): Promise<AgentStatus>;
  /** GET /metrics, the Prometheus text. */
  metrics(): Promise<string>;
  /** GET any path; resolves with the status code and body. */
  get(path: string): Promise<{ status: number; body: string }>;
  /** Sends a signal (SIGSTOP, SIGUSR1, …) to the agent. */
  signal(sig: NodeJS.Signals): void;
  /** Sends `sig` and waits (≤ STOP_TIMEOUT_MS) for the exit; resolves with the exit code (null if killed by a signal). */
  stop(sig?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  /** Whether the process still runs. */
  readonly running: boolean;
  /** Resolves once the process has exited. */
  readonly exited: Promise<AgentExit>;
  /** The newest stderr bytes, for failure messages. */
  stderrTail(): string;
}

/** The parts of /status the fault suite reads (see src/http/status-snapshot.ts for all of it). */
export interface AgentStatus {
  readonly node: string;
  readonly runtime: {
    readonly state: string;
    readonly why: string | null;
    readonly lastSuccessBegan: string | null;
    readonly lastFault: { readonly code: string; readonly message: string; readonly cause: string } | null;
    readonly message: string;
  };
  readonly loops: ReadonlyArray<{ readonly name: string; readonly state: string; readonly reason: string }>;
  readonly lease: { readonly namespace: string; readonly name: string; readonly renewing: boolean; readonly lastRenewTime: string | null; readonly lastError: string | null };
  readonly counts: { readonly pods: number; readonly containers: number };
}

/**
 * Spawns the built agent and resolves once it logged `Agent started`. The process is SIGKILLed
 * in t.after if the test leaves it running.
 */
export async function startAgentProcess(t: Pick<TestContext, 'after'>, options: AgentProcessOptions): Promise<AgentProcess> {
  if (!existsSync(AGENT_MAIN)) throw new Error(`precondition: ${AGENT_MAIN} must exist; run npm run build first`);
  const clock = options.clock ?? new SystemClock();
  const args = [...options.args];
  if (options.ownHttpAddress !== true && !args.some((a) => a === '--http-address' || a.startsWith('--http-address='))) args.push('--http-address=127.0.0.1:0');
  const nodeArgs = [...(options.nodeArgs ?? []), AGENT_MAIN, 'agent', ...args];
  const inner = options.inCluster === undefined ? { file: NODE_24, args: nodeArgs } : inPodCommand(options.inCluster, NODE_24, nodeArgs);
  const [launcher, ...launcherArgs] = options.launcher ?? [];
  const command = launcher === undefined ? inner : { file: launcher, args: [...launcherArgs, inner.file, ...inner.args] };
  const child = spawn(command.file, command.args, {
    cwd: options.cwd ?? REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', ...options.inCluster?.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc = new SpawnedAgent(child, clock);
  const emergency = (): void => proc.killNow();
  process.once('exit', emergency);
  t.after(async () => {
    process.removeListener('exit', emergency);
    if (proc.running) await proc.kill();
  });
  await proc.waitStarted(options.startTimeoutMs ?? START_TIMEOUT_MS);
  return proc;
}

class SpawnedAgent implements AgentProcess {
  readonly #child: ChildProcess;
  readonly #clock: Clock;
  readonly #lines: KeptLine[] = [];
  #seq = 0;
  #stderr = '';
  #url: string | undefined;
  #exit: AgentExit | undefined;
  readonly exited: Promise<AgentExit>;
  readonly #waiters = new Set<() => void>();

  constructor(child: ChildProcess, clock: Clock) {
    this.#child = child;
    this.#clock = clock;
    this.exited = new Promise<AgentExit>((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        this.#wake();
        resolve(this.#exit);
      });
    });
    child.once('error', (err) => {
      this.#stderr += `spawn error: ${err.message}\n`;
    });
    readLines(child.stdout, (text) => {
      this.#keep(text);
      this.#wake();
    }, { maxLineChars: MAX_LINE_BYTES });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
  }

  get pid(): number {
    const pid = this.#child.pid;
    if (pid === undefined) throw new Error(`agent: did not spawn (${this.#stderr.trim()})`);
    return pid;
  }

  get url(): string {
    if (this.#url === undefined) throw new Error('agent: has not logged Agent started yet');
    return this.#url;
  }

  get running(): boolean {
    return this.#exit === undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  stderrTail(): string {
    return this.#stderr;
  }

  logs(): LogLine[] {
    return this.#lines.map((k) => k.line);
  }

  keptLogs(): KeptLine[] {
    return [...this.#lines];
  }

  logMark(): number {
    return this.#seq;
  }

  async waitStarted(timeoutMs: number): Promise<void> {
    try {
      const started = await this.waitForLog((l) => l['msg'] === 'Agent started', timeoutMs);
      const http = started.line['http'];
      if (typeof http !== 'string') throw new Error(`agent: Agent started must carry http, got ${JSON.stringify(started.line)}`);
      this.#url = `http://${http}`;
    } catch (err) {
      if (this.running) await this.kill();
      const tail = this.#lines.slice(-20).map((k) => JSON.stringify(k.line)).join('\n');
      throw new Error(`agent: did not start: ${(err as Error).message}\nstderr:\n${this.#stderr}\nstdout (tail):\n${tail}`, { cause: err });
    }
  }

  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs: number, after = 0): Promise<KeptLine> {
    return new Promise<KeptLine>((resolvePromise, reject) => {
      let checked = after;
      const check = (): boolean => {
        for (const kept of this.#lines) {
          if (kept.seq <= checked) continue;
          checked = kept.seq;
          if (predicate(kept.line)) {
            done();
            resolvePromise(kept);
            return true;
          }
        }
        if (this.#exit !== undefined) {
          done();
          reject(new Error(`agent: exited (code ${this.#exit.code}, signal ${this.#exit.signal}) before the awaited log line`));
          return true;
        }
        return false;
      };
      const timer = this.#clock.after(timeoutMs, () => {
        done();
        reject(new Error(`agent: no matching log line within ${timeoutMs} ms`));
      });
      const done = (): void => {
        timer.cancel();
        this.#waiters.delete(wake);
      };
      const wake = (): void => {
        check();
      };
      if (!check()) this.#waiters.add(wake);
    });
  }

  async get(path: string): Promise<{ status: number; body: string }> {
    const res = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    return { status: res.status, body: await res.text() };
  }

  async status(): Promise<AgentStatus> {
    const { status, body } = await this.get('/status');
    if (status !== 200) throw new Error(`agent: /status answered ${status}: ${body}`);
    return JSON.parse(body) as AgentStatus;
  }

  async metrics(): Promise<string> {
    const { status, body } = await this.get('/metrics');
    if (status !== 200) throw new Error(`agent: /metrics answered ${status}: ${body}`);
    return body;
  }

  signal(sig: NodeJS.Signals): void {
    if (!this.running) throw new Error(`agent: must be running to send ${sig}`);
    this.#child.kill(sig);
  }

  async stop(sig: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.running) this.#child.kill(sig);
    const exit = await this.#waitExit(STOP_TIMEOUT_MS);
    if (exit === undefined) {
      await this.kill();
      throw new Error(`agent: pid ${this.#child.pid} must exit within ${STOP_TIMEOUT_MS} ms of ${sig}; SIGKILLed`);
    }
    return exit.code;
  }

  async kill(): Promise<void> {
    this.killNow();
    if ((await this.#waitExit(STOP_TIMEOUT_MS)) === undefined) {
      throw new Error(`agent: pid ${this.#child.pid} must exit within ${STOP_TIMEOUT_MS} ms of SIGKILL`);
    }
  }

  /** Synchronous SIGKILL (also from the process 'exit' handler). */
  killNow(): void {
    if (!this.running) return;
    try {
      // A stopped process takes SIGKILL too; no SIGCONT needed.
      this.#child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  async #waitExit(timeoutMs: number): Promise<AgentExit | undefined> {
    const timer = new AbortController();
    const exit = await Promise.race([this.exited, this.#clock.sleep(timeoutMs, timer.signal).then(() => undefined, () => undefined)]);
    timer.abort();
    return exit;
  }

  #keep(text: string): void {
    if (text.trim() === '') return;
    const line = parseLogLine(text) as LogLine;
    this.#lines.push({ seq: ++this.#seq, atMs: this.#clock.monotonicMs(), line });
    if (this.#lines.length > MAX_LOG_LINES) this.#lines.shift();
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }
}

// ─── The world around the agent: the API stand-in, its Node, a kubeconfig ───────────────────

export interface StandIn {
  readonly api: ApiServerHandle;
  /** The clock the stand-in runs on; the test's other stand-ins (a simulated runtime) take it too. */
  readonly clock: Clock;
  /** A kubeconfig file pointing at the stand-in (no token unless `token` was given). */
  readonly kubeconfig: string;
  /** With `inCluster`: the service account a pod of this cluster would have (its token is `token`). */
  readonly serviceAccount: ServiceAccount | undefined;
  /** A private temp dir (removed in t.after), for sockets and files of the test. */
  readonly dir: string;
  readonly nodeName: string;
  /** The namespace the agent's Lease lives in (the agent's default, `nodepulse`). */
  readonly leaseNamespace: string;
  /** The Lease as the stand-in holds it now, or undefined. */
  lease(): LeaseObject | undefined;
  /** Every successful write of the Lease (create, patch, update) the stand-in recorded, oldest first. */
  leaseWrites(): LeaseWrite[];
  /** Every request to the Lease's paths after SIGTERM etc.: the raw record (method, path, atMs, status). */
  leaseRequests(): Array<{ method: string; path: string; atMs: number; status: number | undefined }>;
}

export interface LeaseObject {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly resourceVersion: string; readonly uid: string };
  readonly spec: { readonly holderIdentity?: string; readonly renewTime?: string; readonly leaseDurationSeconds?: number };
}

export interface LeaseWrite {
  readonly method: string;
  /** The stand-in's (this process's) monotonic ms when the write arrived. */
  readonly atMs: number;
  /** spec.renewTime the write carried (MicroTime), if any. */
  readonly renewTime: string | undefined;
  /** renewTime as wall microseconds since the epoch, if any. */
  readonly renewMicros: number | undefined;
  readonly status: number;
}

export interface StandInOptions {
  readonly nodeName: string;
  /** Passed to startApiServer, on `clock`. */
  readonly api?: Omit<ApiServerOptions, 'clock'>;
  /** The stand-in's clock; default the system clock. */
  readonly clock?: Clock;
  /** A bearer token to write into the kubeconfig inline. */
  readonly token?: string;
  /** A token file path to write into the kubeconfig instead. */
  readonly tokenFile?: string;
  readonly leaseNamespace?: string;
  /** The Node's status.nodeInfo, as its kubelet would report it. */
  readonly nodeInfo?: Readonly<Record<string, string>>;
  /** Serve HTTPS with a test CA and write a service account for an in-cluster agent (see in-cluster.ts). */
  readonly inCluster?: boolean;
}

export const DEFAULT_LEASE_NAMESPACE = 'nodepulse';

/** Starts the API stand-in on 127.0.0.1:0, registers the Node, writes a kubeconfig; all closed in t.after. */
export async function startStandIn(t: Pick<TestContext, 'after'>, options: StandInOptions): Promise<StandIn> {
  const dir = mkdtempSync(join(tmpdir(), 'np-fault-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pki = options.inCluster === true ? createTestPki() : undefined;
  const clock = options.clock ?? new SystemClock();
  const api = await startApiServer({ clock, ...options.api, ...(pki === undefined ? {} : { tls: pki.server }) });
  t.after(() => api.close());
  if (pki === undefined) await createNode(api.url, options.nodeName, options.nodeInfo);
  else {
    api.store.put({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: options.nodeName, labels: kubeletLabels(options.nodeName) },
      ...(options.nodeInfo === undefined ? {} : { status: { nodeInfo: options.nodeInfo } }),
    });
  }
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, {
    server: api.url,
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.tokenFile === undefined ? {} : { tokenFile: options.tokenFile }),
    ...(pki === undefined ? {} : { ca: pki.ca }),
  });
  const ns = options.leaseNamespace ?? DEFAULT_LEASE_NAMESPACE;
  let serviceAccount: ServiceAccount | undefined;
  if (pki !== undefined) {
    mkdirSync(join(dir, 'serviceaccount'));
    serviceAccount = writeServiceAccount(join(dir, 'serviceaccount'), { server: api.url, ca: pki.ca, token: options.token ?? 'service-account-token', namespace: ns });
  }
  const name = options.nodeName;
  const itemPath = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`;
  const listPath = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
  /** A request about this node's Lease: its own path, or a create (POST to the list) of an object by its name. */
  const isLeaseRequest = (r: { path: string; parsed?: unknown }): boolean =>
    r.path === itemPath || (r.path === listPath && (r.parsed as { metadata?: { name?: unknown } } | undefined)?.metadata?.name === name);
  return {
    api,
    clock,
    kubeconfig,
    serviceAccount,
    dir,
    nodeName: name,
    leaseNamespace: ns,
    lease: () => api.store.get('leases', ns, name) as LeaseObject | undefined,
    leaseWrites: () =>
      api.requests
        .all()
        .filter((r) => isLeaseRequest(r) && ['POST', 'PUT', 'PATCH'].includes(r.method) && r.status !== undefined && r.status >= 200 && r.status < 300)
        .map((r) => {
          const renewTime = renewTimeOf(r.parsed);
          return {
            method: r.method,
            atMs: r.atMs,
            renewTime,
            renewMicros: renewTime === undefined ? undefined : microTimeToMicros(renewTime),
            status: r.status ?? 0,
          };
        }),
    leaseRequests: () => api.requests.all().filter(isLeaseRequest).map((r) => ({ method: r.method, path: r.path, atMs: r.atMs, status: r.status })),
  };
}

/** Registers a Node the way a kubelet would (POST /api/v1/nodes). */
export function createNode(url: string, name: string, nodeInfo?: Readonly<Record<string, string>>): Promise<void> {
  return registerNode(url, name, { timeoutMs: PROBE_TIMEOUT_MS, ...(nodeInfo === undefined ? {} : { nodeInfo }) });
}

function renewTimeOf(parsed: unknown): string | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const spec = (parsed as { spec?: unknown }).spec;
  if (typeof spec !== 'object' || spec === null) return undefined;
  const rt = (spec as { renewTime?: unknown }).renewTime;
  return typeof rt === 'string' ? rt : undefined;
}

/** `2026-01-02T03:04:05.123456Z` → wall microseconds since the epoch (exact to the µs). */
export function microTimeToMicros(micro: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(micro);
  if (m === null) throw new Error(`renewTime: ${JSON.stringify(micro)} must be an RFC 3339 UTC time`);
  const whole = Date.parse(`${m[1]}Z`);
  const frac = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return whole * 1000 + Number(frac);
}

// ─── Bounded waiting and reading ────────────────────────────────────────────────────────────

export interface PollOptions {
  /** The bound: pollUntil rejects after this long. */
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly clock?: Clock;
}

/**
 * Polls `check` on real time until it returns a value other than undefined/false, and resolves
 * with that value and the ms it took. Rejects after timeoutMs with `what` and the last value
 * seen. A check that throws counts as not yet (its message is kept for the rejection).
 */
export async function pollUntil<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: PollOptions,
): Promise<{ value: T; elapsedMs: number }> {
  const clock = options.clock ?? new SystemClock();
  const started = clock.monotonicMs();
  let last = 'not checked yet';
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return { value, elapsedMs: clock.monotonicMs() - started };
      last = String(value);
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (clock.monotonicMs() - started > options.timeoutMs) {
      throw new Error(`${what}: did not happen within ${options.timeoutMs} ms (last: ${last})`);
    }
    await clock.sleep(options.intervalMs ?? POLL_INTERVAL_MS);
  }
}

/**
 * One sample of a metric from Prometheus text, by name and exact labels (all of them, in any
 * order); undefined when absent.
 */
export function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (m === null || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) got[pair[1] ?? ''] = pair[2] ?? '';
    const want = Object.entries(labels);
    if (want.length !== Object.keys(got).length || !want.every(([k, v]) => got[k] === v)) continue;
    return Number(m[3]);
  }
  return undefined;
}

// ─── Watching the agent through a fault ─────────────────────────────────────────────────────

/** One /status reading, with when it was taken on the test's clocks. */
export interface StatusSample {
  /** Test process monotonic ms when the answer arrived (the stand-in's request atMs is on the same clock). */
  readonly atMs: number;
  /** Test process wall µs when the answer arrived. */
  readonly wallMicros: number;
  readonly status: AgentStatus;
}

/** /status every SAMPLE_INTERVAL_MS: fine enough that a fault's effect is seen within 0.2 s. */
export const SAMPLE_INTERVAL_MS = 200;

export interface StatusSampler {
  samples(): StatusSample[];
  /** Samples taken at or after monotonic ms `fromMs` (and before `toMs`, when given). */
  between(fromMs: number, toMs?: number): StatusSample[];
  stop(): Promise<void>;
}

/** Bounded: a sampler keeps this many samples (10 minutes at 5 Hz), the newest. */
const MAX_SAMPLES = 3_000;

/**
 * Reads /status in the background until stopped (or the agent exits); stopped in t.after.
 * A probe that fails (agent blocked, stopped) is skipped, not retried.
 */
export function sampleStatus(t: Pick<TestContext, 'after'>, agent: AgentProcess, clock: Clock = new SystemClock()): StatusSampler {
  const kept: StatusSample[] = [];
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopping.signal.aborted && agent.running) {
      try {
        const status = await agent.status();
        kept.push({ atMs: clock.monotonicMs(), wallMicros: clock.wallMicros(), status });
        if (kept.length > MAX_SAMPLES) kept.shift();
      } catch {
        // blocked or gone: the next probe tells
      }
      await clock.sleep(SAMPLE_INTERVAL_MS, stopping.signal).catch(() => undefined);
    }
  })();
  const stop = async (): Promise<void> => {
    stopping.abort();
    await loop;
  };
  t.after(stop);
  return {
    samples: () => [...kept],
    between: (fromMs, toMs) => kept.filter((s) => s.atMs >= fromMs && (toMs === undefined || s.atMs < toMs)),
    stop,
  };
}

/**
 * Gate slack for the check below: the agent checks the gate, then stamps renewTime (≤ a few ms
 * later), and /status shows lastSuccessBegan floored to the millisecond.
 */
export const GATE_STAMP_TOLERANCE_MS = 50;

export interface UnhealthyRenewal {
  readonly renewTime: string;
  /** lastSuccessBegan as the agent reported it in the first /status read after the write. */
  readonly lastSuccessBegan: string | null;
  /** How far past lastSuccessBegan + threshold the write was stamped, in ms. */
  readonly pastThresholdMs: number | undefined;
}

/**
 * Every lease write stamped while the agent's own ledger must have read not-Healthy.
 *
 * Why this check is sound: renewTime is stamped just after the gate passed, on the same wall
 * clock as lastSuccessBegan (the agent's own stamp of when its last successful relist BEGAN).
 * The first /status read taken after a write reports the last success as of that read, which
 * is at least as late as the one the gate saw. So if even that one is older than renewTime −
 * threshold (or there is none), no successful relist began within the threshold before the write:
 * the ledger read NotYetObserved or Unhealthy when the gate let it through. No false positives;
 * and while a fault keeps every relist failing, lastSuccessBegan does not move, so the check is
 * exact for the fault windows (up to the sampling interval at the fault's very end).
 *
 * Assumes the wall clock is not stepped during the run (the wall-step test checks otherwise).
 */
export function renewalsWhileUnhealthy(writes: readonly LeaseWrite[], samples: readonly StatusSample[], thresholdMs: number): UnhealthyRenewal[] {
  const bad: UnhealthyRenewal[] = [];
  for (const w of writes) {
    if (w.renewMicros === undefined || w.renewTime === undefined) continue;
    const after = samples.find((s) => s.wallMicros > (w.renewMicros ?? 0));
    if (after === undefined) continue; // not yet judged: no read after it
    const began = after.status.runtime.lastSuccessBegan;
    if (began === null) {
      bad.push({ renewTime: w.renewTime, lastSuccessBegan: null, pastThresholdMs: undefined });
      continue;
    }
    const past = (w.renewMicros - (Date.parse(began) * 1000 + thresholdMs * 1000)) / 1000;
    if (past > GATE_STAMP_TOLERANCE_MS) bad.push({ renewTime: w.renewTime, lastSuccessBegan: began, pastThresholdMs: Math.round(past) });
  }
  return bad;
}

/** Log lines with this msg (after seq `after`). */
export function linesWith(agent: AgentProcess, msg: string, after = 0): LogLine[] {
  return agent.keptLogs().filter((k) => k.seq > after && k.line['msg'] === msg).map((k) => k.line);
}

/** A lease with no write for this long (two renew intervals of the suite's 1 s) has stopped. */
export const STOPPED_GAP_MS = 2_000;
/** After the recovery bound, keep waiting this much longer so a failure reports the real time. */
const RECOVERY_GRACE_MS = 10_000;

export interface FaultRunOptions {
  readonly agent: AgentProcess;
  readonly world: StandIn;
  /** Starts the fault. */
  readonly inject: () => unknown;
  /** Ends the fault; resolves once the fault is over (e.g. containerd answers again). */
  readonly end: () => unknown;
  /** How long the fault lasts, from inject(). */
  readonly holdMs: number;
  /** Bound the caller will assert on renewedAfterMs; the run waits this + RECOVERY_GRACE_MS at most. */
  readonly recoveryBoundMs: number;
  readonly clock?: Clock;
}

export interface FaultRun {
  readonly injectedAtMs: number;
  /** Monotonic ms (test clock) when end() was called (the fault's end, at the latest). */
  readonly endCalledAtMs: number;
  /** Monotonic ms when end() resolved: the runtime is back. */
  readonly endedAtMs: number;
  /** From inject() to the last lease write before the lease stopped; undefined if it never stopped. */
  readonly stoppedAfterMs: number | undefined;
  /** From the fault's end (end() resolved) to the first lease write after it. */
  readonly renewedAfterMs: number;
  /** What /status, /metrics, /readyz and /livez said just before the fault ended. */
  readonly during: {
    readonly status: AgentStatus;
    readonly metrics: string;
    readonly readyz: { readonly status: number; readonly body: string };
    readonly livez: { readonly status: number; readonly body: string };
  };
  /** The last lease write before end() was called, if any. */
  readonly lastWriteBeforeEnd: LeaseWrite | undefined;
  /** The log mark at inject(), for linesWith(). */
  readonly logMarkAtInject: number;
}

/**
 * How long before its runtime aged out the lease stopped: (lastSuccessBegan + threshold) −
 * the last renewTime written, in ms, using the lastSuccessBegan /status showed as the fault
 * ended. A lease that renews right up to the threshold stops less than one renew interval
 * early; one that stops well before it withheld on something other than the ledger.
 */
export function stoppedEarlyByMs(run: FaultRun, thresholdMs: number): number | undefined {
  const began = run.during.status.runtime.lastSuccessBegan;
  const last = run.lastWriteBeforeEnd?.renewMicros;
  if (began === null || last === undefined) return undefined;
  return (Date.parse(began) * 1000 + thresholdMs * 1000 - last) / 1000;
}

/** Injects a fault, holds it, ends it, and times the lease's stop and its first renewal after. */
export async function runFault(options: FaultRunOptions): Promise<FaultRun> {
  const { agent, world } = options;
  const clock = options.clock ?? new SystemClock();
  const logMarkAtInject = agent.logMark();
  const injectedAtMs = clock.monotonicMs();
  await options.inject();
  const remaining = injectedAtMs + options.holdMs - clock.monotonicMs();
  if (remaining > 0) await clock.sleep(remaining);
  const during = { status: await agent.status(), metrics: await agent.metrics(), readyz: await agent.get('/readyz'), livez: await agent.get('/livez') };
  const endCalledAtMs = clock.monotonicMs();
  await options.end();
  const endedAtMs = clock.monotonicMs();
  const lastBefore = world.leaseWrites().filter((w) => w.atMs < endCalledAtMs).at(-1);
  const stoppedAfterMs =
    lastBefore === undefined || endCalledAtMs - lastBefore.atMs <= STOPPED_GAP_MS ? undefined : Math.max(0, lastBefore.atMs - injectedAtMs);
  const { value: first } = await pollUntil('the first lease write after the fault ended', () => world.leaseWrites().find((w) => w.atMs > endedAtMs), {
    timeoutMs: options.recoveryBoundMs + RECOVERY_GRACE_MS,
    intervalMs: 20,
    clock,
  });
  return { injectedAtMs, endCalledAtMs, endedAtMs, stoppedAfterMs, renewedAfterMs: first.atMs - endedAtMs, during, lastWriteBeforeEnd: lastBefore, logMarkAtInject };
}
