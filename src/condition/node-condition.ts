// NodeCondition: publishes the agent's verdict (desired-condition.ts) on its Node as the
// RuntimeRelistUnhealthy condition, with an events.k8s.io/v1 Event for each change of state.
//
// | situation                                              | requests                              |
// |--------------------------------------------------------|---------------------------------------|
// | no verdict yet (NotYetObserved or CannotObserve within | none                                  |
// |   the threshold of start)                              |                                       |
// | first verdict since start: read the Node               | GET node                              |
// |   its condition already in the verdict's state         | nothing more                          |
// |   missing, or in another state (e.g. a leftover       | PATCH status (full condition) + Event |
// |   Unknown/AgentLeaseStale)                             |                                       |
// | verdict unchanged, refresh not due                     | none                                  |
// | verdict changed state                                  | PATCH status (full condition) + Event |
// | refresh due (every 5 min): read the Node               | GET node                              |
// |   in the verdict's state                               | PATCH status (lastHeartbeatTime only) |
// |   in another state (someone wrote over it)             | PATCH status (full condition) + Event |
//
// - State = (status, reason). The message is written with a change of state only, and
//   lastTransitionTime changes only with the state; a heartbeat refresh touches
//   lastHeartbeatTime alone (it is not a change).
// - Written with a strategic merge PATCH of nodes/<node>/status, where conditions merge by
//   `type`, so the kubelet's and other writers' conditions survive.
// - The Event goes to namespace `default`, where the Events of cluster-scoped objects live,
//   regarding the Node (its uid from the last read). It is `Normal` for False, and `Warning`
//   for True and for the agent's Unknown (it cannot observe the runtime). An Event that fails is logged (as a run) and
//   not retried: the condition is the record, the Event only its notice.
// - A failed write or read is retried by the next tick after a backoff (200 ms → 7 s); the state
//   is taken as written only once the PATCH succeeded, so a lost write is written again.
//
// One tick makes at most one read and one write (plus the Event). tick() never throws; it
// returns the delay before the next tick, like the lease loop's.
import type { Clock } from '../clock/clock.ts';
import { isAborted } from '../kube/kube-api-error.ts';
import type { CallOptions } from '../kube/kube-client.ts';
import type { KubeEvent, Node, NodeCondition as KubeNodeCondition } from '../kube/kube-types.ts';
import { backoffMs } from '../lease/backoff.ts';
import { formatMicroTime, formatTime } from '../kube/meta-time.ts';
import { FailureRun } from '../log/failure-run.ts';
import type { Logger } from '../log/logger.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { CONDITION_TYPE, desiredCondition, sameState, type DesiredCondition } from './desired-condition.ts';

/** The calls NodeCondition makes; KubeClient has them. */
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
/** lastHeartbeatTime refresh and repair period. */
export const DEFAULT_REFRESH_MS = 5 * 60_000;
/** How soon a tick with nothing to do looks again. */
export const DEFAULT_PERIOD_MS = 1_000;
/** events.k8s.io/v1 validation: note ≤ 1 KiB, reportingInstance ≤ 128 characters. */
const MAX_NOTE_BYTES = 1024;
const MAX_REPORTING_INSTANCE = 128;

export interface NodeConditionOptions {
  readonly client: NodeConditionApi;
  readonly clock: Clock;
  readonly nodeName: string;
  /** The relist ledger's judgement, now. */
  readonly runtimeHealth: () => RuntimeHealth;
  /** The ledger's threshold (the same one: there is no second). */
  readonly thresholdMs: number;
  /** When the agent started, monotonic ms. Default: when this object was made. */
  readonly startedAtMs?: number;
  /** Default 5 min. */
  readonly refreshMs?: number;
  /** Default 1 s. */
  readonly periodMs?: number;
  /** Default `nodepulse-agent-<node>`. */
  readonly reportingInstance?: string;
  readonly logger: Logger;
}

/** What /status may show of the condition: what the agent last wrote or saw on the Node. */
export interface NodeConditionSnapshot {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown' | undefined;
  readonly reason: string | undefined;
  readonly message: string | undefined;
  readonly lastTransitionTime: string | undefined;
  readonly lastError: string | undefined;
}

interface Known {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string | undefined;
  readonly message: string | undefined;
  readonly lastTransitionTime: string | undefined;
}

export class NodeCondition {
  readonly #options: NodeConditionOptions;
  readonly #startedAtMs: number;
  readonly #refreshMs: number;
  readonly #periodMs: number;
  readonly #reportingInstance: string;
  readonly #writes: FailureRun;
  readonly #events: FailureRun;
  /** What the Node's condition is, as far as the agent knows (after its first read). */
  #known: Known | undefined;
  #read = false;
  #lastRefreshMs = 0;
  #nodeUid: string | undefined;
  #failuresInRow = 0;
  #lastError: string | undefined;

  constructor(options: NodeConditionOptions) {
    if (options.nodeName === '') throw new RangeError('nodeName: "" must be a node name');
    this.#options = options;
    this.#startedAtMs = options.startedAtMs ?? options.clock.monotonicMs();
    this.#refreshMs = options.refreshMs ?? DEFAULT_REFRESH_MS;
    this.#periodMs = options.periodMs ?? DEFAULT_PERIOD_MS;
    this.#reportingInstance = (options.reportingInstance ?? `nodepulse-agent-${options.nodeName}`).slice(0, MAX_REPORTING_INSTANCE);
    this.#writes = new FailureRun(options.logger, 'Node condition write');
    this.#events = new FailureRun(options.logger, 'Node condition event');
  }

  /** One pass; returns the delay before the next. Never throws. */
  async tick(signal: AbortSignal): Promise<number> {
    const { clock, runtimeHealth, thresholdMs } = this.#options;
    if (signal.aborted) return this.#periodMs;
    const now = clock.monotonicMs();
    const desired = desiredCondition(runtimeHealth(), now - this.#startedAtMs, thresholdMs);
    if (desired === undefined) return this.#periodMs;
    try {
      const refreshDue = this.#read && now - this.#lastRefreshMs >= this.#refreshMs;
      if (!this.#read || refreshDue) {
        const node = await this.#options.client.getNode(this.#options.nodeName, { signal });
        this.#nodeUid = node.metadata.uid ?? this.#nodeUid;
        const onNode = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
        this.#known = onNode === undefined ? undefined : known(onNode);
        const wasRead = this.#read;
        this.#read = true;
        if (this.#known !== undefined && sameState(this.#known, desired)) {
          // In the verdict's state: at start nothing is written (a restart never flaps the
          // condition); at a refresh only lastHeartbeatTime moves.
          if (wasRead) await this.#heartbeat(desired, signal);
          this.#lastRefreshMs = now;
          this.#succeeded();
          return this.#periodMs;
        }
        await this.#change(desired, signal, 'repaired');
        this.#lastRefreshMs = now;
        this.#succeeded();
        return this.#periodMs;
      }
      if (this.#known === undefined || !sameState(this.#known, desired)) {
        await this.#change(desired, signal, 'changed');
        this.#lastRefreshMs = now;
      }
      this.#succeeded();
      return this.#periodMs;
    } catch (err) {
      if (signal.aborted || isAborted(err)) return this.#periodMs;
      this.#failuresInRow++;
      this.#lastError = err instanceof Error ? err.message : String(err);
      this.#writes.failed(err, { node: this.#options.nodeName });
      return backoffMs(this.#failuresInRow);
    }
  }

  snapshot(): NodeConditionSnapshot {
    return {
      type: CONDITION_TYPE,
      status: this.#known?.status,
      reason: this.#known?.reason,
      message: this.#known?.message,
      lastTransitionTime: this.#known?.lastTransitionTime,
      lastError: this.#lastError,
    };
  }

  /** A change of state: the whole condition, a new lastTransitionTime, and an Event. */
  async #change(desired: DesiredCondition, signal: AbortSignal, how: 'changed' | 'repaired'): Promise<void> {
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
    const previous = this.#known;
    this.#known = { status: desired.status, reason: desired.reason, message: desired.message, lastTransitionTime: time };
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
      how === 'changed' ? 'Node condition changed' : 'Node condition repaired',
    );
    await this.#event(desired, wall, signal);
  }

  /** The refresh of an unchanged state: lastHeartbeatTime only (strategic merge keeps the rest). */
  async #heartbeat(desired: DesiredCondition, signal: AbortSignal): Promise<void> {
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

  #succeeded(): void {
    this.#failuresInRow = 0;
    this.#lastError = undefined;
    this.#writes.succeeded({ node: this.#options.nodeName });
  }
}

function known(c: KubeNodeCondition): Known {
  return { status: c.status, reason: c.reason, message: c.message, lastTransitionTime: c.lastTransitionTime };
}

function truncateBytes(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return text;
  return `${bytes.subarray(0, max - 3).toString('utf8').replace(/\uFFFD$/, '')}...`;
}
