// Leader election's rules: what a candidate does next and whether it believes it leads, as pure
// functions of what it saw and its own clock readings. The elector (leader-elector.ts) only
// reads and writes the Lease, keeps the timers and runs the terms; every choice it makes is
// taken here. `now` is the candidate's monotonic clock; `observedAt` is when it last saw the
// record change; `lastWriteOk` is when its own last successful write was SENT.
//
// | the candidate sees      | condition                         | it does                          | it believes it leads     |
// |-------------------------|-----------------------------------|----------------------------------|--------------------------|
// | no lease                | –                                 | create it, holding               | once the create succeeds |
// | held by itself          | now − lastWriteOk < renewDeadline | renew (PUT with resourceVersion) | yes                      |
// | held by itself          | now − lastWriteOk ≥ renewDeadline | stop leading; read again         | no, at once              |
// | held by another         | now − observedAt < leaseDuration  | wait retryPeriod (jittered)      | no                       |
// | held by another         | now − observedAt ≥ leaseDuration  | take over, leaseTransitions + 1  | once the update succeeds |
// | empty holder (released) | –                                 | take over at once                | once the update succeeds |
// | any write               | 409 Conflict                      | re-read, count nothing renewed   | no, at once              |
// | any write               | other error or timeout            | retry after retryPeriod          | until renewDeadline ends |
//
// Why each row:
// - No lease: two candidates may create at once; the API server lets one create succeed and
//   answers AlreadyExists to the other, so only the successful create names the holder.
// - Held by itself, in time: it renews straight from its own last write, without reading first
//   (client-go's fast path). The write carries that write's resourceVersion, so any write by
//   someone else since then makes it a conflict rather than an overwrite.
// - Held by itself, too late: the others count leaseDuration from when they SAW its last write
//   land; it counts renewDeadline (< leaseDuration) from when it SENT that write. Stopping here
//   keeps that margin whatever the clocks' offsets. It then reads as a candidate: a record that
//   still names it is renewed (acquireTime and leaseTransitions kept), believed once written.
// - Held by another, in time: it holds no belief, and waits; the wait ends just after the lease
//   would expire, so a follower never sleeps a whole retry period past the expiry.
// - Held by another, expired: expiry is timed on its own monotonic clock from when the record
//   was last seen to change (holder, renewTime, acquireTime or leaseTransitions), never from
//   the record's renewTime: that is the holder's wall clock, skewed by any amount. The duration
//   is the one the holder announced (leaseDurationSeconds), ours when the record has none.
//   leaseTransitions + 1 and a fresh acquireTime mark the change of holder.
// - Empty holder: a clean stop released the lease (holder ""), so there is nothing to wait for.
// - 409 on any write (and AlreadyExists on a create, NotFound on an update): someone wrote
//   since it read; whoever it was, it no longer knows that it leads. It forgets the record, so
//   the next step reads it again.
// - Other error or timeout: the write may or may not have landed. Belief is not extended by it
//   (which can only make it stop early, never lead late) and stands until its deadline.
//
// Assumptions: the clocks run at about the same rate (their offsets do not matter);
// renewDeadline < leaseDuration (validated where the timings are configured). The wall clock is
// read only as the MicroTime `stamp` written into renewTime and acquireTime; no rule reads it.
import { isAlreadyExists, isConflict, isNotFound } from '../kube/kube-api-error.ts';
import type { LeaseSpec } from '../kube/kube-types.ts';

/** The two windows the rules time; retryPeriod and its jitter are the elector's scheduling. */
export interface ElectionTimings {
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
}

export interface Candidate extends ElectionTimings {
  readonly identity: string;
}

/** A record as the candidate saw it, and when (its monotonic ms) it last saw the record change. */
export interface Sighting {
  readonly spec: LeaseSpec;
  readonly observedAtMs: number;
}

/**
 * What the candidate has to go on. `memory`: what it kept from its last read or write, before
 * reading this step. `read`: what a read just answered (no sighting: the lease does not exist).
 */
export interface Seen {
  readonly via: 'memory' | 'read';
  readonly sighting: Sighting | undefined;
}

export interface Readings {
  readonly nowMs: number;
  /** When its last successful write was sent; undefined while it holds no belief. */
  readonly lastWriteOkMs: number | undefined;
  /** Its wall clock as MicroTime text: written into the record, never judged by. */
  readonly stamp: string;
}

interface StepBase {
  /** Set when a belief still held must end now, with the reason. */
  readonly endsBelief?: string;
}

/** `believes` is the table's last column; `once-written`: not now, the write's success decides. */
export type ElectionStep =
  | (StepBase & { readonly action: 'read'; readonly believes: 'no' })
  | (StepBase & { readonly action: 'create'; readonly believes: 'once-written'; readonly spec: LeaseSpec })
  | (StepBase & { readonly action: 'renew'; readonly believes: 'yes' | 'once-written'; readonly spec: LeaseSpec })
  | (StepBase & { readonly action: 'take-over'; readonly believes: 'once-written'; readonly spec: LeaseSpec })
  /** Wait a jittered retryPeriod, but no longer than wakeWithinMs (just past the expiry). */
  | (StepBase & { readonly action: 'wait'; readonly believes: 'no'; readonly wakeWithinMs: number });

/** After a read, the step is never another read. */
export type StepAfterRead = Exclude<ElectionStep, { action: 'read' }>;

/** When belief from a write sent at lastWriteOkMs ends (−∞ without one). */
export function beliefEndsAtMs(lastWriteOkMs: number | undefined, renewDeadlineMs: number): number {
  return lastWriteOkMs === undefined ? Number.NEGATIVE_INFINITY : lastWriteOkMs + renewDeadlineMs;
}

/** now − lastWriteOk < renewDeadline, written as the deadline the elector's timer also uses. */
export function leadsAt(lastWriteOkMs: number | undefined, nowMs: number, renewDeadlineMs: number): boolean {
  return nowMs < beliefEndsAtMs(lastWriteOkMs, renewDeadlineMs);
}

/** Records a sighting: observedAt moves only when one of the fields a holder writes changed. */
export function observeRecord(prev: Sighting | undefined, spec: LeaseSpec, nowMs: number): Sighting {
  const unchanged = prev !== undefined && recordKey(prev.spec) === recordKey(spec);
  return { spec, observedAtMs: unchanged ? prev.observedAtMs : nowMs };
}

function recordKey(s: LeaseSpec): string {
  return `${s.holderIdentity ?? ''}|${s.renewTime ?? ''}|${s.acquireTime ?? ''}|${s.leaseTransitions ?? 0}`;
}

/** One step of the table's first six rows. */
export function decideElectionStep(seen: Seen & { readonly via: 'read' }, now: Readings, self: Candidate): StepAfterRead;
export function decideElectionStep(seen: Seen, now: Readings, self: Candidate): ElectionStep;
export function decideElectionStep(seen: Seen, now: Readings, self: Candidate): ElectionStep {
  const { sighting } = seen;
  const believed = leadsAt(now.lastWriteOkMs, now.nowMs, self.renewDeadlineMs);
  if (sighting === undefined) {
    if (seen.via === 'memory') return { action: 'read', believes: 'no' };
    return { action: 'create', believes: 'once-written', spec: createdSpec(self, now.stamp) };
  }
  const spec = sighting.spec;
  const holder = spec.holderIdentity ?? '';
  if (holder === self.identity) {
    if (believed) return { action: 'renew', believes: 'yes', spec: renewedSpec(spec, self, now.stamp) };
    if (seen.via === 'memory') {
      return now.lastWriteOkMs === undefined
        ? { action: 'read', believes: 'no' }
        : { action: 'read', believes: 'no', endsBelief: 'renew deadline passed' };
    }
    return { action: 'renew', believes: 'once-written', spec: renewedSpec(spec, self, now.stamp) };
  }
  // Anything else remembered is stale by the time it matters: read it again before judging.
  if (seen.via === 'memory') return { action: 'read', believes: 'no' };
  if (holder === '') return { action: 'take-over', believes: 'once-written', spec: takenSpec(spec, self, now.stamp) };
  const endsBelief = `another holder: ${holder}`;
  const durationMs = (spec.leaseDurationSeconds ?? self.leaseDurationMs / 1000) * 1000;
  const expiresAtMs = sighting.observedAtMs + durationMs;
  if (now.nowMs < expiresAtMs) return { action: 'wait', believes: 'no', endsBelief, wakeWithinMs: expiresAtMs - now.nowMs + 1 };
  return { action: 'take-over', believes: 'once-written', spec: takenSpec(spec, self, now.stamp), endsBelief };
}

/** The outcome of a create or update, as the elector classifies the API's answer. */
export type WriteOutcome = 'ok' | 'conflict' | 'failed';

/** The write a step sends: a POST for a create, a PUT with the resourceVersion read for the others. */
export type ElectionWrite = 'create' | 'renew' | 'take-over';

/**
 * Whether a write that failed lost the race (`conflict`: someone wrote, created or deleted the
 * lease since it was read) or only failed (`failed`: it may or may not have landed). The table
 * is docs/design.md's "Whether a failed write lost the race", under "Leader election".
 */
export function failedWrite(write: ElectionWrite, err: unknown): Exclude<WriteOutcome, 'ok'> {
  const lost = write === 'create' ? isAlreadyExists(err) || isConflict(err) : isConflict(err) || isNotFound(err);
  return lost ? 'conflict' : 'failed';
}

export interface AfterWrite {
  /** The belief from now on: sentAtMs on success, none on a conflict, unchanged on a failure. */
  readonly lastWriteOkMs: number | undefined;
  /** Set when a belief held must end now. */
  readonly endsBelief?: string;
  /** Forget the record, so the next step reads it. */
  readonly reread: boolean;
  /** A renewal every retryPeriod exactly (client-go's renew loop); anything else jittered. */
  readonly next: 'retry-period' | 'jittered-retry';
}

/** The table's two "any write" rows, and the success that both "once written" cells wait for. */
export function afterWrite(outcome: WriteOutcome, sentAtMs: number, lastWriteOkMs: number | undefined): AfterWrite {
  switch (outcome) {
    case 'ok':
      return { lastWriteOkMs: sentAtMs, reread: false, next: 'retry-period' };
    case 'conflict':
      return { lastWriteOkMs: undefined, endsBelief: 'write conflict', reread: true, next: 'jittered-retry' };
    case 'failed':
      return { lastWriteOkMs, reread: false, next: 'jittered-retry' };
  }
}

/** A clean stop's release: nobody holds it, and it expires in a second if read as held. */
export function releasedSpec(spec: LeaseSpec, stamp: string): LeaseSpec {
  return { ...spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: stamp, renewTime: stamp };
}

function createdSpec(self: Candidate, stamp: string): LeaseSpec {
  return { holderIdentity: self.identity, leaseDurationSeconds: self.leaseDurationMs / 1000, acquireTime: stamp, renewTime: stamp, leaseTransitions: 0 };
}

function renewedSpec(spec: LeaseSpec, self: Candidate, stamp: string): LeaseSpec {
  return {
    ...spec,
    holderIdentity: self.identity,
    leaseDurationSeconds: self.leaseDurationMs / 1000,
    acquireTime: spec.acquireTime !== undefined ? spec.acquireTime : stamp,
    renewTime: stamp,
    leaseTransitions: spec.leaseTransitions ?? 0,
  };
}

function takenSpec(spec: LeaseSpec, self: Candidate, stamp: string): LeaseSpec {
  return {
    ...spec,
    holderIdentity: self.identity,
    leaseDurationSeconds: self.leaseDurationMs / 1000,
    acquireTime: stamp,
    renewTime: stamp,
    leaseTransitions: (spec.leaseTransitions ?? 0) + 1,
  };
}
