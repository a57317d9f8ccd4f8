// A child's output as lines: the one place the tests and benchmarks split a stream at '\n'.
//
// - Each complete line goes to onLine without its '\n' (a '\r' before it is kept: no child of
//   ours writes one, and a test that met one should see it).
// - What follows the last '\n' waits for more; at the stream's end it is given as a last line,
//   unless it is empty.
// - A line longer than maxLineChars (when given) is given cut at that length and the rest of it
//   is dropped up to its '\n', so one runaway line cannot grow memory without bound.
import type { Readable } from 'node:stream';

export interface LineReaderOptions {
  /** Longer lines are given cut to this many characters. Default: no bound. */
  readonly maxLineChars?: number;
}

/** Calls onLine for every line `stream` carries, decoded as UTF-8. */
export function readLines(stream: Readable | null | undefined, onLine: (line: string) => void, options: LineReaderOptions = {}): void {
  if (stream === null || stream === undefined) return;
  const max = options.maxLineChars ?? Number.POSITIVE_INFINITY;
  let partial = '';
  /** Inside a line already given cut: its rest is dropped up to the next '\n'. */
  let dropping = false;
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    partial += chunk;
    let nl: number;
    while ((nl = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      if (dropping) dropping = false;
      else onLine(line.length > max ? line.slice(0, max) : line);
    }
    if (!dropping && partial.length > max) {
      onLine(partial.slice(0, max));
      dropping = true;
    }
    if (dropping) partial = '';
  });
  stream.on('end', () => {
    if (!dropping && partial !== '') onLine(partial);
    partial = '';
  });
}

/** A log line as the tests read it: the JSON object it holds, or `{ raw: line }` for anything else. */
export function parseLogLine(line: string): Readonly<Record<string, unknown>> {
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // not JSON: kept raw below
  }
  return { raw: line };
}
