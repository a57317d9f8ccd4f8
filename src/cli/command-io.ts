// What a subcommand gets from main.ts instead of reaching for process globals: its streams,
// its environment and its clock. Tests pass their own. Also the exit codes the commands that ask
// the API share.
import type { Clock } from '../clock/clock.ts';

/**
 * Exit codes fleet, verify and cleanup share: a flag or the kubeconfig is wrong; the API could not
 * be asked (unreachable, timed out, credentials refused, an error answer). Each command names its
 * own 0 and 1 (what its answer is), and its usage lists all four.
 */
export const EXIT_BAD_INPUT = 2;
export const EXIT_API_FAILED = 3;

export interface Writable {
  write(chunk: string): unknown;
}

export interface CommandIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
}
