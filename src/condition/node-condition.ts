// NodeCondition: the loop that publishes the agent's verdict (desired-condition.ts) on its Node
// as the RuntimeRelistUnhealthy condition. Each pass asks decideConditionStep()
// (condition-step.ts, whose table is docs/design.md's "How the condition is written") what to
// do, with what the loop remembers; when told to read, it reads and asks again with what the
// read found. The ConditionWriter (condition-writer.ts) does every request.
//
// - What the loop remembers: whether it read the Node since start, when it last refreshed, and
//   the condition's state as last read or written. A state counts as written only once its
//   PATCH succeeded, so a lost write is written again.
// - One pass makes at most one read and one write (plus the Event of a change).
// - A failed read or write is retried by a later pass after a backoff (200 ms → 7 s, LEASE_RETRY
//   in lease/backoff.ts); the run of failures is logged once when it starts and once when it
//   ends. A pass stopped by its signal is no failure.
//
// tick() never throws; it returns the delay before the next pass: the agent's relist period
// (the verdict can change no faster than a relist), or the backoff after a failure.
import type { Clock } from '../clock/clock.ts';
import { isAborted } from '../kube/kube-api-error.ts';
import { backoffMs } from '../lease/backoff.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { decideConditionStep } from './condition-step.ts';
import { ConditionWriter, type NodeConditionApi } from './condition-writer.ts';
import { desiredCondition, type ConditionState } from './desired-condition.ts';

export type { NodeConditionApi } from './condition-writer.ts';

/** lastHeartbeatTime refresh and repair period. */
export const DEFAULT_REFRESH_MS = 5 * 60_000;

export interface NodeConditionOptions {
  readonly client: NodeConditionApi;
  readonly clock: Clock;
  readonly nodeName: string;
  /** The relist ledger's judgement, now. */
  readonly runtimeHealth: () => RuntimeHealth;
  /** The ledger's threshold (the same one: there is no second). */
  readonly thresholdMs: number;
  /** How soon a pass with nothing to do looks again: the agent's relist period. */
  readonly periodMs: number;
  /** When the agent started, monotonic ms. Default: when this object was made. */
  readonly startedAtMs?: number;
  /** Default 5 min. */
  readonly refreshMs?: number;
  /** Default `nodepulse-agent-<node>`. */
  readonly reportingInstance?: string;
  readonly logger: Logger;
}

export class NodeCondition {
  readonly #options: NodeConditionOptions;
  readonly #startedAtMs: number;
  readonly #refreshMs: number;
  readonly #writer: ConditionWriter;
  readonly #failures: FailureRun;
  /** The condition's state on the Node, as last read or written (undefined: it had none). */
  #known: ConditionState | undefined;
  #read = false;
  #lastRefreshMs = 0;

  constructor(options: NodeConditionOptions) {
    if (options.nodeName === '') throw new RangeError('nodeName: "" must be a node name');
    if (!(options.periodMs > 0)) throw new RangeError(`periodMs: ${options.periodMs} must be more than 0`);
    this.#options = options;
    this.#startedAtMs = options.startedAtMs ?? options.clock.monotonicMs();
    this.#refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
    this.#writer = new ConditionWriter({
      client: options.client,
      clock: options.clock,
      nodeName: options.nodeName,
      logger: options.logger,
      ...(options.reportingInstance === undefined ? {} : { reportingInstance: options.reportingInstance }),
    });
    this.#failures = new FailureRun(options.logger, 'Node condition write');
  }

  /** One pass; returns the delay before the next. Never throws. */
  async tick(signal: AbortSignal): Promise<number> {
    const { clock, runtimeHealth, thresholdMs, periodMs, nodeName } = this.#options;
    if (signal.aborted) return periodMs;
    const now = clock.monotonicMs();
    const desired = desiredCondition(runtimeHealth(), now - this.#startedAtMs, thresholdMs);
    if (desired === undefined) return periodMs;
    try {
      let step = decideConditionStep(desired, { via: 'memory', read: this.#read, lastRefreshMs: this.#lastRefreshMs, known: this.#known }, now, this.#refreshMs);
      const refresh = step === 'read';
      if (step === 'read') {
        const onNode = await this.#writer.read(signal);
        const atStart = !this.#read;
        this.#read = true;
        this.#known = onNode;
        step = decideConditionStep(desired, { via: 'read', atStart, onNode }, now, this.#refreshMs);
      }
      if (step === 'heartbeat') await this.#writer.heartbeat(desired, signal);
      if (step === 'change' || step === 'repair') {
        await this.#writer.write(desired, this.#known, step, signal);
        this.#known = { status: desired.status, reason: desired.reason };
      }
      // Refreshed once what the read asked for is done, or a change is written.
      if (refresh || step === 'change') this.#lastRefreshMs = now;
      this.#failures.succeeded({ node: nodeName });
      return periodMs;
    } catch (err) {
      if (signal.aborted || isAborted(err)) return periodMs;
      this.#failures.failed(err, { node: nodeName });
      return backoffMs(this.#failures.count);
    }
  }
}
