// A loop's heartbeat: when its current tick began, when its last tick ended, and whether the
// loop itself has ended. The scheduler begins and ends a beat around every tick; nothing else
// writes it. Readers take a snapshot and judge it with liveness() (liveness.ts).

export interface HeartbeatSnapshot {
  readonly name: string;
  /** Monotonic ms the tick now in flight began, or undefined when idle. */
  readonly inFlightSinceMs: number | undefined;
  /** Monotonic ms the last tick ended, or undefined before the first tick ends. */
  readonly lastEndedMs: number | undefined;
  /** Whether any tick has ever begun. */
  readonly begun: boolean;
  /** Set once the loop has stopped or its task rejected; the reason says which. */
  readonly ended: string | undefined;
}

export class Heartbeat {
  readonly name: string;
  #inFlightSinceMs: number | undefined;
  #lastEndedMs: number | undefined;
  #begun = false;
  #ended: string | undefined;

  constructor(name: string) {
    this.name = name;
  }

  begin(nowMs: number): void {
    this.#begun = true;
    this.#inFlightSinceMs = nowMs;
  }

  end(nowMs: number): void {
    this.#inFlightSinceMs = undefined;
    this.#lastEndedMs = nowMs;
  }

  /** The loop is over for good: stopped, or its task failed. */
  markEnded(reason: string): void {
    this.#ended ??= reason;
  }

  snapshot(): HeartbeatSnapshot {
    return {
      name: this.name,
      inFlightSinceMs: this.#inFlightSinceMs,
      lastEndedMs: this.#lastEndedMs,
      begun: this.#begun,
      ended: this.#ended,
    };
  }
}
