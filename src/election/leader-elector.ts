// Leader election on a coordination.k8s.io/v1 Lease, for the fleet controller's replicas, after
// client-go's tools/leaderelection. The rules (what to do next, when a holder has expired, when
// our belief ends) are pure functions in election-step.ts, with their table; this class does
// the I/O around them:
//
// | what             | how                                                                      |
// |------------------|--------------------------------------------------------------------------|
// | tick()           | asks the rules with what we remember; when told to, GETs the lease and   |
// |                  | asks again; then POSTs (create), PUTs with the resourceVersion we read,  |
// |                  | or waits                                                                 |
// | isLeader()       | the rules' belief on the caller's clock now; no timer needed             |
// | the belief timer | ends the term when the renew deadline passes, so leader tasks hear of it |
// | retries          | every retryPeriod plus up to 20 % jitter, through runLoop                |
// | stop() (clean)   | ends belief, then releases the lease: holder "", leaseDurationSeconds 1  |
// | abort() (crash)  | ends belief and writes nothing: the lease expires on its own             |
//
// Assumptions and failure modes:
// - Clocks may be skewed by any amount, but must run at about the same RATE: others wait
//   leaseDuration from when they saw our last write land, we stop believing renewDeadline after
//   we sent it, and renewDeadline < leaseDuration is the margin (client-go's doc.go).
// - A write whose answer is lost (timeout) may still have landed; belief is not extended by it,
//   so it can only make us stop early, never lead late.
// - The elector itself never writes anything but its Lease. Leader tasks get a Term (term.ts)
//   whose fence refuses their writes once belief has ended.
import type { Clock, Timer } from '../clock/clock.ts';
import { formatDuration } from '../clock/duration.ts';
import { shorter, type CrossFieldRule } from '../config/cross-field-rules.ts';
import type { Timed } from '../config/value-schemas.ts';
import { formatMicroTime } from '../kube/meta-time.ts';
import { Heartbeat } from '../liveness/heartbeat.ts';
import { runLoop } from '../loop/run-loop.ts';
import type { Logger } from '../log/logger.ts';
import { isNotFound } from '../kube/kube-api-error.ts';
import type { Lease } from '../kube/kube-types.ts';
import {
  afterWrite,
  beliefEndsAtMs,
  decideElectionStep,
  failedWrite,
  leadsAt,
  observeRecord,
  releasedSpec,
  type AfterWrite,
  type ElectionStep,
  type Readings,
  type Sighting,
} from './election-step.ts';
import { Term, type TermOwner } from './term.ts';

/** Upstream defaults (kube-controller-manager's --leader-elect-*). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;
export const ELECTION_LEASE_NAME = 'nodepulse-controller';
export const ELECTION_LABELS: Readonly<Record<string, string>> = {
  'app.kubernetes.io/name': 'nodepulse',
  'nodepulse.io/role': 'leader-election',
};
/** Up to this fraction of retryPeriod is added to every wait, so replicas do not march in step. */
export const RETRY_JITTER = 0.2;
/** The release write and the final requests of stop() get this long, at most. */
const RELEASE_TIMEOUT_MS = 5_000;

/** The four Lease calls an elector makes. KubeClient satisfies it through electionLeaseApi(). */
export interface ElectionLeaseApi {
  getLease(namespace: string, name: string, options: { signal?: AbortSignal | undefined; timeoutMs?: number }): Promise<Lease>;
  createLease(namespace: string, lease: Lease, options: { signal?: AbortSignal | undefined; timeoutMs?: number }): Promise<Lease>;
  /** PUT; must carry metadata.resourceVersion. */
  replaceLease(namespace: string, name: string, lease: Lease, options: { signal?: AbortSignal | undefined; timeoutMs?: number }): Promise<Lease>;
}

export interface ElectorOptions {
  readonly api: ElectionLeaseApi;
  readonly clock: Clock;
  readonly identity: string;
  readonly namespace: string;
  readonly name?: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
  readonly random?: () => number;
  readonly logger?: Logger;
  /** A leader task, started with each term; it must stop when term.signal aborts. */
  readonly onStartedLeading?: (term: Term) => void | Promise<void>;
  readonly onStoppedLeading?: (term: Term, reason: string) => void;
  /** Called when the observed holder changes (including to ourselves, or to nobody: ""). */
  readonly onNewLeader?: (identity: string) => void;
}

export class ElectionConfigError extends Error {
  readonly code = 'invalid_election_config';
}

/** The election's timings, as the controller's flags name them. */
export interface ElectionTimingFields {
  readonly leaderElectLeaseDuration: Timed;
  readonly leaderElectRenewDeadline: Timed;
  readonly leaderElectRetryPeriod: Timed;
}

/**
 * The rules between the election's timings, in one place: the controller's flags check them
 * (with its other cross-field rules), and the elector checks the same list on construction.
 */
export const ELECTION_TIMING_RULES: readonly CrossFieldRule<ElectionTimingFields>[] = [
  shorter('leaderElectRenewDeadline', 'leaderElectLeaseDuration'),
  { key: 'leaderElectRetryPeriod', holds: (f) => f.leaderElectRetryPeriod.ms > 0, rule: () => 'more than 0', shown: (f) => f.leaderElectRetryPeriod.text },
  {
    key: 'leaderElectRetryPeriod',
    holds: (f) => f.leaderElectRetryPeriod.ms * (1 + RETRY_JITTER) < f.leaderElectRenewDeadline.ms,
    rule: (f) => `shorter than leaderElectRenewDeadline (${f.leaderElectRenewDeadline.text}) with ${RETRY_JITTER * 100}% jitter added`,
    shown: (f) => f.leaderElectRetryPeriod.text,
  },
];

/**
 * The elector's own check of its timings: a lease duration of whole seconds (the flag's value
 * schema checks it for the controller), then ELECTION_TIMING_RULES; one `key: value must be rule`
 * line per problem.
 */
export function validateElectionTimings(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): string[] {
  const timed = (ms: number): Timed => ({ ms, text: formatDuration(ms) });
  const fields: ElectionTimingFields = {
    leaderElectLeaseDuration: timed(leaseDurationMs),
    leaderElectRenewDeadline: timed(renewDeadlineMs),
    leaderElectRetryPeriod: timed(retryPeriodMs),
  };
  const problems: string[] = [];
  if (!(leaseDurationMs > 0) || leaseDurationMs % 1000 !== 0) {
    problems.push(`leaderElectLeaseDuration: ${fields.leaderElectLeaseDuration.text} must be a positive whole number of seconds (leaseDurationSeconds is an integer)`);
  }
  for (const rule of ELECTION_TIMING_RULES) if (!rule.holds(fields)) problems.push(`${rule.key}: ${rule.shown(fields)} must be ${rule.rule(fields)}`);
  return problems;
}

type WriteStep = Exclude<ElectionStep, { action: 'read' } | { action: 'wait' }>;

interface Observed {
  /** The whole object, for its resourceVersion and metadata. */
  readonly lease: Lease;
  readonly sighting: Sighting;
}

export class LeaderElector implements TermOwner {
  readonly identity: string;
  readonly namespace: string;
  readonly name: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly heartbeat = new Heartbeat('leader-election');
  readonly #api: ElectionLeaseApi;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #options: ElectorOptions;
  #observed: Observed | undefined;
  /** When our last successful write was sent, while a term is believed (see election-step.ts). */
  #lastWriteOkMs: number | undefined;
  #term: Term | undefined;
  #termAbort: AbortController | undefined;
  #termCount = 0;
  #beliefTimer: Timer | undefined;
  #loopAbort: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #lastHolder: string | undefined;

  constructor(options: ElectorOptions) {
    this.#options = options;
    this.#api = options.api;
    this.#clock = options.clock;
    this.#random = options.random ?? Math.random;
    this.identity = options.identity;
    this.namespace = options.namespace;
    this.name = options.name ?? ELECTION_LEASE_NAME;
    this.leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    this.retryPeriodMs = options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS;
    const problems = validateElectionTimings(this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    if (problems.length > 0) throw new ElectionConfigError(problems.join('\n'));
    if (this.identity.length === 0) throw new ElectionConfigError('identity: "" must be non-empty');
  }

  /** Whether we believe we lead, on our clock NOW (not when the loop last ran). */
  isLeader(): boolean {
    return this.#term !== undefined && leadsAt(this.#lastWriteOkMs, this.#clock.monotonicMs(), this.renewDeadlineMs);
  }

  believes(n: number): boolean {
    return this.isLeader() && this.#term?.number === n;
  }

  /** The current term, while believed. */
  get term(): Term | undefined {
    return this.isLeader() ? this.#term : undefined;
  }

  /** The holder we last observed ("" for none, undefined before the first read). */
  get observedHolder(): string | undefined {
    return this.#observed?.lease.spec?.holderIdentity;
  }

  /** Starts the election loop. */
  start(): void {
    if (this.#loop !== undefined) return;
    const abort = new AbortController();
    this.#loopAbort = abort;
    this.#loop = runLoop((signal) => this.tick(signal), {
      clock: this.#clock,
      heartbeat: this.heartbeat,
      periodMs: this.retryPeriodMs,
      jitter: RETRY_JITTER,
      random: this.#random,
      signal: abort.signal,
      onError: (err) => this.#options.logger?.warn({ err }, 'Leader election attempt failed'),
    });
  }

  /** Clean stop: ends belief (aborting the leader tasks), then releases the lease if we held it. */
  async stop(): Promise<void> {
    const held = this.isLeader() ? this.#observed : undefined;
    await this.#halt('stopping');
    if (held === undefined) return;
    const released: Lease = { ...held.lease, spec: releasedSpec(held.lease.spec ?? {}, this.#stamp()) };
    try {
      await this.#api.replaceLease(this.namespace, this.name, released, { timeoutMs: RELEASE_TIMEOUT_MS });
      this.#options.logger?.info({ lease: `${this.namespace}/${this.name}` }, 'Released the leader lease');
    } catch (err) {
      // Someone else already moved it, or the API is away: it will expire on its own.
      this.#options.logger?.warn({ err }, 'Could not release the leader lease');
    }
  }

  /** Abrupt stop, as a crash: ends belief and leaves the lease to expire. */
  async abort(): Promise<void> {
    await this.#halt('aborted');
  }

  async #halt(reason: string): Promise<void> {
    this.#loopAbort?.abort(new Error(reason));
    this.#endBelief(reason);
    await this.#loop;
  }

  /**
   * One attempt to acquire or renew: asks election-step.ts what to do with what we remember,
   * reads the lease if told to and asks again, then does it. Returns the delay before the next.
   */
  async tick(signal: AbortSignal): Promise<number> {
    let step: ElectionStep = this.#ending(decideElectionStep({ via: 'memory', sighting: this.#observed?.sighting }, this.#readings(), this));
    if (step.action === 'read') {
      let current: Lease | undefined;
      try {
        current = await this.#api.getLease(this.namespace, this.name, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const sighting = current === undefined ? undefined : this.#observe(current, this.#clock.monotonicMs());
      step = this.#ending(decideElectionStep({ via: 'read', sighting }, this.#readings(), this));
    }
    if (step.action === 'wait') return Math.min(this.#retryDelay(), step.wakeWithinMs);
    return this.#write(step, signal);
  }

  #readings(): Readings {
    return { nowMs: this.#clock.monotonicMs(), lastWriteOkMs: this.#lastWriteOkMs, stamp: this.#stamp() };
  }

  /** Ends a belief the step says is over, before anything else is done. */
  #ending<S extends ElectionStep>(step: S): S {
    if (step.endsBelief !== undefined) this.#endBelief(step.endsBelief);
    return step;
  }

  async #write(step: WriteStep, signal: AbortSignal): Promise<number> {
    const current = this.#observed?.lease;
    const sentAtMs = this.#clock.monotonicMs();
    let written: Lease;
    try {
      if (step.action === 'create') {
        const lease: Lease = { metadata: { name: this.name, namespace: this.namespace, labels: { ...ELECTION_LABELS } }, spec: step.spec };
        written = await this.#api.createLease(this.namespace, lease, { signal });
      } else {
        // A renewal or take-over follows a sighting, and every sighting is kept with its object.
        if (current === undefined) throw new Error(`election step ${step.action} without a lease seen`);
        const metadata = { ...current.metadata, labels: { ...current.metadata.labels, ...ELECTION_LABELS } };
        written = await this.#api.replaceLease(this.namespace, this.name, { ...current, metadata, spec: step.spec }, { signal });
      }
    } catch (err) {
      const outcome = failedWrite(step.action, err);
      const after = afterWrite(outcome, sentAtMs, this.#lastWriteOkMs);
      if (after.endsBelief !== undefined) this.#endBelief(after.endsBelief);
      if (after.reread) this.#observed = undefined;
      this.#lastWriteOkMs = after.lastWriteOkMs;
      if (outcome === 'failed') throw err; // the loop logs it and retries after its jittered period
      return this.#nextDelay(after);
    }
    const after = afterWrite('ok', sentAtMs, this.#lastWriteOkMs);
    this.#succeeded(written, after);
    return this.#nextDelay(after);
  }

  #nextDelay(after: AfterWrite): number {
    return after.next === 'retry-period' ? this.retryPeriodMs : this.#retryDelay();
  }

  #succeeded(written: Lease, after: AfterWrite): void {
    this.#observe(written, this.#clock.monotonicMs());
    if (!this.isLeader()) this.#startTerm();
    this.#lastWriteOkMs = after.lastWriteOkMs;
    this.#beliefTimer?.cancel();
    const number = this.#term?.number;
    const endsAtMs = beliefEndsAtMs(this.#lastWriteOkMs, this.renewDeadlineMs);
    this.#beliefTimer = this.#clock.after(endsAtMs - this.#clock.monotonicMs(), () => {
      if (this.#term?.number === number && !this.isLeader()) this.#endBelief('renew deadline passed');
    });
  }

  #observe(lease: Lease, nowMs: number): Sighting {
    const sighting = observeRecord(this.#observed?.sighting, lease.spec ?? {}, nowMs);
    this.#observed = { lease, sighting };
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder !== this.#lastHolder) {
      this.#lastHolder = holder;
      this.#options.onNewLeader?.(holder);
    }
    return sighting;
  }

  #stamp(): string {
    return formatMicroTime(this.#clock.wallMicros());
  }

  #startTerm(): void {
    if (this.#term !== undefined) this.#endBelief('new term');
    this.#termCount++;
    const abort = new AbortController();
    const term = new Term(this, this.#termCount, abort.signal);
    this.#term = term;
    this.#termAbort = abort;
    this.#options.logger?.info({ identity: this.identity, term: term.number }, 'Started leading');
    const task = this.#options.onStartedLeading;
    if (task === undefined) return;
    // The task runs beside the loop; its failure ends nothing but itself, and is logged.
    queueMicrotask(() => {
      Promise.resolve()
        .then(() => task(term))
        .catch((err: unknown) => this.#options.logger?.error({ err, term: term.number }, 'Leader task failed'));
    });
  }

  #endBelief(reason: string): void {
    this.#lastWriteOkMs = undefined;
    this.#beliefTimer?.cancel();
    this.#beliefTimer = undefined;
    const term = this.#term;
    if (term === undefined) return;
    this.#term = undefined;
    this.#termAbort?.abort(new Error(`leadership ended: ${reason}`));
    this.#termAbort = undefined;
    this.#options.logger?.info({ identity: this.identity, term: term.number, reason }, 'Stopped leading');
    this.#options.onStoppedLeading?.(term, reason);
  }

  #retryDelay(): number {
    return this.retryPeriodMs * (1 + this.#random() * RETRY_JITTER);
  }
}
