// A measuring side of the relist benchmark as a long-lived child process that the harness
// drives line by line (the protocol is in relist-child.ts's header; the kubelet side speaks the
// same one): started, it connects and warms up, then prints a ready line; each run(n) sends
// `run n` and resolves with the JSON line it answers; close() sends `exit` and waits for it.
//
// Failure modes: the child exiting early, printing something that is not JSON, or taking longer
// than its time limit (then SIGKILL) rejects, with the tail of its stderr. Every child is also
// SIGKILLed from a synchronous 'exit' handler, so an interrupted benchmark leaves none behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { SystemClock } from '../src/clock/clock.ts';
import { readLines } from '../test/support/line-reader.ts';
import type { SideBatch, SideReady } from './relist-child.ts';

const STDERR_TAIL_CHARS = 4_000;
/** How long a side has to leave after `exit` before it is killed. */
const EXIT_GRACE_MS = 5_000;

const clock = new SystemClock();

export class SideProcess {
  readonly name: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  readonly #lines: string[] = [];
  #waiting: ((line: string) => void) | undefined;
  #failed: Error | undefined;
  #onFail: ((err: Error) => void) | undefined;
  #stderr = '';
  readonly #onExit = (): void => void this.#child.kill('SIGKILL');

  private constructor(name: string, file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv) {
    this.name = name;
    this.#child = spawn(file, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    process.once('exit', this.#onExit);
    this.#exited = new Promise((done) => this.#child.once('exit', () => done()));
    readLines(this.#child.stdout, (line) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting !== undefined) waiting(line);
      else this.#lines.push(line);
    });
    this.#child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    this.#child.stdin?.on('error', () => undefined);
    this.#child.once('error', (err) => this.#fail(err));
    this.#child.once('exit', (code, signal) => {
      if (code !== 0) this.#fail(new Error(`${this.name}: exited ${code ?? signal}: ${this.#stderr.trim()}`));
    });
  }

  /** Starts `file args…` and waits (within timeoutMs) for its ready line. */
  static async start(name: string, file: string, args: readonly string[], options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv }): Promise<{ side: SideProcess; ready: SideReady }> {
    const side = new SideProcess(name, file, args, options.cwd, options.env ?? process.env);
    try {
      const ready = await side.#next<SideReady>(options.timeoutMs);
      if (ready.ready !== true) throw new Error(`${name}: the first line must be the ready line, got ${JSON.stringify(ready)}`);
      return { side, ready };
    } catch (err) {
      side.#child.kill('SIGKILL');
      throw err;
    }
  }

  /** n relists back to back; resolves with the side's answer. */
  run(n: number, timeoutMs: number): Promise<SideBatch> {
    this.#child.stdin?.write(`run ${n}\n`);
    return this.#next<SideBatch>(timeoutMs);
  }

  /** Asks the side to leave, and kills it if it does not within a grace. */
  async close(): Promise<void> {
    process.off('exit', this.#onExit);
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    this.#child.stdin?.end('exit\n');
    const timer = clock.after(EXIT_GRACE_MS, () => this.#child.kill('SIGKILL'));
    await this.#exited;
    timer.cancel();
  }

  #fail(err: Error): void {
    this.#failed ??= err;
    this.#onFail?.(err);
  }

  #next<T>(timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const parse = (line: string): void => {
        timer.cancel();
        this.#onFail = undefined;
        try {
          resolve(JSON.parse(line) as T);
        } catch {
          reject(new Error(`${this.name}: printed a line that is not JSON: ${JSON.stringify(line)}: ${this.#stderr.trim()}`));
        }
      };
      const timer = clock.after(timeoutMs, () => {
        this.#waiting = undefined;
        this.#child.kill('SIGKILL');
        reject(new Error(`${this.name}: no answer within ${timeoutMs} ms: ${this.#stderr.trim()}`));
      });
      const queued = this.#lines.shift();
      if (queued !== undefined) {
        parse(queued);
        return;
      }
      if (this.#failed !== undefined) {
        timer.cancel();
        reject(this.#failed);
        return;
      }
      this.#onFail = (err) => {
        timer.cancel();
        this.#waiting = undefined;
        reject(err);
      };
      this.#waiting = parse;
    });
  }
}
