// Runs the built CLI (`node dist/src/cli/main.js ARGS`) as a user would, with a bounded wait, and
// returns its exit code and both streams. For tests of what the process itself does: its exit
// code, which stream a line goes to, and that nothing else was printed.
import { spawn } from 'node:child_process';
import { SystemClock } from '../../src/clock/clock.ts';
import { AGENT_MAIN, NODE_24, REPO_ROOT } from './agent-process.ts';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunCliOptions {
  /** The environment besides PATH (nothing else is inherited). */
  readonly env?: Readonly<Record<string, string>>;
  /** Flags for node itself, before the script (e.g. --import a hook). */
  readonly nodeArgs?: readonly string[];
  /** How long it may run; a command that stops at its flags exits in well under a second. */
  readonly timeoutMs?: number;
}

/** A command that stops at its flags exits in well under a second; 15 s covers a loaded CI machine. */
const DEFAULT_TIMEOUT_MS = 15_000;
const clock = new SystemClock();

export function runBuiltCli(args: readonly string[], options: RunCliOptions = {}): Promise<CliRun> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_24, [...(options.nodeArgs ?? []), AGENT_MAIN, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = clock.after(timeoutMs, () => {
      child.kill('SIGKILL');
      reject(new Error(`nodepulse ${args.join(' ')}: must exit within ${timeoutMs} ms`));
    });
    child.once('exit', (code) => {
      timer.cancel();
      resolve({ code, stdout, stderr });
    });
  });
}
