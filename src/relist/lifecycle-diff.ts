// The lifecycle events between two successful relists, after kubelet's PLEG generateEvents().
//
// Each container (and each pod sandbox, treated as a container of its pod) is reduced to one of
// PLEG's four states, then compared old → new:
//
// | old \ new    | running          | exited        | unknown          | non-existent                  |
// |--------------|------------------|---------------|------------------|-------------------------------|
// | same state   | (none)           | (none)        | (none)           | (none)                        |
// | any other    | ContainerStarted | ContainerDied | ContainerChanged | from exited: ContainerRemoved;|
// |              |                  |               |                  | otherwise: ContainerDied,     |
// |              |                  |               |                  | ContainerRemoved              |
//
// CRI `CREATED` maps to unknown, as kubelet does ("kubelet doesn't use the created state"), and
// so does any enum value this version does not know. A sandbox READY is running and NOTREADY is
// exited. The diff is pure; ordering is stable (sandboxes first, then containers, by id). It is the
// reference: the relister runs its incremental form, lifecycle-tracker.ts, which a property test
// holds to it.
import type { Container, PodSandbox } from '../cri/types.ts';

export type PlegState = 'running' | 'exited' | 'unknown' | 'non-existent';
export type LifecycleEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged';
export const LIFECYCLE_EVENT_TYPES: readonly LifecycleEventType[] = [
  'ContainerStarted',
  'ContainerDied',
  'ContainerRemoved',
  'ContainerChanged',
];

export interface LifecycleEvent {
  readonly type: LifecycleEventType;
  /** The container's id, or the sandbox's own id for a sandbox. */
  readonly id: string;
  readonly podSandboxId: string;
  readonly kind: 'container' | 'sandbox';
  readonly name: string;
}

/** A relist reduced to what the diff compares: id → (state, pod, name). */
export type Snapshot = ReadonlyMap<string, { readonly state: PlegState; readonly podSandboxId: string; readonly kind: 'container' | 'sandbox'; readonly name: string }>;

export const EMPTY_SNAPSHOT: Snapshot = new Map();

export function containerPlegState(state: Container['state']): PlegState {
  if (state === 'CONTAINER_RUNNING') return 'running';
  if (state === 'CONTAINER_EXITED') return 'exited';
  return 'unknown';
}

export function sandboxPlegState(state: PodSandbox['state']): PlegState {
  if (state === 'SANDBOX_READY') return 'running';
  if (state === 'SANDBOX_NOTREADY') return 'exited';
  return 'unknown';
}

export function snapshotOf(sandboxes: readonly PodSandbox[], containers: readonly Container[]): Snapshot {
  const out = new Map<string, { state: PlegState; podSandboxId: string; kind: 'container' | 'sandbox'; name: string }>();
  for (const s of sandboxes) out.set(s.id, { state: sandboxPlegState(s.state), podSandboxId: s.id, kind: 'sandbox', name: s.name });
  for (const c of containers) out.set(c.id, { state: containerPlegState(c.state), podSandboxId: c.podSandboxId, kind: 'container', name: c.name });
  return out;
}

/** The events one id's move from old to new produces (kubelet's generateEvents). */
export function transitionEvents(oldState: PlegState, newState: PlegState): LifecycleEventType[] {
  if (oldState === newState) return [];
  switch (newState) {
    case 'running':
      return ['ContainerStarted'];
    case 'exited':
      return ['ContainerDied'];
    case 'unknown':
      return ['ContainerChanged'];
    case 'non-existent':
      return oldState === 'exited' ? ['ContainerRemoved'] : ['ContainerDied', 'ContainerRemoved'];
  }
}

/**
 * Every event between two snapshots.
 *
 * Only ids whose PLEG state moved are sorted and turned into events: one pass over each
 * snapshot finds them (an id in both with the same state yields no event, by the table). A node
 * of 10,000 containers with a handful of changes sorts a handful of ids, not 20,000: a sort with
 * its map lookups per comparison would be most of a relist tick's own CPU.
 */
export function diffSnapshots(previous: Snapshot, current: Snapshot): LifecycleEvent[] {
  const moved: string[] = [];
  for (const [id, after] of current) {
    if (previous.get(id)?.state !== after.state) moved.push(id);
  }
  for (const id of previous.keys()) {
    if (!current.has(id)) moved.push(id);
  }
  moved.sort((a, b) => kindRank(previous, current, a) - kindRank(previous, current, b) || (a < b ? -1 : a > b ? 1 : 0));
  const events: LifecycleEvent[] = [];
  for (const id of moved) {
    const before = previous.get(id);
    const after = current.get(id);
    const meta = (after ?? before)!;
    for (const type of transitionEvents(before?.state ?? 'non-existent', after?.state ?? 'non-existent')) {
      events.push({ type, id, podSandboxId: meta.podSandboxId, kind: meta.kind, name: meta.name });
    }
  }
  return events;
}

function kindRank(previous: Snapshot, current: Snapshot, id: string): number {
  return (current.get(id) ?? previous.get(id))?.kind === 'sandbox' ? 0 : 1;
}
