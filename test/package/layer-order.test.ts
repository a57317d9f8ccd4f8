// The layer order src/README.md declares ("Layers"), held against the import graph of the
// product's sources (test/support/import-graph.ts, every kind of edge: static, type, re-export,
// import() and require()). A module imports from its own folder and from folders of lower layers
// only; an import from a lower layer to a higher one, or between two folders of the same layer,
// fails here with its file and line.
//
// The product is src/ without the stand-ins and without tests: the stand-ins keep their own fence
// (import-fence.test.ts), and a test may import what it tests from anywhere. A folder of src/
// that no layer names fails too, so a new folder has to be given its place.
import assert from 'node:assert/strict';
import { globSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { parseTables, REPO_ROOT } from '../support/design-tables.ts';
import { importsOf, type ImportEdge } from '../support/import-graph.ts';

const SRC_README = join(REPO_ROOT, 'src', 'README.md');

/** The unit a layer names: a folder of src/ (`cri`), or a module at src/'s top (`version.ts`). */
function unitOf(srcRelative: string): string {
  return srcRelative.split('/')[0] ?? '';
}

/** Each unit's layer, 0 the highest, from the README's table: one row per layer, top first. */
function layersOf(readme: string): Map<string, number> {
  const tables = parseTables(readme).filter((t) => t.heading === 'Layers');
  if (tables.length !== 1) throw new Error(`src/README.md: ${tables.length} tables under "Layers", not 1`);
  const table = tables[0];
  if (table === undefined || table.header[1] !== 'folders') throw new Error('src/README.md: the "Layers" table has the columns layer | folders');
  const layers = new Map<string, number>();
  for (const [i, row] of table.rows.entries()) {
    for (const name of (row[1] ?? '').split(',').map((s) => s.trim().replace(/\/$/, ''))) {
      if (layers.has(name)) throw new Error(`src/README.md: "${name}" is in two layers`);
      layers.set(name, i);
    }
  }
  return layers;
}

/** The edges that break the order: to a higher layer, or to another folder of the same layer. */
function backEdges(edges: readonly ImportEdge[], layers: ReadonlyMap<string, number>, srcRoot: string): string[] {
  const problems: string[] = [];
  for (const edge of edges) {
    if (edge.to === undefined) continue;
    const from = relative(srcRoot, edge.from);
    const to = relative(srcRoot, edge.to);
    if (to.startsWith('..') || to.startsWith('stand-ins/')) continue;
    const [a, b] = [unitOf(from), unitOf(to)];
    if (a === b) continue;
    const [la, lb] = [layers.get(a), layers.get(b)];
    if (la === undefined || lb === undefined) {
      problems.push(`src/${from}:${edge.line}: ${la === undefined ? a : b} is in no layer`);
    } else if (lb <= la) {
      problems.push(`src/${from}:${edge.line} imports src/${to}: ${b} is ${lb === la ? 'in the same layer as' : 'in a higher layer than'} ${a}`);
    }
  }
  return problems;
}

const SRC = join(REPO_ROOT, 'src');
const layers = layersOf(readFileSync(SRC_README, 'utf8'));
const productFiles = globSync('**/*.ts', { cwd: SRC })
  .filter((f) => !f.endsWith('.test.ts') && !f.startsWith('stand-ins/'))
  .map((f) => join(SRC, f));

test("every folder of src/ has a place in src/README.md's layers", () => {
  const units = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => (e.isDirectory() && e.name !== 'stand-ins') || (e.isFile() && e.name.endsWith('.ts')))
    .map((e) => e.name);
  assert.ok(units.includes('cli') && units.includes('clock'), 'precondition: src/ was listed');
  assert.deepEqual(units.filter((u) => !layers.has(u)), [], 'folders of src/ in no layer');
  assert.deepEqual([...layers.keys()].filter((u) => !units.includes(u)), [], 'layers naming what src/ does not hold');
});

test('no product import runs from a lower layer to a higher one, or across a layer', () => {
  const edges = productFiles.flatMap((f) => importsOf(f));
  assert.ok(edges.filter((e) => e.to !== undefined).length > 300, `precondition: the walk found the product's imports (${edges.length})`);
  assert.deepEqual(backEdges(edges, layers, SRC), []);
});

test('the check finds an import that runs back up, and one across a layer', () => {
  const order = layersOf(['## Layers', '', '| layer | folders |', '|---|---|', '| 1 | cli |', '| 2 | agent, fleet |', '| 3 | clock |'].join('\n'));
  const edge = (from: string, to: string): ImportEdge => ({ from: join('/s', from), to: join('/s', to), specifier: to, kind: 'static', line: 7 });
  assert.deepEqual(
    backEdges([edge('cli/main.ts', 'agent/agent.ts'), edge('agent/a.ts', 'clock/c.ts'), edge('agent/a.ts', 'agent/b.ts')], order, '/s'),
    [],
    'precondition: downward and same-folder imports pass',
  );
  assert.deepEqual(backEdges([edge('clock/c.ts', 'cli/main.ts'), edge('agent/a.ts', 'fleet/f.ts'), edge('agent/a.ts', 'demo/d.ts')], order, '/s'), [
    'src/clock/c.ts:7 imports src/cli/main.ts: cli is in a higher layer than clock',
    'src/agent/a.ts:7 imports src/fleet/f.ts: fleet is in the same layer as agent',
    'src/agent/a.ts:7: demo is in no layer',
  ]);
});
