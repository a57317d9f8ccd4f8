// Polls the runtime's own Status (RuntimeReady, NetworkReady) every 5 s with a 10 s deadline,
// as kubelet does. What it learns feeds the condition metrics, /status and /healthz; it never
// gates the lease, which stays the relist ledger's one judgement.
//
// Each change of a condition is logged once; a run of failed polls is logged as a run.
import type { Clock } from '../clock/clock.ts';
import { toFault, type CriFault } from './cri-error.ts';
import type { RuntimeClient, RuntimeCondition } from './types.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';

export interface StatusReading {
  /** The conditions from the last Status that answered; empty before one. */
  readonly conditions: readonly RuntimeCondition[];
  /** Wall µs of the last answer, or undefined. */
  readonly lastAnsweredWallMicros: number | undefined;
  /** The last poll's fault, cleared by an answer. */
  readonly lastFault: CriFault | undefined;
}

export interface StatusPollerOptions {
  readonly client: RuntimeClient;
  readonly clock: Clock;
  readonly deadlineMs: number;
  readonly logger: Logger;
  /** Called after every poll with the reading, for metrics. Must not throw. */
  readonly onReading?: (reading: StatusReading) => void;
}

export class StatusPoller {
  readonly #options: StatusPollerOptions;
  readonly #failures: FailureRun;
  #reading: StatusReading = { conditions: [], lastAnsweredWallMicros: undefined, lastFault: undefined };

  constructor(options: StatusPollerOptions) {
    this.#options = options;
    this.#failures = new FailureRun(options.logger, 'Runtime status poll');
  }

  async tick(signal: AbortSignal): Promise<void> {
    const { client, clock, deadlineMs, logger } = this.#options;
    try {
      const status = await client.status({ deadlineMs, signal });
      this.#failures.succeeded();
      for (const condition of status.conditions) {
        const before = this.#reading.conditions.find((c) => c.type === condition.type);
        if (before?.status !== condition.status || before.reason !== condition.reason) {
          logger.info(
            { type: condition.type, status: condition.status, reason: condition.reason, message: condition.message },
            'Runtime condition changed',
          );
        }
      }
      this.#reading = { conditions: status.conditions, lastAnsweredWallMicros: clock.wallMicros(), lastFault: undefined };
    } catch (err) {
      if (signal.aborted) return;
      this.#failures.failed(err);
      this.#reading = { ...this.#reading, lastFault: toFault(err) };
    }
    this.#options.onReading?.(this.#reading);
  }

  reading(): StatusReading {
    return this.#reading;
  }
}
