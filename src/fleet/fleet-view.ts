// The fleet as a reader holds it: every Node (trimmed to the facts the judgement needs) and
// every agent lease's sighting, updated from informer events at the moment each event arrives
// on the reader's monotonic clock. readings() applies the one judgement (readiness.ts).
//
// - Agent leases are selected by the label nodepulse.io/role=node-lease, never by namespace
//   alone, and keyed by name: the agent names its lease after its node.
// - A lease event is an observation at the reader's now: observeLease() decides whether its
//   renewTime advanced. A relist replays every lease as an event, which is no advance unless
//   renewTime really moved, so a watch restart never freshens a silent lease.
// - Only the projections are kept (a renewTime, a node's labels, cordon, taints and our
//   condition), so memory grows with the number of nodes, not with the size of their objects
//   (docs/bench.md, "The controller and `fleet` at 5,000 Nodes").
import type { Clock } from '../clock/clock.ts';
import type { InformerEvent } from '../kube/list-watch.ts';
import type { Lease, Node } from '../kube/kube-types.ts';
import { parseMetaTime } from '../kube/meta-time.ts';
import {
  judgeFleet,
  observeLease,
  type LeaseSighting,
  type NodeFacts,
  type NodeReadiness,
  type ReadinessOptions,
} from './readiness.ts';

export const CONDITION_TYPE = 'RuntimeRelistUnhealthy';
export const AGENT_LEASE_SELECTOR = 'nodepulse.io/role=node-lease';
export const DEFAULT_LEASE_NAMESPACE = 'nodepulse';
export const DEFAULT_NODE_SELECTOR = 'kubernetes.io/os=linux';
/** Upstream node-monitor-grace-period since Kubernetes 1.32. */
export const DEFAULT_GRACE_MS = 50_000;

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
  readonly timeAdded?: string;
}

/** NodeFacts plus what a writer needs to patch safely. */
export interface NodeRecord extends NodeFacts {
  readonly resourceVersion: string | undefined;
  readonly uid: string | undefined;
  readonly taints: readonly Taint[];
}

/** The renewTime of a lease, µs, or undefined; what the lease informer keeps. */
export function leaseRenewMicros(lease: Lease): number | undefined {
  return parseMetaTime(lease.spec?.renewTime);
}

export function nodeRecord(node: Node): NodeRecord {
  const raw = node as Node & { spec?: { unschedulable?: boolean; taints?: Taint[] } };
  const condition = node.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
  const created = parseMetaTime(node.metadata.creationTimestamp);
  return {
    name: node.metadata.name ?? '',
    labels: { ...node.metadata.labels },
    createdWallMicros: created,
    unschedulable: raw.spec?.unschedulable === true,
    condition:
      condition === undefined
        ? undefined
        : { status: condition.status, reason: condition.reason ?? '', message: condition.message ?? '', lastTransitionTime: condition.lastTransitionTime },
    resourceVersion: node.metadata.resourceVersion,
    uid: node.metadata.uid,
    taints: (raw.spec?.taints ?? []).map((t) => ({ ...t })),
  };
}

export class FleetView {
  readonly nodes = new Map<string, NodeRecord>();
  readonly sightings = new Map<string, LeaseSighting>();
  readonly #clock: Clock;
  /** Called after any change, with the node name it concerns. */
  onChange: ((node: string) => void) | undefined;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** For the lease informer's onEvent (project with leaseRenewMicros). */
  leaseEvent(event: InformerEvent<number | undefined>): void {
    if (event.type === 'delete') this.sightings.delete(event.key);
    else this.sightings.set(event.key, observeLease(this.sightings.get(event.key), event.value, this.#clock.monotonicMs()));
    this.onChange?.(event.key);
  }

  /** For the node informer's onEvent (project with nodeRecord). */
  nodeEvent(event: InformerEvent<NodeRecord>): void {
    if (event.type === 'delete') this.nodes.delete(event.key);
    else this.nodes.set(event.key, event.value);
    this.onChange?.(event.key);
  }

  readings(options: ReadinessOptions): NodeReadiness[] {
    return judgeFleet(this.nodes.values(), this.sightings, this.#clock.monotonicMs(), this.#clock.wallMicros(), options);
  }
}
