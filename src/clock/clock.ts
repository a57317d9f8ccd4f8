// The only source of time in nodepulse.
//
// Two readings, kept apart on purpose:
//   - monotonicMs(): milliseconds on a clock that never steps. Every judgement (relist age,
//     heartbeat windows, reader grace, backoff) is made on it, so a wall clock stepped by NTP or
//     by hand changes no verdict.
//   - wallMicros(): microseconds since the Unix epoch, only for what is written out for people or
//     for the API (renewTime, lastTransitionTime, /status). It carries an injectable offset so
//     that tests and the fault suite can step the wall clock without touching the machine's.
//
// Timers also live here (sleep, after), so that a manual clock can drive every loop in tests
// without real sleeps. Nothing outside clock/ may call Date.now(), setTimeout or performance.now().

/** A cancellable timer handle. */
export interface Timer {
  cancel(): void;
}

export interface TimerOptions {
  /**
   * Whether a pending timer keeps the process alive; default true. False is for samplers that
   * must not hold up the process's exit once everything else has stopped.
   */
  readonly keepsProcessAlive?: boolean;
}

export interface Clock {
  /** Milliseconds on a monotonic clock with an arbitrary origin. */
  monotonicMs(): number;
  /** Microseconds since the Unix epoch, wall clock plus the wall offset. */
  wallMicros(): number;
  /** Calls fn once, ms from now (monotonic). */
  after(ms: number, fn: () => void, options?: TimerOptions): Timer;
  /** Resolves after ms, or rejects with the signal's reason once it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Wall time in whole milliseconds since the epoch, for Date objects and logs. */
export function wallMs(clock: Clock): number {
  return Math.floor(clock.wallMicros() / 1000);
}

/** Shared implementation of sleep() on top of after(). */
export function sleepOn(clock: Pick<Clock, 'after'>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The machine's clocks. `wallOffsetMs` shifts the wall reading only (see the fault suite's
 * clock-step tests); the monotonic reading is never offset.
 */
export class SystemClock implements Clock {
  wallOffsetMs: number;

  constructor(options: { wallOffsetMs?: number } = {}) {
    this.wallOffsetMs = options.wallOffsetMs ?? 0;
  }

  monotonicMs(): number {
    return performance.now();
  }

  wallMicros(): number {
    // timeOrigin + now() gives sub-millisecond wall time; it follows the monotonic clock
    // from process start, so Date.now() is used for the whole milliseconds to follow steps.
    const sub = (performance.timeOrigin + performance.now()) % 1;
    return Math.floor((Date.now() + sub + this.wallOffsetMs) * 1000);
  }

  after(ms: number, fn: () => void, options: TimerOptions = {}): Timer {
    const handle = setTimeout(fn, Math.max(0, ms));
    if (options.keepsProcessAlive === false) handle.unref();
    return { cancel: () => clearTimeout(handle) };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }
}
