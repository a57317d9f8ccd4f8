// One REST surface: no product module outside src/kube/ writes an API path. Every path and verb
// the product uses is a method of src/kube/kube-client.ts or a builder of src/kube/api-paths.ts.
//
// | file                                    | may hold an API path literal                    |
// |-----------------------------------------|-------------------------------------------------|
// | src/kube/**                             | yes: the client and its paths                   |
// | src/stand-ins/**                        | yes: independent witnesses keep their own paths |
// | src/**/*.test.ts                        | yes: tests name what they expect                |
// | any other file of src/                  | no                                              |
//
// An API path literal is a string literal or a template part (as the TypeScript parser reads
// them; comments do not count) that holds '/api/v1' (ending there or followed by '/') or
// '/apis/'. A path put together from smaller pieces ('/ap' + 'is/') is not seen; the rule is
// about the habit of writing paths, which such a split would be a deliberate way round.
import assert from 'node:assert/strict';
import { globSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';

const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const API_PATH = /\/api\/v1(?:\/|$)|\/apis\//;

/** The API path literals of one TypeScript source, each with its 1-based line. */
function apiPathLiterals(source: string): { line: number; text: string }[] {
  const file = ts.createSourceFile('x.ts', source, ts.ScriptTarget.Latest, true);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      if (API_PATH.test(node.text)) found.push({ line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function mayHoldPaths(path: string): boolean {
  return path.startsWith('src/kube/') || path.startsWith('src/stand-ins/') || path.endsWith('.test.ts');
}

function literalsIn(path: string): { line: number; text: string }[] {
  return apiPathLiterals(readFileSync(join(REPO_ROOT, path), 'utf8'));
}

test('what counts as an API path literal', () => {
  const table: [string, number][] = [
    ["const p = '/api/v1/nodes';", 1],
    ["const p = '/api/v1';", 1],
    ['const p = `/apis/apps/v1/namespaces/${ns}/daemonsets`;', 1],
    ['const p = `${base}/x/${ns}/apis/y`;', 1],
    ['const p = "/apis/coordination.k8s.io/v1";', 1],
    ["// the PATCH of /api/v1/nodes/<name>\nconst x = 1;", 0],
    ["const p = '/api/v10';", 0],
    ["const p = '/apis';", 0],
    ["const p = nodesPath();", 0],
  ];
  for (const [source, count] of table) assert.equal(apiPathLiterals(source).length, count, source);
});

test('the path builders and the stand-ins hold API path literals the scan finds (a precondition: the scan is not blind)', () => {
  assert.ok(literalsIn('src/kube/api-paths.ts').length >= 5, 'precondition: src/kube/api-paths.ts holds the paths the product uses');
  assert.ok(literalsIn('src/stand-ins/doubles/lease-test-harness.ts').length >= 2, 'precondition: the lease harness keeps its own paths');
});

test('no product module outside src/kube/ holds an API path literal', () => {
  const files = globSync('src/**/*.ts', { cwd: REPO_ROOT }).sort();
  assert.ok(files.length > 50, `precondition: src/ holds the product's sources (found ${files.length})`);
  const offending = files.filter((f) => !mayHoldPaths(f)).flatMap((f) => literalsIn(f).map((l) => `${f}:${l.line}: ${l.text}`));
  assert.deepEqual(offending, [], 'an API path outside src/kube/: use a method of kube-client.ts or a builder of api-paths.ts');
});
