// What the controller's end-to-end tests share: `nodepulse controller` as a real process, the
// stand-in's view of Nodes and of the election lease, a bounded real-time poll, and the overlap
// detector that proves two replicas never wrote in the same term.
//
// What it is: startControllerProcess() spawns `node src/cli/main.ts controller` with the
// project's Node 24 (type stripping, so a fix in src/ is tested without a build), keeps its pino
// lines in a bounded ring, waits for `Controller started` and reads the bound /metrics address
// from it. The process is SIGKILLed in t.after if the test leaves it running, and from a
// synchronous process 'exit' handler as a last resort.
//
// The overlap detector reads only the stand-in's request record, never the controllers' word:
//   - a term of identity X is a run of successful election-lease writes naming X as holder;
//     X may believe it leads from the first of them (its answer comes after the server saw it)
//     until renewDeadline after the last was SENT, which is no later than the server saw it.
//     So [first.atMs, last.atMs + renewDeadline] on the server's clock covers X's belief;
//   - every controller write (Node status, Node, Event) must fall inside a term of its own
//     writer, and no two terms of different identities may overlap.
// The bound is sound because the server's monotonic clock and each controller's run at the same
// rate (one machine); their origins differ and are never compared.
//
// Assumptions and failure modes:
//   - Each controller authenticates with its own token, mapped to a user named exactly as its
//     --identity, so the record's `user` names the replica.
//   - The record keeps the newest 100,000 requests; these tests make a few thousand.
//   - A controller that exits before `Controller started` rejects start with its stderr.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { NODE_24, PROBE_TIMEOUT_MS, REPO_ROOT, STOP_TIMEOUT_MS } from '../support/agent-process.ts';
import { parseLogLine, readLines } from '../support/line-reader.ts';
import { agentLease } from './fleet-fixtures.ts';

const real = new SystemClock();

/** The controller loads in about a second here; 15 s covers a loaded 2-core CI machine. */
export const CONTROLLER_START_TIMEOUT_MS = 15_000;
/** Log lines kept per controller (the newest); a 60 s run at debug makes a few thousand. */
const MAX_LOG_LINES = 20_000;
/** stderr kept for failure messages (the newest bytes). */
const STDERR_TAIL_BYTES = 64 * 1024;
/** Pause between polls of waitFor: fine enough to time a mark to ±25 ms. */
const POLL_MS = 25;
export const ELECTION_LEASE = 'nodepulse-controller';

/** The controller's test-shortened timings, in ms. */
export interface ControllerTimings {
  readonly graceMs: number;
  readonly monitorPeriodMs: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

export interface ControllerProcessOptions {
  readonly kubeconfig: string;
  readonly identity: string;
  /** The election lease's namespace. */
  readonly namespace: string;
  readonly timings: ControllerTimings;
  /** More flags, e.g. ['--max-writes-per-second', '20']. */
  readonly args?: readonly string[];
  /** The CLI to run: src/cli/main.ts (type stripping) by default, or the built dist/src/cli/main.js. */
  readonly main?: string;
}

export interface ControllerProcess {
  readonly identity: string;
  readonly pid: number;
  /** `http://127.0.0.1:<port>` (/metrics, /healthz), from the `Controller started` line. */
  readonly url: string;
  /** Every kept log line, parsed (`{ raw }` when not JSON). */
  lines(): Array<Readonly<Record<string, unknown>>>;
  /** Every kept line as text, for failure messages and searches. */
  logText(): string;
  stderrTail(): string;
  /** GET /metrics. */
  metrics(): Promise<string>;
  /** Sends `sig` and waits for the exit; resolves with the exit code (null when killed by a signal). */
  stop(sig?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
  readonly running: boolean;
}

function ms(n: number): string {
  return `${n}ms`;
}

/** The flags of a controller with these timings (after `controller`). */
export function controllerArgs(o: ControllerProcessOptions): string[] {
  return [
    '--kubeconfig', o.kubeconfig,
    '--namespace', o.namespace,
    '--identity', o.identity,
    '--grace', ms(o.timings.graceMs),
    '--monitor-period', ms(o.timings.monitorPeriodMs),
    '--leader-elect-lease-duration', ms(o.timings.leaseDurationMs),
    '--leader-elect-renew-deadline', ms(o.timings.renewDeadlineMs),
    '--leader-elect-retry-period', ms(o.timings.retryPeriodMs),
    '--http-address', '127.0.0.1:0',
    '--log-level', 'debug',
    ...(o.args ?? []),
  ];
}

/** Spawns a controller replica and resolves once it logged `Controller started`. */
export async function startControllerProcess(t: Pick<TestContext, 'after'>, options: ControllerProcessOptions): Promise<ControllerProcess> {
  const child = spawn(NODE_24, [options.main ?? join(REPO_ROOT, 'src', 'cli', 'main.ts'), 'controller', ...controllerArgs(options)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc = new SpawnedController(options.identity, child);
  const emergency = (): void => proc.killNow();
  process.once('exit', emergency);
  t.after(async () => {
    process.removeListener('exit', emergency);
    if (proc.running) await proc.kill();
  });
  await proc.waitStarted();
  return proc;
}

class SpawnedController implements ControllerProcess {
  readonly identity: string;
  readonly #child: ChildProcess;
  readonly #lines: Array<{ text: string; line: Readonly<Record<string, unknown>> }> = [];
  readonly exited: Promise<void>;
  #stderr = '';
  #url: string | undefined;
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(identity: string, child: ChildProcess) {
    this.identity = identity;
    this.#child = child;
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve();
      });
    });
    child.once('error', (err) => {
      this.#stderr += `spawn error: ${err.message}\n`;
    });
    readLines(child.stdout, (text) => this.#keep(text));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
  }

  get pid(): number {
    const pid = this.#child.pid;
    if (pid === undefined) throw new Error(`controller ${this.identity}: did not spawn (${this.#stderr.trim()})`);
    return pid;
  }

  get url(): string {
    if (this.#url === undefined) throw new Error(`controller ${this.identity}: has not logged Controller started yet`);
    return this.#url;
  }

  get running(): boolean {
    return this.#exit === undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  lines(): Array<Readonly<Record<string, unknown>>> {
    return this.#lines.map((l) => l.line);
  }

  logText(): string {
    return this.#lines.map((l) => l.text).join('\n');
  }

  stderrTail(): string {
    return this.#stderr;
  }

  async waitStarted(): Promise<void> {
    const started = real.monotonicMs();
    for (;;) {
      const line = this.#lines.find((l) => l.line['msg'] === 'Controller started')?.line;
      if (line !== undefined) {
        const http = line['http'];
        if (typeof http !== 'string') throw new Error(`controller ${this.identity}: Controller started must carry http, got ${JSON.stringify(line)}`);
        this.#url = `http://${http}`;
        return;
      }
      if (!this.running || real.monotonicMs() - started > CONTROLLER_START_TIMEOUT_MS) {
        if (this.running) await this.kill();
        throw new Error(`controller ${this.identity}: did not start within ${CONTROLLER_START_TIMEOUT_MS} ms (exit ${JSON.stringify(this.#exit)})\nstderr:\n${this.#stderr}\nstdout:\n${this.logText().slice(-8192)}`);
      }
      await real.sleep(POLL_MS);
    }
  }

  async metrics(): Promise<string> {
    const res = await fetch(`${this.url}/metrics`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`controller ${this.identity}: /metrics answered ${res.status}: ${body}`);
    return body;
  }

  async stop(sig: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.running) this.#child.kill(sig);
    if (!(await this.#waitExit())) {
      this.killNow();
      throw new Error(`controller ${this.identity}: pid ${this.#child.pid} must exit within ${STOP_TIMEOUT_MS} ms of ${sig}; SIGKILLed`);
    }
    return this.#exit?.code ?? null;
  }

  async kill(): Promise<void> {
    this.killNow();
    if (!(await this.#waitExit())) throw new Error(`controller ${this.identity}: pid ${this.#child.pid} must exit within ${STOP_TIMEOUT_MS} ms of SIGKILL`);
  }

  killNow(): void {
    if (!this.running) return;
    try {
      this.#child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }

  async #waitExit(): Promise<boolean> {
    const timer = new AbortController();
    const exited = await Promise.race([this.exited.then(() => true), real.sleep(STOP_TIMEOUT_MS, timer.signal).then(() => false, () => false)]);
    timer.abort();
    return exited;
  }

  #keep(text: string): void {
    if (text.trim() === '') return;
    this.#lines.push({ text, line: parseLogLine(text) });
    if (this.#lines.length > MAX_LOG_LINES) this.#lines.shift();
  }
}

// ─── The stand-in's view ────────────────────────────────────────────────────────────────────

/** A simulated agent: renews its node's lease every 300 ms while running. */
export class SimAgent {
  readonly node: string;
  readonly #server: ApiServerHandle;
  #running = false;
  #loop: Promise<void> | undefined;

  constructor(server: ApiServerHandle, node: string) {
    this.#server = server;
    this.node = node;
  }

  start(): void {
    this.#running = true;
    this.#loop = (async () => {
      while (this.#running) {
        this.#server.store.put(agentLease(this.node, real.wallMicros()) as Parameters<ApiServerHandle['store']['put']>[0]);
        await real.sleep(300);
      }
    })();
  }

  /** As SIGKILL: the lease simply stops moving. */
  async kill(): Promise<void> {
    this.#running = false;
    await this.#loop;
  }
}


export interface ConditionView {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
}

/** The Node's RuntimeRelistUnhealthy condition as the stand-in holds it now. */
export function nodeCondition(server: ApiServerHandle, node: string): ConditionView | undefined {
  const obj = server.store.get('nodes', undefined, node) as { status?: { conditions?: Array<ConditionView & { type: string }> } } | undefined;
  return obj?.status?.conditions?.find((c) => c.type === 'RuntimeRelistUnhealthy');
}

/** The election lease's holderIdentity now ('' once released, undefined before it exists). */
export function electionHolder(server: ApiServerHandle, namespace: string): string | undefined {
  const lease = server.store.get('leases', namespace, ELECTION_LEASE) as { spec?: { holderIdentity?: string } } | undefined;
  return lease?.spec?.holderIdentity;
}

/** Polls `ok` on real time; resolves with the ms it took, fails the test after `withinMs`. */
export async function waitFor(what: string, ok: () => boolean, withinMs: number): Promise<number> {
  const start = real.monotonicMs();
  while (real.monotonicMs() - start <= withinMs) {
    if (ok()) return real.monotonicMs() - start;
    await real.sleep(POLL_MS);
  }
  return assert.fail(`${what}: not within ${withinMs} ms`);
}

// ─── Terms and the overlap detector ─────────────────────────────────────────────────────────

/** One term as the stand-in saw it (server monotonic ms). */
export interface ObservedTerm {
  readonly identity: string;
  /** The first successful write naming `identity` as holder. */
  readonly startMs: number;
  /** The last one. */
  readonly lastWriteMs: number;
  /** lastWriteMs + renewDeadline: the latest its belief can last. */
  readonly endMs: number;
}

/** A write by a controller replica, from the record. */
export interface ControllerWrite {
  readonly user: string;
  readonly method: string;
  readonly path: string;
  readonly atMs: number;
  readonly seq: number;
  readonly status: number | undefined;
}

/** Successful election-lease writes, oldest first: who sent each, and the holder it named. */
export function electionWrites(server: ApiServerHandle, namespace: string): Array<{ user: string | undefined; holder: string; atMs: number }> {
  const item = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${ELECTION_LEASE}`;
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  return server.requests
    .all()
    .filter((r) => ((r.method === 'PUT' && r.path === item) || (r.method === 'POST' && r.path === collection)) && r.status !== undefined && r.status >= 200 && r.status < 300)
    .filter((r) => r.method === 'PUT' || (r.parsed as { metadata?: { name?: string } } | undefined)?.metadata?.name === ELECTION_LEASE)
    .map((r) => ({ user: r.user, holder: (r.parsed as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity ?? '', atMs: r.atMs }));
}

/** Terms from the election writes: each run of writes naming the same non-empty holder. */
export function observedTerms(writes: ReadonlyArray<{ holder: string; atMs: number }>, renewDeadlineMs: number): ObservedTerm[] {
  const terms: ObservedTerm[] = [];
  let current: { identity: string; startMs: number; lastWriteMs: number } | undefined;
  const close = (): void => {
    if (current !== undefined) terms.push({ ...current, endMs: current.lastWriteMs + renewDeadlineMs });
    current = undefined;
  };
  for (const w of writes) {
    if (current !== undefined && w.holder === current.identity) {
      current.lastWriteMs = w.atMs;
      continue;
    }
    close();
    if (w.holder !== '') current = { identity: w.holder, startMs: w.atMs, lastWriteMs: w.atMs };
  }
  close();
  return terms;
}

/** Every write (PATCH/PUT/POST/DELETE to nodes or events) sent by one of `users`. */
export function controllerWrites(server: ApiServerHandle, users: readonly string[]): ControllerWrite[] {
  return server.requests
    .all()
    .filter((r) => r.user !== undefined && users.includes(r.user) && r.method !== 'GET')
    .filter((r) => r.path.startsWith('/api/v1/nodes') || /\/events$|\/events\//.test(r.path))
    .map((r) => ({ user: r.user ?? '', method: r.method, path: r.path, atMs: r.atMs, seq: r.seq, status: r.status }));
}

/** The overlap detector: terms of different identities that overlap, and writes outside their writer's terms. */
export function termViolations(terms: readonly ObservedTerm[], writes: readonly ControllerWrite[]): string[] {
  const problems: string[] = [];
  for (let i = 1; i < terms.length; i++) {
    const prev = terms[i - 1];
    const next = terms[i];
    if (prev === undefined || next === undefined || prev.identity === next.identity) continue;
    if (next.startMs <= prev.endMs) {
      problems.push(`term of ${next.identity} began at ${next.startMs.toFixed(0)} ms, before ${prev.identity}'s belief could end at ${prev.endMs.toFixed(0)} ms`);
    }
  }
  for (const w of writes) {
    if (!terms.some((term) => term.identity === w.user && w.atMs >= term.startMs && w.atMs <= term.endMs)) {
      problems.push(`${w.method} ${w.path} by ${w.user} at ${w.atMs.toFixed(0)} ms (seq ${w.seq}) lies outside every term of ${w.user}`);
    }
  }
  return problems;
}
