// The judgement of one fault-matrix row: what was seen on the cluster (a timeline of signals, in
// ms from the fault's onset) against what the row says must and must not be seen, and when.
//
// | rule of the row                       | a problem when                                       |
// |---------------------------------------|------------------------------------------------------|
// | must: signal within [lo, hi] of anchor| the signal was not seen; or its first sighting after  |
// |                                       | the anchor is outside the window; or its anchor was   |
// |                                       | never seen                                            |
// | may: signal within [lo, hi] of anchor | the signal was seen after the anchor, but its first   |
// |                                       | sighting is outside the window (unseen is fine)       |
// | mustNot: signal from anchor to `until`| the signal was seen after the anchor (at or after the |
// |                                       | onset or the end; strictly after a signal anchor, so  |
// |                                       | a renewal is not its own "after") and at or before    |
// |                                       | `until` (ms since the onset); an anchor never seen    |
// |                                       | leaves the rule nothing to hold                       |
// | order: [a, b] pairs                   | a's first sighting comes after b's (both must-signals)|
//
// Anchors: 'onset' (t = 0), 'end' (when the fault was ended, endMs), or another signal (its first
// sighting; for 'end'-anchored and later signals, its first sighting at or after the end). A
// signal seen before its anchor does not count for that window: the first sighting at or after
// the anchor does, or, for a window that opens before its anchor (lo below 0: the last renewal
// before a fault that stops every write), the first at or after the window opens. Times are compared as ms; problems are printed in seconds with one decimal.
//
// Pure: the cluster test collects the timeline and calls judgeRow; the table test feeds it
// timelines by hand.

export interface Sighting {
  /** ms since the fault's onset. */
  readonly atMs: number;
  readonly signal: string;
  /** What was seen (a condition's message, a Ready reason), for the report. */
  readonly detail?: string;
}

export type Anchor = 'onset' | 'end' | { readonly after: string };

export interface MustSee {
  readonly signal: string;
  readonly from: Anchor;
  readonly loMs: number;
  readonly hiMs: number;
  /** Why the window is what it is, for the report: `threshold 10s + …`. */
  readonly why: string;
}

export interface MustNotSee {
  readonly signal: string;
  /** From when (default the onset). */
  readonly from?: Anchor;
  /** ms since the onset; the signal must not be seen at or before it. */
  readonly untilMs: number;
  readonly why: string;
}

export interface RowExpectations {
  readonly must: readonly MustSee[];
  /** Signals that may or may not appear, but only within their window when they do. */
  readonly may?: readonly MustSee[];
  readonly mustNot: readonly MustNotSee[];
  /** Pairs of must-signals: the first's first sighting (after its anchor) comes before the second's. */
  readonly order: ReadonlyArray<readonly [string, string]>;
}

export interface RowOutcome {
  readonly problems: readonly string[];
  /** Each must-signal's first sighting after its anchor, ms since the onset (undefined: none). */
  readonly seen: Readonly<Record<string, number | undefined>>;
}

const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function anchorMs(anchor: Anchor, endMs: number | undefined, first: (signal: string, fromMs: number) => number | undefined): number | undefined {
  if (anchor === 'onset') return 0;
  if (anchor === 'end') return endMs;
  return first(anchor.after, 0);
}

function anchorName(anchor: Anchor): string {
  return typeof anchor === 'string' ? anchor : anchor.after;
}

export function judgeRow(expect: RowExpectations, timeline: readonly Sighting[], endMs: number | undefined): RowOutcome {
  const sorted = [...timeline].sort((a, b) => a.atMs - b.atMs);
  const first = (signal: string, fromMs: number): number | undefined => sorted.find((x) => x.signal === signal && x.atMs >= fromMs)?.atMs;
  const problems: string[] = [];
  const seen: Record<string, number | undefined> = {};

  for (const m of expect.must) {
    const from = anchorMs(m.from, endMs, (sig, f) => seen[sig] ?? first(sig, f));
    if (from === undefined) {
      problems.push(`${m.signal}: its anchor ${anchorName(m.from)} must have been seen (${m.why})`);
      seen[m.signal] = undefined;
      continue;
    }
    const at = first(m.signal, from + Math.min(0, m.loMs));
    seen[m.signal] = at;
    if (at === undefined) {
      problems.push(`${m.signal}: not seen; must be seen ${s(m.loMs)} to ${s(m.hiMs)} after ${anchorName(m.from)} (${m.why})`);
    } else if (at - from < m.loMs || at - from > m.hiMs) {
      problems.push(`${m.signal}: seen ${s(at - from)} after ${anchorName(m.from)}; must be ${s(m.loMs)} to ${s(m.hiMs)} (${m.why})`);
    }
  }
  for (const m of expect.may ?? []) {
    const from = anchorMs(m.from, endMs, (sig, f) => seen[sig] ?? first(sig, f));
    if (from === undefined) continue;
    const at = first(m.signal, from + Math.min(0, m.loMs));
    if (at !== undefined && (at - from < m.loMs || at - from > m.hiMs)) {
      problems.push(`${m.signal}: seen ${s(at - from)} after ${anchorName(m.from)}; when seen, must be ${s(m.loMs)} to ${s(m.hiMs)} (${m.why})`);
    }
  }
  for (const n of expect.mustNot) {
    const from = anchorMs(n.from ?? 'onset', endMs, (sig, f) => seen[sig] ?? first(sig, f));
    if (from === undefined) continue;
    const strict = n.from !== undefined && typeof n.from !== 'string';
    const at = sorted.find((x) => x.signal === n.signal && (strict ? x.atMs > from : x.atMs >= from) && x.atMs <= n.untilMs);
    const after = n.from === undefined || n.from === 'onset' ? '' : ` after ${anchorName(n.from)}`;
    if (at !== undefined) problems.push(`${n.signal}: seen at ${s(at.atMs)}${at.detail === undefined ? '' : ` (${at.detail})`}; must not be seen${after} by ${s(n.untilMs)} (${n.why})`);
  }
  for (const [a, b] of expect.order) {
    const ta = seen[a];
    const tb = seen[b];
    if (ta !== undefined && tb !== undefined && ta > tb) problems.push(`order: ${a} (${s(ta)}) must come before ${b} (${s(tb)})`);
  }
  return { problems, seen };
}
