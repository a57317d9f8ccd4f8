// The agent: every part of nodepulse's node-side loop, wired together.
//
//   relister loop ──► RelistLedger ──► health(now) ─┐
//   (every relistPeriod, sliding)                    ├─► NodeLease loop (renew iff relister Alive ∧ Healthy)
//   heartbeats of every loop ─► liveness(now) ──────┘
//   health(now) ─► Node condition, /readyz (503 while it says CannotObserve), the runtime gauges
//   Status poller loop ─► runtime conditions (metrics, /status, /healthz; never the lease)
//   HTTP: /livez /readyz /healthz /metrics /status
//
// Every loop runs on runLoop() with its own heartbeat; every judgement is made on the injected
// clock. start() starts the loops and listens; close() aborts the loops and the calls in flight,
// closes the runtime channel and the HTTP server, and never releases the Lease: a restarting
// agent must not make its node look briefly dead, nor a dead one briefly alive.
//
// This module decides no policy of its own beyond the wiring: the judgements live in relist/,
// liveness/ and lease/, and each change is logged by the module that owns it: the runtime
// judgement by relist/runtime-judgement.ts, each loop's liveness by liveness/loop-liveness.ts
// (both where they are judged, so a hung loop's ageing is logged by whoever reads it next; their
// headers say who that is), the CRI socket by the client that chooses it
// (cri/resolving-runtime-client.ts), a run of relist failures here, where the outcomes arrive.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock/clock.ts';
import { NodeCondition, type NodeConditionApi } from '../condition/node-condition.ts';
import type { AgentConfig } from '../config/agent-config-schema.ts';
import { formatHostPort } from '../config/host-port.ts';
import type { CriEndpointView } from '../cri/endpoint-probe.ts';
import type { RuntimeClient } from '../cri/types.ts';
import { createHttpServer } from '../http/http-server.ts';
import { healthzChecks, livezChecks, readyzChecks, type HealthCheck } from '../http/health-report.ts';
import { statusSnapshot, type StatusSnapshot } from '../http/status-snapshot.ts';
import type { LeaseApi } from '../lease/lease-writer.ts';
import { leaseRenewing } from '../lease/lease-renewing.ts';
import { NodeLease } from '../lease/node-lease.ts';
import type { Liveness } from '../liveness/liveness.ts';
import { LoopLiveness } from '../liveness/loop-liveness.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';
import { runLoop, type Tick } from '../loop/run-loop.ts';
import { createAgentMetrics, type AgentMetrics } from '../metrics/metrics.ts';
import { runtimeGaugeValues } from '../metrics/runtime-gauges.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { Relister, type RelistOutcome } from '../relist/relister.ts';
import { RuntimeJudgement } from '../relist/runtime-judgement.ts';
import { StatusPoller } from '../cri/status-poller.ts';
import { VERSION } from '../version.ts';
import { createRelistMetricsState, recordRelistOutcome } from './relist-metrics.ts';

export interface AgentOptions {
  readonly config: AgentConfig;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly runtime: RuntimeClient;
  readonly kube: LeaseApi & NodeConditionApi;
  readonly random?: () => number;
  /** Which socket `runtime` talks to and why; without it, /status shows runtime.endpoint as given. */
  readonly criEndpoint?: () => CriEndpointView;
}

/** The loops whose liveness /livez reports, in order (`condition` only with --node-condition). */
export const AGENT_LOOPS = ['relister', 'lease', 'status', 'condition'] as const;
type LoopName = (typeof AGENT_LOOPS)[number];

export class Agent {
  readonly relister: Relister;
  readonly lease: NodeLease;
  readonly statusPoller: StatusPoller;
  /** The Node condition writer, or undefined with --node-condition=false. */
  readonly condition: NodeCondition | undefined;
  readonly metrics: AgentMetrics;
  readonly #options: AgentOptions;
  readonly #liveness: LoopLiveness<LoopName>;
  readonly #judgement: RuntimeJudgement;
  readonly #controller = new AbortController();
  readonly #loops: Promise<void>[] = [];
  readonly #server: Server;
  #startedAtMs: number | undefined;
  #listening = false;
  readonly #relistMetrics = createRelistMetricsState();
  readonly #relistFailures: FailureRun;

  constructor(options: AgentOptions) {
    this.#options = options;
    const { config, clock, logger, registry, runtime } = options;
    this.#relistFailures = new FailureRun(logger.child({ loop: 'relister' }), 'Relist');
    this.#liveness = new LoopLiveness({
      names: AGENT_LOOPS.filter((name) => name !== 'condition' || config.nodeCondition),
      clock,
      windows: { idleWindowMs: config.idleWindowMs, stuckWindowMs: config.stuckWindowMs },
      logger,
    });
    this.metrics = createAgentMetrics(registry, {
      relistDeadlineMs: config.relistDeadlineMs,
      relistPeriodMs: config.relistPeriodMs,
      version: VERSION,
      clock,
    });
    this.relister = new Relister({
      client: runtime,
      clock,
      deadlineMs: config.relistDeadlineMs,
      thresholdMs: config.relistThresholdMs,
      onOutcome: (outcome) => this.#onRelist(outcome),
    });
    this.#judgement = new RuntimeJudgement({ ledger: this.relister.ledger, clock, logger });
    this.metrics.setAgentAliveProvider(() => livezChecks(this.loops(), this.#withinStartupGrace()).every((c) => c.ok));
    // Until start(), the agent has been up for no time at all: nothing is judged yet.
    this.metrics.setRuntimeGaugesProvider(() => runtimeGaugeValues(this.runtimeHealth().state, this.#sinceStartMs(), config.relistThresholdMs));
    this.metrics.setRelistInFlightProvider(() => {
      const since = this.relister.ledger.record().inFlightSince;
      return since === undefined ? 0 : (clock.monotonicMs() - since.monotonicMs) / 1000;
    });
    this.statusPoller = new StatusPoller({
      client: runtime,
      clock,
      deadlineMs: config.statusDeadlineMs,
      logger: logger.child({ loop: 'status' }),
      onReading: (reading) => this.metrics.setRuntimeConditions(reading.conditions),
    });
    this.lease = new NodeLease({
      client: options.kube,
      clock,
      nodeName: config.nodeName,
      namespace: config.leaseNamespace,
      leaseDurationSeconds: config.leaseDurationMs / 1000,
      renewIntervalMs: config.renewIntervalMs,
      recheckMs: config.leaseRecheckMs,
      ...(options.random === undefined ? {} : { random: options.random }),
      relisterLiveness: () => this.loopLiveness('relister'),
      runtimeHealth: () => this.runtimeHealth(),
      logger: logger.child({ loop: 'lease' }),
      hooks: {
        renewal: (result) => this.metrics.leaseRenewals.inc({ result }),
        conflict: () => this.metrics.leaseConflicts.inc(),
        renewed: (seconds) => this.metrics.leaseLastRenewTimestamp.set(seconds),
        renewing: (renewing) => this.metrics.leaseRenewing.set(renewing ? 1 : 0),
      },
    });
    this.condition = config.nodeCondition
      ? new NodeCondition({
          client: options.kube,
          clock,
          nodeName: config.nodeName,
          runtimeHealth: () => this.runtimeHealth(),
          thresholdMs: config.relistThresholdMs,
          periodMs: config.relistPeriodMs,
          refreshMs: config.conditionRefreshMs,
          logger: logger.child({ loop: 'condition' }),
        })
      : undefined;
    this.#server = createHttpServer({
      loops: () => this.loops(),
      withinStartupGrace: () => this.#withinStartupGrace(),
      ready: () => this.#ready(),
      checks: () => this.#checks(),
      status: () => this.status(),
      registry,
      onError: (err, path) => logger.error({ err, path }, 'HTTP handler failed'),
    });
  }

  /** Starts every loop and the HTTP server; resolves once listening. */
  async start(): Promise<AddressInfo> {
    const { config, clock, logger } = this.#options;
    this.#startedAtMs = clock.monotonicMs();
    const signal = this.#controller.signal;
    /** One loop on the shared scheduler, beating its own heartbeat. */
    const loop = (name: LoopName, tick: Tick, periodMs: number): Promise<void> =>
      runLoop(tick, {
        clock,
        heartbeat: this.#liveness.heartbeat(name),
        periodMs,
        signal,
        onError: (err) => logger.error({ err, loop: name }, 'Loop tick failed'),
      });
    this.#loops.push(
      loop('relister', (s) => this.relister.tick(s), config.relistPeriodMs),
      // NodeLease.tick() returns its own next delay (renew interval + jitter, RECHECK, or a
      // backoff step); the loop's period applies only if a tick ever threw.
      loop('lease', (s) => this.lease.tick(s), config.leaseRecheckMs),
      loop('status', (s) => this.statusPoller.tick(s), config.statusPeriodMs),
    );
    const condition = this.condition;
    if (condition !== undefined) this.#loops.push(loop('condition', (s) => condition.tick(s), config.relistPeriodMs));
    const address = await listen(this.#server, config.httpHost, config.httpPort);
    this.#listening = true;
    logger.info(
      { node: config.nodeName, criEndpoint: this.#options.runtime.endpoint, http: formatHostPort(address.address, address.port), version: VERSION },
      'Agent started',
    );
    return address;
  }

  /**
   * Stops the loops, aborts calls in flight, closes the runtime channel and the HTTP server.
   * The Lease is left as it is, to expire (see the module header).
   */
  async close(): Promise<void> {
    this.#controller.abort(new Error('agent stopping'));
    this.#options.runtime.close();
    await Promise.all(this.#loops);
    if (this.#listening) {
      this.#server.closeAllConnections();
      await new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#listening = false;
    }
    this.#options.logger.info({}, 'Agent stopped');
  }

  /** Which CRI socket the agent talks to, and why. */
  criEndpoint(): CriEndpointView {
    const given = this.#options.criEndpoint;
    if (given !== undefined) return given();
    const endpoint = this.#options.runtime.endpoint;
    return { endpoint, rule: 'configured', reason: 'given to the agent', held: false, nodeRuntime: null, probed: [] };
  }

  /** The runtime judgement now (logged on change by RuntimeJudgement). */
  runtimeHealth(): RuntimeHealth {
    return this.#judgement.now();
  }

  /** One loop's liveness now (every change logged by LoopLiveness). */
  loopLiveness(name: LoopName): Liveness {
    return this.#liveness.of(name);
  }

  /** Every loop's liveness now, in AGENT_LOOPS order. */
  loops(): Liveness[] {
    return this.#liveness.all();
  }

  /** What /status answers (assembled by http/status-snapshot.ts). */
  status(): StatusSnapshot {
    return statusSnapshot({
      node: this.#options.config.nodeName,
      criEndpoint: this.criEndpoint(),
      runtime: this.runtimeHealth(),
      runtimeConditions: this.statusPoller.reading().conditions,
      loops: this.loops(),
      lease: this.lease.snapshot(),
      counts: this.relister.counts(),
      recentEvents: this.relister.recentEvents(),
    });
  }

  #withinStartupGrace(): boolean {
    const started = this.#startedAtMs;
    return started !== undefined && this.#options.clock.monotonicMs() - started <= this.#options.config.startupGraceMs;
  }

  /** How long the agent has been up (0 before start()). */
  #sinceStartMs(): number {
    const started = this.#startedAtMs;
    return started === undefined ? 0 : this.#options.clock.monotonicMs() - started;
  }

  /** The /readyz checks: started and serving, and a runtime it can observe (http/health-report.ts). */
  #ready(): HealthCheck[] {
    const started =
      this.#startedAtMs === undefined
        ? { ready: false, reason: 'loops not started' }
        : !this.#listening
          ? { ready: false, reason: 'HTTP not listening yet' }
          : { ready: true, reason: 'config loaded, loops started, HTTP serving' };
    const health = this.runtimeHealth();
    return readyzChecks(started, { state: health.state, message: health.message });
  }

  #checks(): HealthCheck[] {
    const health = this.runtimeHealth();
    return healthzChecks({
      loops: this.loops(),
      withinStartupGrace: this.#withinStartupGrace(),
      runtime: { state: health.state, message: health.message },
      lease: leaseRenewing(this.lease.snapshot(), this.lease.gate()),
    });
  }

  #onRelist(outcome: RelistOutcome): void {
    recordRelistOutcome(this.metrics, this.#relistMetrics, outcome);
    if (outcome.fault === undefined) this.#relistFailures.succeeded();
    else this.#relistFailures.failed(new Error(`${outcome.fault.code}: ${outcome.fault.message}`), { reason: outcome.fault.code });
    // Judged again as the outcome lands, so a change a relist made is logged with it.
    this.#judgement.now();
  }
}

function listen(server: Server, host: string | undefined, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
