// Every table of docs/design.md is read by a test: some test names it in a designTable() call
// (test/support/design-tables.ts), so the document's rows are the test's rows and the two cannot
// drift apart. A table no test reads is a table nothing holds, and fails here with its line.
//
// The calls are found with the TypeScript parser, in every test file and test helper: each
// designTable() whose arguments are string literals. A call the parser cannot read (a variable
// for an argument) is reported too, since it could hide which table it reads.
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { designTables, parseTables, REPO_ROOT, type DesignTable } from '../support/design-tables.ts';

interface TableCall {
  readonly file: string;
  readonly line: number;
  readonly heading: string | undefined;
  readonly firstHeader: string | undefined;
  /** Set when an argument is not a string literal. */
  readonly unreadable?: string;
}

/** The designTable() calls of one source file. */
function callsIn(file: string): TableCall[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const calls: TableCall[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'designTable') {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const args = node.arguments.map((a) => (ts.isStringLiteralLike(a) ? a.text : undefined));
      const unreadable = node.arguments.find((a) => !ts.isStringLiteralLike(a));
      calls.push({
        file: relative(REPO_ROOT, file),
        line,
        heading: args[0],
        firstHeader: args[1],
        ...(unreadable === undefined ? {} : { unreadable: unreadable.getText(source) }),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return calls;
}

function testSources(): string[] {
  return [...globSync('src/**/*.test.ts', { cwd: REPO_ROOT }), ...globSync('test/**/*.ts', { cwd: REPO_ROOT })]
    .filter((f) => f !== 'test/support/design-tables.ts' && !f.startsWith('test/fixtures/'))
    .map((f) => join(REPO_ROOT, f));
}

/** Whether a call reads the table: same section, and the same first header cell when it names one. */
function reads(call: TableCall, table: DesignTable): boolean {
  return call.heading === table.heading && (call.firstHeader === undefined || call.firstHeader === table.header[0]);
}

/** One line per table no call reads. */
function unread(tables: readonly DesignTable[], calls: readonly TableCall[]): string[] {
  return tables.filter((t) => !calls.some((c) => reads(c, t))).map((t) => `line ${t.line}: "${t.heading}", the table whose first header cell is "${t.header[0] ?? ''}"`);
}

const calls = testSources().flatMap(callsIn);

test('every designTable() call names its table with string literals', () => {
  assert.ok(calls.length >= 10, `precondition: the scan found the table tests' calls (${calls.length})`);
  assert.deepEqual(calls.filter((c) => c.unreadable !== undefined || c.heading === undefined).map((c) => `${c.file}:${c.line}: ${c.unreadable ?? 'no heading'}`), []);
});

test('every table of docs/design.md is read by a test', () => {
  const tables = designTables();
  assert.ok(tables.length >= 15, `precondition: the document's tables were found (${tables.length})`);
  assert.deepEqual(unread(tables, calls), [], 'tables of docs/design.md that no test reads (a designTable() call in a test)');
});

test('a table the tests do not read is found, with its line', () => {
  const doc = ['# x', '## Read', '| a | b |', '|---|---|', '| 1 | 2 |', '', '## Unread', '', '```', '| not | a table |', '```', '| c | d |', '|---|---|', '| 3 | 4 |'].join('\n');
  const tables = parseTables(doc);
  assert.deepEqual(tables.map((t) => [t.heading, t.header, t.rows, t.line]), [
    ['Read', ['a', 'b'], [['1', '2']], 3],
    ['Unread', ['c', 'd'], [['3', '4']], 12],
  ], 'precondition: the parser reads both tables and skips the fenced block');
  const readOne: TableCall = { file: 'x.test.ts', line: 1, heading: 'Read', firstHeader: undefined };
  assert.deepEqual(unread(tables, [readOne]), ['line 12: "Unread", the table whose first header cell is "c"']);
  assert.deepEqual(unread(tables, [readOne, { ...readOne, heading: 'Unread', firstHeader: 'd' }]), ['line 12: "Unread", the table whose first header cell is "c"'], 'the wrong first header cell reads nothing');
  assert.deepEqual(unread(tables, [readOne, { ...readOne, heading: 'Unread', firstHeader: 'c' }]), []);
});
