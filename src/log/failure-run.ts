// Logging a run of repeated failures: one line when the run starts, one line with the count
// when it ends. Between the two, nothing at warn: a runtime down for an hour is two lines, not
// 3,600. The same rule holds for every repeated failure in the agent.
import type { Logger } from 'pino';

export class FailureRun {
  readonly #logger: Logger;
  readonly #what: string;
  #count = 0;
  #first: string | undefined;

  /**
   * @param what a constant phrase naming the operation, e.g. "Relist" — lines read
   *   "Relist failing" and "Relist recovered".
   */
  constructor(logger: Logger, what: string) {
    this.#logger = logger;
    this.#what = what;
  }

  /** Records one failure; logs only the first of a run. */
  failed(err: unknown, details: Record<string, unknown> = {}): void {
    this.#count++;
    if (this.#count === 1) {
      this.#first = err instanceof Error ? err.message : String(err);
      this.#logger.warn({ ...details, err }, `${this.#what} failing`);
    } else {
      this.#logger.debug({ ...details, err, failures: this.#count }, `${this.#what} still failing`);
    }
  }

  /** Records a success; ends a run if one was going, with its count. */
  succeeded(details: Record<string, unknown> = {}): void {
    if (this.#count === 0) return;
    this.#logger.info({ ...details, failures: this.#count, firstError: this.#first }, `${this.#what} recovered`);
    this.#count = 0;
    this.#first = undefined;
  }

  /** Failures in the run now going (0 when none). */
  get count(): number {
    return this.#count;
  }
}
