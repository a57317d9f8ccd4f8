// Reading Prometheus text exposition (the API server's, etcd's, the controller's /metrics) into
// sums: the measurement only ever needs "the sum of this series over the samples whose labels
// include these", read at both ends of a window.
//
// A sample line is `name{a="x",b="y"} value` or `name value`; comments and other names are
// skipped. Label values are compared as written (no unescaping: the labels read here are plain).

export type Samples = ReadonlyArray<{ readonly name: string; readonly labels: Readonly<Record<string, string>>; readonly value: number }>;

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseProm(text: string): Samples {
  const out: Array<{ name: string; labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1] ?? ''] = l[2] ?? '';
    out.push({ name: m[1] ?? '', labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of `name` over the samples whose labels include every pair of `match`. */
export function sumOf(samples: Samples, name: string, match: Readonly<Record<string, string>> = {}): number {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) total += s.value;
  }
  return total;
}
