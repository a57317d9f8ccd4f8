// The fence between the product and its stand-ins (src/README.md), checked on the import graph of
// the sources as the TypeScript parser reads them (test/support/import-graph.ts): static imports,
// `export … from`, type imports, dynamic import() and require() alike.
//
//   - From each command a node or a cluster runs (agent, check, fleet, controller, cleanup,
//     verify) and from src/cli/main.ts, nothing reachable is a stand-in (src/stand-ins/), the tests' manual clock,
//     the demo, a test, or a file outside src/. main.ts's lazy import of the demo is the one edge
//     left out, and the test checks that it is there to leave out.
//   - The stand-ins are independent witnesses: each folder of src/stand-ins/ imports from the
//     product only what STAND_IN_MAY_IMPORT lists, and nothing there decides what the product is
//     judged on (time formats, selectors, a reader's rule, patch semantics, status numbers).
//   - The walker itself, on a fixture tree (test/fixtures/import-graph/): it finds the stand-in
//     behind a re-export and a static import, and behind a dynamic import(); a skipped edge hides
//     only itself.
//
// The built agent's own run is checked in agent-modules.test.ts: what it loads, not what it names.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { describeChain, importsOf, walkImports, type ImportEdge, type Walk } from '../support/import-graph.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
/** The commands the package runs, each an entry of the walk. */
const ENTRIES = {
  agent: 'src/cli/agent-command.ts',
  check: 'src/cli/check-command.ts',
  fleet: 'src/cli/fleet-command.ts',
  controller: 'src/cli/controller-command.ts',
  cleanup: 'src/cli/cleanup-command.ts',
  verify: 'src/cli/verify-command.ts',
  main: 'src/cli/main.ts',
} as const;
/** The one edge the walk from main.ts leaves out: `nodepulse demo` runs the stand-ins on purpose. */
const LAZY_DEMO = { from: 'src/cli/main.ts', to: 'src/cli/demo-command.ts' } as const;

/**
 * What each stand-in folder may import from the product, and why. Shared plumbing and the
 * contracts the doubles implement, never a rule the product is judged by.
 */
const STAND_IN_MAY_IMPORT: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'src/stand-ins/api-server/': {
    'src/clock/clock.ts': 'the Clock its timers and timestamps run on',
  },
  'src/stand-ins/cri-runtime/': {
    'src/clock/clock.ts': 'the Clock its churn and delays run on',
    'src/cri/cri-proto.ts': "loads upstream's api.proto (proto/), which it encodes its answers with",
    'src/cri/types.ts': 'types only: the CRI state names',
  },
  'src/stand-ins/doubles/': {
    'src/clock/clock.ts': 'the Clock',
    'src/clock/manual-clock.ts': "the lease harness's clock",
    'src/cri/cri-error.ts': 'the scripted runtime client fails with the error RuntimeClient promises',
    'src/cri/types.ts': 'the RuntimeClient interface the scripted client implements',
    'src/kube/kube-api-error.ts': 'the in-memory kube fails with the error the client promises',
    'src/kube/kube-client.ts': 'the lease harness drives the real client; the in-memory kube takes its call options',
    'src/kube/auth/lean-auth.ts': 'the lease harness points the real client at the API stand-in',
    'src/kube/kube-types.ts': 'types only: Lease, Node, Event',
    'src/lease/node-lease.ts': 'types only: the options the harness hands a NodeLease',
    'src/liveness/heartbeat.ts': "the lease harness wires the relister's heartbeat as the agent does",
    'src/liveness/liveness.ts': "the lease harness wires the relister's liveness as the agent does",
    'src/log/logger.ts': 'the logger and its memory sink',
    'src/loop/run-loop.ts': 'the lease harness runs the real relister on the real scheduler',
    'src/relist/relist-ledger.ts': 'types only: RuntimeHealth',
    'src/relist/relister.ts': 'the lease harness relists with the real relister',
  },
};

const rel = (root: string, path: string): string => relative(root, path);

/** Why a module reached from a product entry must not be there, or undefined. */
function forbiddenInProduct(path: string): string | undefined {
  const file = rel(REPO_ROOT, path);
  if (file.startsWith('src/stand-ins/')) return 'a stand-in';
  if (file === 'src/clock/manual-clock.ts') return "the tests' manual clock";
  if (file.startsWith('src/demo/') || file === LAZY_DEMO.to) return 'the demo';
  if (file.endsWith('.test.ts')) return 'a test';
  if (!file.startsWith('src/')) return 'not product source';
  return undefined;
}

/** One line per forbidden module the walk reached, with the chain of imports that reached it. */
function violations(walk: Walk, root: string, forbidden: (path: string) => string | undefined): string[] {
  const found: string[] = [];
  for (const [path, chain] of walk.reached) {
    const why = forbidden(path);
    if (why !== undefined) found.push(`${rel(root, path)} (${why}): ${describeChain(chain, root)}`);
  }
  return found.sort();
}

const isLazyDemo = (edge: ImportEdge): boolean =>
  rel(REPO_ROOT, edge.from) === LAZY_DEMO.from && edge.to !== undefined && rel(REPO_ROOT, edge.to) === LAZY_DEMO.to;

describe('the import graph walker, on a fixture tree', () => {
  const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'import-graph');
  const at = (name: string): string => join(FIXTURE, 'product', name);
  const standIn = (path: string): string | undefined => (rel(FIXTURE, path).startsWith('stand-ins/') ? 'a stand-in' : undefined);

  test('reads every way a module names another, and says which it cannot resolve', () => {
    const edges = importsOf(at('every-kind.ts')).map((e) => [e.kind, e.specifier, e.to === undefined ? e.unresolved ?? 'outside' : rel(FIXTURE, e.to)]);
    assert.deepEqual(edges, [
      ['static', 'node:module', 'outside'],
      ['static', './shared.ts', 'product/shared.ts'],
      ['type', './shapes.ts', 'product/shapes.ts'],
      ['re-export', './shared.ts', 'product/shared.ts'],
      ['type', './shapes.ts', 'product/shapes.ts'],
      ['type', './shapes.ts', 'product/shapes.ts'],
      ['require', 'typescript/package.json', 'outside'],
      ['dynamic', './shared.ts', 'product/shared.ts'],
      ['dynamic', 'name', 'not a string the parser can read'],
    ]);
  });

  test('a clean entry reaches no stand-in', () => {
    const walk = walkImports([at('clean-entry.ts')]);
    assert.ok(walk.reached.has(at('every-kind.ts')), 'precondition: the walk followed the dynamic import to every-kind.ts');
    assert.deepEqual(violations(walk, FIXTURE, standIn), []);
  });

  test('a stand-in behind a re-export and a static import is caught, with the chain that reached it', () => {
    const walk = walkImports([at('static-entry.ts')]);
    assert.deepEqual(violations(walk, FIXTURE, standIn), [
      'stand-ins/fake-api.ts (a stand-in): product/static-entry.ts:2 --re-export--> product/relay.ts:2 --static--> stand-ins/fake-api.ts',
    ]);
  });

  test('a stand-in behind a dynamic import() is caught', () => {
    const walk = walkImports([at('dynamic-entry.ts')]);
    assert.deepEqual(violations(walk, FIXTURE, standIn), [
      'stand-ins/fake-api.ts (a stand-in): product/dynamic-entry.ts:3 --dynamic--> stand-ins/fake-api.ts',
    ]);
  });

  test('skipping the lazy demo edge hides only that edge: another path to the stand-in is still caught', () => {
    const skipDemo = (e: ImportEdge): boolean => e.to === at('demo.ts');
    const walk = walkImports([at('lazy-main.ts')], skipDemo);
    assert.deepEqual(walk.skipped.map((e) => `${rel(FIXTURE, e.from)}:${e.line}`), ['product/lazy-main.ts:4']);
    assert.ok(!walk.reached.has(at('demo.ts')), 'the skipped edge is not followed');
    assert.deepEqual(violations(walk, FIXTURE, standIn), [
      'stand-ins/fake-api.ts (a stand-in): product/lazy-main.ts:5 --dynamic--> product/dynamic-entry.ts:3 --dynamic--> stand-ins/fake-api.ts',
    ]);
  });
});

describe('the fence around the stand-ins', () => {
  for (const [command, entry] of Object.entries(ENTRIES)) {
    test(`nothing the ${command} command is built from reaches a stand-in, the demo or a test`, () => {
      const walk = walkImports([join(REPO_ROOT, entry)], isLazyDemo);
      assert.ok(walk.reached.size > 10, `precondition: the walk from ${entry} reached its modules (${walk.reached.size})`);
      if (command === 'main') {
        assert.deepEqual(walk.skipped.map((e) => `${rel(REPO_ROOT, e.from)} --${e.kind}--> ${rel(REPO_ROOT, e.to ?? '?')}`), [
          `${LAZY_DEMO.from} --dynamic--> ${LAZY_DEMO.to}`,
        ], 'precondition: the one edge left out is main.ts\'s lazy import of the demo');
        for (const other of ['agent', 'check', 'fleet', 'controller'] as const) {
          assert.ok(walk.reached.has(join(REPO_ROOT, ENTRIES[other])), `precondition: main.ts reaches the ${other} command`);
        }
      }
      assert.deepEqual(walk.unresolved.map((e) => `${rel(REPO_ROOT, e.from)}:${e.line} ${e.specifier}`), [], 'every import on the way resolves');
      assert.deepEqual(violations(walk, REPO_ROOT, forbiddenInProduct), []);
    });
  }

  test('each stand-in imports from the product only what its list allows', () => {
    const files = readdirSync(join(REPO_ROOT, 'src', 'stand-ins'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
      .map((e) => join(e.parentPath, e.name));
    assert.ok(files.length > 30, `precondition: the stand-ins' modules are found (${files.length})`);
    const found: string[] = [];
    const used = new Set<string>();
    for (const file of files) {
      const folder = Object.keys(STAND_IN_MAY_IMPORT).find((f) => rel(REPO_ROOT, file).startsWith(f));
      if (folder === undefined) {
        found.push(`${rel(REPO_ROOT, file)}: in no folder of STAND_IN_MAY_IMPORT`);
        continue;
      }
      for (const edge of importsOf(file)) {
        if (edge.unresolved !== undefined) found.push(`${rel(REPO_ROOT, file)}:${edge.line} ${edge.specifier}: ${edge.unresolved}`);
        if (edge.to === undefined) continue;
        const target = rel(REPO_ROOT, edge.to);
        if (target.startsWith('src/stand-ins/')) continue;
        if (STAND_IN_MAY_IMPORT[folder]?.[target] === undefined) found.push(`${rel(REPO_ROOT, file)}:${edge.line} imports ${target}`);
        else used.add(`${folder} ${target}`);
      }
    }
    assert.deepEqual(found, []);
    const listed = Object.entries(STAND_IN_MAY_IMPORT).flatMap(([folder, targets]) => Object.keys(targets).map((t) => `${folder} ${t}`));
    assert.deepEqual(listed.filter((l) => !used.has(l)), [], 'every allowance is in use (drop one that is not)');
  });
});
