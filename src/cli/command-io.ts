// What a subcommand gets from main.ts instead of reaching for process globals: its streams,
// its environment and its clock. Tests pass their own.
import type { Clock } from '../clock/clock.ts';

export interface Writable {
  write(chunk: string): unknown;
}

export interface CommandIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
}
