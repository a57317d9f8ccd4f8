// The relister's running form of the lifecycle diff: what diffSnapshots(previous,
// snapshotOf(sandboxes, containers)) yields, computed on one map kept for the relister's life.
//
// Why: the pure diff builds a new snapshot per relist (a map entry, an object and the decoded id
// and name strings per item) and keeps it until the next relist, so every relist's snapshot
// outlives a young-generation collection or two and is copied, then promoted, then collected by a
// full mark-compact: steady work for the garbage collector on a node where nothing changes. This
// tracker keeps its entries and updates them in place, so a relist in which nothing moved retains
// nothing new, and the decoded listing dies young.
//
// Semantics are exactly the pure diff's (lifecycle-diff.ts; a property test holds it to them):
//   - an id listed twice in one relist takes its last listing (containers after sandboxes), and
//     its events compare that against the previous relist;
//   - an entry keeps the id's latest pod, kind and name, which its events carry; an id that
//     vanished carries what it had when last listed;
//   - events come sandboxes first, then containers, each by id.
// A string equal to the one held is not stored again, so an unchanged item leaves its entry as
// it was.
import type { Container, PodSandbox } from '../cri/types.ts';
import { containerPlegState, sandboxPlegState, transitionEvents, type LifecycleEvent, type PlegState } from './lifecycle-diff.ts';

interface Entry {
  state: PlegState;
  podSandboxId: string;
  kind: 'container' | 'sandbox';
  name: string;
  /** The relist that last listed it. */
  seen: number;
  /** Its state before that relist ('non-existent' when that relist first listed it). */
  before: PlegState;
}

export class LifecycleTracker {
  readonly #entries = new Map<string, Entry>();
  #relist = 0;

  /** Ids the last relist listed. */
  get size(): number {
    return this.#entries.size;
  }

  /** Takes one relist's listing; returns the events since the previous one. */
  update(sandboxes: readonly PodSandbox[], containers: readonly Container[]): LifecycleEvent[] {
    const relist = ++this.#relist;
    // Ids that may have moved: listed for the first time, or with a state other than the one
    // held. An id listed twice may appear twice; its final state decides.
    const candidates: string[] = [];
    for (const s of sandboxes) this.#list(relist, candidates, s.id, sandboxPlegState(s.state), s.id, 'sandbox', s.name);
    for (const c of containers) this.#list(relist, candidates, c.id, containerPlegState(c.state), c.podSandboxId, 'container', c.name);

    const moved: { id: string; entry: Entry; before: PlegState; after: PlegState }[] = [];
    for (const id of candidates.length > 1 ? new Set(candidates) : candidates) {
      const entry = this.#entries.get(id)!;
      if (entry.state !== entry.before) moved.push({ id, entry, before: entry.before, after: entry.state });
    }
    for (const [id, entry] of this.#entries) {
      if (entry.seen === relist) continue;
      this.#entries.delete(id);
      moved.push({ id, entry, before: entry.state, after: 'non-existent' });
    }
    if (moved.length === 0) return [];

    const rank = (kind: Entry['kind']): number => (kind === 'sandbox' ? 0 : 1);
    moved.sort((a, b) => rank(a.entry.kind) - rank(b.entry.kind) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const events: LifecycleEvent[] = [];
    for (const { id, entry, before, after } of moved) {
      for (const type of transitionEvents(before, after)) {
        events.push({ type, id, podSandboxId: entry.podSandboxId, kind: entry.kind, name: entry.name });
      }
    }
    return events;
  }

  #list(relist: number, candidates: string[], id: string, state: PlegState, podSandboxId: string, kind: Entry['kind'], name: string): void {
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      this.#entries.set(id, { state, podSandboxId, kind, name, seen: relist, before: 'non-existent' });
      candidates.push(id);
      return;
    }
    if (entry.seen !== relist) {
      entry.seen = relist;
      entry.before = entry.state;
    }
    // An id whose final state differs from its state before this relist changed state at some
    // listing, and was pushed there.
    if (entry.state !== state) {
      entry.state = state;
      candidates.push(id);
    }
    if (entry.podSandboxId !== podSandboxId) entry.podSandboxId = podSandboxId;
    if (entry.kind !== kind) entry.kind = kind;
    if (entry.name !== name) entry.name = name;
  }
}
