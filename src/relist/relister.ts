// The relister: one relist per tick, the only writer of the relist ledger.
//
// tick() is kubelet's Relist() for nodepulse: stamp the moment it asks (monotonic for the
// judgement, wall for people), ask for every sandbox and container together under one deadline,
// write the outcome to the ledger, and diff the answer against the previous successful one into
// lifecycle events. The loop that calls tick() every period lives elsewhere (loop/run-loop.ts);
// tests call tick() directly.
//
// Failure modes:
// - the runtime hangs: the call ends at the deadline with deadline_exceeded; until then the
//   ledger holds only "in flight since", which vouches for nothing.
// - the runtime fails: the fault (with the runtime's own words) is written; health() stays
//   Healthy until the last success ages past the threshold.
// - the loop is stopped mid-relist: the aborted relist is not written as a fault, since the
//   runtime did not fail; the ledger keeps its last reading.
// The first successful relist sets the baseline and yields no lifecycle events; every later one
// yields the events since the previous success (a failed relist in between changes nothing).
import type { Clock } from '../clock/clock.ts';
import { toFault, type CriFault, type CriFaultCode } from '../cri/cri-error.ts';
import type { Container, PodSandbox, RuntimeClient } from '../cri/types.ts';
import { EventBuffer } from './event-buffer.ts';
import type { LifecycleEvent } from './lifecycle-diff.ts';
import { LifecycleTracker } from './lifecycle-tracker.ts';
import { createRelistLedger, type RelistLedgerReader, type RelistLedgerWriter, type Stamp } from './relist-ledger.ts';

export interface RelistCounts {
  readonly pods: number;
  readonly podsReady: number;
  readonly podsByState: Readonly<Record<string, number>>;
  readonly containers: number;
  readonly containersByState: Readonly<Record<string, number>>;
}

export interface RelistOutcome {
  readonly began: Stamp;
  readonly durationMs: number;
  /** `success`, or the fault's code. */
  readonly result: 'success' | CriFaultCode;
  readonly fault: CriFault | undefined;
  readonly events: readonly LifecycleEvent[];
  readonly bytes: number;
  /** The counts from the last successful relist (this one's, when it succeeded), or undefined before one. */
  readonly counts: RelistCounts | undefined;
  /** How many older events this relist pushed out of the recent-events buffer to keep its bound. */
  readonly eventsDropped: number;
}

export interface RecordedEvent extends LifecycleEvent {
  /** When the relist that saw it began, as wall-clock microseconds. */
  readonly seenWallMicros: number;
}

export interface RelisterOptions {
  readonly client: RuntimeClient;
  readonly clock: Clock;
  /** One deadline for both listings (the agent's default: 20 s). */
  readonly deadlineMs: number;
  /** Passed to the ledger's judgement (the agent's default: 60 s). */
  readonly thresholdMs: number;
  /** How many recent lifecycle events /status keeps. Default 256. */
  readonly eventCapacity?: number;
  /** Called after every relist that was not aborted, for metrics and logs; the outcome is all it gets. Must not throw. */
  readonly onOutcome?: (outcome: RelistOutcome) => void;
}

export class Relister {
  readonly ledger: RelistLedgerReader;
  readonly #writer: RelistLedgerWriter;
  readonly #options: RelisterOptions;
  readonly #events: EventBuffer<RecordedEvent>;
  readonly #lifecycle = new LifecycleTracker();
  #succeeded = false;
  #counts: RelistCounts | undefined;

  constructor(options: RelisterOptions) {
    this.#options = options;
    const { reader, writer } = createRelistLedger(options.thresholdMs);
    this.ledger = reader;
    this.#writer = writer;
    this.#events = new EventBuffer(options.eventCapacity ?? 256);
  }

  /** One relist. Never throws: a fault is an outcome, written to the ledger. */
  async tick(signal?: AbortSignal): Promise<RelistOutcome | undefined> {
    const { clock, client, deadlineMs } = this.#options;
    const began: Stamp = { monotonicMs: clock.monotonicMs(), wallMicros: clock.wallMicros() };
    this.#writer.began(began);
    let outcome: RelistOutcome;
    try {
      const listing = await client.relist(signal === undefined ? { deadlineMs } : { deadlineMs, signal });
      const moved = this.#lifecycle.update(listing.sandboxes, listing.containers);
      // The first success is the baseline: what it lists was not seen to start.
      const events = this.#succeeded ? moved : [];
      this.#succeeded = true;
      this.#counts = countListing(listing.sandboxes, listing.containers);
      this.#writer.succeeded(began);
      const droppedBefore = this.#events.dropped;
      for (const event of events) this.#events.push({ ...event, seenWallMicros: began.wallMicros });
      outcome = {
        began,
        durationMs: clock.monotonicMs() - began.monotonicMs,
        result: 'success',
        fault: undefined,
        events,
        bytes: listing.bytes,
        counts: this.#counts,
        eventsDropped: this.#events.dropped - droppedBefore,
      };
    } catch (err) {
      if (signal?.aborted === true) return undefined;
      const fault = toFault(err);
      this.#writer.failed(began, fault);
      outcome = { began, durationMs: clock.monotonicMs() - began.monotonicMs, result: fault.code, fault, events: [], bytes: 0, counts: this.#counts, eventsDropped: 0 };
    }
    this.#options.onOutcome?.(outcome);
    return outcome;
  }

  /** The counts from the last successful relist, or undefined before one. */
  counts(): RelistCounts | undefined {
    return this.#counts;
  }

  /** Recent lifecycle events, oldest first, bounded. */
  recentEvents(): RecordedEvent[] {
    return this.#events.toArray();
  }

  /** Ids known from the last successful relist (empty before one). */
  get knownIds(): number {
    return this.#lifecycle.size;
  }
}

export function countListing(sandboxes: readonly PodSandbox[], containers: readonly Container[]): RelistCounts {
  const podsByState: Record<string, number> = { SANDBOX_READY: 0, SANDBOX_NOTREADY: 0 };
  for (const s of sandboxes) podsByState[s.state] = (podsByState[s.state] ?? 0) + 1;
  const containersByState: Record<string, number> = {
    CONTAINER_CREATED: 0,
    CONTAINER_RUNNING: 0,
    CONTAINER_EXITED: 0,
    CONTAINER_UNKNOWN: 0,
  };
  for (const c of containers) containersByState[c.state] = (containersByState[c.state] ?? 0) + 1;
  return {
    pods: sandboxes.length,
    podsReady: podsByState['SANDBOX_READY'] ?? 0,
    podsByState,
    containers: containers.length,
    containersByState,
  };
}
