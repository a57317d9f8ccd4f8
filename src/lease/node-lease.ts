// NodeLease: the node's Lease, renewed only while the relister loop is alive and the runtime
// is healthy. It replaces kubelet's "renew while the process runs" with "renew while the node
// makes progress": a Lease that stops moving when the runtime stops answering.
//
// tick(signal) is one pass, and returns the delay before the next; the shared scheduler
// (loop/run-loop.ts) does all the waiting, so the lease loop's own heartbeat stays honest even
// while it backs off.
//
// | the gate (lease-gate.ts) | the write                     | next tick in                              |
// |--------------------------|-------------------------------|-------------------------------------------|
// | withhold                 | none                          | RECHECK (1 s)                             |
// | renew                    | succeeded                     | renew interval + 0–4 % jitter             |
// | renew                    | failed                        | backoff 200 ms → 7 s, or a longer         |
// |                          |                               | Retry-After (429, 503); at most the renew |
// |                          |                               | interval (backoff.ts)                     |
// | renew, then withhold     | stopped before the next write | RECHECK                                   |
//
// - One write attempt per tick, under a gate watch (gate-watch.ts), the one route by which a
//   closed gate reaches the write: the writer asks it before every request (lease-writer.ts),
//   so a tick whose gate is closed sends nothing, and while a request is in flight it is looked
//   at every GATE_WATCH_MS and the request cancelled when it closes. Either way the attempt
//   rejects, the watch names the verdict, and the tick counts as withheld. A retry is simply
//   the next tick, under a fresh watch.
// - A 401 makes the client re-read its token file before it throws; the next attempt (200 ms
//   later) carries the new token. A 403 is logged once, naming what was denied, and the loop
//   goes on retrying at the capped backoff: RBAC fixed later heals the node with no restart.
// - Logs, once per change of state: "Lease renewing" (the first renewal, and the first after a
//   withhold), "Lease renewal withheld" (with the gate's reason, again only when the reason
//   changes), "Lease created", "Lease owner reference set". A run of failed writes is one
//   warn line when it starts and one info line with the count when a write succeeds again.
//   Nothing is logged per tick at info.
// - Never touches kube-node-lease/<node>: the kubelet owns that Lease. The constructor refuses
//   that namespace.
import type { Clock } from '../clock/clock.ts';
import { isAborted, isConflict, isForbidden, KubeApiError } from '../kube/kube-api-error.ts';
import type { Liveness } from '../liveness/liveness.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';
import { jittered } from '../loop/run-loop.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { retryDelayMs } from './backoff.ts';
import { watchGate } from './gate-watch.ts';
import { leaseGate, type GateVerdict, type WithholdReason } from './lease-gate.ts';
import { LeaseWriter, type LeaseApi, type WriteOutcome } from './lease-writer.ts';

/** The kubelet's own node leases live here; nodepulse must never write one of them. */
export const KUBELET_LEASE_NAMESPACE = 'kube-node-lease';
/** Upstream leaseDurationSeconds for node leases. */
export const DEFAULT_LEASE_DURATION_SECONDS = 40;
/** Upstream renews every lease duration × 0.25. */
export const RENEW_FRACTION = 0.25;
/** Upstream jitters the renew interval by up to 4 % (wait.JitterUntil with 0.04). */
export const RENEW_JITTER = 0.04;
/** How soon a withheld lease is looked at again: a node is renewed within a second of recovering. */
export const RECHECK_MS = 1_000;
/** While a write is in flight, the gate is looked at this often, and the write cancelled once it closes (gate-watch.ts). */
export const GATE_WATCH_MS = 100;

export type RenewalResult = 'success' | 'error' | 'withheld';

/** Hooks for the metrics module. Each must not throw. */
export interface NodeLeaseHooks {
  /** Once per tick: nodepulse_lease_renewals_total{result}. */
  readonly renewal?: (result: RenewalResult) => void;
  /** A 409 met by a write (Conflict, or AlreadyExists on create): nodepulse_lease_conflicts_total. */
  readonly conflict?: () => void;
  /** After each successful write, with the renewTime in wall seconds: nodepulse_lease_last_renew_timestamp_seconds. */
  readonly renewed?: (renewTimeSeconds: number) => void;
  /** On each change between renewing and not: nodepulse_lease_renewing 1/0. */
  readonly renewing?: (renewing: boolean) => void;
}

export interface NodeLeaseOptions {
  readonly client: LeaseApi;
  readonly clock: Clock;
  readonly nodeName: string;
  /** The Lease's namespace (the agent pod's, default `nodepulse`); never kube-node-lease. */
  readonly namespace: string;
  /** Whole seconds. Default 40. */
  readonly leaseDurationSeconds?: number;
  /** Default leaseDurationSeconds × 0.25 (10 s). */
  readonly renewIntervalMs?: number;
  /** Default 1 s. */
  readonly recheckMs?: number;
  /** Random source in [0, 1) for the jitter. Default Math.random. */
  readonly random?: () => number;
  /** The relister loop's liveness row, judged now. */
  readonly relisterLiveness: () => Liveness;
  /** The relist ledger's judgement, now. */
  readonly runtimeHealth: () => RuntimeHealth;
  readonly logger: Logger;
  readonly hooks?: NodeLeaseHooks;
}

/** What /status shows of the lease. */
export interface NodeLeaseSnapshot {
  readonly namespace: string;
  readonly name: string;
  /** The last tick renewed the Lease. */
  readonly renewing: boolean;
  /** The last renewTime written successfully (MicroTime), or undefined. */
  readonly lastRenewTime: string | undefined;
  /** The last write's error message, cleared by a successful write. */
  readonly lastError: string | undefined;
}

export class NodeLeaseConfigError extends Error {
  readonly code = 'lease_config_invalid';

  constructor(message: string) {
    super(message);
    this.name = 'NodeLeaseConfigError';
  }
}

export class NodeLease {
  readonly namespace: string;
  readonly name: string;
  readonly leaseDurationSeconds: number;
  readonly renewIntervalMs: number;
  readonly recheckMs: number;
  readonly #options: NodeLeaseOptions;
  readonly #writer: LeaseWriter;
  readonly #failures: FailureRun;
  readonly #random: () => number;
  #renewing = false;
  #lastRenewTime: string | undefined;
  #lastError: string | undefined;
  /** The withhold reason last logged, so a steady withhold is logged once. */
  #withheldLogged: WithholdReason | undefined;
  /** "Lease renewing" has been logged since start or since the last withhold. */
  #renewingLogged = false;
  #forbiddenLoggedInRun = false;

  constructor(options: NodeLeaseOptions) {
    const leaseDurationSeconds = options.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_SECONDS;
    const renewIntervalMs = options.renewIntervalMs ?? leaseDurationSeconds * 1000 * RENEW_FRACTION;
    const recheckMs = options.recheckMs ?? RECHECK_MS;
    if (options.namespace === KUBELET_LEASE_NAMESPACE) {
      throw new NodeLeaseConfigError(`leaseNamespace: ${KUBELET_LEASE_NAMESPACE} must not be used (the kubelet owns the leases there)`);
    }
    if (options.namespace === '') throw new NodeLeaseConfigError('leaseNamespace: "" must be a namespace name');
    if (options.nodeName === '') throw new NodeLeaseConfigError('nodeName: "" must be a node name');
    if (!Number.isInteger(leaseDurationSeconds) || leaseDurationSeconds < 1) {
      throw new NodeLeaseConfigError(`leaseDuration: ${leaseDurationSeconds}s must be a whole number of seconds ≥ 1`);
    }
    if (!(renewIntervalMs > 0) || renewIntervalMs >= leaseDurationSeconds * 1000) {
      throw new NodeLeaseConfigError(`renewInterval: ${renewIntervalMs}ms must be more than 0 and shorter than leaseDuration (${leaseDurationSeconds}s)`);
    }
    if (!(recheckMs > 0)) throw new NodeLeaseConfigError(`leaseRecheck: ${recheckMs}ms must be more than 0`);
    this.namespace = options.namespace;
    this.name = options.nodeName;
    this.leaseDurationSeconds = leaseDurationSeconds;
    this.renewIntervalMs = renewIntervalMs;
    this.recheckMs = recheckMs;
    this.#options = options;
    this.#random = options.random ?? Math.random;
    this.#writer = new LeaseWriter({
      client: options.client,
      clock: options.clock,
      namespace: options.namespace,
      nodeName: options.nodeName,
      leaseDurationSeconds,
    });
    this.#failures = new FailureRun(options.logger, 'Lease renewal');
  }

  /** The gate, judged now from the two injected readings. */
  gate(): GateVerdict {
    return leaseGate(this.#options.relisterLiveness(), this.#options.runtimeHealth());
  }

  /** One pass: gate, at most one write attempt, and the delay before the next pass. Never throws. */
  async tick(signal: AbortSignal): Promise<number> {
    if (signal.aborted) return this.recheckMs;
    let outcome: WriteOutcome;
    const watch = watchGate(this.#options.clock, () => this.gate(), GATE_WATCH_MS, signal);
    try {
      outcome = await this.#writer.renew(watch);
    } catch (err) {
      const closed = watch.closed();
      if (closed !== undefined) return this.#withheld(closed); // the gate is closed, or closed under the write: not a failure of the API
      if (signal.aborted || isAborted(err)) return this.recheckMs; // stopping: not a failure of the API
      return this.#failed(err);
    } finally {
      watch.stop();
    }
    return this.#renewed(outcome);
  }

  snapshot(): NodeLeaseSnapshot {
    return {
      namespace: this.namespace,
      name: this.name,
      renewing: this.#renewing,
      lastRenewTime: this.#lastRenewTime,
      lastError: this.#lastError,
    };
  }

  #withheld(verdict: Extract<GateVerdict, { action: 'withhold' }>): number {
    if (this.#withheldLogged !== verdict.reason) {
      this.#options.logger.info(
        { namespace: this.namespace, name: this.name, reason: verdict.reason, detail: verdict.message },
        'Lease renewal withheld',
      );
      this.#withheldLogged = verdict.reason;
    }
    this.#renewingLogged = false;
    this.#setRenewing(false);
    this.#options.hooks?.renewal?.('withheld');
    return this.recheckMs;
  }

  #renewed(outcome: WriteOutcome): number {
    const { logger, hooks } = this.#options;
    const base = { namespace: this.namespace, name: this.name };
    if (outcome.alreadyExists) hooks?.conflict?.();
    this.#failures.succeeded(base);
    this.#forbiddenLoggedInRun = false;
    if (outcome.created) logger.info({ ...base, ownerReference: outcome.ownerReferenceWritten }, 'Lease created');
    else if (outcome.ownerReferenceWritten) logger.info(base, 'Lease owner reference set');
    // Once when the gate opens; the end of a failure run is the failure run's own line.
    if (!this.#renewingLogged) logger.info({ ...base, renewTime: outcome.renewTime }, 'Lease renewing');
    this.#renewingLogged = true;
    this.#withheldLogged = undefined;
    this.#lastRenewTime = outcome.renewTime;
    this.#lastError = undefined;
    this.#setRenewing(true);
    hooks?.renewal?.('success');
    hooks?.renewed?.(outcome.renewMicros / 1e6);
    return jittered(this.renewIntervalMs, RENEW_JITTER, this.#random);
  }

  #failed(err: unknown): number {
    const { logger, hooks } = this.#options;
    this.#lastError = err instanceof Error ? err.message : String(err);
    if (isConflict(err)) hooks?.conflict?.();
    const details: Record<string, unknown> = { namespace: this.namespace, name: this.name };
    if (err instanceof KubeApiError) {
      details['code'] = err.code;
      details['status'] = err.status;
    }
    if (isForbidden(err) && err instanceof KubeApiError && !this.#forbiddenLoggedInRun) {
      // What was denied, once per run of failures: the request, and the server's own words
      // (they name the user, the verb and the resource).
      this.#forbiddenLoggedInRun = true;
      const denied = { ...details, denied: err.what, err };
      if (this.#failures.count > 0) logger.warn(denied, 'Lease write forbidden');
      else details['denied'] = err.what;
    }
    this.#failures.failed(err, details);
    this.#setRenewing(false);
    hooks?.renewal?.('error');
    const retryAfter = err instanceof KubeApiError ? err.retryAfterMs : undefined;
    return retryDelayMs(this.#failures.count, retryAfter, this.renewIntervalMs);
  }

  #setRenewing(renewing: boolean): void {
    if (this.#renewing === renewing) return;
    this.#renewing = renewing;
    this.#options.hooks?.renewing?.(renewing);
  }
}
