// The leader's work, one term at a time: watch the agent leases and the Nodes, judge them, and
// mark the Nodes whose agent went silent.
//
// runTerm(term) starts afresh with every term: new informers, a new view. Every lease is first
// seen at the start of the term, so a new leader waits one grace period before it can call a
// silent lease stale (the first sighting counts as an observation), exactly as kube-controller-
// manager's node lifecycle controller does after a handover. Marks made by a predecessor are on
// the Nodes themselves and are cleared by whoever leads when the lease moves again.
//
// | trigger                                   | what is judged                          |
// |-------------------------------------------|-----------------------------------------|
// | every monitor period (default 5 s)        | the whole fleet: metrics, pause, actions|
// | a lease or Node event                     | that node alone, at once                |
//
// The work is level-triggered: decideMark() is asked again on each trigger and decides from the
// Node's current condition, so a write lost to an error or a conflict is retried at the next
// monitor period, never by a separate retry queue. Writes happen one at a time, rate-limited and
// fenced (node-marker.ts). In steady state the controller sends nothing but its watches (the
// leases, the Nodes, and the agent DaemonSet): judging is local.
//
// Marking pauses for either of two reasons, each a gauge nodepulse_controller_marking_paused
// {reason} and one log line when it starts and one when it ends:
//   - fleet_silent: more than half the judged fleet is Stale or Missing (mark-decision.ts);
//   - agent_rollout: the agent DaemonSet is rolling out, or has not been listed yet
//     (agent-rollout.ts). Its rollout state survives a term, so a new term of the same process
//     still knows which generation it saw rolling.
// Clearing marks never pauses.
import type { Clock } from '../clock/clock.ts';
import type { Term } from '../election/term.ts';
import { FleetView, leaseRenewMicros, nodeRecord, type NodeRecord } from '../fleet/fleet-view.ts';
import type { LabelSelector } from '../fleet/label-selector.ts';
import { judgeNode, type NodeReadiness, type ReadinessOptions } from '../fleet/readiness.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';
import { isConflict, isNotFound } from '../kube/kube-api-error.ts';
import type { Lease, Node } from '../kube/kube-types.ts';
import { Informer, type ListWatchSource } from '../kube/list-watch.ts';
import { agentDaemonSet, readRollout, type AgentDaemonSet, type DaemonSetObject } from './agent-rollout.ts';
import type { ControllerMetrics } from './controller-metrics.ts';
import { conditionChangedByOther, decideMark, shouldPause } from './mark-decision.ts';
import type { NodeMarker } from './node-marker.ts';

/** Upstream node-monitor-period. */
export const DEFAULT_MONITOR_PERIOD_MS = 5_000;

export interface FleetControllerOptions {
  readonly clock: Clock;
  readonly leases: ListWatchSource<Lease>;
  readonly nodes: ListWatchSource<Node>;
  readonly marker: NodeMarker;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger | undefined;
  readonly graceMs: number;
  readonly selector: LabelSelector;
  readonly monitorPeriodMs?: number;
  /** The agent DaemonSet (one object, by name); undefined: never pause for a rollout. */
  readonly agentDaemonSet?: ListWatchSource<DaemonSetObject> | undefined;
}

export class FleetController {
  readonly #o: FleetControllerOptions;
  readonly #readiness: ReadinessOptions;
  readonly #failures: FailureRun | undefined;
  #fleetSilent = false;
  #rolloutPaused = false;
  /** What the gauge and the log last said of the rollout pause. */
  #rolloutAnnounced = false;
  #termStartMs = 0;
  /** The agent DaemonSet generation seen rolling and not yet settled (agent-rollout.ts). */
  #rollingGeneration: number | undefined;
  /** This term's view of the agent DaemonSet; undefined without one. */
  #daemonSet: Informer<DaemonSetObject, AgentDaemonSet> | undefined;

  constructor(options: FleetControllerOptions) {
    this.#o = options;
    this.#readiness = { graceMs: options.graceMs, selector: options.selector, basis: 'reader-clock' };
    this.#failures = options.logger === undefined ? undefined : new FailureRun(options.logger, 'Node marking');
  }

  /** The leader task: runs until the term's signal aborts. Never rejects on API errors. */
  async runTerm(term: Term): Promise<void> {
    const { clock, logger } = this.#o;
    const signal = term.signal;
    const view = new FleetView(clock);
    const dirty = new Set<string>();
    let wake: (() => void) | undefined;
    view.onChange = (name) => {
      dirty.add(name);
      wake?.();
    };
    const leases = new Informer<Lease, number | undefined>({
      source: this.#o.leases,
      clock,
      project: leaseRenewMicros,
      onEvent: (e) => view.leaseEvent(e),
      ...(logger === undefined ? {} : { logger }),
    });
    // Reader's monotonic ms when another writer last changed each node's condition (this term).
    const otherWrote = new Map<string, number>();
    const nodes = new Informer<Node, NodeRecord>({
      source: this.#o.nodes,
      clock,
      project: nodeRecord,
      onEvent: (e) => {
        if (e.type === 'delete') otherWrote.delete(e.key);
        else if (conditionChangedByOther(view.nodes.get(e.key), e.value)) otherWrote.set(e.key, clock.monotonicMs());
        view.nodeEvent(e);
      },
      ...(logger === undefined ? {} : { logger }),
    });
    this.#termStartMs = clock.monotonicMs();
    const source = this.#o.agentDaemonSet;
    this.#daemonSet = source === undefined ? undefined : new Informer<DaemonSetObject, AgentDaemonSet>({
      source,
      clock,
      project: agentDaemonSet,
      onEvent: () => this.#noteRollout(),
      ...(logger === undefined ? {} : { logger }),
    });
    const informers = Promise.all([leases.run(signal), nodes.run(signal), this.#daemonSet?.run(signal)]);
    logger?.info({ term: term.number }, 'Watching agent leases and nodes');
    const periodMs = this.#o.monitorPeriodMs ?? DEFAULT_MONITOR_PERIOD_MS;
    let nextFullMs = clock.monotonicMs();
    try {
      while (!signal.aborted) {
        // Until both lists are in, nothing is judged: events only fill the view.
        if (!leases.synced || !nodes.synced) dirty.clear();
        else {
          const now = clock.monotonicMs();
          if (now >= nextFullMs) {
            nextFullMs = now + periodMs;
            dirty.clear();
            await this.#pass(term, view, otherWrote, view.readings(this.#readiness));
          } else if (dirty.size > 0) {
            const names = [...dirty];
            dirty.clear();
            const readings: NodeReadiness[] = [];
            for (const name of names) {
              const node = view.nodes.get(name);
              if (node !== undefined) readings.push(judgeNode(node, view.sightings.get(name), now, clock.wallMicros(), this.#readiness));
            }
            await this.#act(term, view, otherWrote, readings);
          }
        }
        // Not yet synced: look again in a moment (the first full pass runs once both are in).
        const waitMs = leases.synced && nodes.synced ? Math.max(0, nextFullMs - clock.monotonicMs()) : Math.min(periodMs, 100);
        await new Promise<void>((resolve) => {
          const timer = clock.after(waitMs, done);
          function done(): void {
            timer.cancel();
            wake = undefined;
            signal.removeEventListener('abort', done);
            resolve();
          }
          wake = done;
          signal.addEventListener('abort', done, { once: true });
          if ((dirty.size > 0 && leases.synced && nodes.synced) || signal.aborted) done();
        });
      }
    } finally {
      this.#fleetSilent = false;
      this.#rolloutPaused = false;
      this.#rolloutAnnounced = false;
      for (const reason of ['fleet_silent', 'agent_rollout'] as const) this.#o.metrics.paused.set({ reason }, 0);
      await informers;
      this.#daemonSet = undefined;
      logger?.info({ term: term.number }, 'Stopped watching agent leases and nodes');
    }
  }

  /** A full pass: metrics, the pause rule, then every action. */
  async #pass(term: Term, view: FleetView, otherWrote: ReadonlyMap<string, number>, readings: readonly NodeReadiness[]): Promise<void> {
    const counts = { fresh: 0, stale: 0, missing: 0, not_judged: 0 };
    for (const r of readings) {
      if (!r.judged) counts.not_judged++;
      else if (r.verdict === 'Fresh') counts.fresh++;
      else if (r.verdict === 'Stale') counts.stale++;
      else counts.missing++;
    }
    for (const [verdict, n] of Object.entries(counts)) this.#o.metrics.nodes.set({ verdict }, n);
    const pause = shouldPause(readings);
    if (pause.paused !== this.#fleetSilent) {
      this.#fleetSilent = pause.paused;
      this.#o.metrics.paused.set({ reason: 'fleet_silent' }, pause.paused ? 1 : 0);
      if (pause.paused) {
        this.#o.logger?.warn({ judged: pause.judged, silent: pause.silent }, 'Marking paused: more than half the judged fleet is stale at once');
      } else {
        this.#o.logger?.info({ judged: pause.judged, silent: pause.silent }, 'Marking resumed');
      }
    }
    await this.#act(term, view, otherWrote, readings);
  }

  /**
   * The agent DaemonSet's rollout now, logged and counted once per change of state. Not yet
   * listed pauses at once, but is announced only once it lasts a monitor period: a new term's
   * three lists race each other, and the DaemonSet's usually lands a moment after the others.
   */
  #noteRollout(): void {
    const informer = this.#daemonSet;
    if (informer === undefined) return;
    const seen = informer.synced ? informer.store.values().next().value : 'unlisted';
    const reading = readRollout(seen, this.#rollingGeneration);
    this.#rollingGeneration = reading.rollingGeneration;
    this.#rolloutPaused = reading.rolling;
    const periodMs = this.#o.monitorPeriodMs ?? DEFAULT_MONITOR_PERIOD_MS;
    const announce = seen !== 'unlisted' || this.#o.clock.monotonicMs() - this.#termStartMs >= periodMs;
    if (announce && reading.rolling !== this.#rolloutAnnounced) {
      this.#rolloutAnnounced = reading.rolling;
      this.#o.metrics.paused.set({ reason: 'agent_rollout' }, reading.rolling ? 1 : 0);
      const detail = { daemonSet: seen === 'unlisted' ? undefined : seen?.name, why: reading.why };
      if (reading.rolling) this.#o.logger?.warn(detail, 'Marking paused: the agent DaemonSet is rolling out');
      else this.#o.logger?.info(detail, 'Marking resumed: the agent DaemonSet rollout is done');
    }
  }

  async #act(term: Term, view: FleetView, otherWrote: ReadonlyMap<string, number>, readings: readonly NodeReadiness[]): Promise<void> {
    this.#noteRollout();
    for (const r of readings) {
      if (term.signal.aborted) return;
      const wroteAtMs = otherWrote.get(r.node);
      // Read for every node: a rollout seen while earlier writes were in flight pauses the rest.
      const decision = decideMark(r, this.#fleetSilent || this.#rolloutPaused, wroteAtMs !== undefined && this.#o.clock.monotonicMs() - wroteAtMs <= this.#o.graceMs);
      if (decision.action === 'none') continue;
      const node = view.nodes.get(r.node);
      if (node === undefined) continue;
      try {
        const written =
          decision.action === 'mark-stale' ? await this.#o.marker.markStale(term, node, r) : await this.#o.marker.markHealthy(term, node, r);
        // Keep what we wrote, so the next pass does not act again before the watch catches up.
        if (view.nodes.get(r.node)?.resourceVersion === node.resourceVersion) view.nodes.set(r.node, written);
        this.#failures?.succeeded();
      } catch (err) {
        if (term.signal.aborted) return;
        if (isConflict(err) || isNotFound(err)) continue; // the watch brings the newer Node; judged again then
        this.#failures?.failed(err, { node: r.node });
      }
    }
  }
}
