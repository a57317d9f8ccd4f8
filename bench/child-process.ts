// Child processes for the benchmark: the simulated runtime, the measuring children and the
// agent, each started with Node 24 (process.execPath), each bounded in time.
//
// - runJsonChild(): runs a process to its end and parses the ONE JSON line it prints; a non-zero
//   exit, no JSON, or running past its time limit (then SIGKILL) is an error that carries the
//   child's stderr tail.
// - startServer(): starts a long-lived process that prints ONE JSON ready line (the simulated
//   runtime), and returns it with that line parsed and a stop() that sends SIGTERM, then SIGKILL
//   after STOP_GRACE_MS. Every started process is also SIGKILLed from a synchronous 'exit'
//   handler, so an interrupted benchmark leaves nothing running.
import { spawn, type ChildProcess } from 'node:child_process';
import { SystemClock } from '../src/clock/clock.ts';
import { readLines } from '../test/support/line-reader.ts';

/** How long a stopped child gets between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** stderr kept for error messages, at most this many characters (the newest). */
const STDERR_TAIL_CHARS = 4_000;

const clock = new SystemClock();
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function track(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

function tail(text: string): string {
  return text.length > STDERR_TAIL_CHARS ? text.slice(-STDERR_TAIL_CHARS) : text;
}

/** Runs `node args…` to its end, within timeoutMs, and parses the JSON line it printed last. */
export function runJsonChild<T>(args: readonly string[], timeoutMs: number, cwd: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = tail(stderr + chunk)));
    const timer = clock.after(timeoutMs, () => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')}: still running after ${timeoutMs} ms: ${stderr.trim()}`));
    });
    child.once('error', (err) => {
      timer.cancel();
      reject(err);
    });
    child.once('close', (code, signal) => {
      timer.cancel();
      const line = stdout.trim().split('\n').at(-1) ?? '';
      if (code !== 0) {
        reject(new Error(`${args.join(' ')}: exited ${code ?? signal}: ${stderr.trim()}`));
        return;
      }
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${args.join(' ')}: printed no JSON line: ${JSON.stringify(line)}: ${stderr.trim()}`));
      }
    });
  });
}

export interface Server<T> {
  readonly process: ChildProcess;
  readonly pid: number;
  /** The ready line, parsed. */
  readonly ready: T;
  /** SIGTERM, then SIGKILL after a grace; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts `node args…` and waits (within timeoutMs) for its first stdout line, a JSON object. */
export function startServer<T>(args: readonly string[], timeoutMs: number, cwd: string): Promise<Server<T>> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stderr = '';
    let settled = false;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    const stop = async (): Promise<void> => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = clock.after(STOP_GRACE_MS, () => child.kill('SIGKILL'));
      await exited;
      timer.cancel();
    };
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      child.kill('SIGKILL');
      reject(err);
    };
    const timer = clock.after(timeoutMs, () => fail(new Error(`${args.join(' ')}: no ready line within ${timeoutMs} ms: ${stderr.trim()}`)));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = tail(stderr + chunk)));
    readLines(child.stdout, (line) => {
      if (settled) return;
      settled = true;
      timer.cancel();
      try {
        const ready = JSON.parse(line) as T;
        resolve({ process: child, pid: child.pid ?? 0, ready, stop });
      } catch {
        child.kill('SIGKILL');
        reject(new Error(`${args.join(' ')}: ready line is not JSON: ${JSON.stringify(line)}`));
      }
    });
    child.once('error', (err) => fail(err));
    child.once('exit', (code, signal) => fail(new Error(`${args.join(' ')}: exited ${code ?? signal} before it was ready: ${stderr.trim()}`)));
  });
}
