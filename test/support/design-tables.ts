// The tables of docs/design.md, as the table tests read them: each judgement's test takes its
// rows from the design document, so the document and the code cannot drift apart.
//
// A table is a run of lines that start with `|`: a header row, a separator row (`|---|`), then
// its rows. It belongs to the section of the heading above it, and is named by that heading and
// its first header cell (a section may hold more than one table). Cells are trimmed, and their
// backticks dropped: the test compares words, not Markdown.
//
// | call                                  | gives                                                  |
// |---------------------------------------|--------------------------------------------------------|
// | designTables()                        | every table of the document, in order                  |
// | designTable(heading, firstHeader?)    | the one table of that section (with that first header  |
// |                                       | cell); throws naming what it found when none or several|
// | casesOf(table, keyColumns, cases)     | each row with its test case, by the row's first        |
// |                                       | keyColumns cells; throws on a row without a case, and  |
// |                                       | on a case without a row                                |
//
// test/package/design-tables.test.ts checks that every table of the document is named by a
// designTable() call in some test, so a table no test reads fails the suite.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
export const DESIGN_DOC = join(REPO_ROOT, 'docs', 'design.md');

export interface DesignTable {
  /** The heading of the section the table sits in, without its `#`s. */
  readonly heading: string;
  /** The header row's cells. */
  readonly header: readonly string[];
  /** Every row after the separator, as cells. */
  readonly rows: readonly (readonly string[])[];
  /** 1-based line of the header row in the document. */
  readonly line: number;
}

/** The cells of one `| a | b |` line, trimmed and without backticks. */
function cells(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split('|').map((c) => c.trim().replaceAll('`', ''));
}

/** Every table of a Markdown text, in order. */
export function parseTables(text: string): DesignTable[] {
  const lines = text.split('\n');
  const tables: DesignTable[] = [];
  let heading = '';
  let fenced = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    if (/^#+ /.test(line)) {
      heading = line.replace(/^#+ /, '').trim();
      continue;
    }
    if (!line.startsWith('|')) continue;
    const separator = lines[i + 1] ?? '';
    if (!/^\|(\s*:?-+:?\s*\|)+\s*$/.test(separator)) throw new Error(`docs: line ${i + 1}: a table must have a separator row under its header`);
    const rows: string[][] = [];
    let j = i + 2;
    for (; (lines[j] ?? '').startsWith('|'); j++) rows.push(cells(lines[j] ?? ''));
    tables.push({ heading, header: cells(line), rows, line: i + 1 });
    i = j - 1;
  }
  return tables;
}

let cached: DesignTable[] | undefined;

/** Every table of docs/design.md, in order. */
export function designTables(): DesignTable[] {
  cached ??= parseTables(readFileSync(DESIGN_DOC, 'utf8'));
  return cached;
}

/** The table of the section `heading` (and, when given, whose first header cell is `firstHeader`). */
export function designTable(heading: string, firstHeader?: string): DesignTable {
  const found = designTables().filter((t) => t.heading === heading && (firstHeader === undefined || t.header[0] === firstHeader));
  if (found.length !== 1) {
    const there = designTables()
      .filter((t) => t.heading === heading)
      .map((t) => `"${t.header[0] ?? ''}" (line ${t.line})`);
    throw new Error(
      `docs/design.md: ${found.length} tables under "${heading}"${firstHeader === undefined ? '' : ` whose first header cell is "${firstHeader}"`}, not 1; that section holds ${there.length === 0 ? 'none' : there.join(', ')}`,
    );
  }
  return found[0] as DesignTable;
}

/** The key of a row: its first `keyColumns` cells, joined by ` | `. */
export function rowKey(row: readonly string[], keyColumns: number): string {
  return row.slice(0, keyColumns).join(' | ');
}

export interface TableCase<C> {
  /** The row's key (its first keyColumns cells, joined by ` | `). */
  readonly key: string;
  /** The row's cells. */
  readonly row: readonly string[];
  /** The cells after the key: what the row says the outcome is. */
  readonly expected: readonly string[];
  readonly case: C;
}

/**
 * Pairs each row of `table` with its case in `cases`, by the row's key. Throws when a row has no
 * case (the document gained a row the test does not run) or a case has no row (the test runs a
 * row the document no longer has), naming them.
 */
export function casesOf<C>(table: DesignTable, keyColumns: number, cases: Readonly<Record<string, C>>): TableCase<C>[] {
  const keys = table.rows.map((r) => rowKey(r, keyColumns));
  const duplicated = keys.filter((k, i) => keys.indexOf(k) !== i);
  const missing = keys.filter((k) => !(k in cases));
  const stale = Object.keys(cases).filter((k) => !keys.includes(k));
  const problems = [
    ...duplicated.map((k) => `the key "${k}" names more than one row`),
    ...missing.map((k) => `the row "${k}" has no case in the test`),
    ...stale.map((k) => `the case "${k}" matches no row`),
  ];
  if (problems.length > 0) throw new Error(`docs/design.md, table "${table.heading}" (line ${table.line}): ${problems.join('; ')}`);
  return table.rows.map((row) => {
    const key = rowKey(row, keyColumns);
    return { key, row, expected: row.slice(keyColumns), case: cases[key] as C };
  });
}
