// Runs a real tool (kubectl, helm) as a child process WITHOUT blocking the event loop, for tests
// whose API stand-in answers from the same process: a synchronous spawn would leave the tool
// waiting on a server that can never reply.
//
// Failure modes: a tool that does not exit within the timeout is killed (SIGKILL) and resolves
// with code null; a tool that cannot be started rejects.
import { spawn } from 'node:child_process';

export interface ToolRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const DEFAULT_TIMEOUT_MS = 20_000;

export function runTool(file: string, args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, timeout: timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
