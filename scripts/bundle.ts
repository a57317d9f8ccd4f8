// The commands' JavaScript for the image, bundled: one esbuild run from the built CLI
// (dist/src/cli/main.js, tsc's output, the code the tests run) into a folder that needs no
// node_modules at all.
//
//   node_modules/.bin/node scripts/bundle.ts [--out DIR] [--json]    # or: npm run bundle
//
// Why: the production node_modules is ~93 MiB on disk (source maps, type declarations, and
// every API group's models of @kubernetes/client-node), against ~5 MiB of JavaScript the commands
// can reach. The image ships this folder instead (Dockerfile, stage `build`).
//
// What comes out (DIR, default bundle/, replaced whole):
//   package.json                 name, version, license and "type": "module" (version.ts reads it)
//   dist/src/cli/main.js         the entry, at the path the manifests run (`node dist/src/cli/main.js`)
//   dist/chunks/*.js             every module the entry reaches, statically or through import():
//                                each command main.ts dispatches is a chunk loaded on its own
//   proto/                       the CRI proto, found by walking up from the chunks (cri-proto.ts)
//   THIRD-PARTY-LICENSES.txt     the license of every package whose code is in the bundle
// Nothing is listed by hand: every command main.ts dispatches, and every package they import,
// is found by following the imports from the entry.
//
// Choices:
//   - format esm with code splitting, so a command loads only its own chunks (main.ts imports
//     each lazily, and stays that way);
//   - keepNames: classes and functions keep their names (pino logs an error's class name as its
//     `type`, and esbuild would rename a class whose name two modules share);
//   - whitespace minified, and nothing else (names, syntax and line structure of each function
//     stay): the unminified bundle, with keepNames, kept the agent at 107-108 MiB RSS against
//     98-100 MiB for dist/ with node_modules, and this one at 95-97 MiB (the benchmark's steady
//     state, 330 containers on the simulated runtime, 30 s windows, two rounds each). Without
//     comments no chunk holds a non-ASCII character, so V8 keeps every chunk's source one byte
//     a character;
//   - no source maps;
//   - a banner gives every chunk a `require` (createRequire), which the CommonJS packages inside
//     use for Node's built-in modules, and for optional packages they try and do without (ws's
//     bufferutil): esbuild leaves a require it cannot resolve inside a try as it is;
//   - production packages only, as `npm ci --omit=dev` installs them: the build runs with the
//     dev dependencies installed, and one of them can satisfy a production package's optional
//     import (debug tries supports-color, which only eslint's tools bring). Such an import is
//     left out of the bundle, as a production install leaves it out; a package that imports a
//     dev-only package without declaring it optional fails the bundle, naming both.
//
// Failure modes: a missing dist/ (run `npm run build` first) or an import esbuild cannot
// resolve throws, naming it; the output folder is then left incomplete, never half-old.
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Metafile, type Plugin } from 'esbuild';

/** The built CLI: the one entry point. */
export const BUNDLE_ENTRY = 'dist/src/cli/main.js';
/** Where the entry lands inside the output folder: the path the image and manifests run. */
export const BUNDLED_MAIN = 'dist/src/cli/main.js';
export const LICENSES_FILE = 'THIRD-PARTY-LICENSES.txt';
const REPO_ROOT = resolve(import.meta.dirname, '..');
const CREATE_REQUIRE_BANNER = "import { createRequire as __nodepulseCreateRequire } from 'node:module'; const require = __nodepulseCreateRequire(import.meta.url);";
const LICENSE_FILE = /^(licen[cs]e|copying|notice)(\.|-|$)/i;

export interface BundledPackage {
  readonly name: string;
  readonly version: string;
  readonly license: string;
}

export interface Bundle {
  readonly outDir: string;
  /** Every file written, relative to outDir, with its size. */
  readonly files: ReadonlyArray<{ readonly path: string; readonly bytes: number }>;
  readonly bytes: number;
  /** esbuild's account of every input and output (paths relative to the repository). */
  readonly metafile: Metafile;
  /** The packages whose modules are in the bundle, by name. */
  readonly packages: readonly BundledPackage[];
}

export interface BundleOptions {
  readonly repoRoot?: string;
  readonly outDir?: string;
}

/** Bundles the built CLI into outDir (see the header). */
export async function bundleCommands(options: BundleOptions = {}): Promise<Bundle> {
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const outDir = resolve(repoRoot, options.outDir ?? 'bundle');
  const entry = join(repoRoot, BUNDLE_ENTRY);
  if (!existsSync(entry)) throw new Error(`bundle: ${entry} must exist: run \`npm run build\` first`);
  rmSync(outDir, { recursive: true, force: true });

  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: [BUNDLE_ENTRY],
    outdir: join(outDir, 'dist'),
    outbase: 'dist',
    entryNames: '[dir]/[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    keepNames: true,
    minifyWhitespace: true,
    legalComments: 'external',
    banner: { js: CREATE_REQUIRE_BANNER },
    metafile: true,
    logLevel: 'warning',
    plugins: [productionPackagesOnly(repoRoot)],
  });

  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string; description?: string; license: string };
  writeFileSync(join(outDir, 'package.json'), `${JSON.stringify({ name: pkg.name, version: pkg.version, description: pkg.description, license: pkg.license, type: 'module' }, null, 2)}\n`);
  cpSync(join(repoRoot, 'proto'), join(outDir, 'proto'), { recursive: true });
  const packages = bundledPackages(repoRoot, result.metafile);
  // esbuild wrote the legal comments it found in the code (`/*! … */`, @license) beside each
  // chunk; they join the licenses file, so the chunks hold none.
  const legal = listFiles(outDir).filter((f) => f.endsWith('.LEGAL.txt'));
  const notices = [...new Set(legal.flatMap((f) => readFileSync(join(outDir, f), 'utf8').replaceAll('Bundled license information:', '').split(/\n\s*\n/).map((c) => c.trim())).filter((c) => c !== ''))];
  for (const f of legal) rmSync(join(outDir, f));
  writeFileSync(join(outDir, LICENSES_FILE), licensesText(repoRoot, result.metafile, packages, notices));

  const files = listFiles(outDir).map((path) => ({ path, bytes: statSync(join(outDir, path)).size }));
  return { outDir, files, bytes: files.reduce((n, f) => n + f.bytes, 0), metafile: result.metafile, packages };
}

/**
 * Resolves every bare import as esbuild would, and keeps out of the bundle any package that
 * package-lock.json marks dev-only: left external when its importer declares it optional (a
 * production install does without it too), an error otherwise.
 */
function productionPackagesOnly(repoRoot: string): Plugin {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  return {
    name: 'production-packages-only',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === 'resolving' || args.path.startsWith('node:')) return undefined;
        const resolved = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'resolving' });
        if (resolved.errors.length > 0 || resolved.external) return undefined;
        const dir = packageDirOf(relative(repoRoot, resolved.path));
        if (dir === undefined || lock.packages[dir]?.dev !== true) return undefined;
        const name = dir.slice(dir.lastIndexOf('node_modules/') + 'node_modules/'.length);
        const importer = packageDirOf(relative(repoRoot, args.importer));
        const manifest = importer === undefined ? {} : (JSON.parse(readFileSync(join(repoRoot, importer, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> });
        if (manifest.optionalDependencies?.[name] !== undefined || manifest.peerDependenciesMeta?.[name]?.optional === true) return { path: args.path, external: true };
        return { errors: [{ text: `${name} (imported by ${relative(repoRoot, args.importer)}) must be a production dependency: package-lock.json has it for development only` }] };
      });
    },
  };
}

/** The package folder (relative to the repository) of a node_modules input, or undefined. */
export function packageDirOf(input: string): string | undefined {
  const parts = input.split('/');
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1]?.startsWith('@') ? parts.slice(at + 1, at + 3) : parts.slice(at + 1, at + 2);
  return [...parts.slice(0, at + 1), ...name].join('/');
}

function bundledPackages(repoRoot: string, metafile: Metafile): BundledPackage[] {
  const dirs = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const dir = packageDirOf(input);
    if (dir !== undefined) dirs.add(dir);
  }
  return [...dirs].sort().map((dir) => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    return { name: manifest.name, version: manifest.version, license: manifest.license ?? 'UNKNOWN' };
  });
}

function licensesText(repoRoot: string, metafile: Metafile, packages: readonly BundledPackage[], notices: readonly string[]): string {
  const dirs = [...new Set(Object.keys(metafile.inputs).map(packageDirOf).filter((d): d is string => d !== undefined))].sort();
  const sections = dirs.map((dir, i) => {
    const p = packages[i];
    const texts = readdirSync(join(repoRoot, dir)).filter((f) => LICENSE_FILE.test(f)).sort()
      .map((f) => readFileSync(join(repoRoot, dir, f), 'utf8').trim());
    return [`${p?.name}@${p?.version} (${p?.license})`, texts.length > 0 ? texts.join('\n\n') : '(the package carries no license file; its package.json names the license above)'].join('\n\n');
  });
  const rule = `\n\n${'-'.repeat(78)}\n\n`;
  const kept = notices.length === 0 ? '' : `${rule}Notices kept from the bundled code:\n\n${notices.join('\n\n')}`;
  return `The nodepulse commands in dist/ bundle code from these packages, under these licenses.\n\n${sections.join(rule)}${kept}\n`;
}

function listFiles(root: string, rel = ''): string[] {
  return readdirSync(join(root, rel), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e) => (e.isDirectory() ? listFiles(root, join(rel, e.name)) : [join(rel, e.name)]));
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, json: { type: 'boolean', default: false } } });
  const bundle = await bundleCommands(values.out === undefined ? {} : { outDir: values.out });
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ outDir: bundle.outDir, bytes: bundle.bytes, files: bundle.files, packages: bundle.packages }, null, 2)}\n`);
  } else {
    const js = bundle.files.filter((f) => f.path.endsWith('.js'));
    process.stdout.write(`${relative(process.cwd(), bundle.outDir) || '.'}: ${(bundle.bytes / 1024 / 1024).toFixed(1)} MiB in ${bundle.files.length} files (${js.length} JavaScript, ${(js.reduce((n, f) => n + f.bytes, 0) / 1024 / 1024).toFixed(1)} MiB), ${bundle.packages.length} packages\n`);
  }
}

