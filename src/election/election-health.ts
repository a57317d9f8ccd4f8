// Whether the election loop is stepping, as the controller's /healthz says it: the loop's
// liveness (liveness/liveness.ts) with both windows at two retry periods. Pure.
//
// | the election loop's heartbeat                         | the check |
// |-------------------------------------------------------|-----------|
// | ended (stopped, or its task rejected)                 | failed    |
// | no step begun yet (the loop is starting)              | ok        |
// | a step in flight for ≤ two retry periods              | ok        |
// | a step in flight for > two retry periods              | failed    |
// | idle, the last step ended ≤ two retry periods ago     | ok        |
// | idle, the last step ended > two retry periods ago     | failed    |
//
// Why two retry periods: a healthy loop begins a step at most retryPeriod × (1 + RETRY_JITTER)
// after the last one ended, so a loop idle for longer has missed a step, and the check fails
// within one retry period of the step it missed. A step in flight that long is waiting on the API
// server (each request is bounded by the client's timeout): it is not stepping either, and a
// standby or a leader in that state would not notice the lease change hands.
import type { HealthCheck } from '../http/health-report.ts';
import type { HeartbeatSnapshot } from '../liveness/heartbeat.ts';
import { liveness } from '../liveness/liveness.ts';

/** How many retry periods the loop may go without a step before the check fails. */
export const STALL_RETRY_PERIODS = 2;

/** The `leader-election` check of the controller's /healthz (the table above). */
export function electionHealthCheck(beat: HeartbeatSnapshot, nowMs: number, retryPeriodMs: number, leading: boolean): HealthCheck {
  const window = STALL_RETRY_PERIODS * retryPeriodMs;
  const loop = liveness(beat, nowMs, { idleWindowMs: window, stuckWindowMs: window });
  const role = leading ? 'leading' : 'standby';
  if (loop.state === 'Alive' || loop.state === 'Unknown') return { name: 'leader-election', ok: true, reason: `${role}: ${loop.reason}` };
  return { name: 'leader-election', ok: false, reason: `${loop.state}: ${loop.reason}` };
}
