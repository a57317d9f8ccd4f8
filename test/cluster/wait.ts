// A bounded wait for the cluster's start-up steps: poll a check until it answers `true`, fail
// fast when the daemon it waits on has died (with the tail of its log), and otherwise fail at the
// bound with the last thing the check saw. A check answers `true` when done, or a string that
// says what it saw instead (or throws, which counts the same): nothing else can end the wait.
import type { Clock } from '../../src/clock/clock.ts';
import { isRunning, logTail, type DaemonRecord } from './daemon.ts';

export interface WaitOptions {
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** A daemon whose death ends the wait at once. */
  readonly daemon?: DaemonRecord;
}

const DEFAULT_INTERVAL_MS = 250;

/** What a check answers: `true` when done, else what it saw. */
export type Check = () => Promise<true | string> | true | string;

/** Resolves once the check answers `true`; see the header. */
export async function waitFor(what: string, check: Check, options: WaitOptions): Promise<void> {
  const { clock } = options;
  const until = clock.monotonicMs() + options.timeoutMs;
  let last = 'not checked yet';
  for (;;) {
    try {
      const answer = await check();
      if (answer === true) return;
      last = answer;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    const daemon = options.daemon;
    if (daemon !== undefined && !isRunning(daemon)) {
      throw new Error(`${what}: ${daemon.name} (pid ${daemon.pid}) exited; last check: ${last}; its log ends:\n${logTail(daemon.log)}`);
    }
    if (clock.monotonicMs() > until) {
      const tail = daemon === undefined ? '' : `; ${daemon.name}'s log ends:\n${logTail(daemon.log)}`;
      throw new Error(`${what}: did not happen within ${options.timeoutMs} ms (last: ${last})${tail}`);
    }
    await clock.sleep(options.intervalMs ?? DEFAULT_INTERVAL_MS);
  }
}
