// What the conformance table's rows share: the Row a row is, the context it runs in, how a
// request is named (requestSignature), and the fixtures the rows build on (a Node as a kubelet
// registers one, a Lease as the agent creates one, the product components' APIs wrapped to
// record each call, a watch read to its end). The rows themselves are in
// conformance-lease-rows.ts and conformance-node-rows.ts; conformance-table.ts joins them and
// says what the table is.
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { createControllerMetrics } from '../../src/controller/controller-metrics.ts';
import { markerApi, NodeMarker } from '../../src/controller/node-marker.ts';
import { TokenBucket } from '../../src/controller/token-bucket.ts';
import { Term } from '../../src/election/term.ts';
import { CONDITION_TYPE } from '../../src/fleet/fleet-view.ts';
import type { NodeReadiness } from '../../src/fleet/readiness.ts';
import { KubeApiError } from '../../src/kube/kube-api-error.ts';
import type { KubeClient } from '../../src/kube/kube-client.ts';
import type { Lease, Node } from '../../src/kube/kube-types.ts';
import { INITIAL_EVENTS_END, type KubeObject, type ListWatchSource, type WatchEvent } from '../../src/kube/list-watch.ts';
import { formatMicroTime } from '../../src/kube/meta-time.ts';
import type { WriteGuard } from '../../src/lease/lease-writer.ts';
import { createLogger, memorySink } from '../../src/log/logger.ts';
import type { RuntimeHealth } from '../../src/relist/relist-ledger.ts';
import { errorAsRead, RvLabels, type Observation, type Outcome } from './conformance-read.ts';
import type { Caller, Target } from './conformance-targets.ts';

/** The wall time of every row's manual clock: what the product stamps into its writes. */
export const CLOCK_START = Date.UTC(2026, 2, 4, 5, 6, 7, 123);
/** A watch the rows read to its end: long enough for the real server's pre-timeout bookmark. */
const WATCH_SECONDS = 4;
/**
 * Writes between probes while waiting for the server to forget resourceVersion 1, and the bounds.
 * The real watch cache forgets an event only once its buffer is full and its oldest event is
 * older than 75 s (it grows instead before that): on a cluster up for minutes, no write at all;
 * on one just up, about a minute of writes (1,500 here). Time is the bound that matters.
 */
export const PUMP_STEP = 50;
export const PUMP_MAX = 20_000;
export const PUMP_MAX_MS = 240_000;
export const MERGE = 'application/merge-patch+json';
export const STRATEGIC = 'application/strategic-merge-patch+json';
export const JSON_PATCH = 'application/json-patch+json';
/** A lease write guard that never closes: the rows write as an agent whose gate is open. */
export const OPEN: WriteGuard = { signal: new AbortController().signal, check: () => undefined };

// ---- request signatures -----------------------------------------------------------------------

export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly contentType?: string | undefined;
}

/**
 * A request as the table and the surface walk name it: the method, the path with the namespace
 * and the object's name as placeholders, the query's keys, and the body's media type:
 * `PATCH /api/v1/nodes/{name}/status application/strategic-merge-patch+json`.
 */
export function requestSignature(r: RecordedCall): string {
  const parts = r.path.split('/').filter((p) => p !== '');
  const head = parts[0] === 'api' ? 2 : 3; // /api/v1 or /apis/<group>/<version>
  const out = parts.slice(0, head);
  let rest = parts.slice(head);
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    out.push('namespaces', '{namespace}');
    rest = rest.slice(2);
  }
  const [resource, name, ...sub] = rest;
  if (resource !== undefined) out.push(resource);
  if (name !== undefined) out.push('{name}', ...sub);
  const keys = Object.keys(r.query).sort();
  const type = (r.contentType ?? '').split(';')[0]?.trim() ?? '';
  return `${r.method} /${out.join('/')}${keys.length === 0 ? '' : `?${keys.join('&')}`}${type === '' ? '' : ` ${type}`}`;
}

export const LEASES = '/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases';
export const LEASE = `${LEASES}/{name}`;
export const NODES = '/api/v1/nodes';
export const NODE = `${NODES}/{name}`;
export const EVENTS = '/apis/events.k8s.io/v1/namespaces/{namespace}/events';
export const DAEMONSETS = '/apis/apps/v1/namespaces/{namespace}/daemonsets';
export const PODS = '/api/v1/namespaces/{namespace}/pods';
export const LIST_QUERY = '?labelSelector&limit';
export const WATCH_QUERY = '?allowWatchBookmarks&labelSelector&resourceVersion&timeoutSeconds&watch';
/** The readers' streaming list (kube/list-watch.ts watchList), by label. */
export const STREAMING_LIST_QUERY = '?allowWatchBookmarks&labelSelector&resourceVersionMatch&sendInitialEvents&timeoutSeconds&watch';

// ---- the context a row runs in ----------------------------------------------------------------

export interface RowContext {
  readonly target: Target;
  /** The run's namespace: the agent's (leases, pods, the DaemonSet). */
  readonly namespace: string;
  /** Fixed at CLOCK_START; the product's writes are stamped from it. */
  readonly clock: ManualClock;
  /** This row's resourceVersion labels. */
  readonly rv: RvLabels;
  client(as?: Caller): KubeClient;
  /** `np-conf-<run>-<row>-<what>`: a name unique to the run and the row, the same on both servers. */
  name(what: string): string;
  /** Runs after the row, whatever happened (in reverse order). */
  defer(cleanup: () => Promise<unknown>): void;
  /** A diagnostic line about this server's answer (printed, never compared). */
  note(text: string): void;
}

export interface Row {
  readonly name: string;
  /** The product's requests this row stands for (requestSignature). */
  readonly sends: readonly string[];
  /** Where the product sends them. */
  readonly product: string;
  /** What the real server answers the row's request, as the product reads it. */
  readonly expect: Outcome;
  run(ctx: RowContext): Promise<Observation>;
}

// ---- fixtures -----------------------------------------------------------------------------------

/** The kubelet's own conditions on a healthy Node, as it writes them. */
export const KUBELET_CONDITIONS = [
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available', lastHeartbeatTime: '2026-03-04T05:00:00Z', lastTransitionTime: '2026-03-04T04:00:00Z' },
  { type: 'DiskPressure', status: 'False', reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure', lastHeartbeatTime: '2026-03-04T05:00:00Z', lastTransitionTime: '2026-03-04T04:00:00Z' },
  { type: 'PIDPressure', status: 'False', reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available', lastHeartbeatTime: '2026-03-04T05:00:00Z', lastTransitionTime: '2026-03-04T04:00:00Z' },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: '2026-03-04T05:00:00Z', lastTransitionTime: '2026-03-04T04:00:00Z' },
];
export const OUR_STALE_CONDITION = {
  type: CONDITION_TYPE, status: 'True', reason: 'RelistStale', message: 'relist was last seen active 3m5s ago; threshold is 3m0s',
  lastHeartbeatTime: '2026-03-04T05:01:00Z', lastTransitionTime: '2026-03-04T05:01:00Z',
};
export const SILENT_TAINT = { key: 'nodepulse.io/agent-silent', effect: 'NoSchedule', timeAdded: '2026-03-04T05:02:00Z' };
export const OTHER_TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
export const UNREACHABLE_TAINT = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-03-04T05:03:00Z' };

export interface MadeNode {
  readonly name: string;
  readonly uid: string;
}

/**
 * A Node as a kubelet registers one: created, left to the server's controllers (settle), then
 * its status written with the kubelet's conditions and runtime, and any taints set.
 */
export async function kubeletNode(ctx: RowContext, what: string, extra: { conditions?: readonly object[]; taints?: readonly object[] } = {}): Promise<MadeNode> {
  const name = ctx.name(what);
  const created = await ctx.target.send({
    method: 'POST', path: '/api/v1/nodes',
    body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'nodepulse.io/conformance': 'true' } } },
  });
  assert.equal(created.status, 201, `precondition: Node ${name} must be created: ${created.body}`);
  ctx.defer(() => ctx.target.send({ method: 'DELETE', path: `/api/v1/nodes/${name}` }));
  await ctx.target.settle('node', `/api/v1/nodes/${name}`);
  const status = await ctx.target.send({
    method: 'PATCH', path: `/api/v1/nodes/${name}/status`, contentType: STRATEGIC,
    body: { status: { conditions: [...KUBELET_CONDITIONS, ...(extra.conditions ?? [])], nodeInfo: { containerRuntimeVersion: 'containerd://1.7.13' } } },
  });
  assert.equal(status.status, 200, `precondition: Node ${name}'s status must be written: ${status.body}`);
  if (extra.taints !== undefined) {
    const tainted = await ctx.target.send({ method: 'PATCH', path: `/api/v1/nodes/${name}`, contentType: MERGE, body: { spec: { taints: extra.taints } } });
    assert.equal(tainted.status, 200, `precondition: Node ${name}'s taints must be written: ${tainted.body}`);
  }
  return { name, uid: (created.json as Node).metadata.uid ?? '' };
}

export async function getNode(ctx: RowContext, name: string): Promise<Node> {
  return ctx.client().getNode(name);
}

/** A lease as the agent creates one (its labels; spec stamped from the row's clock). */
export function agentLease(name: string, namespace: string, clock: ManualClock): Lease {
  const renewTime = formatMicroTime(clock.wallMicros());
  return {
    metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'nodepulse', 'nodepulse.io/role': 'node-lease' } },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, acquireTime: renewTime, renewTime },
  };
}

export async function createLease(ctx: RowContext, lease: Lease): Promise<Lease> {
  try {
    return await ctx.client().createLease(ctx.namespace, lease);
  } catch (err) {
    throw new Error(`precondition: lease ${lease.metadata.name ?? ''} must be created: ${(err as Error).message}`, { cause: err });
  }
}

export function renewalPatch(name: string, clock: ManualClock): unknown {
  return { spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatMicroTime(clock.wallMicros()) } };
}

/** Each call of `api`'s methods, in order, with its outcome; `after` runs once a named call has answered. */
export function recording<T extends object>(api: T, calls: Array<{ call: string; outcome: Outcome | string }>, after: Record<string, () => Promise<void>> = {}): T {
  return new Proxy(api, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]): Promise<unknown> => {
        try {
          const answer: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          calls.push({ call: String(prop), outcome: 'ok' });
          const hook = after[String(prop)];
          if (hook !== undefined) await hook();
          return answer;
        } catch (err) {
          calls.push({ call: String(prop), outcome: err instanceof KubeApiError ? errorAsRead(err) : `not an API error: ${String(err)}` });
          throw err;
        }
      };
    },
  });
}

/**
 * Reads a watch to its end (the server's timeoutSeconds), through the product's request core.
 * `live`, if given, runs once the first event has arrived (the watch is then surely open): a
 * write the watch's selector filters out, so the server has something newer than what the watch
 * replayed, and both servers send the bookmark a busy cluster always gets (a quiet resource gets
 * none, on either).
 */
export async function watchToEnd(
  client: KubeClient, path: string, query: Readonly<Record<string, string>>,
  options: { seconds?: number; live?: () => Promise<unknown>; protobuf?: (frame: Buffer) => unknown } = {},
): Promise<WatchEvent<unknown>[]> {
  const seconds = options.seconds ?? WATCH_SECONDS;
  const events: WatchEvent<unknown>[] = [];
  const abort = new AbortController();
  const bound = new SystemClock().after((seconds + 20) * 1000, () => abort.abort(new Error(`the watch must end within ${seconds + 20} s`)));
  let live: Promise<unknown> | undefined;
  try {
    await client.watch({
      path, query: { ...query, allowWatchBookmarks: 'true', timeoutSeconds: String(seconds) }, signal: abort.signal, idleMs: (seconds + 10) * 1000, what: `WATCH ${path}`,
      protobuf: options.protobuf,
    }, (e) => {
      events.push(e as WatchEvent<unknown>);
      if (live === undefined && options.live !== undefined) live = options.live();
    });
  } finally {
    bound.cancel();
  }
  if (options.live !== undefined) {
    assert.ok(live !== undefined, 'precondition: the watch replayed an event, after which the live write was made');
    await live;
  }
  return events;
}

export const leasesPath = (ctx: RowContext): string => `/apis/coordination.k8s.io/v1/namespaces/${ctx.namespace}/leases`;
export const silentLogger = () => createLogger({ level: 'info', destination: memorySink() });

export function markerFor(ctx: RowContext, taint: boolean): NodeMarker {
  return new NodeMarker({
    api: markerApi(ctx.client()), clock: ctx.clock, bucket: new TokenBucket(ctx.clock, 1000), identity: 'conformance-controller',
    leaseNamespace: ctx.namespace, taint, metrics: createControllerMetrics(new Registry()), logger: undefined,
  });
}

export const believed = (): Term => new Term({ believes: () => true, identity: 'conformance-controller' }, 1, new AbortController().signal);

export function staleReading(node: string): NodeReadiness {
  return {
    node, verdict: 'Stale', judged: true, notJudged: undefined, cordoned: false, markable: true, basis: 'reader-clock',
    leaseWallAgeMs: 120_000, sinceMovedMs: 120_000, seenMoving: true, renewTimeMicros: CLOCK_START * 1000 - 120_000_000, condition: undefined,
  };
}

export const HEALTHY: RuntimeHealth = { state: 'Healthy', lastSuccess: { monotonicMs: 0, wallMicros: CLOCK_START * 1000 }, lastFault: undefined, message: 'relist was last seen active 1s ago' };



/** The manual clock every row starts from. */
export function rowClock(): ManualClock {
  return new ManualClock({ startWallMs: CLOCK_START });
}

/** How long a streaming list the rows read may take, initial events and the live change together. */
const STREAMING_LIST_MS = 30_000;

/**
 * Reads a streaming list through the product's own source (kube/list-watch.ts watchList: its
 * query, its refusal mapping): the initial events, the BOOKMARK that ends them, and then, if
 * `live` is given, what follows the write it makes, until `done` says the events are complete.
 * The watch's own timeout is minutes, so it is ended here; a refusal is thrown as the product
 * throws it.
 */
export async function streamingListUntil<T extends KubeObject>(
  source: ListWatchSource<T>, options: { live?: () => Promise<unknown>; done: (events: readonly WatchEvent<T>[]) => boolean },
): Promise<WatchEvent<T>[]> {
  const watchList = source.watchList;
  assert.ok(watchList !== undefined, 'precondition: the source offers the streaming list');
  const events: WatchEvent<T>[] = [];
  const abort = new AbortController();
  const bound = new SystemClock().after(STREAMING_LIST_MS, () => abort.abort(new Error(`the streaming list must complete within ${STREAMING_LIST_MS} ms`)));
  let live: Promise<unknown> | undefined;
  let finished = false;
  try {
    await watchList(abort.signal, (e) => {
      events.push(e);
      if (e.type === 'BOOKMARK' && e.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true' && options.live !== undefined) live = options.live();
      if (!finished && done()) {
        finished = true;
        abort.abort(new Error('read to the end'));
      }
    });
  } catch (err) {
    if (!finished) throw err;
  } finally {
    bound.cancel();
  }
  function done(): boolean {
    return events.some((e) => e.type === 'BOOKMARK' && e.object.metadata.annotations?.[INITIAL_EVENTS_END] === 'true') && options.done(events);
  }
  assert.ok(finished, `precondition: the streaming list must reach its end, not close first (${events.length} events)`);
  if (live !== undefined) await live;
  return events;
}
