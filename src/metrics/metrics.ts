// Every metric the agent exports, defined in one place on a Registry that main() creates and
// injects (never prom-client's global one, so tests and two agents in one process never collide).
//
// Names follow Prometheus' conventions: base units (`_seconds`, `_bytes`), `_total` only on
// counters, `_timestamp_seconds` for wall-clock moments. Every label is bounded: results and
// reasons are fixed sets, pod and container states are the CRI's few states, runtime condition
// types are what the runtime reports (capped at MAX_RUNTIME_CONDITION_TYPES). No id is ever a
// label.
//
// | metric                                             | type      | what it says                                 |
// |----------------------------------------------------|-----------|----------------------------------------------|
// | nodepulse_relist_duration_seconds{result}           | histogram | how long each relist took, by outcome        |
// | nodepulse_relist_interval_seconds                   | histogram | start-to-start time between relists          |
// | nodepulse_relist_last_success_timestamp_seconds     | gauge     | wall time the last successful relist BEGAN   |
// | nodepulse_relist_in_flight_seconds                  | gauge     | age of the relist now in flight (0 if none)  |
// | nodepulse_relist_failures_total{reason}             | counter   | failed relists by CRI fault code             |
// | nodepulse_runtime_healthy                           | gauge     | 1 Healthy, 0 a runtime fault past the        |
// |                                                     |           | threshold; no sample otherwise (see below)   |
// | nodepulse_runtime_observable                        | gauge     | 0 while the agent cannot observe the runtime,|
// |                                                     |           | 1 once it reached it; no sample before       |
// | nodepulse_runtime_condition{type}                   | gauge     | the runtime's own Status conditions (1=true) |
// | nodepulse_pods{state} / nodepulse_containers{state} | gauge     | what the last successful relist saw          |
// | nodepulse_lifecycle_events_total{type}              | counter   | container lifecycle events from the diff     |
// | nodepulse_lifecycle_events_dropped_total            | counter   | events dropped by the bounded event buffer   |
// | nodepulse_agent_alive                               | gauge     | 1 while /livez passes (every loop), at scrape|
// | nodepulse_lease_renewing                            | gauge     | 1 while the lease is being renewed           |
// | nodepulse_lease_renewals_total{result}              | counter   | renewal attempts: success, error, withheld   |
// | nodepulse_lease_conflicts_total                     | counter   | renewals answered with 409 Conflict          |
// | nodepulse_lease_last_renew_timestamp_seconds        | gauge     | renewTime of the last successful renewal     |
// | nodepulse_build_info{version}                       | gauge     | always 1; the version is the label           |
//
// Plus prom-client's default process and Node.js metrics (CPU, memory, fds, heap, GC) on the same
// registry, with the event-loop lag measured by event-loop-lag.ts in place of prom-client's.
// prom-client's nodejs_active_{handles,requests,resources}_total are gauges whose names break the
// rule that `_total` means a counter (promtool flags them), and each is the sum of its per-type
// sibling (nodejs_active_handles{type} …), so they are removed.
//
// The two runtime verdict gauges are read at scrape time from the ledger's judgement
// (runtime-gauges.ts has their table), and each has no sample at all while it has no value:
// prom-client always gives an unlabelled gauge a sample (0 until set), so they are ReadGauges,
// a Gauge whose get() (what the Registry reads for both exposition formats) returns the value
// read, or no value. An absent sample is what keeps NodePulseRuntimeUnhealthy (`== 0`) silent
// for an agent that cannot observe or has not judged yet.
//
// The relist histogram's buckets reach the relist deadline, plus one overrun bucket just past it:
// a relist ended by its deadline measures a hair over the deadline (timer latency), and a hung
// relist must land in a real bucket, never only in +Inf (docs/design.md "Defaults").
import type { MetricObjectWithValues, MetricValue, Registry } from 'prom-client';
import { Counter, Gauge, Histogram } from './prom-client.ts';
import type { Clock } from '../clock/clock.ts';
import { CRI_FAULT_CODES, type CriFaultCode } from '../cri/cri-error.ts';
import { LIFECYCLE_EVENT_TYPES, type LifecycleEventType } from '../relist/lifecycle-diff.ts';
import { collectProcessMetrics } from './event-loop-lag.ts';
import type { RuntimeGaugeValues } from './runtime-gauges.ts';

export const AGENT_METRIC_NAMES = [
  'nodepulse_relist_duration_seconds',
  'nodepulse_relist_interval_seconds',
  'nodepulse_relist_last_success_timestamp_seconds',
  'nodepulse_relist_in_flight_seconds',
  'nodepulse_relist_failures_total',
  'nodepulse_runtime_healthy',
  'nodepulse_runtime_observable',
  'nodepulse_runtime_condition',
  'nodepulse_pods',
  'nodepulse_containers',
  'nodepulse_lifecycle_events_total',
  'nodepulse_lifecycle_events_dropped_total',
  'nodepulse_agent_alive',
  'nodepulse_lease_renewing',
  'nodepulse_lease_renewals_total',
  'nodepulse_lease_conflicts_total',
  'nodepulse_lease_last_renew_timestamp_seconds',
  'nodepulse_build_info',
] as const;

/** prom-client default metrics removed because they are gauges named `_total`. */
export const DROPPED_DEFAULT_METRICS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

export type RelistResult = 'success' | CriFaultCode;
export type LeaseRenewalResult = 'success' | 'error' | 'withheld';
export const LEASE_RENEWAL_RESULTS: readonly LeaseRenewalResult[] = ['success', 'error', 'withheld'];
/** The CRI's sandbox and container states, pre-set to 0 so that dashboards see every series. */
export const POD_STATES = ['SANDBOX_READY', 'SANDBOX_NOTREADY'] as const;
export const CONTAINER_STATES = ['CONTAINER_CREATED', 'CONTAINER_RUNNING', 'CONTAINER_EXITED', 'CONTAINER_UNKNOWN'] as const;
/** More condition types than this from one runtime are ignored: a label set must stay bounded. */
export const MAX_RUNTIME_CONDITION_TYPES = 16;

/** Standard latency buckets (seconds); those below the deadline are kept. */
const BASE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The overrun bucket sits this far past the deadline (as a fraction of it). */
const OVERRUN_FRACTION = 0.1;

export type AgentMetricsOptions = {
  /** The relist deadline; the duration buckets reach it. */
  readonly relistDeadlineMs: number;
  /** The relist period; interval buckets are period + duration buckets. Default 1 s. */
  readonly relistPeriodMs?: number;
  /** The agent's version, for nodepulse_build_info. */
  readonly version: string;
} & (
  /** prom-client's process and Node.js metrics too (the default), the event-loop lag sampled on `clock`. */
  | { readonly defaultMetrics?: true; readonly clock: Clock }
  /** The agent's own metrics only. */
  | { readonly defaultMetrics: false }
);

/** Typed handles: label values are the bounded sets above, enforced by the types. */
export interface AgentMetrics {
  readonly relistDuration: { observe(labels: { result: RelistResult }, seconds: number): void };
  readonly relistInterval: { observe(seconds: number): void };
  /** Wall-clock seconds since the epoch. */
  readonly relistLastSuccessTimestamp: { set(seconds: number): void };
  readonly relistFailures: { inc(labels: { reason: CriFaultCode }, value?: number): void };
  readonly pods: { set(labels: { state: string }, count: number): void };
  readonly containers: { set(labels: { state: string }, count: number): void };
  readonly lifecycleEvents: { inc(labels: { type: LifecycleEventType }, value?: number): void };
  readonly lifecycleEventsDropped: { inc(value?: number): void };
  /** Set by hand only until setAgentAliveProvider is called; from then on read at every scrape. */
  readonly agentAlive: { set(value: 0 | 1): void };
  readonly leaseRenewing: { set(value: 0 | 1): void };
  readonly leaseRenewals: { inc(labels: { result: LeaseRenewalResult }, value?: number): void };
  readonly leaseConflicts: { inc(value?: number): void };
  /** Wall-clock seconds since the epoch. */
  readonly leaseLastRenewTimestamp: { set(seconds: number): void };
  /** Replaces every runtime condition series with these (types that vanished are removed). */
  setRuntimeConditions(conditions: readonly { readonly type: string; readonly status: boolean }[]): void;
  /**
   * Reads the age of the relist in flight (seconds, 0 when none) at every scrape, so a hung call
   * is visible while it hangs, not after. Until set, the gauge reads 0.
   */
  setRelistInFlightProvider(provider: () => number): void;
  /**
   * Reads the runtime verdict gauges at every scrape (runtime-gauges.ts); until set, neither
   * has a sample.
   */
  setRuntimeGaugesProvider(provider: () => RuntimeGaugeValues): void;
  /**
   * Reads /livez's judgement (every loop) at every scrape, so the gauge cannot disagree with
   * /livez, and still moves when every loop has stopped ticking.
   */
  setAgentAliveProvider(provider: () => boolean): void;
}

/** The relist duration buckets, in seconds: standard ones below the deadline, it, and an overrun. */
export function relistDurationBuckets(relistDeadlineMs: number): number[] {
  const deadline = relistDeadlineMs / 1000;
  const overrun = round(deadline * (1 + OVERRUN_FRACTION));
  return [...BASE_BUCKETS.filter((b) => b < deadline), deadline, overrun];
}

function round(seconds: number): number {
  return Number(seconds.toFixed(3));
}

export function createAgentMetrics(registry: Registry, options: AgentMetricsOptions): AgentMetrics {
  const registers = [registry];
  const periodSeconds = (options.relistPeriodMs ?? 1000) / 1000;
  const durationBuckets = relistDurationBuckets(options.relistDeadlineMs);

  const relistDuration = new Histogram({
    name: 'nodepulse_relist_duration_seconds',
    help: 'Time one relist (ListPodSandbox and ListContainers under one deadline) took, by result: success or the CRI fault code.',
    labelNames: ['result'],
    buckets: durationBuckets,
    registers,
  });
  for (const result of ['success', ...CRI_FAULT_CODES]) relistDuration.zero({ result });

  const relistInterval = new Histogram({
    name: 'nodepulse_relist_interval_seconds',
    help: 'Time from the start of one relist to the start of the next (the period plus the previous relist).',
    buckets: [...new Set([periodSeconds, ...durationBuckets.map((b) => round(b + periodSeconds))])],
    registers,
  });

  const relistLastSuccessTimestamp = new Gauge({
    name: 'nodepulse_relist_last_success_timestamp_seconds',
    help: 'Wall-clock time (Unix seconds) at which the last successful relist began; 0 before the first.',
    registers,
  });

  let inFlight: () => number = () => 0;
  new Gauge({
    name: 'nodepulse_relist_in_flight_seconds',
    help: 'Age of the relist now in flight, read at scrape time; 0 when none is. A hung runtime call shows here as it hangs.',
    registers,
    collect() {
      const seconds = inFlight();
      this.set(Number.isFinite(seconds) && seconds > 0 ? seconds : 0);
    },
  });

  const relistFailures = new Counter({
    name: 'nodepulse_relist_failures_total',
    help: 'Relists that failed, by CRI fault code (unavailable, deadline_exceeded, resource_exhausted, unimplemented, other).',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of CRI_FAULT_CODES) relistFailures.inc({ reason }, 0);

  let runtimeGauges: () => RuntimeGaugeValues = () => ({ healthy: undefined, observable: undefined });
  new ReadGauge(() => runtimeGauges().healthy, {
    name: 'nodepulse_runtime_healthy',
    help: 'Read at scrape time: 1 while the runtime answered a relist within the threshold, 0 for a runtime fault past the threshold; no sample while not yet judged or while the agent cannot observe the runtime.',
    registers,
  });
  new ReadGauge(() => runtimeGauges().observable, {
    name: 'nodepulse_runtime_observable',
    help: 'Read at scrape time: 0 while the agent cannot observe the runtime (a socket it may not open, an answer it cannot decode, no socket), 1 once it reached the runtime, sick or not; no sample before.',
    registers,
  });

  const runtimeCondition = new Gauge({
    name: 'nodepulse_runtime_condition',
    help: "The runtime's own Status conditions (RuntimeReady, NetworkReady, ...): 1 when true, 0 when false.",
    labelNames: ['type'],
    registers,
  });

  const pods = new Gauge({
    name: 'nodepulse_pods',
    help: 'Pod sandboxes the last successful relist saw, by CRI state.',
    labelNames: ['state'],
    registers,
  });
  for (const state of POD_STATES) pods.set({ state }, 0);

  const containers = new Gauge({
    name: 'nodepulse_containers',
    help: 'Containers the last successful relist saw, by CRI state.',
    labelNames: ['state'],
    registers,
  });
  for (const state of CONTAINER_STATES) containers.set({ state }, 0);

  const lifecycleEvents = new Counter({
    name: 'nodepulse_lifecycle_events_total',
    help: 'Container lifecycle events found by diffing consecutive successful relists, by type.',
    labelNames: ['type'],
    registers,
  });
  for (const type of LIFECYCLE_EVENT_TYPES) lifecycleEvents.inc({ type }, 0);

  const lifecycleEventsDropped = new Counter({
    name: 'nodepulse_lifecycle_events_dropped_total',
    help: 'Lifecycle events dropped because the bounded recent-event buffer was full.',
    registers,
  });

  let alive: (() => boolean) | undefined;
  const agentAlive = new Gauge({
    name: 'nodepulse_agent_alive',
    help: '1 while every loop of the agent is alive, the same judgement as /livez (read at scrape time), else 0.',
    registers,
    collect() {
      if (alive !== undefined) this.set(alive() ? 1 : 0);
    },
  });
  const leaseRenewing = new Gauge({ name: 'nodepulse_lease_renewing', help: "1 while the node's Lease is being renewed, 0 while it is withheld or failing.", registers });

  const leaseRenewals = new Counter({
    name: 'nodepulse_lease_renewals_total',
    help: 'Lease renewal decisions and attempts, by result: success, error (the API refused or timed out), withheld (the gate was shut).',
    labelNames: ['result'],
    registers,
  });
  for (const result of LEASE_RENEWAL_RESULTS) leaseRenewals.inc({ result }, 0);

  const leaseConflicts = new Counter({ name: 'nodepulse_lease_conflicts_total', help: 'Lease writes answered with 409 Conflict.', registers });
  const leaseLastRenewTimestamp = new Gauge({
    name: 'nodepulse_lease_last_renew_timestamp_seconds',
    help: 'Wall-clock time (Unix seconds) of the renewTime last written to the Lease; 0 before the first.',
    registers,
  });

  const buildInfo = new Gauge({ name: 'nodepulse_build_info', help: 'Always 1; the label carries the agent version.', labelNames: ['version'], registers });
  buildInfo.set({ version: options.version }, 1);

  if (options.defaultMetrics !== false) {
    collectProcessMetrics(registry, options.clock);
    for (const name of DROPPED_DEFAULT_METRICS) registry.removeSingleMetric(name);
  }

  return {
    relistDuration,
    relistInterval,
    relistLastSuccessTimestamp,
    relistFailures,
    pods,
    containers,
    lifecycleEvents,
    lifecycleEventsDropped,
    agentAlive,
    leaseRenewing,
    leaseRenewals,
    leaseConflicts,
    leaseLastRenewTimestamp,
    setRuntimeConditions(conditions) {
      runtimeCondition.reset();
      for (const c of conditions.slice(0, MAX_RUNTIME_CONDITION_TYPES)) runtimeCondition.set({ type: c.type }, c.status ? 1 : 0);
    },
    setRelistInFlightProvider(provider) {
      inFlight = provider;
    },
    setAgentAliveProvider(provider) {
      alive = provider;
    },
    setRuntimeGaugesProvider(provider) {
      runtimeGauges = provider;
    },
  };
}

/**
 * An unlabelled gauge whose one sample is read at scrape time, and absent while the reading is
 * undefined (see the header).
 */
class ReadGauge extends Gauge {
  readonly #read: () => number | undefined;

  constructor(read: () => number | undefined, config: { name: string; help: string; registers: Registry[] }) {
    super(config);
    this.#read = read;
  }

  override async get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    const metric = await super.get();
    const value = this.#read();
    return { ...metric, values: value === undefined ? [] : [{ value, labels: {} }] };
  }
}
