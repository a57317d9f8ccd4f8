// The import graph of the TypeScript sources, as the TypeScript parser sees it: which modules a
// module names, and every module reachable from a set of entry points, each with the chain of
// imports that reached it (the message a failing fence test prints).
//
// Every way a module can name another counts as an edge, because each one either loads it or
// ties the code to it:
//
// | syntax                                   | kind        |
// |------------------------------------------|-------------|
// | import … from 'x', import 'x'            | static      |
// | import type … from 'x', import('x').T    | type        |
// | export … from 'x', export * from 'x'     | re-export   |
// | export type … from 'x'                   | type        |
// | import('x'), anywhere in the module      | dynamic     |
// | require('x') (a createRequire require)   | require     |
//
// Assumptions and failure modes:
//   - Relative and absolute specifiers are files of this repository; bare ones (`pino`,
//     `node:fs`, `prom-client/lib/x.js`) are packages or built-ins, outside the graph.
//   - A specifier the parser cannot read as a string (`import(name)`, a template with a relative
//     head) and a relative one whose file does not exist are returned as unresolved, never
//     dropped, so a walk cannot miss an edge silently.
//   - Only .ts files are parsed; another file (JSON) is reached but has no edges.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import ts from 'typescript';

export type ImportKind = 'static' | 'type' | 're-export' | 'dynamic' | 'require';

export interface ImportEdge {
  /** The importing module (absolute path). */
  readonly from: string;
  /** The specifier as written, or the source text of an argument that is not a string. */
  readonly specifier: string;
  /** The module named (absolute path); undefined for a package or built-in, or when unresolved. */
  readonly to: string | undefined;
  readonly kind: ImportKind;
  /** 1-based line of the import in `from`. */
  readonly line: number;
  /** Why `to` is missing although the specifier names a file of the repository (or may). */
  readonly unresolved?: string;
}

export interface Walk {
  /** Every module reached, with the chain of edges from an entry (empty for an entry itself). */
  readonly reached: ReadonlyMap<string, readonly ImportEdge[]>;
  /** Edges of reached modules whose target could not be resolved. */
  readonly unresolved: readonly ImportEdge[];
  /** Edges the caller's skip() left out, so it can check it skipped what it meant to. */
  readonly skipped: readonly ImportEdge[];
}

/** The edges of one module, in source order. */
export function importsOf(file: string): ImportEdge[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (node: ts.Node, arg: ts.Expression | undefined, kind: ImportKind): void => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    edges.push(edgeTo(file, arg, kind, line, source));
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.moduleSpecifier, node.importClause?.isTypeOnly === true ? 'type' : 'static');
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      add(node, node.moduleSpecifier, node.isTypeOnly ? 'type' : 're-export');
    } else if (ts.isImportTypeNode(node)) {
      const arg = ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined;
      add(node, arg !== undefined && ts.isStringLiteral(arg) ? arg : undefined, 'type');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], 'dynamic');
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
      add(node, node.arguments[0], 'require');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

function edgeTo(from: string, arg: ts.Node | undefined, kind: ImportKind, line: number, source: ts.SourceFile): ImportEdge {
  const base = { from, kind, line };
  if (arg !== undefined && (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg))) {
    const specifier = arg.text;
    if (!isFileSpecifier(specifier)) return { ...base, specifier, to: undefined };
    const to = resolveFile(from, specifier);
    return to === undefined ? { ...base, specifier, to, unresolved: 'no such file' } : { ...base, specifier, to };
  }
  const text = arg === undefined ? '' : arg.getText(source);
  // A template whose fixed head names a package (`prom-client/lib/${name}.js`) stays in that package.
  if (arg !== undefined && ts.isTemplateExpression(arg) && arg.head.text !== '' && !isFileSpecifier(arg.head.text)) {
    return { ...base, specifier: text, to: undefined };
  }
  return { ...base, specifier: text, to: undefined, unresolved: 'not a string the parser can read' };
}

function isFileSpecifier(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../') || specifier.startsWith('file:') || isAbsolute(specifier);
}

function resolveFile(from: string, specifier: string): string | undefined {
  const path = specifier.startsWith('file:') ? new URL(specifier).pathname : resolve(dirname(from), specifier);
  if (existsSync(path)) return path;
  // A `.js` specifier of a `.ts` source, as the compiled output names it.
  const source = path.replace(/\.js$/, '.ts');
  return source !== path && existsSync(source) ? source : undefined;
}

/** Every module reachable from the entries, breadth first; skip(edge) leaves an edge out. */
export function walkImports(entries: readonly string[], skip: (edge: ImportEdge) => boolean = () => false): Walk {
  const reached = new Map<string, readonly ImportEdge[]>();
  const unresolved: ImportEdge[] = [];
  const skipped: ImportEdge[] = [];
  const queue: string[] = [];
  for (const entry of entries) {
    if (!existsSync(entry)) throw new Error(`import graph: entry ${entry} does not exist`);
    if (!reached.has(entry)) {
      reached.set(entry, []);
      queue.push(entry);
    }
  }
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (!file.endsWith('.ts')) continue;
    const chain = reached.get(file) ?? [];
    for (const edge of importsOf(file)) {
      if (skip(edge)) {
        skipped.push(edge);
        continue;
      }
      if (edge.unresolved !== undefined) unresolved.push(edge);
      if (edge.to === undefined || reached.has(edge.to)) continue;
      reached.set(edge.to, [...chain, edge]);
      queue.push(edge.to);
    }
  }
  return { reached, unresolved, skipped };
}

/** A chain of edges as one line: `a.ts:3 --static--> b.ts:7 --dynamic--> c.ts`. */
export function describeChain(chain: readonly ImportEdge[], root: string): string {
  const rel = (p: string): string => (p.startsWith(`${root}/`) ? p.slice(root.length + 1) : p);
  if (chain.length === 0) return '(an entry point)';
  return chain.map((e) => `${rel(e.from)}:${e.line} --${e.kind}-->`).join(' ') + ` ${rel(chain.at(-1)?.to ?? '?')}`;
}
