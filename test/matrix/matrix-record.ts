// The recorded fault matrix: what each row saw, as the Markdown table docs/fault-matrix.md holds
// and the JSON beside it (docs/fault-matrix.json) that tests read the kubelet's measured times
// from (verdict-order.ts's inequality at the shipped defaults).
//
// | column          | from the row's timeline (first sightings after the onset, or after the end) |
// |-----------------|------------------------------------------------------------------------------|
// | the kubelet     | `kubelet Ready=False` or `=Unknown`, with when and why; else "Ready"          |
// | nodepulse       | the agent's condition (True/…, Unknown/AgentCannotObserve), with when         |
// | its Lease       | `lease stopped`: when the last renewal before the stop was stamped            |
// | fleet           | `fleet Stale`, with when                                                      |
// | the controller  | `condition Unknown/AgentLeaseStale`, with when; else "–"                      |
// | back            | after the end: the condition False, the lease moving, the kubelet Ready       |
// | as judged       | "as expected", or the judge's problems                                       |
//
// Times are seconds from the onset, one decimal. A signal the row never saw is "–".
import { SIG, type MatrixRow } from './matrix-rows.ts';
import type { RowOutcome, Sighting } from './row-judge.ts';

export interface MatrixMeta {
  readonly date: string;
  readonly kubernetes: string;
  readonly containerd: string;
  readonly nodepulse: string;
  readonly node: string;
  readonly settings: string;
  readonly loadAverage: string;
}

/** What the record keeps of a run (RowRun without the functions and objects it does not need). */
export interface RecordedRow {
  readonly id: string;
  readonly title: string;
  readonly endMs: number | undefined;
  readonly problems: readonly string[];
  readonly timeline: ReadonlyArray<Pick<Sighting, 'atMs' | 'signal' | 'detail'>>;
}

/** A row as the driver ran it (matrix-driver.ts's RowRun). */
export interface RunOfRow {
  readonly row: Pick<MatrixRow, 'id' | 'title'>;
  readonly outcome: Pick<RowOutcome, 'problems'>;
  readonly timeline: readonly Sighting[];
  readonly endMs: number | undefined;
}

export function recordedRow(run: RunOfRow): RecordedRow {
  return {
    id: run.row.id,
    title: run.row.title,
    endMs: run.endMs,
    problems: run.outcome.problems,
    timeline: run.timeline.filter((x) => x.signal !== SIG.leaseRenewed).map((x) => ({ atMs: x.atMs, signal: x.signal, ...(x.detail === undefined ? {} : { detail: x.detail }) })),
  };
}

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The first sighting of a signal whose name matches, at or after `fromMs`. */
export function firstSeen(row: RecordedRow, match: (signal: string) => boolean, fromMs = 0): Pick<Sighting, 'atMs' | 'signal' | 'detail'> | undefined {
  return row.timeline.find((x) => match(x.signal) && x.atMs >= fromMs);
}

function kubeletCell(row: RecordedRow): string {
  const bad = firstSeen(row, (sig) => sig === SIG.ready('False') || sig === SIG.ready('Unknown'));
  if (bad === undefined) return 'Ready throughout';
  const why = bad.detail === undefined ? '' : ` (${bad.detail.replace(/\|/g, '/').slice(0, 80)})`;
  return `${bad.signal.replace('kubelet ', '')} at ${s(bad.atMs)}${why}`;
}

function agentCell(row: RecordedRow): string {
  const verdict = firstSeen(row, (sig) => sig.startsWith('condition True/') || sig === SIG.condition('Unknown', 'AgentCannotObserve'));
  return verdict === undefined ? 'no change' : `${verdict.signal.replace('condition ', '')} at ${s(verdict.atMs)}`;
}

function at(row: RecordedRow, signal: string, fromMs = Number.NEGATIVE_INFINITY): string {
  const x = firstSeen(row, (sig) => sig === signal, fromMs);
  return x === undefined ? '–' : s(x.atMs);
}

function backCell(row: RecordedRow): string {
  if (row.endMs === undefined) {
    const moves = firstSeen(row, (sig) => sig === SIG.leaseMoves);
    return moves === undefined ? '–' : `lease moves at ${s(moves.atMs)} (restarted)`;
  }
  const end = row.endMs;
  const parts: string[] = [];
  const healthy = firstSeen(row, (sig) => sig === SIG.condition('False', 'RelistHealthy'), end);
  if (healthy !== undefined) parts.push(`False +${s(healthy.atMs - end)}`);
  const moves = firstSeen(row, (sig) => sig === SIG.leaseMoves, end);
  if (moves !== undefined) parts.push(`lease +${s(moves.atMs - end)}`);
  const ready = firstSeen(row, (sig) => sig === SIG.ready('True'), end);
  const wentBad = firstSeen(row, (sig) => sig === SIG.ready('False') || sig === SIG.ready('Unknown'));
  if (ready !== undefined && wentBad !== undefined) parts.push(`Ready +${s(ready.atMs - end)}`);
  return parts.length === 0 ? '–' : parts.join(', ');
}

export function renderMatrixTable(rows: readonly RecordedRow[]): string {
  const lines = [
    '| row | the kubelet | nodepulse | its Lease stopped | fleet Stale | the controller | after the end | judged |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.title} | ${kubeletCell(row)} | ${agentCell(row)} | ${at(row, SIG.leaseStopped)} | ${at(row, SIG.fleet('Stale'), 0)} | ${at(row, SIG.condition('Unknown', 'AgentLeaseStale'), 0) === '–' ? '–' : `Unknown/AgentLeaseStale at ${at(row, SIG.condition('Unknown', 'AgentLeaseStale'), 0)}`} | ${backCell(row)} | ${row.problems.length === 0 ? 'as expected' : row.problems.join('; ').replace(/\|/g, '/')} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The kubelet's first Ready=False after the onset, in ms, per row id (the inequality's input). */
export function kubeletFirstNotReady(rows: readonly RecordedRow[]): Record<string, number | undefined> {
  return Object.fromEntries(rows.map((r) => [r.id, firstSeen(r, (sig) => sig === SIG.ready('False'), 0)?.atMs]));
}
