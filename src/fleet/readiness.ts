// The fleet's readiness: one verdict per node, from its agent lease as a READER sees it.
//
// It replaces "compare renewTime with my wall clock" with the rule kubelet's node lifecycle
// controller uses (tryUpdateNodeHealth): a lease is fresh while its renewTime has ADVANCED
// within the grace period, timed on the reader's own monotonic clock. Remote clocks never
// decide: renewTime is only compared with earlier renewTimes of the same lease, never with now.
//
// | the node's agent lease, as observed                            | verdict  |
// |----------------------------------------------------------------|----------|
// | none exists                                                     | Missing  |
// | renewTime advanced (or first seen) ≤ grace ago, reader's clock | Fresh    |
// | renewTime advanced (or first seen) > grace ago (strict `>`)    | Stale    |
// | single listing only: wall age now − renewTime ≤ grace          | Fresh    |
// | single listing only: wall age > grace, or no renewTime          | Stale    |
//
// - The first sighting of a lease counts as an observation at the moment it was seen, as
//   upstream sets probeTimestamp on first sight. A reader that starts late therefore needs one
//   grace period before it can call a dead agent's lease stale.
// - A renewTime that moves backwards is not an advance. The highest renewTime seen is kept
//   (upstream keeps the saved lease unless the new one is strictly later), so a lease that goes
//   back and then forward again counts only once it passes the old high-water mark.
// - A single listing cannot observe an advance, so it falls back to the wall age and says so
//   (`basis: 'wall-clock'`). Its failure mode is the one the rule above avoids: a reader whose
//   clock is off from the writer's by more than the grace period judges wrongly.
// - Which nodes are judged: only those matching the node selector, and not those younger than
//   the grace period (their agent may not have written yet). A node's age is the wall age of its
//   creationTimestamp, the only record of its birth; a reader whose clock lags the API server
//   reads nodes as young for longer, which errs towards not judging. Cordoned nodes are judged
//   and reported but never markable: someone is already working on them.
// - The wall age is given for people in every mode.
import type { LabelSelector } from './label-selector.ts';
import { matchesSelector } from './label-selector.ts';

export type Verdict = 'Fresh' | 'Stale' | 'Missing';

/** The reader's record of one lease over time. Plain data; observeLease() derives the next one. */
export interface LeaseSighting {
  /** The highest renewTime seen, µs since the epoch (undefined while the lease has none). */
  readonly renewTimeMicros: number | undefined;
  /** Reader's monotonic ms when renewTime last advanced, or when the lease was first seen. */
  readonly lastMovedMs: number;
  /** Reader's monotonic ms of the first sighting. */
  readonly firstSeenMs: number;
  /** Advances seen after the first sighting. */
  readonly advances: number;
}

/** What the reader knows of a Node, trimmed to what the judgement needs. */
export interface NodeFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** creationTimestamp, µs since the epoch. */
  readonly createdWallMicros: number | undefined;
  /** spec.unschedulable: the node is cordoned. */
  readonly unschedulable: boolean;
  /** The RuntimeRelistUnhealthy condition as the Node carries it now. */
  readonly condition: NodeCondition | undefined;
}

export interface NodeCondition {
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string | undefined;
}

export interface ReadinessOptions {
  readonly graceMs: number;
  readonly selector: LabelSelector;
  /** 'observed': the reader's-clock rule. 'single-listing': wall age, as a fallback. */
  readonly basis: 'reader-clock' | 'wall-clock';
}

export type NotJudged = 'selector' | 'too-young';

export interface NodeReadiness {
  readonly node: string;
  readonly verdict: Verdict;
  /** Whether the verdict counts (exit code, marking); see notJudged for why not. */
  readonly judged: boolean;
  readonly notJudged: NotJudged | undefined;
  readonly cordoned: boolean;
  /** judged and not cordoned: the controller may mark it. */
  readonly markable: boolean;
  readonly basis: 'reader-clock' | 'wall-clock';
  /** now − renewTime on the wall clock, for people; undefined without a lease or renewTime. */
  readonly leaseWallAgeMs: number | undefined;
  /** Reader's ms since the lease last moved (or was first seen); undefined without a lease. */
  readonly sinceMovedMs: number | undefined;
  /** Whether the reader has seen the lease advance (false: only the first sighting). */
  readonly seenMoving: boolean;
  readonly renewTimeMicros: number | undefined;
  readonly condition: NodeCondition | undefined;
}

/** The next sighting of a lease whose renewTime now reads renewTimeMicros, seen at nowMs. */
export function observeLease(prev: LeaseSighting | undefined, renewTimeMicros: number | undefined, nowMs: number): LeaseSighting {
  if (prev === undefined) return { renewTimeMicros, lastMovedMs: nowMs, firstSeenMs: nowMs, advances: 0 };
  const advanced = renewTimeMicros !== undefined && (prev.renewTimeMicros === undefined || renewTimeMicros > prev.renewTimeMicros);
  if (!advanced) return prev;
  return { ...prev, renewTimeMicros, lastMovedMs: nowMs, advances: prev.advances + 1 };
}

/** THE judgement of one node at reader time nowMs (monotonic) and wallNowMicros (for ages). */
export function judgeNode(
  node: NodeFacts,
  sighting: LeaseSighting | undefined,
  nowMs: number,
  wallNowMicros: number,
  options: ReadinessOptions,
): NodeReadiness {
  const graceMicros = options.graceMs * 1000;
  const renew = sighting?.renewTimeMicros;
  const leaseWallAgeMs = renew === undefined ? undefined : (wallNowMicros - renew) / 1000;
  const sinceMovedMs = sighting === undefined ? undefined : nowMs - sighting.lastMovedMs;

  let verdict: Verdict;
  if (sighting === undefined) verdict = 'Missing';
  else if (options.basis === 'reader-clock') verdict = (sinceMovedMs ?? 0) > options.graceMs ? 'Stale' : 'Fresh';
  else verdict = renew === undefined || wallNowMicros - renew > graceMicros ? 'Stale' : 'Fresh';

  let notJudged: NotJudged | undefined;
  if (!matchesSelector(options.selector, node.labels)) notJudged = 'selector';
  else if (node.createdWallMicros !== undefined && wallNowMicros - node.createdWallMicros < graceMicros) notJudged = 'too-young';

  const judged = notJudged === undefined;
  return {
    node: node.name,
    verdict,
    judged,
    notJudged,
    cordoned: node.unschedulable,
    markable: judged && !node.unschedulable,
    basis: options.basis,
    leaseWallAgeMs,
    sinceMovedMs,
    seenMoving: (sighting?.advances ?? 0) > 0,
    renewTimeMicros: renew,
    condition: node.condition,
  };
}

/** Judges every node; leases are keyed by node name (the agent names its lease after its node). */
export function judgeFleet(
  nodes: Iterable<NodeFacts>,
  leases: ReadonlyMap<string, LeaseSighting>,
  nowMs: number,
  wallNowMicros: number,
  options: ReadinessOptions,
): NodeReadiness[] {
  const out: NodeReadiness[] = [];
  for (const node of nodes) out.push(judgeNode(node, leases.get(node.name), nowMs, wallNowMicros, options));
  out.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  return out;
}

export interface FleetSummary {
  readonly judged: number;
  readonly fresh: number;
  readonly stale: number;
  readonly missing: number;
  readonly notJudged: number;
  /** Every judged node is Fresh (vacuously true for an empty fleet). */
  readonly allFresh: boolean;
}

export function summarizeFleet(readings: readonly NodeReadiness[]): FleetSummary {
  let judged = 0;
  let fresh = 0;
  let stale = 0;
  let missing = 0;
  for (const r of readings) {
    if (!r.judged) continue;
    judged++;
    if (r.verdict === 'Fresh') fresh++;
    else if (r.verdict === 'Stale') stale++;
    else missing++;
  }
  return { judged, fresh, stale, missing, notJudged: readings.length - judged, allFresh: fresh === judged };
}
