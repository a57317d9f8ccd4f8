// What the product reads of an answer, as the conformance table compares it: each projection
// below is built from the product's own readers where it has one, so "the two servers agree"
// means "the product cannot tell them apart" for the fields it reads, and nothing more.
//
// | answer                 | what the product reads (and where)                                         | projected as                  |
// |------------------------|----------------------------------------------------------------------------|-------------------------------|
// | any error              | status, Status reason, details.retryAfterSeconds / Retry-After             | errorFromResponse's code,     |
// |                        | (kube/kube-api-error.ts, the one mapping)                                  | status, reason, retryAfterMs  |
// | a Lease                | metadata whole (the elector PUTs it back: name, namespace, labels,         | leaseAsRead                   |
// |                        | resourceVersion, uid), spec.holderIdentity, leaseDurationSeconds,          |                               |
// |                        | acquireTime, renewTime, leaseTransitions (election/); renewTime as µs      |                               |
// |                        | (fleet/fleet-view.ts leaseRenewMicros)                                     |                               |
// | a Node                 | fleet-view.ts nodeRecord (name, labels, creationTimestamp, unschedulable,  | nodeAsRead                    |
// |                        | taints, our condition, resourceVersion, uid); cleanup's nodeLeftovers;     |                               |
// |                        | the runtime probe's containerRuntimeVersion (cri/endpoint-probe.ts);       |                               |
// |                        | status.conditions, which the condition writer finds ours in                |                               |
// | a list                 | items, metadata.resourceVersion (the watch starts there), metadata.continue| listAsRead                    |
// | a watch                | each line's type and object (list-watch.ts), a BOOKMARK's resourceVersion, | watchAsRead                   |
// |                        | an ERROR's code and reason                                                 |                               |
// | a DaemonSet            | controller/agent-rollout.ts agentDaemonSet                                 | agentDaemonSet itself         |
//
// Values the servers make up are compared by shape and by relation, never by value:
// resourceVersions become labels in order of first sighting (rv1, rv2, …) after a check that they
// are decimal strings, so "the write changed it" and "the no-op kept it" compare; uids must be
// UUIDs; creationTimestamp must parse. A projection never holds a time either server stamped.
import { parseNodeRuntime } from '../../src/cri/endpoint-probe.ts';
import { nodeLeftovers } from '../../src/cleanup/node-leftovers.ts';
import { leaseRenewMicros, nodeRecord } from '../../src/fleet/fleet-view.ts';
import { KubeApiError } from '../../src/kube/kube-api-error.ts';
import type { Lease, Node } from '../../src/kube/kube-types.ts';
import type { ListPage, WatchEvent } from '../../src/kube/list-watch.ts';

/** What a request came to, as the product's client reports it. */
export type Outcome =
  | 'ok'
  | { readonly code: string; readonly status: number; readonly reason: string | undefined; readonly retryAfterMs?: number | undefined };

export interface Observation {
  readonly outcome: Outcome;
  /** The fields the product reads, projected (see the header); absent for an error. */
  readonly read?: unknown;
}

/** Runs one product call; an API error becomes its outcome, anything else is thrown on. */
export async function observe<T>(call: () => Promise<T>, read: (value: T) => unknown = () => undefined): Promise<Observation> {
  let value: T;
  try {
    value = await call();
  } catch (err) {
    if (!(err instanceof KubeApiError)) throw err;
    return { outcome: errorAsRead(err) };
  }
  return { outcome: 'ok', read: read(value) };
}

export function errorAsRead(err: KubeApiError): Outcome {
  return { code: err.code, status: err.status, reason: err.reason, ...(err.retryAfterMs === undefined ? {} : { retryAfterMs: err.retryAfterMs }) };
}

const DECIMAL = /^[1-9][0-9]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** resourceVersions as labels in order of first sighting, within one row. */
export class RvLabels {
  readonly #seen = new Map<string, string>();

  label(rv: string | undefined): string {
    if (rv === undefined || rv === '') return 'none';
    if (!DECIMAL.test(rv)) return `not a decimal resourceVersion: ${rv}`;
    let label = this.#seen.get(rv);
    if (label === undefined) {
      label = `rv${this.#seen.size + 1}`;
      this.#seen.set(rv, label);
    }
    return label;
  }
}

/** A list's or a bookmark's resourceVersion: decimal, and not older than `atLeast`. */
export function rvAtLeast(rv: string | undefined, atLeast: readonly (string | undefined)[]): string {
  if (rv === undefined || !DECIMAL.test(rv)) return `not a decimal resourceVersion: ${String(rv)}`;
  const older = atLeast.filter((a) => a !== undefined && DECIMAL.test(a) && BigInt(a) > BigInt(rv));
  return older.length === 0 ? 'decimal, not older than what it follows' : `older than ${older.join(', ')}`;
}

function uidShape(uid: string | undefined): string {
  if (uid === undefined) return 'none';
  return UUID.test(uid) ? 'a uuid' : `not a uuid: ${uid}`;
}

/** Known uids (a Node's, for owner references) shown by role, so the two servers compare. */
export type UidRoles = Readonly<Record<string, string>>;

export function leaseAsRead(lease: Lease, rv: RvLabels, roles: UidRoles = {}): unknown {
  const m = lease.metadata;
  return {
    name: m.name,
    namespace: m.namespace,
    uid: uidShape(m.uid),
    resourceVersion: rv.label(m.resourceVersion),
    labels: m.labels,
    ownerReferences: m.ownerReferences?.map((o) => ({ ...o, uid: roles[o.uid] ?? uidShape(o.uid) })),
    spec: lease.spec === undefined ? undefined : {
      holderIdentity: lease.spec.holderIdentity,
      leaseDurationSeconds: lease.spec.leaseDurationSeconds,
      acquireTime: lease.spec.acquireTime,
      renewTime: lease.spec.renewTime,
      leaseTransitions: lease.spec.leaseTransitions,
    },
    renewMicros: leaseRenewMicros(lease),
  };
}

export function nodeAsRead(node: Node, rv: RvLabels): unknown {
  const record = nodeRecord(node);
  return {
    record: {
      ...record,
      resourceVersion: rv.label(record.resourceVersion),
      uid: uidShape(record.uid),
      createdWallMicros: record.createdWallMicros === undefined ? 'none' : 'a time',
    },
    leftovers: nodeLeftovers(node),
    runtime: parseNodeRuntime(node.status?.nodeInfo?.containerRuntimeVersion),
    conditions: node.status?.conditions,
  };
}

export function listAsRead<T>(page: ListPage<T>, item: (value: T) => unknown, keep: (value: T) => boolean = () => true): unknown {
  const items = page.items.filter(keep);
  const itemRvs = page.items.map((i) => (i as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion);
  return {
    resourceVersion: rvAtLeast(page.metadata.resourceVersion, itemRvs),
    continue: page.metadata.continue === undefined || page.metadata.continue === '' ? 'none' : 'a token',
    items: items.map(item),
  };
}

/**
 * A watch's lines: each event with its object projected; a run of BOOKMARKs is one entry (the
 * real server sends one or two before a watch's timeout, by its timer), whose resourceVersion
 * must not be older than the events before it; an ERROR keeps its Status's code and reason.
 */
export function watchAsRead<T>(events: readonly WatchEvent<T>[], item: (value: T) => unknown, keep: (value: T) => boolean = () => true): unknown[] {
  const out: unknown[] = [];
  const seen: Array<string | undefined> = [];
  for (const e of events) {
    const rv = (e.object as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (e.type === 'BOOKMARK') {
      const last = out[out.length - 1] as { type?: string } | undefined;
      // The product reads a bookmark's resourceVersion and its annotations (the end of a
      // streaming list's initial events), and nothing else: the Node readers decode it from
      // protobuf, trimmed, so the rest of its object is no shape the product sees.
      const annotations = (e.object as { metadata?: { annotations?: object } }).metadata?.annotations;
      const metadata = { resourceVersion: rvAtLeast(rv, seen), ...(annotations === undefined ? {} : { annotations }) };
      if (last?.type !== 'BOOKMARK') out.push({ type: 'BOOKMARK', object: { metadata } });
      continue;
    }
    if (e.type === 'ERROR') {
      const s = e.object as { code?: number; reason?: string };
      out.push({ type: 'ERROR', code: s.code, reason: s.reason });
      continue;
    }
    seen.push(rv);
    if (keep(e.object)) out.push({ type: e.type, object: item(e.object) });
  }
  return out;
}
