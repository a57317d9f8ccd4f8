// The image's JavaScript: scripts/bundle.ts run on the built CLI into a temporary folder, as the
// Dockerfile's build stage runs it, and what comes out checked.
//
//   - Every command: each src/cli/*-command.ts module is in the bundle, and every command the
//     bundled `nodepulse --help` lists answers its own --help (version: prints the package's
//     version) from the bundle alone, with no node_modules anywhere above it.
//   - The agent runs on its stack: the chunks the agent command loads hold @grpc/grpc-js, zod,
//     pino and prom-client.
//   - Nothing but production packages (package-lock.json: not dev), each named with its license
//     in THIRD-PARTY-LICENSES.txt.
//   - The agent's config file is read from the bundle (its YAML parser is imported lazily).
//   - Every chunk is ASCII, so V8 keeps its source one byte a character (the RSS reason in the
//     bundle's header).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { BUNDLED_MAIN, bundleCommands, LICENSES_FILE, packageDirOf, type Bundle } from '../../scripts/bundle.ts';
import { AGENT_MAIN, NODE_24, REPO_ROOT } from '../support/agent-process.ts';
import { checkEveryCommand } from '../support/cli-commands.ts';
import { runTool } from '../support/run-tool.ts';

/** Packages the agent command must carry (the project's stack). */
const AGENT_STACK = ['@grpc/grpc-js', 'zod', 'pino', 'prom-client'];
const out = mkdtempSync(join(tmpdir(), 'nodepulse-image-bundle-'));
let bundle: Bundle;

before(async () => {
  assert.ok(existsSync(AGENT_MAIN), `precondition: ${AGENT_MAIN} must be built (npm run build) before the tests`);
  bundle = await bundleCommands({ outDir: out });
});
after(() => rmSync(out, { recursive: true, force: true }));

function nodepulse(args: readonly string[]): ReturnType<typeof runTool> {
  return runTool(NODE_24, [join(out, BUNDLED_MAIN), ...args], { PATH: '/usr/bin:/bin' });
}

/** The package names in a list of esbuild inputs. */
function packagesOf(inputs: Iterable<string>): Set<string> {
  const names = new Set<string>();
  for (const input of inputs) {
    const dir = packageDirOf(input);
    if (dir !== undefined) names.add(dir.slice(dir.lastIndexOf('node_modules/') + 'node_modules/'.length));
  }
  return names;
}

test('every command module of src/cli/ is in the bundle, and every command the bundled CLI lists answers from it with no node_modules in reach', async () => {
  for (let dir = out; dir !== dirname(dir); dir = dirname(dir)) assert.equal(existsSync(join(dir, 'node_modules')), false, `precondition: no node_modules in ${dir}`);
  const modules = readdirSync(join(REPO_ROOT, 'src', 'cli')).filter((f) => f.endsWith('-command.ts') && !f.endsWith('.test.ts'));
  assert.ok(modules.length >= 2, 'precondition: src/cli/ holds the command modules');
  for (const m of modules) assert.ok(`dist/src/cli/${m.replace(/\.ts$/, '.js')}` in bundle.metafile.inputs, `${m} is in the bundle`);

  const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  await checkEveryCommand(nodepulse, version);
});

test('the chunks the agent command loads carry grpc-js, zod, pino and prom-client', () => {
  const outputs = bundle.metafile.outputs;
  const agent = Object.keys(outputs).filter((o) => Object.keys(outputs[o]?.inputs ?? {}).includes('dist/src/cli/agent-command.js'));
  assert.equal(agent.length, 1, `precondition: one chunk holds the agent command: ${agent.join(', ')}`);
  const loaded = new Set<string>();
  const queue = [...agent];
  while (queue.length > 0) {
    const chunk = queue.pop() as string;
    if (loaded.has(chunk)) continue;
    loaded.add(chunk);
    for (const i of outputs[chunk]?.imports ?? []) if (i.kind === 'import-statement' && i.path in outputs) queue.push(i.path);
  }
  const packages = packagesOf([...loaded].flatMap((c) => Object.keys(outputs[c]?.inputs ?? {})));
  for (const name of AGENT_STACK) assert.ok(packages.has(name), `the agent's chunks hold ${name}: ${[...packages].sort().join(', ')}`);
});

test('the bundled agent reads a YAML config file, with no node_modules in reach: the parser it loads only for a file is in the bundle', async () => {
  const file = join(out, 'agent-config.yaml');
  writeFileSync(file, 'relistPeriod: 2500ms\nleaseNamespace: from-the-file\n');
  const run = await nodepulse(['agent', '--node-name=bundle-node', `--config=${file}`, '--print-config']);
  assert.equal(run.code, 0, `exit ${run.code}: ${run.stderr}`);
  const printed = JSON.parse(run.stdout) as Record<string, unknown>;
  assert.equal(printed['relistPeriod'], '2.5s');
  assert.equal(printed['leaseNamespace'], 'from-the-file');
});

test('the bundle holds production packages only, each named with its license in THIRD-PARTY-LICENSES.txt, and no node_modules', () => {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const dirs = new Set(Object.keys(bundle.metafile.inputs).map(packageDirOf).filter((d): d is string => d !== undefined));
  assert.ok(dirs.size > 10, 'precondition: the bundle holds packages');
  for (const dir of dirs) {
    assert.ok(lock.packages[dir] !== undefined, `${dir} is in package-lock.json`);
    assert.notEqual(lock.packages[dir]?.dev, true, `${dir} is a production package`);
  }
  const licenses = readFileSync(join(out, LICENSES_FILE), 'utf8');
  for (const p of bundle.packages) assert.ok(licenses.includes(`\n${p.name}@${p.version} (${p.license})\n`), `${LICENSES_FILE} names ${p.name}@${p.version}`);
  assert.equal(bundle.files.some((f) => f.path.split('/').includes('node_modules')), false);
});

test('every chunk is ASCII: V8 keeps its source one byte a character', () => {
  const chunks = bundle.files.filter((f) => f.path.endsWith('.js'));
  assert.ok(chunks.length > 2, 'precondition: the bundle is split into chunks');
  for (const f of chunks) {
    const at = readFileSync(join(out, f.path)).findIndex((b) => b > 0x7f);
    assert.equal(at, -1, `${f.path}: a non-ASCII byte at ${at}`);
  }
});
