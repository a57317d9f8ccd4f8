// A loop's liveness, judged from its heartbeat. Pure: a snapshot, the windows and now.
//
// | a loop's heartbeat                                                  | Liveness |
// |---------------------------------------------------------------------|----------|
// | the loop has ended (stopped, or its task rejected)                  | Dead     |
// | never begun a tick (booting)                                        | Unknown  |
// | a tick in flight for ≤ the stuck window                             | Alive    |
// | a tick in flight for > the stuck window                             | Stalled  |
// | idle, last tick ended ≤ the idle window ago                         | Alive    |
// | idle, last tick ended > the idle window ago                         | Stalled  |
//
// Dead wins over everything: a loop that has ended is not vouched for by a fresh last beat.
// Both windows compare with `≤` for Alive, so a loop exactly at its window is still alive.
import { formatDuration } from '../clock/duration.ts';
import type { HeartbeatSnapshot } from './heartbeat.ts';

export type LivenessState = 'Unknown' | 'Alive' | 'Stalled' | 'Dead';

export interface LivenessWindows {
  /** How long a loop may sit between ticks. Default 30 s. */
  readonly idleWindowMs: number;
  /** How long one tick may run. Default relist deadline + 30 s. */
  readonly stuckWindowMs: number;
}

export interface Liveness {
  readonly name: string;
  readonly state: LivenessState;
  /** A human reason, e.g. "tick in flight for 1m35s; stuck window is 1m30s". */
  readonly reason: string;
}

export function liveness(beat: HeartbeatSnapshot, nowMs: number, windows: LivenessWindows): Liveness {
  const name = beat.name;
  if (beat.ended !== undefined) return { name, state: 'Dead', reason: `loop ended: ${beat.ended}` };
  if (!beat.begun) return { name, state: 'Unknown', reason: 'no tick has begun yet' };
  if (beat.inFlightSinceMs !== undefined) {
    const age = nowMs - beat.inFlightSinceMs;
    if (age <= windows.stuckWindowMs) return { name, state: 'Alive', reason: `tick in flight for ${formatDuration(age)}` };
    return {
      name,
      state: 'Stalled',
      reason: `tick in flight for ${formatDuration(age)}; stuck window is ${formatDuration(windows.stuckWindowMs)}`,
    };
  }
  // begun and not in flight means a tick has ended, so lastEndedMs is set.
  const idle = nowMs - (beat.lastEndedMs ?? nowMs);
  if (idle <= windows.idleWindowMs) return { name, state: 'Alive', reason: `last tick ended ${formatDuration(idle)} ago` };
  return {
    name,
    state: 'Stalled',
    reason: `last tick ended ${formatDuration(idle)} ago; idle window is ${formatDuration(windows.idleWindowMs)}`,
  };
}
