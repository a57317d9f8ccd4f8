// The fault matrix's rows: for each fault, what must be seen, what must not, in which order, and
// each within a window derived from the settings (nodepulse's, the reader's, the kubelet's and
// the DaemonSet's probes). The cluster test runs the faults and judges what it saw with
// row-judge.ts; `npm run matrix:cluster` does the same at the shipped defaults and records it.
//
// Signals (what the cluster test watches; names are the SIG helpers below):
//   kubelet Ready=False|Unknown|True   the Node's Ready condition, by whoever wrote it
//   condition <status>/<reason>        RuntimeRelistUnhealthy, by the agent or the controller
//   lease renewed                      every renewTime (the writer's clock, the same machine's)
//   lease stopped / lease moves        the renewal before the first gap past one renew interval
//                                      and the one after it (lease-gaps.ts)
//   fleet Stale|Fresh                  `nodepulse fleet --watch -o json`'s verdict for the node
//
// Windows, from the fault's onset unless anchored to another signal (T threshold, P period, d
// the slowest normal relist, D deadline, R the agent's renew interval, L one API request here,
// Pc the condition loop's period, G the reader's grace, Mc the controller's monitor period, s the
// observation slack):
//
// | row                      | nodepulse must                                      | kubelet (kubelet-model.ts)   |
// |--------------------------|-----------------------------------------------------|------------------------------|
// | runtime-hangs            | True/RelistStale in [T−P−d, T+Pc+3L+s]; lease       | Ready=False [120 s, 130.4 s] |
// |                          | stopped in [T−P−d−1.04R−L, T]; fleet Stale G after  | (full run), else Ready until |
// |                          | it; never AgentLeaseStale; back False, moving, Fresh| the fault ends               |
// | lists-hang               | as runtime-hangs                                    | PLEG: [179 s, 190.4 s]       |
// | lists-slow (D + 2 s)     | as runtime-hangs; back after one more deadline       | never                        |
// | runtime-refuses          | as runtime-hangs                                    | [25 s, 40.4 s], both runs    |
// | start-while-hung/refused | True/RelistNeverSucceeded in [T, T+start+Pc+3L+s];  | as hangs / refuses           |
// |                          | never AgentCannotObserve; no renewal                |                              |
// | socket-eacces            | Unknown/AgentCannotObserve in [T, T+start+Pc+3L+s]; | never                        |
// | no-socket                | never True for 2T; no renewal; back once it can see |                              |
// | answer-undecodable       | Unknown/AgentCannotObserve in [T−P−d, T+Pc+3L+s];   | never (only the agent's calls|
// |                          | never True for 2T; lease stopped by T               | are garbled)                 |
// | agent-wedged             | no condition change by the agent; lease stopped by  | never                        |
// |                          | the onset; moves after the liveness kill and restart|                              |
// | kubelet-stopped          | nothing changes: no condition, the lease renews,    | Unknown [39.6 s, 55 s]       |
// |                          | fleet stays Fresh                                   |                              |
// | api-unreachable          | lease stopped by the onset, moves after; fleet Stale| never                        |
// |                          | then Fresh; AgentLeaseStale by the controller, then |                              |
// |                          | False/RelistHealthy once the lease moves            |                              |
//
// The controller's Unknown/AgentLeaseStale: in the runtime rows it must never appear (the agent's
// True lands before the lease is stale, a rule the builder checks of the settings); where an
// agent is restarted it may appear, G after the old agent's last renewal, and never after the
// agent spoke.
//
// In CI (kubeletInFull false) the kubelet's windows are not waited for: a row asserts only that
// Ready stayed True until its fault ended, or until just before the kubelet's earliest, whichever
// comes first; the kubelet-stopped row watches nodepulse's side alone, for as long as a runtime
// row. And a row waits for the readers (fleet's Stale, the controller's mark) only when it is in
// readerRows; the others end once nodepulse has spoken, and fleet's Fresh after the lease moves is
// then a may: a fault that ends before the grace runs out leaves fleet Fresh throughout.
//
// L is the matrix's bound on one API request on this machine, not the agent's --api-timeout: the
// API server is up and near in every row but the one that cuts it. verdict-order.ts bounds
// nodepulse with the timeout itself, the worst case.
import { kubeletReadyWindow, type KubeletFault, type KubeletTimers } from './kubelet-model.ts';
import type { MustNotSee, MustSee, RowExpectations } from './row-judge.ts';

export const SIG = {
  ready: (status: 'True' | 'False' | 'Unknown'): string => `kubelet Ready=${status}`,
  condition: (status: string, reason: string): string => `condition ${status}/${reason}`,
  leaseRenewed: 'lease renewed',
  leaseStopped: 'lease stopped',
  leaseMoves: 'lease moves',
  fleet: (verdict: 'Stale' | 'Fresh' | 'Missing'): string => `fleet ${verdict}`,
} as const;

const STALE = SIG.condition('True', 'RelistStale');
const NEVER_SUCCEEDED = SIG.condition('True', 'RelistNeverSucceeded');
const CANNOT_OBSERVE = SIG.condition('Unknown', 'AgentCannotObserve');
const LEASE_STALE = SIG.condition('Unknown', 'AgentLeaseStale');
const HEALTHY = SIG.condition('False', 'RelistHealthy');

export interface MatrixTimings {
  readonly relistPeriodMs: number;
  readonly relistThresholdMs: number;
  readonly relistDeadlineMs: number;
  readonly renewIntervalMs: number;
  readonly leaseRecheckMs: number;
  /** The condition loop's period (the agent runs it at the lease recheck, 1 s). */
  readonly conditionPeriodMs: number;
  /** The reader's grace: `fleet --grace` and the controller's `--grace`. */
  readonly graceMs: number;
  readonly monitorPeriodMs: number;
  /** How often `fleet --watch` judges again by time alone. */
  readonly fleetTickMs: number;
  /** The agent DaemonSet's liveness probe and the pod's termination grace. */
  readonly livenessPeriodMs: number;
  readonly livenessTimeoutMs: number;
  readonly livenessFailures: number;
  readonly terminationGraceMs: number;
  readonly kubelet: KubeletTimers;
  /** One API request on this machine (L). */
  readonly apiLatencyMs: number;
  /** The agent's --api-timeout: a write stamped before a fault ends may land up to this much later. */
  readonly apiTimeoutMs: number;
  /** The slowest normal relist (d). */
  readonly slowestRelistMs: number;
  /** From a container's start to the agent's loops running, and from a pod's deletion to its successor's start. */
  readonly agentStartMs: number;
  readonly podRestartMs: number;
  /** Observation slack (s): watch delivery, signals, a loaded machine. */
  readonly slackMs: number;
  /** Wait for and assert the kubelet's windows (the recorded run), or not (CI). */
  readonly kubeletInFull: boolean;
  /** The rows that wait for fleet's Stale (undefined: every row). */
  readonly readerRows?: readonly RowId[];
}

export type RowId =
  | 'runtime-hangs'
  | 'lists-hang'
  | 'lists-slow'
  | 'runtime-refuses'
  | 'start-while-hung'
  | 'start-while-refused'
  | 'socket-eacces'
  | 'answer-undecodable'
  | 'no-socket'
  | 'agent-wedged'
  | 'kubelet-stopped'
  | 'api-unreachable';

export interface MatrixRow {
  readonly id: RowId;
  readonly title: string;
  readonly kubeletFault: KubeletFault;
  /** How long the fault lasts, from the onset to its end. */
  readonly faultMs: number;
  /** How long to keep watching after the end. */
  readonly afterEndMs: number;
  /** lists-slow: the lists' added delay. */
  readonly listDelayMs?: number;
  readonly expect: RowExpectations;
}

const must = (signal: string, from: MustSee['from'], loMs: number, hiMs: number, why: string): MustSee => ({ signal, from, loMs: Math.max(0, loMs), hiMs, why });
/** A window that may open before its anchor: the last renewal before a fault that stops every write, a write stamped before the fault's end. */
const mustAround = (signal: string, from: MustSee['from'], loMs: number, hiMs: number, why: string): MustSee => ({ signal, from, loMs, hiMs, why });
const never = (signal: string, untilMs: number, why: string, from?: MustNotSee['from']): MustNotSee => ({ signal, untilMs, why, ...(from === undefined ? {} : { from }) });

/** Every row, in the order the matrix runs them. */
export function matrixRows(t: MatrixTimings): MatrixRow[] {
  return [
    runtimeRow(t, 'runtime-hangs', 'everything hangs (containerd SIGSTOP)', 'runtime-hangs'),
    runtimeRow(t, 'lists-hang', 'ListPodSandbox and ListContainers hang; Status and Version answer', 'lists-hang'),
    runtimeRow(t, 'lists-slow', `the lists answer ${fmt(listDelay(t))} late, past the relist deadline`, 'lists-slow'),
    runtimeRow(t, 'runtime-refuses', 'containerd killed (the socket refuses), then restarted', 'runtime-refuses'),
    startRow(t, 'start-while-hung', 'the agent starts while containerd hangs', 'runtime-hangs'),
    startRow(t, 'start-while-refused', 'the agent starts while containerd refuses', 'runtime-refuses'),
    cannotObserveRow(t, 'socket-eacces', 'the agent may not open the socket (EACCES: a non-root agent without its group)', true),
    cannotObserveRow(t, 'answer-undecodable', "the lists answer bytes the agent's decoder cannot read (a wrong wire type)", false),
    cannotObserveRow(t, 'no-socket', 'no runtime socket at any path the agent knows', true),
    wedgedRow(t),
    kubeletStoppedRow(t),
    apiRow(t),
  ];
}

/** a before b before c, as pairs. */
function chain(signals: readonly string[]): Array<[string, string]> {
  return signals.slice(1).map((b, i) => [signals[i] as string, b]);
}

function fmt(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

function listDelay(t: MatrixTimings): number {
  return t.relistDeadlineMs + 2_000;
}

/** The nodepulse verdict's window after a runtime fault hits a running agent. */
function verdictWindow(t: MatrixTimings): [number, number] {
  return [t.relistThresholdMs - t.relistPeriodMs - t.slowestRelistMs, t.relistThresholdMs + t.conditionPeriodMs + 3 * t.apiLatencyMs + t.slackMs];
}

/** The last renewal before the gate closes (the gate closes with the verdict's ledger change). */
function stoppedWindow(t: MatrixTimings): [number, number] {
  const [lo] = verdictWindow(t);
  return [lo - t.renewIntervalMs * 1.04 - t.apiLatencyMs, t.relistThresholdMs];
}

function fleetStale(t: MatrixTimings): MustSee {
  return must(SIG.fleet('Stale'), { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.fleetTickMs + t.slackMs, `grace ${fmt(t.graceMs)} after the last renewal`);
}

/** The kubelet's side of a row that lasts faultMs: its window (the full run), or "Ready until then" (CI). */
function kubeletSide(t: MatrixTimings, fault: KubeletFault, faultMs: number, options: { listDelayMs?: number } = {}): { must: MustSee[]; mustNot: MustNotSee[]; back: MustSee[] } {
  const w = kubeletReadyWindow(fault, t.kubelet, { ...options, relistMs: t.slowestRelistMs });
  if (w.status === undefined || w.earliestMs === undefined || w.latestMs === undefined) {
    return { must: [], mustNot: [never(SIG.ready('False'), Number.MAX_SAFE_INTEGER, 'the kubelet sees nothing wrong'), never(SIG.ready('Unknown'), Number.MAX_SAFE_INTEGER, 'the kubelet sees nothing wrong')], back: [] };
  }
  const signal = SIG.ready(w.status);
  const hi = w.latestMs + t.apiLatencyMs + t.slackMs;
  if (t.kubeletInFull) {
    return {
      must: [must(signal, 'onset', w.earliestMs - 1_000, hi, `kubelet: ${w.because}`)],
      mustNot: [],
      back: [must(SIG.ready('True'), 'end', 0, t.kubelet.nodeStatusUpdateMs * 1.04 + t.kubelet.runtimeStatusPeriodMs + t.apiLatencyMs + t.slackMs, 'the kubelet posts Ready on its next status update')],
    };
  }
  const until = Math.min(faultMs, w.earliestMs - 1_000);
  return { must: [], mustNot: [never(signal, until, `kubelet: ${w.because} no sooner than ${fmt(w.earliestMs)}; its window is the full run's`)], back: [] };
}

/** Whether a row waits for the readers (fleet's Stale). */
function readers(t: MatrixTimings, id: RowId): boolean {
  return t.readerRows === undefined || t.readerRows.includes(id);
}

/** How long a row's fault must last for the kubelet's window: the full run's only. */
function forKubelet(t: MatrixTimings, fault: KubeletFault, options: { listDelayMs?: number } = {}): number {
  if (!t.kubeletInFull) return 0;
  const latest = kubeletReadyWindow(fault, t.kubelet, { ...options, relistMs: t.slowestRelistMs }).latestMs;
  return latest === undefined ? 0 : latest + t.apiLatencyMs + 2 * t.slackMs;
}

function runtimeRow(t: MatrixTimings, id: RowId, title: string, fault: 'runtime-hangs' | 'lists-hang' | 'lists-slow' | 'runtime-refuses'): MatrixRow {
  const [vLo, vHi] = verdictWindow(t);
  const [sLo, sHi] = stoppedWindow(t);
  const stale = fleetStale(t);
  const fleetFresh = must(SIG.fleet('Fresh'), { after: SIG.leaseMoves }, 0, t.fleetTickMs + t.slackMs, 'the reader sees the lease move');
  // The controller must find the agent's True before it finds the lease stale.
  if (vHi >= sLo + t.graceMs) {
    throw new RangeError(`graceMs: ${t.graceMs} must exceed ${vHi - sLo} (the verdict's latest minus the lease's earliest stop), or the controller may mark before the agent speaks`);
  }
  const listDelayMs = fault === 'lists-slow' ? listDelay(t) : undefined;
  const delay = listDelayMs === undefined ? {} : { listDelayMs };
  const waitReaders = readers(t, id);
  const faultMs = Math.max(vHi, waitReaders ? sHi + stale.hiMs : 0, forKubelet(t, fault, delay)) + t.slackMs;
  const kubelet = kubeletSide(t, fault, faultMs, listDelayMs === undefined ? {} : { listDelayMs });
  // The first relist after the end: for a delay, the one in flight first runs out its deadline.
  const backRelist = (fault === 'lists-slow' ? t.relistDeadlineMs : 0) + t.relistPeriodMs + t.slowestRelistMs + 1_000;
  const expect: RowExpectations = {
    must: [
      must(STALE, 'onset', vLo, vHi, `threshold ${fmt(t.relistThresholdMs)}`),
      must(SIG.leaseStopped, 'onset', sLo, sHi, 'the gate closes with the verdict'),
      ...(waitReaders ? [stale] : []),
      ...kubelet.must,
      must(HEALTHY, 'end', 0, backRelist + t.conditionPeriodMs + t.apiLatencyMs + t.slackMs, 'the next relist succeeds'),
      must(SIG.leaseMoves, 'end', 0, backRelist + t.leaseRecheckMs + t.apiLatencyMs + t.slackMs, 'renewed within a recheck of the next success'),
      ...(waitReaders ? [fleetFresh] : []),
      ...kubelet.back,
    ],
    // A row that does not wait for the readers may end its fault before fleet's grace runs out:
    // fleet then never turns Stale, and has no Fresh to come back to.
    may: waitReaders ? [] : [fleetFresh],
    mustNot: [never(LEASE_STALE, Number.MAX_SAFE_INTEGER, "the agent's True comes before the lease is stale"), ...kubelet.mustNot, never(CANNOT_OBSERVE, Number.MAX_SAFE_INTEGER, 'the runtime is at fault, not the agent')],
    order: orderOf([
      [SIG.leaseStopped, sLo, sHi],
      [STALE, vLo, vHi],
      ...kubelet.must.map((m): [string, number, number] => [m.signal, m.loMs, m.hiMs]),
    ]),
  };
  return { id, title, kubeletFault: fault, faultMs, afterEndMs: backRelist + t.fleetTickMs + 2 * t.slackMs + (kubelet.back.length > 0 ? t.kubelet.nodeStatusUpdateMs * 1.04 + t.kubelet.runtimeStatusPeriodMs : 0), ...(listDelayMs === undefined ? {} : { listDelayMs }), expect };
}

/** Onset-anchored windows: every pair whose windows cannot overlap is an order to hold. */
function orderOf(windows: Array<[string, number, number]>): Array<[string, string]> {
  const order: Array<[string, string]> = [];
  for (const [a, , aHi] of windows) {
    for (const [b, bLo] of windows) if (a !== b && aHi < bLo) order.push([a, b]);
  }
  return order;
}

/** An agent whose start is the onset (the old one was stopped before it). */
function startRow(t: MatrixTimings, id: RowId, title: string, fault: 'runtime-hangs' | 'runtime-refuses'): MatrixRow {
  const hi = t.relistThresholdMs + t.agentStartMs + t.conditionPeriodMs + 3 * t.apiLatencyMs + t.slackMs;
  const faultMs = Math.max(2 * t.relistThresholdMs, hi, forKubelet(t, fault)) + t.slackMs;
  const kubelet = kubeletSide(t, fault, faultMs);
  const backRelist = t.relistPeriodMs + t.slowestRelistMs + 1_000;
  return {
    id,
    title,
    kubeletFault: fault,
    faultMs,
    afterEndMs: backRelist + t.fleetTickMs + 2 * t.slackMs + (kubelet.back.length > 0 ? t.kubelet.nodeStatusUpdateMs * 1.04 + t.kubelet.runtimeStatusPeriodMs : 0),
    expect: {
      must: [
        must(NEVER_SUCCEEDED, 'onset', t.relistThresholdMs, hi, `the start rule: nothing until the agent is up for the threshold ${fmt(t.relistThresholdMs)}`),
        ...kubelet.must,
        must(SIG.condition('False', 'RelistHealthy'), 'end', 0, backRelist + t.conditionPeriodMs + t.apiLatencyMs + t.slackMs, 'the first relist succeeds'),
        must(SIG.leaseMoves, 'end', 0, backRelist + t.leaseRecheckMs + t.apiLatencyMs + t.slackMs, 'the first renewal'),
        ...kubelet.back,
      ],
      may: [must(LEASE_STALE, { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.monitorPeriodMs + t.slackMs, 'the old agent\'s lease went stale before the new agent spoke')],
      mustNot: [
        never(CANNOT_OBSERVE, Number.MAX_SAFE_INTEGER, 'a socket that hangs or refuses is the runtime, not the agent'),
        never(SIG.leaseRenewed, faultMs, 'no relist has succeeded'),
        never(LEASE_STALE, Number.MAX_SAFE_INTEGER, 'the agent spoke', { after: NEVER_SUCCEEDED }),
        never(STALE, faultMs, 'nothing ever succeeded: RelistNeverSucceeded'),
        ...kubelet.mustNot,
      ],
      order: [],
    },
  };
}

/** The agent cannot observe; the runtime is fine. `fromStart`: the agent starts at the onset. */
function cannotObserveRow(t: MatrixTimings, id: RowId, title: string, fromStart: boolean): MatrixRow {
  const lo = fromStart ? t.relistThresholdMs : t.relistThresholdMs - t.relistPeriodMs - t.slowestRelistMs;
  const hi = t.relistThresholdMs + (fromStart ? t.agentStartMs : 0) + t.conditionPeriodMs + 3 * t.apiLatencyMs + t.slackMs;
  const faultMs = Math.max(2 * t.relistThresholdMs + (fromStart ? t.agentStartMs : 0), hi) + t.slackMs;
  const backRelist = t.relistPeriodMs + t.slowestRelistMs + 1_000;
  const kubelet = kubeletSide(t, 'agent-only', faultMs);
  const stop: MustSee[] = fromStart ? [] : [must(SIG.leaseStopped, 'onset', ...stoppedWindow(t), 'the gate closes when the last success ages out')];
  return {
    id,
    title,
    kubeletFault: 'agent-only',
    faultMs,
    afterEndMs: backRelist + t.fleetTickMs + 2 * t.slackMs,
    expect: {
      must: [
        must(CANNOT_OBSERVE, 'onset', lo, hi, fromStart ? 'the start rule: the threshold from the agent\'s start' : 'the last success ages past the threshold'),
        ...stop,
        must(HEALTHY, 'end', 0, backRelist + t.conditionPeriodMs + t.apiLatencyMs + t.slackMs, 'the agent observes again'),
        must(SIG.leaseMoves, 'end', 0, backRelist + t.leaseRecheckMs + t.apiLatencyMs + t.slackMs, 'renewed once it observes'),
      ],
      may: [
        must(LEASE_STALE, { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.monitorPeriodMs + t.slackMs, 'the lease went stale before the agent spoke'),
        must(SIG.fleet('Stale'), { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.fleetTickMs + t.slackMs, 'grace after the last renewal'),
      ],
      mustNot: [
        never(STALE, faultMs, 'never True: the runtime is fine'),
        never(NEVER_SUCCEEDED, faultMs, 'never True: the runtime is fine'),
        never(SIG.leaseRenewed, faultMs, 'nothing observed, nothing renewed', fromStart ? undefined : { after: SIG.leaseStopped }),
        never(LEASE_STALE, Number.MAX_SAFE_INTEGER, 'the controller leaves the agent\'s own Unknown', { after: CANNOT_OBSERVE }),
        ...kubelet.mustNot,
      ],
      order: [],
    },
  };
}

function wedgedRow(t: MatrixTimings): MatrixRow {
  // The kubelet kills the agent after livenessFailures probes, each failing at its timeout, then
  // waits the termination grace (SIGTERM stays pending in a stopped process; SIGKILL ends it).
  const killLo = (t.livenessFailures - 1) * t.livenessPeriodMs + t.livenessTimeoutMs + t.terminationGraceMs;
  const killHi = killLo + t.livenessPeriodMs;
  const movesHi = killHi + t.podRestartMs + t.agentStartMs + t.relistPeriodMs + t.apiLatencyMs + t.slackMs;
  const faultMs = movesHi + t.slackMs;
  const markedBeforeRestart = t.graceMs + t.monitorPeriodMs + t.slackMs < killLo;
  return {
    id: 'agent-wedged',
    title: "the agent's own loop wedged (SIGSTOP the agent)",
    kubeletFault: 'agent-only',
    faultMs,
    afterEndMs: t.slackMs,
    expect: {
      must: [
        mustAround(SIG.leaseStopped, 'onset', -t.renewIntervalMs * 1.04 - t.apiLatencyMs, t.apiLatencyMs, 'a stopped process renews nothing'),
        must(SIG.leaseMoves, 'onset', killLo, movesHi, `the liveness probe (${t.livenessFailures} × ${fmt(t.livenessPeriodMs)}, timeout ${fmt(t.livenessTimeoutMs)}) and the termination grace ${fmt(t.terminationGraceMs)}, then a new agent`),
        ...(markedBeforeRestart
          ? [
              must(LEASE_STALE, { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.monitorPeriodMs + t.slackMs, 'the controller marks a silent agent'),
              must(HEALTHY, { after: SIG.leaseMoves }, 0, t.monitorPeriodMs + t.apiLatencyMs + t.slackMs, 'the controller clears its mark once the lease moves'),
            ]
          : []),
      ],
      may: markedBeforeRestart ? [] : [must(LEASE_STALE, { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.monitorPeriodMs + t.slackMs, 'grace after the last renewal')],
      mustNot: [
        never(STALE, faultMs, 'the runtime is fine'),
        never(NEVER_SUCCEEDED, faultMs, 'the runtime is fine'),
        never(CANNOT_OBSERVE, faultMs, 'the new agent observes'),
        never(SIG.ready('False'), faultMs, 'the kubelet sees nothing wrong'),
        never(SIG.ready('Unknown'), faultMs, 'the kubelet sees nothing wrong'),
      ],
      order: markedBeforeRestart ? chain([SIG.leaseStopped, LEASE_STALE, SIG.leaseMoves, HEALTHY]) : chain([SIG.leaseStopped, SIG.leaseMoves]),
    },
  };
}

function kubeletStoppedRow(t: MatrixTimings): MatrixRow {
  const w = kubeletReadyWindow('kubelet-stopped', t.kubelet);
  const hi = (w.latestMs as number) + t.apiLatencyMs + t.slackMs;
  const [, vHi] = verdictWindow(t);
  const faultMs = t.kubeletInFull ? hi + t.slackMs : vHi + t.slackMs;
  const kubeletMust = t.kubeletInFull
    ? [
        must(SIG.ready('Unknown'), 'onset', (w.earliestMs as number) - 1_000, hi, `node lifecycle controller: ${w.because}`),
        must(SIG.ready('True'), 'end', 0, t.kubelet.nodeStatusUpdateMs * 1.04 + t.apiLatencyMs + t.slackMs, 'the kubelet posts its status again'),
      ]
    : [];
  const kubeletNot = t.kubeletInFull ? [] : [never(SIG.ready('Unknown'), Math.min(faultMs, (w.earliestMs as number) - 1_000), `node lifecycle controller: no sooner than ${fmt(w.earliestMs as number)}; its window is the full run's`)];
  return {
    id: 'kubelet-stopped',
    title: 'the kubelet stopped (SIGSTOP), the runtime fine',
    kubeletFault: 'kubelet-stopped',
    faultMs,
    afterEndMs: t.kubelet.nodeStatusUpdateMs * 1.04 + t.apiLatencyMs + 2 * t.slackMs,
    expect: {
      must: kubeletMust,
      mustNot: [
        ...kubeletNot,
        never(SIG.leaseStopped, faultMs, 'the agent needs no kubelet to relist and renew'),
        never(SIG.fleet('Stale'), faultMs, 'the lease keeps moving'),
        never(STALE, faultMs, 'the runtime is fine'),
        never(LEASE_STALE, faultMs, 'the lease keeps moving'),
        never(CANNOT_OBSERVE, faultMs, 'the agent observes'),
      ],
      order: [],
    },
  };
}

function apiRow(t: MatrixTimings): MatrixRow {
  const outageMs = t.kubeletInFull ? 60_000 : t.graceMs + t.monitorPeriodMs + 2 * t.slackMs;
  // A lease write that failed backs off up to the renew interval (lease/backoff.ts).
  const backHi = t.renewIntervalMs + 2 * t.apiLatencyMs + t.slackMs;
  const marked = t.graceMs + t.monitorPeriodMs + t.slackMs < outageMs;
  return {
    id: 'api-unreachable',
    title: `the API server unreachable from the agent for ${fmt(outageMs)}`,
    kubeletFault: 'agent-only',
    faultMs: outageMs,
    afterEndMs: backHi + t.monitorPeriodMs + t.fleetTickMs + 2 * t.slackMs,
    expect: {
      must: [
        mustAround(SIG.leaseStopped, 'onset', -t.renewIntervalMs * 1.04 - t.apiLatencyMs, t.apiLatencyMs, 'no write reaches the API server'),
        must(SIG.fleet('Stale'), { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.fleetTickMs + t.slackMs, `grace ${fmt(t.graceMs)}`),
        ...(marked ? [must(LEASE_STALE, { after: SIG.leaseStopped }, t.graceMs, t.graceMs + t.monitorPeriodMs + t.slackMs, 'the controller marks a silent agent')] : []),
        // The renewTime is stamped when the write is made: one sent before the end and held until
        // the path came back lands stamped up to one request timeout before the end.
        mustAround(SIG.leaseMoves, 'end', -t.apiTimeoutMs, backHi, 'the next renewal after a backoff of at most the renew interval, or one held in flight'),
        must(SIG.fleet('Fresh'), { after: SIG.leaseMoves }, 0, t.fleetTickMs + t.slackMs, 'the reader sees it move'),
        ...(marked ? [must(HEALTHY, { after: SIG.leaseMoves }, 0, t.monitorPeriodMs + t.apiLatencyMs + t.slackMs, 'the controller clears its mark')] : []),
      ],
      mustNot: [
        never(STALE, Number.MAX_SAFE_INTEGER, 'the runtime is fine'),
        never(CANNOT_OBSERVE, Number.MAX_SAFE_INTEGER, 'the agent observes'),
        never(SIG.ready('False'), Number.MAX_SAFE_INTEGER, "the kubelet's own path to the API server is not cut"),
        never(SIG.ready('Unknown'), Number.MAX_SAFE_INTEGER, "the kubelet's own path to the API server is not cut"),
      ],
      order: marked ? chain([SIG.leaseStopped, LEASE_STALE, SIG.leaseMoves, HEALTHY]) : chain([SIG.leaseStopped, SIG.fleet('Stale'), SIG.leaseMoves]),
    },
  };
}
