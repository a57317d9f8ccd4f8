// What `nodepulse fleet` prints: a table for people, or one JSON document for scripts. Both say
// which rule judged the verdicts: the reader's clock (observed advances) or, for a single
// listing, the wall-clock age of renewTime, which a skewed clock can fool.
import { formatDuration } from '../clock/duration.ts';
import { formatMicroTime } from '../kube/meta-time.ts';
import { summarizeFleet, type NodeReadiness } from './readiness.ts';

export interface ReportContext {
  readonly basis: 'reader-clock' | 'wall-clock';
  readonly graceMs: number;
  readonly observedMs: number | undefined;
  readonly leaseNamespace: string;
  readonly nodeSelector: string;
}

export function basisNote(ctx: ReportContext): string {
  if (ctx.basis === 'wall-clock') {
    return `Judged by wall-clock age (now - renewTime > ${formatDuration(ctx.graceMs)}): a single listing cannot see a lease advance. Use --observe ${formatDuration(ctx.graceMs)} or --watch to judge on this reader's clock.`;
  }
  const watched = ctx.observedMs === undefined ? '' : ` over ${formatDuration(ctx.observedMs)} of watching`;
  return `Judged on this reader's clock: a lease is Fresh while its renewTime advanced within ${formatDuration(ctx.graceMs)}${watched}.`;
}

function age(ms: number | undefined): string {
  if (ms === undefined) return '-';
  return formatDuration(Math.max(0, Math.round(ms / 1000)) * 1000);
}

function judgedColumn(r: NodeReadiness): string {
  if (r.notJudged === 'selector') return 'no (selector)';
  if (r.notJudged === 'too-young') return 'no (too young)';
  return r.cordoned ? 'yes (cordoned)' : 'yes';
}

export function renderTable(readings: readonly NodeReadiness[], ctx: ReportContext): string {
  const header = ['NODE', 'VERDICT', 'JUDGED', 'LEASE AGE', 'MOVED', 'CONDITION', 'REASON'];
  const rows = readings.map((r) => [
    r.node,
    r.verdict,
    judgedColumn(r),
    age(r.leaseWallAgeMs),
    r.basis === 'wall-clock' || r.sinceMovedMs === undefined ? '-' : r.seenMoving ? `${age(r.sinceMovedMs)} ago` : `not in ${age(r.sinceMovedMs)}`,
    r.condition?.status ?? '-',
    r.condition?.reason ?? '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  const s = summarizeFleet(readings);
  return [
    line(header),
    ...rows.map(line),
    '',
    `${s.judged} judged: ${s.fresh} Fresh, ${s.stale} Stale, ${s.missing} Missing; ${s.notJudged} not judged (selector ${JSON.stringify(ctx.nodeSelector)}).`,
    basisNote(ctx),
    '',
  ].join('\n');
}

export function renderJson(readings: readonly NodeReadiness[], ctx: ReportContext): string {
  const s = summarizeFleet(readings);
  const doc = {
    basis: ctx.basis,
    note: basisNote(ctx),
    graceSeconds: ctx.graceMs / 1000,
    ...(ctx.observedMs === undefined ? {} : { observedSeconds: ctx.observedMs / 1000 }),
    leaseNamespace: ctx.leaseNamespace,
    nodeSelector: ctx.nodeSelector,
    summary: s,
    nodes: readings.map((r) => ({
      node: r.node,
      verdict: r.verdict,
      judged: r.judged,
      ...(r.notJudged === undefined ? {} : { notJudged: r.notJudged }),
      cordoned: r.cordoned,
      renewTime: r.renewTimeMicros === undefined ? null : formatMicroTime(r.renewTimeMicros),
      leaseAgeSeconds: r.leaseWallAgeMs === undefined ? null : Math.round(r.leaseWallAgeMs) / 1000,
      ...(r.basis === 'reader-clock'
        ? { sinceMovedSeconds: r.sinceMovedMs === undefined ? null : Math.round(r.sinceMovedMs) / 1000, seenMoving: r.seenMoving }
        : {}),
      condition: r.condition === undefined ? null : { status: r.condition.status, reason: r.condition.reason, message: r.condition.message },
    })),
  };
  return `${JSON.stringify(doc)}\n`;
}
