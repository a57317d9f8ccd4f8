// Fault-injection hooks for the fault suite (test/faults/process-*.test.ts): ways to hurt a
// running agent from outside that no real signal gives. OFF unless their variable is set; an
// agent started without them installs no handler and behaves as if they did not exist.
//
// | variable                               | signal  | what the agent does                                      |
// |----------------------------------------|---------|----------------------------------------------------------|
// | NODEPULSE_DEBUG_BLOCK_ON_SIGUSR2=<ms>  | SIGUSR2 | busy-waits <ms> on the main thread: the event loop is    |
// |                                        |         | blocked, as by a long GC pause or a CPU-starved cgroup   |
// | NODEPULSE_DEBUG_WALL_OFFSET_FILE=<path>| SIGUSR1 | reads <path> (a signed whole number of ms) and sets the  |
// |                                        |         | clock's wall offset to it: the wall clock is stepped, as |
// |                                        |         | NTP or an operator would, without touching the machine's |
//
// Each use logs one line at warn after the fact ("Debug hook: event loop blocked", "Debug hook:
// wall clock stepped"), and the start-up logs one warn line naming the hooks enabled, so a
// production log shows at once if one was ever turned on.
//
// Assumptions and failure modes:
//   - Only the wall reading moves: the monotonic clock is never offset (SystemClock.wallOffsetMs),
//     so the step tests whether anything judges on wall time.
//   - A bad variable value (not a whole number in range) is refused at install with an error in
//     the form `key: value must be rule`, and the agent does not start (exit 2).
//   - A bad or unreadable offset file leaves the offset as it was and logs the problem.
//   - The offset file is read at most MAX_OFFSET_FILE_BYTES.
//   - This module reads no process global: the caller passes the signal source (process, in
//     agent-command.ts) and gets back an uninstall function.
import { openSync, readSync, closeSync } from 'node:fs';
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';

export const BLOCK_ENV = 'NODEPULSE_DEBUG_BLOCK_ON_SIGUSR2';
export const WALL_OFFSET_FILE_ENV = 'NODEPULSE_DEBUG_WALL_OFFSET_FILE';
/** A block longer than a minute is not a fault the suite needs, and would trip every window. */
export const MAX_BLOCK_MS = 60_000;
/** A step of more than a day is not a clock step but a different calendar. */
export const MAX_WALL_OFFSET_MS = 24 * 3_600_000;
/** The offset file holds one number. */
const MAX_OFFSET_FILE_BYTES = 64;

/** The part of a process that the hooks listen on. */
export interface SignalSource {
  on(signal: 'SIGUSR1' | 'SIGUSR2', handler: () => void): unknown;
  removeListener(signal: 'SIGUSR1' | 'SIGUSR2', handler: () => void): unknown;
}

/** A clock whose wall reading can be stepped (SystemClock, ManualClock). */
export interface SteppableClock extends Clock {
  wallOffsetMs: number;
}

export interface DebugHooksOptions {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signals: SignalSource;
}

export class DebugHookError extends Error {
  readonly code = 'invalid_debug_hook';
}

/** Installs the hooks the env asks for; returns a function that removes them. Throws DebugHookError on a bad value. */
export function installDebugHooks(options: DebugHooksOptions): () => void {
  const { env, clock, logger, signals } = options;
  const removers: Array<() => void> = [];
  const blockText = env[BLOCK_ENV];
  const offsetFile = env[WALL_OFFSET_FILE_ENV];

  if (blockText !== undefined && blockText !== '') {
    const blockMs = Number(blockText);
    if (!Number.isInteger(blockMs) || blockMs < 1 || blockMs > MAX_BLOCK_MS) {
      throw new DebugHookError(`${BLOCK_ENV}: ${blockText} must be a whole number of milliseconds from 1 to ${MAX_BLOCK_MS}`);
    }
    const onBlock = (): void => {
      const began = clock.monotonicMs();
      // A busy wait on purpose: nothing else may run on this thread until it ends.
      while (clock.monotonicMs() - began < blockMs) {
        // spin
      }
      logger.warn({ blockedMs: Math.round(clock.monotonicMs() - began) }, 'Debug hook: event loop blocked');
    };
    signals.on('SIGUSR2', onBlock);
    removers.push(() => signals.removeListener('SIGUSR2', onBlock));
  }

  if (offsetFile !== undefined && offsetFile !== '') {
    if (!('wallOffsetMs' in clock)) throw new DebugHookError(`${WALL_OFFSET_FILE_ENV}: ${offsetFile} must be used with a clock whose wall can be stepped`);
    const steppable = clock as SteppableClock;
    const onStep = (): void => {
      const read = readOffset(offsetFile);
      if (typeof read === 'string') {
        logger.error({ file: offsetFile, problem: read }, 'Debug hook: wall clock step refused');
        return;
      }
      const previousMs = steppable.wallOffsetMs;
      steppable.wallOffsetMs = read;
      logger.warn({ previousOffsetMs: previousMs, offsetMs: read }, 'Debug hook: wall clock stepped');
    };
    signals.on('SIGUSR1', onStep);
    removers.push(() => signals.removeListener('SIGUSR1', onStep));
  }

  if (removers.length > 0) {
    logger.warn({ block: blockText ?? null, wallOffsetFile: offsetFile ?? null }, 'Debug hooks enabled: this agent can be hurt on purpose');
  }
  return () => {
    for (const remove of removers) remove();
  };
}

/** The offset in the file, or a problem in the form `key: value must be rule`. */
function readOffset(path: string): number | string {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(MAX_OFFSET_FILE_BYTES);
      const n = readSync(fd, buf, 0, buf.length, 0);
      text = buf.subarray(0, n).toString('utf8').trim();
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return `${path}: must be readable (${err instanceof Error ? err.message : String(err)})`;
  }
  const ms = Number(text);
  if (text === '' || !Number.isInteger(ms) || Math.abs(ms) > MAX_WALL_OFFSET_MS) {
    return `wallOffsetMs: ${JSON.stringify(text)} must be a whole number of milliseconds within ±${MAX_WALL_OFFSET_MS}`;
  }
  return ms;
}
