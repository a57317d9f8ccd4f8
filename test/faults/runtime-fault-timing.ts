// The test-shortened agent timings both runtime fault suites run with (runtime-sim.test.ts,
// runtime-containerd.test.ts), the flags that set them, and the bounds derived from them.
/** The relist threshold: past it without a successful relist, the runtime is not Healthy. */
export const THRESHOLD_MS = 4_000;
export const DEADLINE_MS = 2_000;
export const PERIOD_MS = 1_000;
export const RENEW_INTERVAL_MS = 1_000;
/** docs/design.md: a withheld lease is looked at again every second. */
export const RECHECK_MS = 1_000;
/** Reconnecting: the runtime client's channel backs off at most a relist period between attempts (src/cri/runtime-channel.ts). */
export const RECONNECT_MS = 1_000;
/**
 * A real process on a loaded 2-core machine: one relist's own time, one loopback PATCH, and
 * timer lateness. Measured recoveries sit well under a second; this is the margin, not the bound.
 */
export const PROCESS_SLACK_MS = 1_000;
/** Issue 6: a runtime fault's first renewal comes within reconnect + period + RECHECK. */
export const RUNTIME_RECOVERY_BOUND_MS = RECONNECT_MS + PERIOD_MS + RECHECK_MS + PROCESS_SLACK_MS;
/** Hold an ageing fault past the threshold by this much, so the withheld state is seen for a while. */
export const HOLD_PAST_THRESHOLD_MS = 1_500;
/** The lease stops at the last success + threshold; the last success began at most a relist period (+ its run) before the fault. */
export const STOP_BOUND_MS = THRESHOLD_MS + PERIOD_MS + RENEW_INTERVAL_MS + PROCESS_SLACK_MS;
/**
 * The lease renews right up to the runtime's ageing out: its last renewTime is less than one
 * renew interval (+ 4 % jitter) and the process slack before lastSuccessBegan + threshold.
 */
export const STOP_EARLY_BOUND_MS = RENEW_INTERVAL_MS * 1.04 + PROCESS_SLACK_MS;

/** The agent flags that set the timings above. */
export const RUNTIME_FAULT_TIMINGS: readonly string[] = [
  `--relist-threshold=${THRESHOLD_MS / 1000}s`,
  `--relist-deadline=${DEADLINE_MS / 1000}s`,
  `--relist-period=${PERIOD_MS / 1000}s`,
  '--lease-duration=4s',
  `--renew-interval=${RENEW_INTERVAL_MS / 1000}s`,
  `--lease-recheck=${RECHECK_MS / 1000}s`,
  '--api-timeout=2s',
];
