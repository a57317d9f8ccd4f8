// The one scheduler every tick loop of the agent runs on (relister, lease, Status poller).
//
// - Sliding period: the next tick starts `delay` after the previous one ENDED, as kubelet's
//   wait.Until does for relist, so ticks never overlap and a slow tick is not followed by a burst.
// - A tick may ask for its own next delay (the lease loop: renew interval when renewed, 1 s
//   when withheld); otherwise the loop's period applies, with optional jitter.
// - A heartbeat is begun before and ended after every tick, so liveness() can tell a wedged
//   tick from an idle loop.
// - Nothing is thrown out of a timer: a tick that throws is reported through onError and the
//   loop goes on. The loop ends only when its signal aborts; then its heartbeat is marked ended,
//   so a stopped loop reads Dead and never silently gone.
import type { Clock } from '../clock/clock.ts';
import type { Heartbeat } from '../liveness/heartbeat.ts';

export interface LoopOptions {
  readonly clock: Clock;
  readonly heartbeat: Heartbeat;
  /** Delay after a tick ends before the next begins, when the tick does not choose one. */
  readonly periodMs: number;
  /** Up to this fraction of periodMs is added at random (0 = none). */
  readonly jitter?: number;
  /** Random source in [0, 1), injectable for tests. */
  readonly random?: () => number;
  /** Stops the loop; the tick in flight gets the same signal. */
  readonly signal: AbortSignal;
  /** Called with anything a tick throws. Must not throw. */
  readonly onError?: (err: unknown) => void;
}

/**
 * One iteration. A number it resolves to is the delay before the next tick; anything else
 * (undefined, or a tick's own outcome record) means the loop's period.
 */
export type Tick = (signal: AbortSignal) => Promise<unknown>;

/**
 * Runs tick forever on the options' clock until the signal aborts. The first tick begins at
 * once. The returned promise resolves when the loop has ended (it never rejects).
 */
export async function runLoop(tick: Tick, options: LoopOptions): Promise<void> {
  const { clock, heartbeat, signal } = options;
  const random = options.random ?? Math.random;
  try {
    while (!signal.aborted) {
      heartbeat.begin(clock.monotonicMs());
      let requested: number | undefined;
      try {
        const result = await tick(signal);
        requested = typeof result === 'number' ? result : undefined;
      } catch (err) {
        if (!signal.aborted) options.onError?.(err);
      } finally {
        heartbeat.end(clock.monotonicMs());
      }
      if (signal.aborted) break;
      const delay = requested ?? jittered(options.periodMs, options.jitter ?? 0, random);
      try {
        await clock.sleep(delay, signal);
      } catch {
        break; // aborted while sleeping
      }
    }
    heartbeat.markEnded('stopped');
  } catch (err) {
    // Only a defect can land here (the heartbeat or clock threw); record it as a dead loop.
    heartbeat.markEnded(`loop failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** period plus up to jitter × period, as wait.Jitter computes it. */
export function jittered(periodMs: number, jitter: number, random: () => number): number {
  return jitter > 0 ? periodMs + random() * jitter * periodMs : periodMs;
}
