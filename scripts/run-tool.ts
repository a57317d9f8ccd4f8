// One external command for the image scripts (npm, mmdebstrap, podman, tar, git): spawned with
// no shell, bounded in time, its stdout returned and the tail of its output kept for the error.
//
// Failure modes: a missing executable, a non-zero exit or the time bound rejects with an Error
// that names the command line and ends with the last OUTPUT_TAIL_BYTES of its stderr and stdout.
import { spawn } from 'node:child_process';

/** Progress lines for a person (the CLI prints them; tests may keep them). */
export type ToolLog = (line: string) => void;

/** What an error keeps of a command's output: enough for podman's or mmdebstrap's last words. */
const OUTPUT_TAIL_BYTES = 8 * 1024;
/** stdout returned to the caller is capped too (podman's JSON answers are a few KiB). */
const MAX_STDOUT_BYTES = 16 * 1024 * 1024;

export interface RunToolOptions {
  readonly timeoutMs: number;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Each line of output (stdout and stderr), as it comes (e.g. podman build's steps for the CLI). */
  readonly onLine?: ToolLog;
}

/** Runs `file args`, resolving with its stdout; rejects as the header says. */
export function runTool(file: string, args: readonly string[], options: RunToolOptions): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let tail = '';
    const partial = { stdout: '', stderr: '' };
    const keep = (stream: 'stdout' | 'stderr', chunk: string): void => {
      tail = (tail + chunk).slice(-OUTPUT_TAIL_BYTES);
      if (options.onLine === undefined) return;
      const lines = (partial[stream] + chunk).split('\n');
      partial[stream] = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') options.onLine(line);
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (stdout.length < MAX_STDOUT_BYTES) stdout += chunk;
      keep('stdout', chunk);
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => keep('stderr', chunk));
    const command = [file, ...args].join(' ');
    child.once('error', (err) => reject(new Error(`${command}: ${err.message}`, { cause: err })));
    child.once('close', (code, signal) => {
      if (code === 0) resolve(stdout);
      else if (signal !== null) reject(new Error(`${command}: killed by ${signal} (time bound ${options.timeoutMs} ms)\n${tail}`));
      else reject(new Error(`${command}: exit code ${code}\n${tail}`));
    });
  });
}
