// Network namespaces a test makes for itself, joined by veth pairs, and processes run in them:
// what a pod's network looks like to the agent, and what the node's looks like to a probe.
//
// What it gives:
//   - netNamespaces(t, prefix): a set whose every namespace is named `<prefix>-<pid>-<role>`,
//     so two runs never collide, and is deleted in t.after (with the veths in it);
//   - link(a, b, …): a veth pair made directly inside the two namespaces (`ip -n A link add …
//     netns B`), so nothing is ever added to the host's own namespace, and its addresses are
//     seen by no one but the test; IPv6 addresses are added `nodad`, usable at once;
//   - spawnIn(ns, argv, started): a process in a namespace (`ip netns exec` execs the command, so
//     the spawned pid is the process's own), resolved once a stdout line passes `started`, and
//     SIGKILLed in t.after if still running;
//   - probeFrom(ns, urls): GETs from inside a namespace, with Node 24's fetch, each bounded.
//
// Needs root, the `ip` command (iproute2) and `sysctl` (procps): requireNetNamespaces(t) first. Outside CI a missing
// one skips the test; under CI=true it fails it (require.ts).
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { SystemClock } from '../../src/clock/clock.ts';
import { NODE_24, REPO_ROOT } from './agent-process.ts';
import { isRoot, requireExecutables } from './require.ts';

const run = promisify(execFile);
const clock = new SystemClock();

/** An `ip` command here answers in milliseconds; 10 s covers a loaded 2-core machine. */
const IP_TIMEOUT_MS = 10_000;
/** A process in a namespace starts in about a second here; 20 s covers a loaded machine. */
export const SPAWN_START_TIMEOUT_MS = 20_000;
/** One probe's deadline: the agent answers from memory. */
export const PROBE_TIMEOUT_MS = 3_000;
/** stdout and stderr kept per process, for failure messages. */
const OUTPUT_TAIL_BYTES = 64 * 1024;
const NAME = /^[a-z0-9-]{1,40}$/;

/** The `ip` command's path, or undefined once the test was skipped (outside CI). */
export function requireNetNamespaces(t: TestContext): string | undefined {
  const found = requireExecutables(t, ['ip', 'sysctl']);
  if (found === undefined) return undefined;
  if (!isRoot()) {
    if (process.env['CI'] === 'true') throw new Error('precondition: network namespaces need root, and CI must run as root');
    t.skip('needs root to make network namespaces');
    return undefined;
  }
  return found['ip'];
}

export interface SpawnedInNamespace {
  readonly pid: number;
  readonly running: boolean;
  /** Every stdout line so far. */
  lines(): string[];
  /** stdout and stderr tails, for a failure message. */
  output(): string;
  kill(): Promise<void>;
}

export interface NetNamespaces {
  /** Makes the namespace `<prefix>-<pid>-<role>` with its loopback up; returns its name. */
  add(role: string, sysctls?: Readonly<Record<string, string>>): Promise<string>;
  /** A veth pair between two namespaces: `aDev` in a, `bDev` in b, both up, with their addresses (CIDR). */
  link(a: string, aDev: string, aAddrs: readonly string[], b: string, bDev: string, bAddrs: readonly string[]): Promise<void>;
  /** Runs `ip -n ns ARGS` and returns its stdout. */
  ip(ns: string, args: readonly string[]): Promise<string>;
  /** Runs `ip netns exec ns CMD…` to completion and returns its stdout. */
  exec(ns: string, argv: readonly string[]): Promise<string>;
  spawnIn(ns: string, argv: readonly string[], started: (line: string) => boolean): Promise<SpawnedInNamespace>;
  probeFrom(ns: string, urls: readonly string[]): Promise<ProbeAnswer[]>;
}

export interface ProbeAnswer {
  readonly url: string;
  /** The HTTP status, or 0 when the request failed (then `error` says why). */
  readonly status: number;
  readonly body: string;
  readonly error?: string;
}

export function netNamespaces(t: Pick<TestContext, 'after'>, ipPath: string, prefix: string): NetNamespaces {
  const made: string[] = [];
  const processes: Spawned[] = [];
  t.after(async () => {
    for (const p of processes) if (p.running) await p.kill();
    for (const ns of made.reverse()) await run(ipPath, ['netns', 'delete', ns], { timeout: IP_TIMEOUT_MS }).catch(() => undefined);
  });
  const ip = async (ns: string | undefined, args: readonly string[]): Promise<string> => {
    const full = ns === undefined ? [...args] : ['-n', ns, ...args];
    try {
      return (await run(ipPath, full, { timeout: IP_TIMEOUT_MS })).stdout;
    } catch (err) {
      throw new Error(`ip ${full.join(' ')}: ${(err as { stderr?: string }).stderr?.trim() ?? (err as Error).message}`, { cause: err });
    }
  };
  const self: NetNamespaces = {
    async add(role, sysctls = {}) {
      const name = `${prefix}-${process.pid}-${role}`;
      assert.match(name, NAME, `namespace name ${name} must be short and plain`);
      await ip(undefined, ['netns', 'add', name]);
      made.push(name);
      await ip(name, ['link', 'set', 'lo', 'up']);
      for (const [key, value] of Object.entries(sysctls)) await self.exec(name, ['sysctl', '-q', '-w', `${key}=${value}`]);
      return name;
    },
    async link(a, aDev, aAddrs, b, bDev, bAddrs) {
      await ip(a, ['link', 'add', aDev, 'type', 'veth', 'peer', 'name', bDev, 'netns', b]);
      for (const [ns, dev, addrs] of [[a, aDev, aAddrs], [b, bDev, bAddrs]] as const) {
        for (const addr of addrs) await ip(ns, ['address', 'add', addr, 'dev', dev, ...(addr.includes(':') ? ['nodad'] : [])]);
        await ip(ns, ['link', 'set', dev, 'up']);
      }
    },
    ip: (ns, args) => ip(ns, args),
    async exec(ns, argv) {
      try {
        return (await run(ipPath, ['netns', 'exec', ns, ...argv], { timeout: IP_TIMEOUT_MS })).stdout;
      } catch (err) {
        throw new Error(`ip netns exec ${ns} ${argv.join(' ')}: ${(err as { stderr?: string }).stderr?.trim() ?? (err as Error).message}`, { cause: err });
      }
    },
    async spawnIn(ns, argv, started) {
      const child = spawn(ipPath, ['netns', 'exec', ns, ...argv], {
        cwd: REPO_ROOT,
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const proc = new Spawned(child);
      processes.push(proc);
      await proc.waitFor(started, SPAWN_START_TIMEOUT_MS, `${argv.slice(0, 3).join(' ')} in ${ns}`);
      return proc;
    },
    async probeFrom(ns, urls) {
      const script = [
        'const urls = JSON.parse(process.argv[1]);',
        'const out = [];',
        'for (const url of urls) {',
        `  try { const r = await fetch(url, { signal: AbortSignal.timeout(${PROBE_TIMEOUT_MS}) }); out.push({ url, status: r.status, body: await r.text() }); }`,
        "  catch (e) { out.push({ url, status: 0, body: '', error: String(e?.cause?.code ?? e?.cause ?? e) }); }",
        '}',
        'process.stdout.write(JSON.stringify(out));',
      ].join('\n');
      const stdout = await self.exec(ns, [NODE_24, '--input-type=module', '-e', script, JSON.stringify(urls)]);
      return JSON.parse(stdout) as ProbeAnswer[];
    },
  };
  return self;
}

class Spawned implements SpawnedInNamespace {
  readonly #child: ChildProcess;
  readonly #lines: string[] = [];
  #partial = '';
  #stderr = '';
  #exited = false;
  readonly #exit: Promise<void>;

  constructor(child: ChildProcess) {
    this.#child = child;
    this.#exit = new Promise((resolve) => child.once('exit', () => {
      this.#exited = true;
      resolve();
    }));
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      const parts = (this.#partial + chunk).split('\n');
      this.#partial = parts.pop() ?? '';
      this.#lines.push(...parts);
      if (this.#lines.length > 10_000) this.#lines.splice(0, this.#lines.length - 10_000);
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-OUTPUT_TAIL_BYTES);
    });
  }

  get pid(): number {
    const pid = this.#child.pid;
    if (pid === undefined) throw new Error(`did not spawn: ${this.#stderr.trim()}`);
    return pid;
  }

  get running(): boolean {
    return !this.#exited;
  }

  lines(): string[] {
    return [...this.#lines];
  }

  output(): string {
    return `stdout (tail):\n${this.#lines.slice(-20).join('\n')}\nstderr (tail):\n${this.#stderr.slice(-4096)}`;
  }

  async waitFor(started: (line: string) => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = clock.monotonicMs() + timeoutMs;
    for (;;) {
      if (this.#lines.some(started)) return;
      if (this.#exited) throw new Error(`${what}: exited before it started\n${this.output()}`);
      if (clock.monotonicMs() > deadline) {
        await this.kill();
        throw new Error(`${what}: did not start within ${timeoutMs} ms\n${this.output()}`);
      }
      await clock.sleep(50);
    }
  }

  async kill(): Promise<void> {
    if (this.#exited) return;
    this.#child.kill('SIGKILL');
    await this.#exit;
  }
}
