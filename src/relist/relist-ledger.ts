// The relist ledger, and THE judgement of the runtime's health (kubelet's PLEG Healthy()).
//
// It replaces "is the runtime up?" guesses with one reading: when did a relist that the runtime
// answered last BEGIN? Every relist is stamped when it asked, before the call, on the monotonic
// clock (as kubelet's PLEG stamps relistTime before it lists), so a slow answer vouches for the
// moment it asked, not the moment it arrived. A relist still in flight is evidence of nothing:
// a hung one simply leaves the last success to age out.
//
// | relists so far                                      | the last to finish      | RuntimeHealth                          |
// |-----------------------------------------------------|-------------------------|----------------------------------------|
// | none has finished                                   | –                       | NotYetObserved (silent)                |
// | none has succeeded                                  | failed, blaming the     | NotYetObserved (failing, the runtime's |
// |                                                     | runtime                 | error)                                 |
// | none has succeeded                                  | failed, blaming the     | CannotObserve (its cause), at once     |
// |                                                     | agent                   |                                        |
// | the last success began ≤ threshold ago              | anything                | Healthy, even while later relists fail |
// | the last success began > threshold ago (strict `>`) | failed after it,        | CannotObserve (its cause)              |
// |                                                     | blaming the agent       |                                        |
// | the last success began > threshold ago              | failed after it,        | Unhealthy (failing)                    |
// |                                                     | blaming the runtime     |                                        |
// | the last success began > threshold ago              | none since it (a hung   | Unhealthy (silent)                     |
// |                                                     | relist, or a loop that  |                                        |
// |                                                     | stopped asking)         |                                        |
//
// Whom a failure blames is its cause (cri/fault-cause.ts). CannotObserve is the agent saying it
// cannot see the runtime (a socket it may not open, an answer it cannot decode, no socket at
// all, ...): nothing is known of the runtime then, so it is never Unhealthy, and no verdict
// that remediates a node may come of it. It needs no threshold while nothing ever succeeded: a
// second agent-caused failure says no more than the first, and readiness (http/) must see it at
// once to stop a rollout of an agent that cannot observe. Past a success it waits for the
// threshold, as any failure does: a success within the threshold is Healthy, whatever failed
// after it. A relist in flight counts for nothing, so a hung one leaves the last finished
// relist's cause in place until its deadline ends it as the runtime's (deadline_exceeded).
//
// The writer is private to the relister: createRelistLedger() hands the writer to its caller
// (the Relister) and everything else gets only the reader, so nothing but a relist can record a
// success. There is no second threshold anywhere: the lease, the condition, /healthz and the
// metrics all read health() from here.
import type { CriFault } from '../cri/cri-error.ts';
import { isAgentCause, type AgentCause } from '../cri/fault-cause.ts';
import { formatDuration } from '../clock/duration.ts';

/** A moment on both clocks: monotonic for judgement, wall (µs) for people. */
export interface Stamp {
  readonly monotonicMs: number;
  readonly wallMicros: number;
}

export type RuntimeHealth =
  | { readonly state: 'NotYetObserved'; readonly why: 'silent'; readonly message: string }
  | { readonly state: 'NotYetObserved'; readonly why: 'failing'; readonly fault: CriFault; readonly message: string }
  | { readonly state: 'Healthy'; readonly lastSuccess: Stamp; readonly lastFault: CriFault | undefined; readonly message: string }
  | {
      readonly state: 'Unhealthy';
      readonly why: 'failing' | 'silent';
      readonly lastSuccess: Stamp;
      readonly lastFault: CriFault | undefined;
      readonly message: string;
    }
  | {
      readonly state: 'CannotObserve';
      /** The agent-caused failure mode of the last relist to finish. */
      readonly why: AgentCause;
      readonly fault: CriFault;
      /** The last success, when one ever was (past the threshold). */
      readonly lastSuccess: Stamp | undefined;
      readonly message: string;
    };

export type RuntimeHealthState = RuntimeHealth['state'];
/** Every state, in the order of the table. */
export const RUNTIME_HEALTH_STATES: readonly RuntimeHealthState[] = ['NotYetObserved', 'CannotObserve', 'Healthy', 'Unhealthy'];

/** What the ledger holds; plain data, for /status and the health function. */
export interface LedgerRecord {
  /** When the last relist that the runtime answered began. */
  readonly lastSuccess: Stamp | undefined;
  /** When the last relist to finish (success or failure) began, and its fault if it failed. */
  readonly lastFinished: { readonly began: Stamp; readonly fault: CriFault | undefined } | undefined;
  /** When the relist now in flight began, if one is. */
  readonly inFlightSince: Stamp | undefined;
}

export interface RelistLedgerReader {
  readonly thresholdMs: number;
  record(): LedgerRecord;
  /** THE judgement of the runtime at monotonic time nowMs. */
  health(nowMs: number): RuntimeHealth;
}

export interface RelistLedgerWriter {
  began(at: Stamp): void;
  succeeded(began: Stamp): void;
  failed(began: Stamp, fault: CriFault): void;
}

/** Creates a ledger; the writer goes to the relister alone. */
export function createRelistLedger(thresholdMs: number): { reader: RelistLedgerReader; writer: RelistLedgerWriter } {
  let record: LedgerRecord = { lastSuccess: undefined, lastFinished: undefined, inFlightSince: undefined };
  const reader: RelistLedgerReader = {
    thresholdMs,
    record: () => record,
    health: (nowMs) => judgeRuntime(record, nowMs, thresholdMs),
  };
  const writer: RelistLedgerWriter = {
    began: (at) => {
      record = { ...record, inFlightSince: at };
    },
    succeeded: (began) => {
      record = { lastSuccess: began, lastFinished: { began, fault: undefined }, inFlightSince: undefined };
    },
    failed: (began, fault) => {
      record = { ...record, lastFinished: { began, fault }, inFlightSince: undefined };
    },
  };
  return { reader, writer };
}

/** The pure judgement over a ledger record. See the table in the module header. */
export function judgeRuntime(record: LedgerRecord, nowMs: number, thresholdMs: number): RuntimeHealth {
  const { lastSuccess, lastFinished } = record;
  const lastFault = lastFinished?.fault;
  if (lastSuccess === undefined) {
    if (lastFault === undefined) {
      return { state: 'NotYetObserved', why: 'silent', message: 'relist has yet to be successful' };
    }
    if (isAgentCause(lastFault.cause)) return cannotObserve(lastFault.cause, lastFault, undefined, 'no relist has succeeded since the agent started');
    return {
      state: 'NotYetObserved',
      why: 'failing',
      fault: lastFault,
      message: `relist has yet to be successful: ${lastFault.code}: ${lastFault.message}`,
    };
  }
  const age = nowMs - lastSuccess.monotonicMs;
  if (age <= thresholdMs) {
    return { state: 'Healthy', lastSuccess, lastFault, message: `relist was last seen active ${formatDuration(age)} ago` };
  }
  // Past the threshold: "failing" when the last relist to finish failed after the last success,
  // "silent" when none has finished since it (a hung relist, or a loop that stopped asking).
  const failing = lastFault !== undefined && lastFinished !== undefined && lastFinished.began.monotonicMs > lastSuccess.monotonicMs;
  const base = `relist was last seen active ${formatDuration(age)} ago; threshold is ${formatDuration(thresholdMs)}`;
  if (failing && isAgentCause(lastFault.cause)) return cannotObserve(lastFault.cause, lastFault, lastSuccess, base);
  return {
    state: 'Unhealthy',
    why: failing ? 'failing' : 'silent',
    lastSuccess,
    lastFault,
    message: failing && lastFault !== undefined ? `${base}; last relist failed: ${lastFault.code}: ${lastFault.message}` : `${base}; no relist has finished since`,
  };
}

function cannotObserve(why: AgentCause, fault: CriFault, lastSuccess: Stamp | undefined, since: string): RuntimeHealth {
  return {
    state: 'CannotObserve',
    why,
    fault,
    lastSuccess,
    message: `the agent cannot observe the runtime (${why}): ${fault.message}; ${since}`,
  };
}
