// "nodepulse's verdict comes before the kubelet's", as an inequality over nodepulse's settings and
// the kubelet's measured behaviour, for both runtime-caused classes the defaults are chosen for:
// a full hang (every CRI call hangs) and the lists hanging while Status and Version answer.
//
// nodepulse's side, from the fault's onset (t = 0), at the latest:
//
// | term                 | why it bounds                                                          |
// |----------------------|------------------------------------------------------------------------|
// | relistThreshold      | the last relist that succeeded began at or before t = 0, and the ledger |
// |                      | turns Unhealthy once it is more than the threshold old                 |
// | conditionPeriod      | the condition loop idles this long between ticks (1 s)                 |
// | 2 × apiTimeout       | a tick already in flight then (a refresh: one GET, one PATCH) ends     |
// |                      | within two requests' timeouts                                          |
// | apiTimeout           | the PATCH that writes True/RelistStale                                 |
//
// The kubelet's side, at the earliest: the smaller of what the real cluster measured for the class
// (docs/fault-matrix.md, the first Ready=False after the onset over every run) and the earliest the
// source allows (kubelet-model.ts), so a lucky measurement cannot make the inequality hold.
//
// | class        | holds when                                                              |
// |--------------|-------------------------------------------------------------------------|
// | runtime-hangs| nodepulseLatest < min(measured, R), R = the kubelet's runtimeRequestTimeout |
// | lists-hang   | nodepulseLatest < min(measured, 3 min − 1 s − d)                        |
//
// The margin is kubeletEarliest − nodepulseLatest; the inequality holds when it is above 0.
//
// The threshold also has a floor, from the relist latency measured on a real containerd under
// churn (scripts/relist-latency.ts): a runtime is judged Unhealthy only when no relist that
// succeeded began within the threshold, so the threshold must stay well above the longest gap
// between the starts of two successful relists in normal operation (the slowest relist plus one
// period: the next begins a period after the previous ends), and the deadline well above the
// slowest relist that succeeded. falseVerdictMargins() gives both ratios; the chosen defaults keep
// each at or above FALSE_VERDICT_FACTOR.
import { kubeletReadyWindow, type KubeletTimers, KUBELET_DEFAULTS } from './kubelet-model.ts';

/** How many times the worst normal figure the threshold and the deadline keep above it. */
export const FALSE_VERDICT_FACTOR = 10;

export type RuntimeClass = 'runtime-hangs' | 'lists-hang';
export const RUNTIME_CLASSES: readonly RuntimeClass[] = ['runtime-hangs', 'lists-hang'];

/** The settings nodepulse's side reads, in ms. */
export interface NodepulseTimings {
  readonly relistThresholdMs: number;
  readonly conditionPeriodMs: number;
  readonly apiTimeoutMs: number;
}

export interface VerdictOrder {
  readonly class: RuntimeClass;
  readonly nodepulseLatestMs: number;
  readonly kubeletMeasuredMs: number | undefined;
  readonly kubeletModelMs: number;
  readonly kubeletEarliestMs: number;
  readonly marginMs: number;
  readonly before: boolean;
}

/** The latest nodepulse writes True after a runtime-caused fault begins (the table above). */
export function nodepulseLatestMs(t: NodepulseTimings): number {
  return t.relistThresholdMs + t.conditionPeriodMs + 2 * t.apiTimeoutMs + t.apiTimeoutMs;
}

/**
 * For one class: nodepulse's latest verdict against the kubelet's earliest Ready=False.
 * `kubeletMeasuredMs` is the earliest the real cluster showed (undefined: not measured, the
 * model alone decides). `relistMs` is a normal PLEG relist's duration, for the model's bound.
 */
export function verdictOrder(cls: RuntimeClass, t: NodepulseTimings, kubeletMeasuredMs: number | undefined, timers: KubeletTimers = KUBELET_DEFAULTS, relistMs = 0): VerdictOrder {
  const model = kubeletReadyWindow(cls, timers, { relistMs }).earliestMs;
  if (model === undefined) throw new Error(`kubelet model: ${cls} must turn Ready False`);
  const kubeletEarliestMs = kubeletMeasuredMs === undefined ? model : Math.min(model, kubeletMeasuredMs);
  const latest = nodepulseLatestMs(t);
  return {
    class: cls,
    nodepulseLatestMs: latest,
    kubeletMeasuredMs,
    kubeletModelMs: model,
    kubeletEarliestMs,
    marginMs: kubeletEarliestMs - latest,
    before: latest < kubeletEarliestMs,
  };
}

/** The settings the false-verdict floor reads, in ms. */
export interface RelistTimings {
  readonly relistThresholdMs: number;
  readonly relistDeadlineMs: number;
  readonly relistPeriodMs: number;
}

export interface FalseVerdictMargins {
  /** The longest normal gap between two successful relists' starts: period + slowest relist. */
  readonly longestGapMs: number;
  /** threshold / longestGapMs. */
  readonly thresholdRatio: number;
  /** deadline / slowest relist. */
  readonly deadlineRatio: number;
  readonly ok: boolean;
}

/** `slowestRelistMs`: the slowest relist that succeeded under churn. */
export function falseVerdictMargins(t: RelistTimings, slowestRelistMs: number, factor = FALSE_VERDICT_FACTOR): FalseVerdictMargins {
  if (!(slowestRelistMs > 0)) throw new RangeError(`slowestRelistMs: ${slowestRelistMs} must be above 0`);
  const longestGapMs = t.relistPeriodMs + slowestRelistMs;
  const thresholdRatio = t.relistThresholdMs / longestGapMs;
  const deadlineRatio = t.relistDeadlineMs / slowestRelistMs;
  return { longestGapMs, thresholdRatio, deadlineRatio, ok: thresholdRatio >= factor && deadlineRatio >= factor };
}
