// Every loop's liveness as the agent reads it: the heartbeats of its loops, judged together at
// the clock's now (liveness.ts), with each loop's change logged once ("Loop liveness changed")
// by this module, which owns the judgement.
//
// A loop that wedges cannot log its own staleness, so the liveness is logged where it is judged:
// every reading judges every loop and logs the ones whose state changed since the last reading
// logged them. Readers: the lease gate at every lease tick (the relister's row), /livez,
// /healthz, /status and the nodepulse_agent_alive gauge. A change is therefore logged at the first
// of those after it, at most one lease tick late. A loop seen Unknown (booting) is remembered but
// not logged: only a change to Alive (info), Stalled or Dead (warn) is.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { Heartbeat } from './heartbeat.ts';
import { liveness, type Liveness, type LivenessWindows } from './liveness.ts';

export interface LoopLivenessOptions<Name extends string> {
  /** The loops, in the order readers list them. */
  readonly names: readonly Name[];
  readonly clock: Clock;
  readonly windows: LivenessWindows;
  readonly logger: Logger;
}

export class LoopLiveness<Name extends string> {
  readonly #options: LoopLivenessOptions<Name>;
  readonly #beats: ReadonlyMap<Name, Heartbeat>;
  /** Each loop's state as last read, so each change is logged once. */
  readonly #logged = new Map<Name, string>();

  constructor(options: LoopLivenessOptions<Name>) {
    this.#options = options;
    this.#beats = new Map(options.names.map((name) => [name, new Heartbeat(name)]));
  }

  /** The heartbeat the named loop's scheduler beats. */
  heartbeat(name: Name): Heartbeat {
    const beat = this.#beats.get(name);
    if (beat === undefined) throw new RangeError(`loop: ${name} must be one of ${this.#options.names.join(', ')}`);
    return beat;
  }

  /** Every loop, judged now, in the order of `names`; logs each change. */
  all(): Liveness[] {
    const { clock, windows, logger } = this.#options;
    const nowMs = clock.monotonicMs();
    const out: Liveness[] = [];
    for (const [name, beat] of this.#beats) {
      const l = liveness(beat.snapshot(), nowMs, windows);
      if (this.#logged.get(name) !== l.state) {
        this.#logged.set(name, l.state);
        if (l.state !== 'Unknown') logger[l.state === 'Alive' ? 'info' : 'warn']({ loop: l.name, state: l.state, reason: l.reason }, 'Loop liveness changed');
      }
      out.push(l);
    }
    return out;
  }

  /** One loop, judged now (every loop is judged, so any change is logged). */
  of(name: Name): Liveness {
    const found = this.all().find((l) => l.name === name);
    if (found === undefined) throw new RangeError(`loop: ${name} must be one of ${this.#options.names.join(', ')}`);
    return found;
  }
}
