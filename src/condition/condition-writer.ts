// The I/O of the Node condition: a read of the Node, the three writes a step asks for
// (condition-step.ts), and the Event that goes with a change of state. It decides nothing: the
// loop (node-condition.ts) asks the step what to do, and this does it.
//
// | step      | requests                                                                    |
// |-----------|-----------------------------------------------------------------------------|
// | read      | GET node: the condition's state on it, and the Node's uid for the Event     |
// | change,   | PATCH nodes/<node>/status, the whole condition (a new lastTransitionTime,   |
// | repair    | lastHeartbeatTime), then POST an events.k8s.io/v1 Event                     |
// | heartbeat | PATCH nodes/<node>/status, lastHeartbeatTime alone (status and reason name  |
// |           | the state it refreshes)                                                     |
//
// - A strategic-merge PATCH of the status: conditions merge by `type`, so the kubelet's and
//   other writers' conditions survive.
// - The Event goes to `default`, where the Events of cluster-scoped objects live, regarding the
//   Node (its uid from the last read). It is `Normal` for False, and `Warning` for True and for
//   the agent's Unknown (it cannot observe the runtime). An Event that fails is logged (as a run)
//   and not retried: the condition is the record, the Event only its notice.
// - "Node condition changed" / "Node condition repaired" is logged once per write of a state,
//   with the state it replaced.
//
// Failure modes: a failed read or PATCH rejects with the client's KubeApiError, for the loop to
// back off and ask the step again; nothing is taken as written until its PATCH succeeded.
import type { Clock } from '../clock/clock.ts';
import { isAborted } from '../kube/kube-api-error.ts';
import type { CallOptions } from '../kube/kube-client.ts';
import type { KubeEvent, Node, NodeCondition as KubeNodeCondition } from '../kube/kube-types.ts';
import { formatMicroTime, formatTime } from '../kube/meta-time.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';
import { CONDITION_TYPE, type ConditionState, type DesiredCondition } from './desired-condition.ts';

/** The calls the writer makes; KubeClient has them. */
export interface NodeConditionApi {
  getNode(name: string, options?: CallOptions): Promise<Node>;
  patchNodeStatus(name: string, patch: unknown, options?: CallOptions): Promise<Node>;
  createEvent(namespace: string, event: KubeEvent, options?: CallOptions): Promise<KubeEvent>;
}

export const REPORTING_CONTROLLER = 'nodepulse.io/agent';
/** Events of cluster-scoped objects (a Node) live in `default`. */
export const EVENT_NAMESPACE = 'default';
/** The Event's action: what the agent did regarding the Node. */
export const EVENT_ACTION = 'SetCondition';
/** events.k8s.io/v1 validation: note ≤ 1 KiB, reportingInstance ≤ 128 characters. */
const MAX_NOTE_BYTES = 1024;
const MAX_REPORTING_INSTANCE = 128;

export interface ConditionWriterOptions {
  readonly client: NodeConditionApi;
  readonly clock: Clock;
  readonly nodeName: string;
  /** Default `nodepulse-agent-<node>`. */
  readonly reportingInstance?: string;
  readonly logger: Logger;
}

export class ConditionWriter {
  readonly #options: ConditionWriterOptions;
  readonly #reportingInstance: string;
  readonly #events: FailureRun;
  #nodeUid: string | undefined;

  constructor(options: ConditionWriterOptions) {
    this.#options = options;
    this.#reportingInstance = (options.reportingInstance ?? `nodepulse-agent-${options.nodeName}`).slice(0, MAX_REPORTING_INSTANCE);
    this.#events = new FailureRun(options.logger, 'Node condition event');
  }

  /** Reads the Node: the state of our condition on it (undefined when it has none). */
  async read(signal: AbortSignal): Promise<ConditionState | undefined> {
    const node = await this.#options.client.getNode(this.#options.nodeName, { signal });
    this.#nodeUid = node.metadata.uid ?? this.#nodeUid;
    const onNode = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
    return onNode === undefined ? undefined : { status: onNode.status, reason: onNode.reason };
  }

  /**
   * A change of state (or a repair of one written over): the whole condition with a new
   * lastTransitionTime, then an Event. Resolves once the PATCH succeeded; the Event's own
   * failure is only logged.
   */
  async write(desired: DesiredCondition, previous: ConditionState | undefined, how: 'change' | 'repair', signal: AbortSignal): Promise<void> {
    const { client, clock, nodeName, logger } = this.#options;
    const wall = clock.wallMicros();
    const time = formatTime(wall);
    const condition: KubeNodeCondition = {
      type: CONDITION_TYPE,
      status: desired.status,
      reason: desired.reason,
      message: desired.message,
      lastHeartbeatTime: time,
      lastTransitionTime: time,
    };
    await client.patchNodeStatus(nodeName, { status: { conditions: [condition] } }, { signal });
    logger.info(
      {
        node: nodeName,
        type: CONDITION_TYPE,
        status: desired.status,
        reason: desired.reason,
        detail: desired.message,
        previousStatus: previous?.status,
        previousReason: previous?.reason,
      },
      how === 'change' ? 'Node condition changed' : 'Node condition repaired',
    );
    await this.#event(desired, wall, signal);
  }

  /** The refresh of an unchanged state: lastHeartbeatTime only (strategic merge keeps the rest). */
  async heartbeat(desired: DesiredCondition, signal: AbortSignal): Promise<void> {
    const { client, clock, nodeName } = this.#options;
    const patch = { status: { conditions: [{ type: CONDITION_TYPE, status: desired.status, reason: desired.reason, lastHeartbeatTime: formatTime(clock.wallMicros()) }] } };
    await client.patchNodeStatus(nodeName, patch, { signal });
  }

  async #event(desired: DesiredCondition, wallMicros: number, signal: AbortSignal): Promise<void> {
    const { client, nodeName } = this.#options;
    // client-go names events "<object>.<unix nanos in hex>"; the name must stay a DNS subdomain.
    const suffix = `.${(BigInt(Math.floor(wallMicros)) * 1000n).toString(16)}`;
    const event: KubeEvent = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: `${nodeName.slice(0, 253 - suffix.length)}${suffix}`, namespace: EVENT_NAMESPACE },
      eventTime: formatMicroTime(wallMicros),
      reportingController: REPORTING_CONTROLLER,
      reportingInstance: this.#reportingInstance,
      action: EVENT_ACTION,
      reason: desired.reason,
      type: desired.status === 'False' ? 'Normal' : 'Warning',
      note: truncateBytes(desired.message, MAX_NOTE_BYTES),
      regarding: { apiVersion: 'v1', kind: 'Node', name: nodeName, ...(this.#nodeUid === undefined ? {} : { uid: this.#nodeUid }) },
    };
    try {
      await client.createEvent(EVENT_NAMESPACE, event, { signal });
      this.#events.succeeded({ node: nodeName });
    } catch (err) {
      if (signal.aborted || isAborted(err)) return;
      this.#events.failed(err, { node: nodeName, reason: desired.reason });
    }
  }
}

function truncateBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  return `${bytes.subarray(0, max - 3).toString('utf8').replace(/\uFFFD$/, '')}...`;
}
