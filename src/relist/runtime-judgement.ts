// The runtime judgement as the agent reads it: the ledger's health() at the clock's now, with
// each change logged once ("Runtime judgement changed") by this module, which owns it.
//
// Who logs a change, and when. The judgement changes in two ways: a relist finishes (the ledger
// is written), or time passes (the last success ages past the threshold). A relister that hangs
// cannot log the second itself: it is stuck in the very call whose silence ages the judgement.
// So the judgement is logged where it is made: now() judges, compares with the last judgement
// it logged, and logs the change the first time any reader makes it. Every reader goes through
// now(): the agent after every relist outcome (so a relist's change is logged as it lands), the
// lease gate at every lease tick, the condition loop every relist period, /healthz, /readyz,
// /status and the runtime gauges when asked. A change by ageing is therefore logged at the first
// of those after it, at most one lease tick late (the renew interval while renewing).
//
// The line keeps its text and keys: `state`, `why` (when the state has one) and `message`; warn
// for Unhealthy and CannotObserve, info otherwise. Pure otherwise: now() never writes the
// ledger, and a reading that changes nothing logs nothing.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import type { RelistLedgerReader, RuntimeHealth } from './relist-ledger.ts';

export interface RuntimeJudgementOptions {
  readonly ledger: RelistLedgerReader;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class RuntimeJudgement {
  readonly #options: RuntimeJudgementOptions;
  /** `state` or `state/why` of the judgement last logged. */
  #logged: string | undefined;

  constructor(options: RuntimeJudgementOptions) {
    this.#options = options;
  }

  /** The ledger's judgement now; logs it when it differs from the last one logged. */
  now(): RuntimeHealth {
    const { ledger, clock, logger } = this.#options;
    const health = ledger.health(clock.monotonicMs());
    const why = 'why' in health ? health.why : undefined;
    const key = why === undefined ? health.state : `${health.state}/${why}`;
    if (key !== this.#logged) {
      this.#logged = key;
      const level = health.state === 'Unhealthy' || health.state === 'CannotObserve' ? 'warn' : 'info';
      logger[level]({ state: health.state, why, message: health.message }, 'Runtime judgement changed');
    }
    return health;
  }
}
