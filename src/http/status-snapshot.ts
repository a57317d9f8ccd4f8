// What /status answers: one JSON snapshot of what the agent knows now, for people and scripts,
// assembled here (statusSnapshot) from the readings each part gives as it stands; the agent only
// gathers them. Absent values are `null`, never missing keys, so a reader can rely on every field.
// Times are wall-clock ISO 8601 strings: for people, never for judgement.
//
// It names nothing the runtime runs. /status answers anyone who can reach the pod's port, so
// its lifecycle events carry what happened (the event type, container or sandbox) and when,
// never a container's or pod's name, id, namespace or uid (statusEvent() keeps only those three
// fields; docs/security.md says why this and not authorization, and
// test/security/status-names.test.ts fails if a name or an id of the runtime's appears).
import type { CriFault } from '../cri/cri-error.ts';
import type { CriEndpointView } from '../cri/endpoint-probe.ts';
import type { RuntimeCondition } from '../cri/types.ts';
import type { NodeLeaseSnapshot } from '../lease/node-lease.ts';
import type { Liveness } from '../liveness/liveness.ts';
import type { LifecycleEvent } from '../relist/lifecycle-diff.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import type { RecordedEvent, RelistCounts } from '../relist/relister.ts';

export interface StatusSnapshot {
  readonly node: string;
  /** Which CRI socket the agent talks to, and why (given, or which probe rule chose it). */
  readonly criEndpoint: CriEndpointView;
  readonly runtime: RuntimeStatusView;
  /** The runtime's own Status conditions from its last answer; empty before one. */
  readonly runtimeConditions: readonly RuntimeCondition[];
  readonly loops: readonly Liveness[];
  readonly lease: {
    readonly namespace: string;
    readonly name: string;
    readonly renewing: boolean;
    /** renewTime of the last successful renewal (MicroTime), or null. */
    readonly lastRenewTime: string | null;
    /** The last write's error, cleared by a success, or null. */
    readonly lastError: string | null;
  };
  /** What the last successful relist saw. */
  readonly counts: RelistCounts;
  /** The most recent lifecycle events, oldest first (bounded by the relister's buffer). */
  readonly recentEvents: readonly StatusEvent[];
}

export interface RuntimeStatusView {
  readonly state: RuntimeHealth['state'];
  /**
   * Why, beside the state: `silent` or `failing` (NotYetObserved, Unhealthy), or the failure
   * mode the agent cannot observe through (CannotObserve: `permission-denied`, `no-socket`, ...);
   * null when Healthy.
   */
  readonly why: string | null;
  /** Wall time the last successful relist BEGAN, or null before one. */
  readonly lastSuccessBegan: string | null;
  readonly lastFault: CriFault | null;
  readonly message: string;
}

/** A lifecycle event as /status shows it: what happened and when, naming nothing. */
export interface StatusEvent {
  readonly type: LifecycleEvent['type'];
  readonly kind: LifecycleEvent['kind'];
  /** Wall time the relist that saw it began. */
  readonly time: string;
}

/** The fields of a StatusEvent: the only ones /status shows of a lifecycle event. */
export const STATUS_EVENT_FIELDS = ['type', 'kind', 'time'] as const;

/** A recorded lifecycle event as /status shows it: its type and kind, at the wall time it was seen. */
export function statusEvent(event: Pick<LifecycleEvent, 'type' | 'kind'> & { readonly seenWallMicros: number }): StatusEvent {
  return { type: event.type, kind: event.kind, time: isoFromWallMicros(event.seenWallMicros) };
}

/** What the agent's parts say now, as each gives it; statusSnapshot() makes /status of it. */
export interface StatusReadings extends Pick<StatusSnapshot, 'node' | 'criEndpoint' | 'runtimeConditions' | 'loops'> {
  readonly runtime: RuntimeHealth;
  readonly lease: NodeLeaseSnapshot;
  /** The last successful relist's counts, or undefined before one (then every count is 0). */
  readonly counts: RelistCounts | undefined;
  readonly recentEvents: readonly RecordedEvent[];
}

/** Counts before any relist succeeded. */
const NO_COUNTS: RelistCounts = { pods: 0, podsReady: 0, podsByState: {}, containers: 0, containersByState: {} };

/** /status from the readings. */
export function statusSnapshot(r: StatusReadings): StatusSnapshot {
  return {
    node: r.node,
    criEndpoint: r.criEndpoint,
    runtime: runtimeStatusView(r.runtime),
    runtimeConditions: r.runtimeConditions,
    loops: r.loops,
    lease: {
      namespace: r.lease.namespace,
      name: r.lease.name,
      renewing: r.lease.renewing,
      lastRenewTime: r.lease.lastRenewTime ?? null,
      lastError: r.lease.lastError ?? null,
    },
    counts: r.counts ?? NO_COUNTS,
    recentEvents: r.recentEvents.map(statusEvent),
  };
}

/** The field names of a StatusSnapshot, for tests and docs. */
export const STATUS_FIELDS = ['node', 'criEndpoint', 'runtime', 'runtimeConditions', 'loops', 'lease', 'counts', 'recentEvents'] as const;

/** ISO 8601 for wall-clock microseconds since the epoch. */
export function isoFromWallMicros(wallMicros: number): string {
  return new Date(Math.floor(wallMicros / 1000)).toISOString();
}

/** The runtime part of /status, from the ledger's one judgement. */
export function runtimeStatusView(health: RuntimeHealth): RuntimeStatusView {
  switch (health.state) {
    case 'NotYetObserved':
      return {
        state: health.state,
        why: health.why,
        lastSuccessBegan: null,
        lastFault: health.why === 'failing' ? health.fault : null,
        message: health.message,
      };
    case 'Healthy':
    case 'Unhealthy':
      return {
        state: health.state,
        why: health.state === 'Unhealthy' ? health.why : null,
        lastSuccessBegan: isoFromWallMicros(health.lastSuccess.wallMicros),
        lastFault: health.lastFault ?? null,
        message: health.message,
      };
    case 'CannotObserve':
      return {
        state: health.state,
        why: health.why,
        lastSuccessBegan: health.lastSuccess === undefined ? null : isoFromWallMicros(health.lastSuccess.wallMicros),
        lastFault: health.fault,
        message: health.message,
      };
  }
}
