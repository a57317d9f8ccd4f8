// The controller's writes to a Node: its RuntimeRelistUnhealthy condition, an Event, and
// optionally the nodepulse.io/agent-silent:NoSchedule taint.
//
// - Every write waits for a token from the rate limiter (--max-writes-per-second), THEN goes
//   through the term's fence, so a write that waited past the end of belief is refused.
// - The condition is a strategic-merge PATCH of nodes/<node>/status (conditions merge by type, so
//   other writers' conditions survive) carrying the resourceVersion the decision was made on:
//   if the agent wrote its own condition meanwhile, the patch is a 409 and the node is judged
//   again from the newer object, so the agent's True is never overwritten by a race.
// - The taint is a JSON merge PATCH of the node's spec.taints (taints have no merge key, so the
//   list is written whole), also under the resourceVersion.
// - The Event is events.k8s.io/v1 in `default`, where Events of cluster-scoped objects live. A
//   failed Event is logged and does not undo the mark.
// - Every write that fails counts in nodepulse_controller_write_errors_total{resource}, except a
//   conflict or a not-found (the watch brings the newer Node, judged again) and a write refused
//   or cancelled because the term ended.
import type { Clock } from '../clock/clock.ts';
import { formatDuration } from '../clock/duration.ts';
import { FencedError, type Term } from '../election/term.ts';
import { CONDITION_TYPE, nodeRecord, type NodeRecord, type Taint } from '../fleet/fleet-view.ts';
import type { NodeReadiness } from '../fleet/readiness.ts';
import type { Logger } from '../log/logger.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { isConflict, isNotFound } from '../kube/kube-api-error.ts';
import type { KubeEvent, Node } from '../kube/kube-types.ts';
import { formatMicroTime, formatTime } from '../kube/meta-time.ts';
import type { ControllerMetrics, WriteResource } from './controller-metrics.ts';
import { HEALTHY_REASON, MARK_REASON } from './mark-decision.ts';
import type { TokenBucket } from './token-bucket.ts';

export const SILENT_TAINT_KEY = 'nodepulse.io/agent-silent';
export const EVENT_NAMESPACE = 'default';
export const REPORTING_CONTROLLER = 'nodepulse.io/controller';

/** The three writes the marker makes. KubeClient satisfies it through markerApi(). */
export interface MarkerApi {
  patchNodeStatus(name: string, patch: unknown, options: { signal?: AbortSignal }): Promise<Node>;
  patchNode(name: string, patch: unknown, options: { signal?: AbortSignal }): Promise<Node>;
  createEvent(namespace: string, event: KubeEvent, options: { signal?: AbortSignal }): Promise<unknown>;
}

export function markerApi(client: KubeClient): MarkerApi {
  return {
    patchNodeStatus: (name, patch, options) => client.patchNodeStatus(name, patch, options),
    patchNode: (name, patch, options) => client.patchNode(name, patch, options),
    createEvent: (namespace, event, options) => client.createEvent(namespace, event, options),
  };
}

export interface NodeMarkerOptions {
  readonly api: MarkerApi;
  readonly clock: Clock;
  readonly bucket: TokenBucket;
  readonly identity: string;
  readonly leaseNamespace: string;
  readonly taint: boolean;
  readonly metrics: ControllerMetrics;
  readonly logger: Logger | undefined;
}

/** The condition message: how long ago the lease last moved, on the controller's clock. */
export function staleMessage(reading: NodeReadiness, leaseNamespace: string): string {
  const lease = `${leaseNamespace}/${reading.node}`;
  if (reading.verdict === 'Missing') return `agent lease ${lease} is missing`;
  const since = formatDuration(Math.round((reading.sinceMovedMs ?? 0) / 1000) * 1000);
  const wall =
    reading.renewTimeMicros === undefined
      ? 'it has no renewTime'
      : `renewTime ${formatMicroTime(reading.renewTimeMicros)} is ${formatDuration(Math.round((reading.leaseWallAgeMs ?? 0) / 1000) * 1000)} old by the controller's wall clock`;
  const moved = reading.seenMoving ? `agent lease ${lease} last moved ${since} ago` : `agent lease ${lease} has not moved in the ${since} the controller has watched it`;
  return `${moved}; ${wall}`;
}

export class NodeMarker {
  readonly #o: NodeMarkerOptions;
  #eventSeq = 0;

  constructor(options: NodeMarkerOptions) {
    this.#o = options;
  }

  /** Marks the node Unknown/AgentLeaseStale (and taints it). Returns the node as written. */
  async markStale(term: Term, node: NodeRecord, reading: NodeReadiness): Promise<NodeRecord> {
    const message = staleMessage(reading, this.#o.leaseNamespace);
    let written = await this.#setCondition(term, node, 'Unknown', MARK_REASON, message);
    this.#o.metrics.marks.inc({ action: 'mark_stale' });
    this.#o.logger?.warn({ node: node.name, verdict: reading.verdict, message }, 'Marked node: agent lease stale');
    await this.#event(term, node, 'Warning', MARK_REASON, message);
    if (this.#o.taint && !written.taints.some((t) => t.key === SILENT_TAINT_KEY)) {
      const taint: Taint = { key: SILENT_TAINT_KEY, effect: 'NoSchedule', timeAdded: formatTime(this.#o.clock.wallMicros()) };
      written = await this.#setTaints(term, written, [...written.taints, taint]);
      this.#o.metrics.marks.inc({ action: 'taint_added' });
    }
    return written;
  }

  /** Sets False/RelistHealthy on a node whose marked lease moved again (and removes the taint). */
  async markHealthy(term: Term, node: NodeRecord, reading: NodeReadiness): Promise<NodeRecord> {
    const since = formatDuration(Math.round((reading.sinceMovedMs ?? 0) / 1000) * 1000);
    const message = `agent lease ${this.#o.leaseNamespace}/${node.name} moved again ${since} ago: the agent's loop is alive and its runtime answers`;
    let written = await this.#setCondition(term, node, 'False', HEALTHY_REASON, message);
    this.#o.metrics.marks.inc({ action: 'mark_healthy' });
    this.#o.logger?.info({ node: node.name }, 'Cleared node mark: agent lease moves again');
    await this.#event(term, node, 'Normal', HEALTHY_REASON, message);
    if (written.taints.some((t) => t.key === SILENT_TAINT_KEY)) {
      written = await this.#setTaints(term, written, written.taints.filter((t) => t.key !== SILENT_TAINT_KEY));
      this.#o.metrics.marks.inc({ action: 'taint_removed' });
    }
    return written;
  }

  async #setCondition(term: Term, node: NodeRecord, status: 'Unknown' | 'False', reason: string, message: string): Promise<NodeRecord> {
    await this.#o.bucket.take(term.signal);
    const now = formatTime(this.#o.clock.wallMicros());
    const patch = {
      metadata: node.resourceVersion === undefined ? {} : { resourceVersion: node.resourceVersion },
      status: { conditions: [{ type: CONDITION_TYPE, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now }] },
    };
    const written = await this.#write(term, 'nodes/status', `PATCH nodes/status ${node.name}`, (signal) => this.#o.api.patchNodeStatus(node.name, patch, { signal }));
    return nodeRecord(written);
  }

  async #setTaints(term: Term, node: NodeRecord, taints: readonly Taint[]): Promise<NodeRecord> {
    await this.#o.bucket.take(term.signal);
    const patch = { metadata: node.resourceVersion === undefined ? {} : { resourceVersion: node.resourceVersion }, spec: { taints } };
    const written = await this.#write(term, 'nodes', `PATCH nodes ${node.name}`, (signal) => this.#o.api.patchNode(node.name, patch, { signal }));
    return nodeRecord(written);
  }

  /** One fenced write, counted in writeErrors when it fails for a reason worth counting. */
  async #write<T>(term: Term, resource: WriteResource, what: string, write: (signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await term.fenced(what, write);
    } catch (err) {
      if (!term.signal.aborted && !(err instanceof FencedError) && !isConflict(err) && !isNotFound(err)) {
        this.#o.metrics.writeErrors.inc({ resource });
      }
      throw err;
    }
  }

  async #event(term: Term, node: NodeRecord, type: 'Normal' | 'Warning', reason: string, note: string): Promise<void> {
    const wall = this.#o.clock.wallMicros();
    this.#eventSeq++;
    const event: KubeEvent = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${node.name}.${wall.toString(16)}${this.#eventSeq.toString(16)}`, namespace: EVENT_NAMESPACE },
      eventTime: formatMicroTime(wall),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.#o.identity,
      action: 'SetCondition',
      reason,
      type,
      note: note.slice(0, 1024),
      regarding: { apiVersion: 'v1', kind: 'Node', name: node.name, ...(node.uid === undefined ? {} : { uid: node.uid }) },
    };
    try {
      await this.#o.bucket.take(term.signal);
      await this.#write(term, 'events', `POST events ${node.name}`, (signal) => this.#o.api.createEvent(EVENT_NAMESPACE, event, { signal }));
    } catch (err) {
      if (term.signal.aborted) throw err;
      this.#o.logger?.warn({ err, node: node.name }, 'Could not record the Event of a node mark');
    }
  }
}
