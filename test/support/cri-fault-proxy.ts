// The CRI fault proxy (test/cri-fault-proxy) as a process a test drives: start it between a CRI
// client and a real runtime, tell it to hang, delay, fail or garble methods, read what it did,
// stop it.
//
// What it is: the proxy binary, built on first use by scripts/build-cri-fault-proxy.ts (cached
// outside the repository, keyed by Go's version and the module's files, once per test process),
// spawned with `--listen --upstream --control`, optionally behind a launcher (a mount namespace's,
// which must exec it so the spawned pid is the proxy's). Its stderr is read as JSON log lines,
// kept in a bounded ring. Commands go to its control endpoint, HTTP on a unix socket.
//
// | method             | the proxy, for calls that start after it                              |
// |--------------------|-----------------------------------------------------------------------|
// | hang(methods)      | holds them unanswered until cleared (then forwards them) or their     |
// |                    | caller's deadline or cancel                                           |
// | delay(methods, ms) | forwards them; their answers leave no sooner than ms after they began |
// | fail(methods, …)   | answers them with that status code and message, never forwarding      |
// | garble(methods)    | forwards them; every answer message gets a prefix no decoder reads     |
// | clear(methods?)    | ends those faults (all, without methods); held calls go on            |
//
// CriFaultProxyControl sends the same commands to a proxy another process started (the test
// cluster's, on a node), by its control socket alone.
//
// Methods: full names (/runtime.v1.RuntimeService/ListContainers), a service
// (/runtime.v1.ImageService/*), '*', or a named set: 'lists' (ListPodSandbox and ListContainers),
// 'status', 'images'.
//
// Callers: a command (not clear) may name the start of its callers' user-agent; the fault then
// applies to their calls alone, and every other caller's go through unchanged. AGENT_USER_AGENT
// is nodepulse's (its channel names itself first), KUBELET_USER_AGENT the kubelet's (grpc-go).
//
// Guarantees, and how each holds: startCriFaultProxy resolves only once the control endpoint
// answers, which the proxy binds after its CRI socket, so the proxy serves; a proxy the test
// leaves running is SIGKILLed in t.after, and from a synchronous 'exit' handler as a last resort.
// Every wait is bounded by a named constant.
//
// Failure modes: no Go skips the test outside CI and fails it under CI=true (requireGo); a proxy
// that exits before it serves rejects start with its exit and its stderr; a refused command
// rejects with the proxy's `key: value must be rule` lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import type { TestContext } from 'node:test';
import { SystemClock, type Clock } from '../../src/clock/clock.ts';
import { buildCriFaultProxy, findGo, type CriFaultProxyBinaries } from '../../scripts/build-cri-fault-proxy.ts';
import { parseLogLine, readLines } from './line-reader.ts';

/** The proxy binds both sockets in milliseconds; a loaded 2-core CI machine gets 10 s. */
export const PROXY_START_TIMEOUT_MS = 10_000;
/** The proxy gives calls in flight 5 s on SIGTERM (stopGrace in main.go); one more for the exit. */
export const PROXY_STOP_TIMEOUT_MS = 6_000;
/** Each control request: the proxy answers from memory. */
export const CONTROL_TIMEOUT_MS = 5_000;
const READY_POLL_MS = 50;
const MAX_LOG_LINES = 5_000;
const STDERR_TAIL_BYTES = 16 * 1024;

export type ProxyFault = 'hang' | 'delay' | 'fail' | 'garble';

/** The start of nodepulse's CRI client's user-agent (`nodepulse/0.1.0 grpc-node-js/1.14.7`: runtime-channel.ts). */
export const AGENT_USER_AGENT = 'nodepulse/';
/** The start of the kubelet's CRI client's user-agent (grpc-go: `grpc-go/1.72.2`). */
export const KUBELET_USER_AGENT = 'grpc-go/';

/** One fault in force, as GET /faults shows it. */
export interface ProxyFaultView {
  readonly selector: string;
  readonly fault: ProxyFault;
  readonly delayMs?: number;
  readonly code?: string;
  readonly message?: string;
  /** The callers it applies to, by the start of their user-agent (absent: every caller). */
  readonly userAgent?: string;
  readonly since: string;
  /** Calls the fault applied to so far. */
  readonly applied: number;
  /** Calls a hang holds now. */
  readonly held: number;
}

export interface ProxyEndedView {
  readonly selector: string;
  readonly fault: ProxyFault;
  readonly applied: number;
  /** Held calls that went on when the fault ended. */
  readonly released: number;
}

export interface ProxyCallCount {
  readonly forwarded: number;
  readonly faulted: number;
}

export interface ProxyState {
  readonly faults: readonly ProxyFaultView[];
  readonly calls: ProxyCallCount & { readonly byMethod: Readonly<Record<string, ProxyCallCount>> };
}

export interface ProxyCommandResult extends ProxyState {
  readonly ended: readonly ProxyEndedView[];
}

/** A command as the control endpoint takes it (control.go). */
export interface ProxyCommand {
  readonly methods?: readonly string[];
  readonly fault: ProxyFault | 'clear';
  readonly delayMs?: number;
  readonly code?: string | number;
  readonly message?: string;
  /** Only calls whose user-agent starts with this (not with clear). */
  readonly userAgent?: string;
}

export interface CriFaultProxyOptions {
  /** The socket the proxy serves CRI on. */
  readonly listen: string;
  /** The real runtime's socket. */
  readonly upstream: string;
  /** The listen socket's group (mode 0660), as containerd's `[grpc] gid`; default the proxy's own. */
  readonly listenGid?: number;
  /** The control endpoint's socket; it must be reachable from the test (not inside a namespace's tmpfs). */
  readonly control: string;
  /** A command the proxy's command line is appended to; it must exec the proxy. */
  readonly launcher?: readonly string[];
  readonly clock?: Clock;
}

export interface CriFaultProxy {
  readonly pid: number;
  /** unix://<listen>, for a CRI client. */
  readonly endpoint: string;
  readonly binaries: CriFaultProxyBinaries;
  hang(methods: readonly string[]): Promise<ProxyCommandResult>;
  delay(methods: readonly string[], delayMs: number): Promise<ProxyCommandResult>;
  fail(methods: readonly string[], code: string | number, message?: string): Promise<ProxyCommandResult>;
  garble(methods: readonly string[]): Promise<ProxyCommandResult>;
  clear(methods?: readonly string[]): Promise<ProxyCommandResult>;
  /** Any command; rejects with the proxy's errors when it refuses it. */
  command(command: ProxyCommand): Promise<ProxyCommandResult>;
  /** A raw control request, for tests of the endpoint itself. */
  control(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; body: unknown }>;
  /** GET /faults. */
  state(): Promise<ProxyState>;
  /** The proxy's log lines (JSON objects; `{ raw }` when not JSON), oldest first. */
  logs(): Array<Readonly<Record<string, unknown>>>;
  stderrTail(): string;
  /** SIGTERM, and waits for the exit; rejects (after SIGKILL) when it takes longer than PROXY_STOP_TIMEOUT_MS. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly running: boolean;
}

/** Whether this test can build the proxy: skips outside CI without Go, fails under CI=true. */
export function requireGo(t: Pick<TestContext, 'skip'>, find: () => string | undefined = findGo): boolean {
  if (find() !== undefined) return true;
  if (process.env['CI'] === 'true') throw new Error('precondition: the CRI fault proxy is built with Go, and CI must have it (/usr/local/go/bin/go)');
  t.skip('needs Go to build the CRI fault proxy');
  return false;
}

let binaries: Promise<CriFaultProxyBinaries> | undefined;

/** The proxy's and the probe's binaries: built on the first call in this process, cached across processes. */
export function criFaultProxyBinaries(): Promise<CriFaultProxyBinaries> {
  binaries ??= buildCriFaultProxy();
  return binaries;
}

/** Starts a proxy and resolves once it serves; SIGKILLed in t.after if still running. */
export async function startCriFaultProxy(t: Pick<TestContext, 'after'>, options: CriFaultProxyOptions): Promise<CriFaultProxy> {
  const built = await criFaultProxyBinaries();
  const clock = options.clock ?? new SystemClock();
  const args = ['--listen', options.listen, '--upstream', options.upstream, '--control', options.control];
  if (options.listenGid !== undefined) args.push('--listen-gid', String(options.listenGid));
  const [launcher, ...launcherArgs] = options.launcher ?? [];
  const child = launcher === undefined
    ? spawn(built.proxy, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(launcher, [...launcherArgs, built.proxy, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const proxy = new SpawnedProxy(child, options, built, clock);
  const emergency = (): void => proxy.killNow();
  process.once('exit', emergency);
  t.after(async () => {
    process.removeListener('exit', emergency);
    if (proxy.running) {
      proxy.killNow();
      await proxy.exited;
    }
  });
  await proxy.waitServing(PROXY_START_TIMEOUT_MS);
  return proxy;
}

/** Commands to a proxy's control endpoint (control.go), for a proxy started here or by another process. */
export class CriFaultProxyControl {
  readonly #control: string;
  readonly #clock: Clock;

  constructor(control: string, clock: Clock = new SystemClock()) {
    this.#control = control;
    this.#clock = clock;
  }

  hang(methods: readonly string[]): Promise<ProxyCommandResult> {
    return this.command({ methods, fault: 'hang' });
  }

  delay(methods: readonly string[], delayMs: number): Promise<ProxyCommandResult> {
    return this.command({ methods, fault: 'delay', delayMs });
  }

  fail(methods: readonly string[], code: string | number, message?: string): Promise<ProxyCommandResult> {
    return this.command({ methods, fault: 'fail', code, ...(message === undefined ? {} : { message }) });
  }

  garble(methods: readonly string[]): Promise<ProxyCommandResult> {
    return this.command({ methods, fault: 'garble' });
  }

  clear(methods: readonly string[] = []): Promise<ProxyCommandResult> {
    return this.command({ methods, fault: 'clear' });
  }

  async command(command: ProxyCommand): Promise<ProxyCommandResult> {
    const { status, body } = await this.control('POST', '/faults', JSON.stringify(command));
    if (status !== 200) {
      const errors = (body as { errors?: unknown }).errors;
      throw new Error(`cri-fault-proxy: refused ${JSON.stringify(command)} (${status}): ${Array.isArray(errors) ? errors.join('; ') : JSON.stringify(body)}`);
    }
    return body as ProxyCommandResult;
  }

  async state(): Promise<ProxyState> {
    const { status, body } = await this.control('GET', '/faults');
    if (status !== 200) throw new Error(`cri-fault-proxy: GET /faults answered ${status}: ${JSON.stringify(body)}`);
    return body as ProxyState;
  }

  control(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const abort = new AbortController();
      const timer = this.#clock.after(CONTROL_TIMEOUT_MS, () => abort.abort(new Error(`${method} ${path}: no answer within ${CONTROL_TIMEOUT_MS} ms`)));
      const req = request({
        socketPath: this.#control,
        path,
        method,
        signal: abort.signal,
        headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          timer.cancel();
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown });
          } catch {
            reject(new Error(`${method} ${path}: answer ${res.statusCode} must be JSON, got ${JSON.stringify(text.slice(0, 200))}`));
          }
        });
        res.on('error', (err) => {
          timer.cancel();
          reject(err);
        });
      });
      req.on('error', (err) => {
        timer.cancel();
        reject(err);
      });
      req.end(body);
    });
  }
}

class SpawnedProxy implements CriFaultProxy {
  readonly endpoint: string;
  readonly binaries: CriFaultProxyBinaries;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcess;
  readonly #options: CriFaultProxyOptions;
  readonly #clock: Clock;
  readonly #commands: CriFaultProxyControl;
  readonly #lines: Array<Readonly<Record<string, unknown>>> = [];
  #stderr = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(child: ChildProcess, options: CriFaultProxyOptions, built: CriFaultProxyBinaries, clock: Clock) {
    this.#child = child;
    this.#options = options;
    this.#clock = clock;
    this.#commands = new CriFaultProxyControl(options.control, clock);
    this.binaries = built;
    this.endpoint = `unix://${options.listen}`;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
    child.once('error', (err) => {
      this.#stderr += `spawn error: ${err.message}\n`;
    });
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    readLines(child.stderr, (text) => {
      if (text.trim() === '') return;
      this.#lines.push(parseLogLine(text));
      if (this.#lines.length > MAX_LOG_LINES) this.#lines.shift();
    });
  }

  get pid(): number {
    const pid = this.#child.pid;
    if (pid === undefined) throw new Error(`cri-fault-proxy: did not spawn (${this.#stderr.trim()})`);
    return pid;
  }

  get running(): boolean {
    return this.#exit === undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  async waitServing(timeoutMs: number): Promise<void> {
    const until = this.#clock.monotonicMs() + timeoutMs;
    let last = 'no answer yet';
    for (;;) {
      if (!this.running) {
        await this.exited;
        throw new Error(`cri-fault-proxy: exited (code ${this.#exit?.code}, signal ${this.#exit?.signal}) before serving; stderr:\n${this.#stderr}`);
      }
      try {
        const { status } = await this.control('GET', '/faults');
        if (status === 200) return;
        last = `GET /faults answered ${status}`;
      } catch (err) {
        last = err instanceof Error ? err.message : String(err);
      }
      if (this.#clock.monotonicMs() > until) {
        this.killNow();
        throw new Error(`cri-fault-proxy: control endpoint ${this.#options.control} must answer within ${timeoutMs} ms (last: ${last}); stderr:\n${this.#stderr}`);
      }
      await this.#clock.sleep(READY_POLL_MS);
    }
  }

  hang(methods: readonly string[]): Promise<ProxyCommandResult> {
    return this.#commands.hang(methods);
  }

  delay(methods: readonly string[], delayMs: number): Promise<ProxyCommandResult> {
    return this.#commands.delay(methods, delayMs);
  }

  fail(methods: readonly string[], code: string | number, message?: string): Promise<ProxyCommandResult> {
    return this.#commands.fail(methods, code, message);
  }

  garble(methods: readonly string[]): Promise<ProxyCommandResult> {
    return this.#commands.garble(methods);
  }

  clear(methods: readonly string[] = []): Promise<ProxyCommandResult> {
    return this.#commands.clear(methods);
  }

  command(command: ProxyCommand): Promise<ProxyCommandResult> {
    return this.#commands.command(command);
  }

  state(): Promise<ProxyState> {
    return this.#commands.state();
  }

  control(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; body: unknown }> {
    return this.#commands.control(method, path, body);
  }

  logs(): Array<Readonly<Record<string, unknown>>> {
    return [...this.#lines];
  }

  stderrTail(): string {
    return this.#stderr;
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) this.#child.kill('SIGTERM');
    const timer = new AbortController();
    const exit = await Promise.race([this.exited, this.#clock.sleep(PROXY_STOP_TIMEOUT_MS, timer.signal).then(() => undefined, () => undefined)]);
    timer.abort();
    if (exit === undefined) {
      this.killNow();
      await this.exited;
      throw new Error(`cri-fault-proxy: pid ${this.#child.pid} must exit within ${PROXY_STOP_TIMEOUT_MS} ms of SIGTERM; SIGKILLed. stderr:\n${this.#stderr}`);
    }
    return exit;
  }

  /** Synchronous SIGKILL (also from the process 'exit' handler). */
  killNow(): void {
    if (!this.running) return;
    try {
      this.#child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}
