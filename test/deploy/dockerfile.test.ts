// The Dockerfile, linted without Docker. hadolint is in neither Debian nor the npm registry (the
// npm package `hadolint` is only a wrapper around a binary it does not ship), so this test
// parses the Dockerfile with dockerfile-utils / dockerfile-ast (the parser of the Dockerfile
// language server) and applies the hadolint rules that matter for this file, by their codes.
// It also asserts the contract of its two stages: the build stage runs on the build platform
// and the final stage, on the target's, is COPY steps only (so an arm64 image is built without
// emulation), both on the `node` devDependency's Node.js, and the final stage takes nothing but
// the bundle from the build stage (so it can hold no node_modules; test/package/bundle.test.ts
// holds the bundle to production packages).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { validate } from 'dockerfile-utils';
import { AGENT_ENV, AGENT_NODE_FLAGS } from '../../src/cli/agent-node-flags.ts';
import { REPO_ROOT } from './render.ts';

const text = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const dockerfile = DockerfileParser.parse(text);
const instructions = dockerfile.getInstructions();

interface Stage {
  name: string;
  image: string;
  /** The FROM's --platform, as written (e.g. `${BUILDPLATFORM}`), or undefined. */
  platform: string | undefined;
  instructions: Instruction[];
}

/** ARG defaults declared before the first FROM: the only ones a FROM line can use. */
function globalArgs(): Map<string, string> {
  const args = new Map<string, string>();
  for (const inst of instructions) {
    if (inst.getKeyword() === 'FROM') break;
    if (inst.getKeyword() !== 'ARG') continue;
    const [name, value] = (inst.getArgumentsContent() ?? '').split('=', 2);
    if (name !== undefined && value !== undefined) args.set(name.trim(), value.trim());
  }
  return args;
}

function stages(): Stage[] {
  const args = globalArgs();
  const out: Stage[] = [];
  for (const inst of instructions) {
    if (inst.getKeyword() === 'FROM') {
      const platform = /--platform=(\S+)/.exec(inst.getTextContent())?.[1];
      const parts = inst.getArguments().map((a) => a.getValue()).filter((p) => !p.startsWith('--'));
      const image = (parts[0] ?? '').replace(/\$\{?(\w+)\}?/g, (_m, n: string) => args.get(n) ?? '');
      const asIndex = parts.findIndex((p) => p.toUpperCase() === 'AS');
      out.push({ name: asIndex >= 0 ? (parts[asIndex + 1] ?? '') : String(out.length), image, platform, instructions: [] });
    } else {
      out.at(-1)?.instructions.push(inst);
    }
  }
  return out;
}

/** An instruction's text after its keyword, flags such as --from included. */
function argText(inst: Instruction): string {
  return inst.getTextContent().trim().slice(inst.getInstruction().length).trim();
}

const allStages = stages();
const runs = instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent() ?? '');

test('the Dockerfile parses with no diagnostic from the Dockerfile validator', () => {
  assert.deepEqual(validate(text, {}).map((d) => `${d.range.start.line + 1}: ${d.message}`), []);
  assert.ok(allStages.length >= 2, 'precondition: a multi-stage build');
});

/** The `node` devDependency's version, as package-lock.json pins it: the Node.js everything runs on. */
const NODE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> }).packages['node_modules/node']?.version;

test('DL3006/DL3007: every base image is pinned to an explicit version tag, never latest; both name the node devDependency\'s Node.js', () => {
  assert.match(NODE_VERSION ?? '', /^24\.\d+\.\d+$/, 'precondition: package-lock.json pins the node devDependency to a Node.js 24 release');
  for (const s of allStages) {
    assert.match(s.image, /^[\w./-]+:[\w.-]+$/, `stage ${s.name}: image ${s.image} must carry a tag`);
    assert.doesNotMatch(s.image, /:latest$/, `stage ${s.name}: never latest`);
  }
  const [build, final] = [allStages.find((s) => s.name === 'build'), allStages.at(-1)];
  assert.equal(build?.image, `node:${NODE_VERSION}-bookworm-slim`, 'the build stage: Node.js\'s own Debian bookworm slim image, the devDependency\'s release');
  assert.equal(final?.image, `localhost/nodepulse-runtime:${NODE_VERSION}-bookworm`, 'the final stage: the runtime base scripts/runtime-base.ts assembles, the same release');
});

test('the build stage runs on the build platform and the final stage, on the target\'s, is COPY steps only: no program of the target architecture runs', () => {
  const build = allStages.find((s) => s.name === 'build');
  const final = allStages.at(-1);
  assert.ok(build && final && build !== final, 'precondition: a build stage and a final stage');
  assert.equal(build.platform, '${BUILDPLATFORM}');
  assert.equal(final.platform, '${TARGETPLATFORM}');
  const kinds = new Set(final.instructions.map((i) => i.getKeyword()));
  assert.deepEqual([...kinds].filter((k) => !['ARG', 'LABEL', 'WORKDIR', 'ENV', 'COPY', 'EXPOSE', 'ENTRYPOINT'].includes(k)), [], 'the final stage runs nothing (no RUN, no shell-form step)');
  assert.equal(allStages.length, 2, 'two stages: a third would be built for the target platform too');
});

test('DL3024: stage names are unique; DL3022: COPY --from names an earlier stage', () => {
  const names = allStages.map((s) => s.name);
  assert.equal(new Set(names).size, names.length);
  allStages.forEach((s, i) => {
    for (const inst of s.instructions.filter((x) => x.getKeyword() === 'COPY')) {
      const from = /--from=(\S+)/.exec(argText(inst))?.[1];
      if (from !== undefined) assert.ok(names.slice(0, i).includes(from), `COPY --from=${from} in ${s.name} must name an earlier stage`);
    }
  });
});

test('DL3020, DL3025, DL3000, DL3003, DL4000: COPY not ADD, JSON ENTRYPOINT, absolute WORKDIR, no cd, no MAINTAINER', () => {
  assert.equal(instructions.some((i) => i.getKeyword() === 'ADD'), false);
  assert.equal(instructions.some((i) => i.getKeyword() === 'MAINTAINER'), false);
  for (const i of instructions.filter((x) => x.getKeyword() === 'ENTRYPOINT' || x.getKeyword() === 'CMD')) {
    assert.ok(Array.isArray(JSON.parse(i.getArgumentsContent() ?? '')), `${i.getKeyword()} must be JSON form`);
  }
  for (const i of instructions.filter((x) => x.getKeyword() === 'WORKDIR')) assert.match(i.getArgumentsContent() ?? '', /^\//);
  for (const r of runs) assert.doesNotMatch(r, /(^|&&|;)\s*cd\s/, `use WORKDIR, not cd: ${r}`);
});

test('DL3008/DL3009/DL3015/DL3016/DL4006: package installs are minimal and pinned, pipes fail loudly', () => {
  for (const r of runs) {
    if (/apt-get install/.test(r)) {
      assert.match(r, /--no-install-recommends/, 'DL3015');
      assert.match(r, /rm -rf \/var\/lib\/apt\/lists/, 'DL3009');
    }
    assert.doesNotMatch(r, /\bnpm (install|i)\b(?!.*@)/, 'DL3016: use npm ci, or pin what npm install adds');
    if (/\|/.test(r.replace(/\|\|/g, ''))) assert.match(text, /SHELL \["\/bin\/bash", "-o", "pipefail"/, 'DL4006');
  }
});

test('the image runs `nodepulse agent`, says why it runs as root, and carries OCI labels', () => {
  const entrypoint = instructions.filter((i) => i.getKeyword() === 'ENTRYPOINT').at(-1);
  assert.deepEqual(JSON.parse(entrypoint?.getArgumentsContent() ?? 'null'), ['node', ...AGENT_NODE_FLAGS, 'dist/src/cli/main.js', 'agent'], 'the agent with its Node.js settings');
  const final = allStages.at(-1);
  assert.ok(final, 'precondition: a final stage');
  const env = final.instructions.filter((i) => i.getKeyword() === 'ENV').flatMap((i) => (i.getArgumentsContent() ?? '').split(/\s+/));
  for (const [name, value] of Object.entries(AGENT_ENV)) assert.ok(env.includes(`${name}=${value}`), `the final stage's ENV sets ${name}=${value}: ${env.join(' ')}`);
  // DL3002: no explicit USER root; root is the base image's default, and the comment says why.
  assert.equal(final.instructions.some((i) => i.getKeyword() === 'USER'), false);
  assert.match(text, /runs as uid 0 ONLY because the CRI socket/);
  const labels = final.instructions.filter((i) => i.getKeyword() === 'LABEL').map((i) => i.getArgumentsContent() ?? '').join(' ');
  for (const key of ['title', 'description', 'version', 'licenses', 'revision']) assert.match(labels, new RegExp(`org\\.opencontainers\\.image\\.${key}=`));
  assert.doesNotMatch(labels, /org\.opencontainers\.image\.source=/, 'no source label: no repository is published, and one would name a repository that does not exist');
});

test('the final stage holds no node_modules and no dev dependency: it takes only the bundle from the build stage, which makes it', () => {
  const final = allStages.at(-1);
  const build = allStages.find((s) => s.name === 'build');
  assert.ok(final && build, 'precondition: a build stage and a final stage');
  const copies = final.instructions.filter((i) => i.getKeyword() === 'COPY').map(argText);
  assert.deepEqual(copies, ['--from=build /src/bundle ./'], 'one COPY, of the bundle (scripts/bundle.ts), and nothing from the context');
  const buildRuns = build.instructions.filter((i) => i.getKeyword() === 'RUN').map((i) => i.getArgumentsContent() ?? '');
  assert.match(buildRuns.at(-1) ?? '', /npm run build && npm run bundle$/, 'the bundle is made from the freshly built dist/');
  assert.ok(buildRuns.every((r) => !/npm (install|i)\b/.test(r)), 'the build stage installs with npm ci only');
  // A plain COPY from the context could carry node_modules; .dockerignore keeps them out.
  const ignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
  assert.equal(ignore[ignore.findIndex((l) => !l.startsWith('#') && l !== '')], '*', '.dockerignore must start by ignoring everything');
  assert.equal(ignore.some((l) => /^!(.*\/)?(node_modules|dist|bundle)(\/|$)/.test(l)), false, 'no node_modules, dist/ or bundle/ of the machine enters the context');
});
