// The judgement of `npm run soak:cluster`: did the agents, at the shipped defaults, on the real
// cluster, under churn, ever give a false verdict?
//
// | what was seen over the run, per node                               | a problem                  |
// |--------------------------------------------------------------------|----------------------------|
// | the condition RuntimeRelistUnhealthy with status True              | a false True               |
// | the condition Unknown/AgentCannotObserve                           | a false cannot-observe     |
// | a scrape of nodepulse_runtime_observable at 0                      | a false cannot-observe     |
// | a gap between two renewals longer than the renew interval + 1 s,   | a lease gap                |
// | or from the last renewal to the end of the run                     |                            |
// | no renewal at all, or no scrape at all                             | nothing was watched        |
// | a run shorter than it was asked to be                              | the run was cut short      |
//
// The renew interval is the lease's own: leaseDurationSeconds × 0.25 (10 s at the defaults), and
// the lease loop adds up to 4 % of jitter to it, which the one second covers (0.4 s at 10 s).
// Renewals are read from the Lease's renewTime (the agent's clock, the same machine's), so a gap
// is the agent's own pacing, not the watch's delivery.
//
// Pure: the script collects, this judges; the table test feeds it by hand.
import { longestGap, type Gap } from '../test/matrix/lease-gaps.ts';

export interface NodeSoakRecord {
  readonly node: string;
  /** Every (status, reason) the condition was seen in, with when (ms since the run's start). */
  readonly conditions: ReadonlyArray<{ readonly atMs: number; readonly status: string; readonly reason: string }>;
  /** Every renewTime seen, ms since the run's start. */
  readonly renewalsMs: readonly number[];
  /** Every scrape of nodepulse_runtime_observable (undefined: no sample in that scrape). */
  readonly observable: ReadonlyArray<{ readonly atMs: number; readonly value: number | undefined }>;
  /**
   * Every renewTime of the node's own kubelet Lease (kube-node-lease), ms since the run's start:
   * the control plane's side of a gap. Shown beside ours; not judged.
   */
  readonly kubeletRenewalsMs?: readonly number[];
}

export interface SoakRun {
  readonly askedMs: number;
  readonly ranMs: number;
  readonly renewIntervalMs: number;
  readonly nodes: readonly NodeSoakRecord[];
}

export interface NodeSoakSummary {
  readonly node: string;
  readonly renewals: number;
  readonly longestGap: Gap | undefined;
  /** The kubelet Lease's longest gap over the run, and its longest gap overlapping ours. */
  readonly kubeletLongestGap: Gap | undefined;
  readonly kubeletGapAtOurs: Gap | undefined;
  /** The gap from the last renewal to the end of the run. */
  readonly tailGapMs: number | undefined;
  readonly trueSeen: number;
  readonly cannotObserveSeen: number;
  readonly scrapes: number;
}

export interface SoakJudgement {
  readonly ok: boolean;
  readonly problems: readonly string[];
  readonly nodes: readonly NodeSoakSummary[];
  /** The renew interval + 1 s. */
  readonly allowedGapMs: number;
}

/** The renewals from the last one at or before `fromMs` to the first one at or after `toMs`. */
export function around(renewalsMs: readonly number[], fromMs: number, toMs: number): number[] {
  const sorted = [...renewalsMs].sort((a, b) => a - b);
  const first = Math.max(0, sorted.findLastIndex((w) => w <= fromMs));
  const after = sorted.findIndex((w) => w >= toMs);
  return sorted.slice(first, after < 0 ? sorted.length : after + 1);
}

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export function judgeClusterSoak(run: SoakRun): SoakJudgement {
  const allowedGapMs = run.renewIntervalMs + 1_000;
  const problems: string[] = [];
  if (run.ranMs < run.askedMs) problems.push(`run: ${s(run.ranMs)} must last the ${s(run.askedMs)} asked for`);
  if (run.nodes.length === 0) problems.push('nodes: none must be watched');
  const nodes = run.nodes.map((n): NodeSoakSummary => {
    const trues = n.conditions.filter((c) => c.status === 'True');
    const blind = n.conditions.filter((c) => c.status === 'Unknown' && c.reason === 'AgentCannotObserve');
    const zero = n.observable.filter((o) => o.value === 0);
    for (const c of trues) problems.push(`${n.node}: condition True/${c.reason} at ${s(c.atMs)} must never be written (the runtime was fine)`);
    for (const c of blind) problems.push(`${n.node}: condition Unknown/AgentCannotObserve at ${s(c.atMs)} must never be written`);
    if (zero.length > 0) problems.push(`${n.node}: nodepulse_runtime_observable was 0 in ${zero.length} scrapes (first at ${s((zero[0] as { atMs: number }).atMs)}); it must stay 1`);
    if (n.observable.length === 0) problems.push(`${n.node}: scrapes: none must be missing (nothing was watched)`);
    const gap = longestGap(n.renewalsMs);
    const last = n.renewalsMs.length === 0 ? undefined : Math.max(...n.renewalsMs);
    const tailGapMs = last === undefined ? undefined : run.ranMs - last;
    if (n.renewalsMs.length === 0) problems.push(`${n.node}: renewals: none must be missing (the lease never moved)`);
    if (gap !== undefined && gap.lengthMs > allowedGapMs) {
      problems.push(`${n.node}: lease gap ${s(gap.lengthMs)} from ${s(gap.fromMs)} must be at most ${s(allowedGapMs)} (the renew interval + 1 s)`);
    }
    if (tailGapMs !== undefined && tailGapMs > allowedGapMs) problems.push(`${n.node}: no renewal in the last ${s(tailGapMs)} of the run; must be at most ${s(allowedGapMs)}`);
    const kubelet = n.kubeletRenewalsMs ?? [];
    const kubeletGapAtOurs = gap === undefined ? undefined : longestGap(around(kubelet, gap.fromMs, gap.fromMs + gap.lengthMs));
    return { node: n.node, renewals: new Set(n.renewalsMs).size, longestGap: gap, kubeletLongestGap: longestGap(kubelet), kubeletGapAtOurs, tailGapMs, trueSeen: trues.length, cannotObserveSeen: blind.length, scrapes: n.observable.length };
  });
  return { ok: problems.length === 0, problems, nodes, allowedGapMs };
}
