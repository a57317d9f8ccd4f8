// The base image of the Dockerfile's build stage, `FROM ${NODE_IMAGE}`, assembled here as a tar,
// because no container registry is reachable from the machines this project builds on (only
// npm's and Debian's package registries are). The build stage runs on this machine's platform
// whatever the image's, so there is one, this machine's; the final stage's base is
// runtime-base.ts's.
//
// What goes in (a stand-in for the official Node.js bookworm-slim image, not a copy of it):
//   - Debian bookworm, `mmdebstrap --variant=minbase --include=ca-certificates`, without the
//     documentation, manual pages and translations, as Debian's own -slim images leave them
//     out (dpkg path-exclude; copyright files stay);
//   - the project's own Node 24 binary (the one the `node` devDependency puts in
//     node_modules/.bin) as /usr/local/bin/node;
//   - npm from `npm pack npm@11`, under /usr/local/lib/node_modules/npm, with `npm` and `npx`
//     links in /usr/local/bin, as the official image lays them out;
//   - this machine's CA bundle over the image's own, and /usr/local/etc/npmrc (npm's global
//     config for a /usr/local prefix) with that `cafile` and the `registry` that
//     `npm config get registry` prints here: the build stages' `npm ci` goes through whatever
//     TLS proxy and registry this machine uses. The registry's host is never written down.
//
// The tar is cached outside the checkout (build-image.ts: $NODEPULSE_CACHE_DIR/image-bases), so
// a fresh clone's build skips mmdebstrap too. It is keyed by every input above and by the Debian
// versions of the packages Node.js runs on (debian-versions.ts: libc6, libstdc++6, libgcc-s1,
// and ca-certificates for npm's TLS): a new release of one of them makes a new base. The other
// packages of minbase (the shell, dpkg, apt…) only run the build stage's npm and tsc, and
// nothing of them reaches the image, whose final stage copies onto the runtime base; a new
// release of one of those alone does not make a new build base. Older base tars are removed when
// a new one is written.
//
// Failure modes: a missing tool (mmdebstrap, npm, tar) or a failed download throws with the
// command and the tail of its output; nothing partial is left in the cache (written under a
// temporary name and renamed).
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debianVersions } from './debian-versions.ts';
import { runTool, type ToolLog } from './run-tool.ts';
import { RUNTIME_PACKAGES } from './runtime-base.ts';

/** Bump when the base's layout changes, so an older cached tar is not reused. */
const BASE_FORMAT = 'base-v2';
const SUITE = 'bookworm';
/** The npm the official Node 24 images carry is npm 11. */
const NPM_SPEC = 'npm@11';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** What Debian's -slim images drop, as dpkg options (the copyright files are kept). */
const SLIM_DPKG_OPTIONS = [
  ...['doc', 'man', 'info', 'locale', 'groff', 'lintian', 'linda'].map((dir) => `path-exclude=/usr/share/${dir}/*`),
  'path-include=/usr/share/doc/*/copyright',
];
/** mmdebstrap fetches ~60 packages; 10 minutes covers a slow mirror. */
const MMDEBSTRAP_TIMEOUT_MS = 600_000;
const NPM_TIMEOUT_MS = 120_000;

export interface BaseInputs {
  readonly repoRoot: string;
  readonly cacheDir: string;
  readonly log: ToolLog;
}

export interface BaseTar {
  readonly path: string;
  /** sha256 over every input: part of the image's own cache key. */
  readonly key: string;
  readonly cached: boolean;
}

/** Returns the cached base tar for these inputs, assembling it first when there is none. */
export async function baseTar(inputs: BaseInputs): Promise<BaseTar> {
  const nodeBinary = realpathSync(join(inputs.repoRoot, 'node_modules', '.bin', 'node'));
  const registry = (await runTool('npm', ['config', 'get', 'registry'], { cwd: inputs.repoRoot, timeoutMs: NPM_TIMEOUT_MS })).trim();
  if (!/^https?:\/\//.test(registry)) throw new Error(`npm config get registry: ${JSON.stringify(registry)} must be an http(s) URL`);
  const npmrc = `cafile=${CA_BUNDLE}\nregistry=${registry}\n`;
  const key = createHash('sha256')
    .update(`${BASE_FORMAT}\n${SUITE}\n${NPM_SPEC}\n${SLIM_DPKG_OPTIONS.join('\n')}\n${npmrc}${await debianVersions(RUNTIME_PACKAGES)}\n`)
    .update(readFileSync(nodeBinary))
    .update(readFileSync(CA_BUNDLE))
    .digest('hex');
  const path = join(inputs.cacheDir, `base-${key.slice(0, 16)}.tar`);
  if (existsSync(path)) return { path, key, cached: true };

  const work = mkdtempSync(join(tmpdir(), 'nodepulse-base-'));
  try {
    const overlay = join(work, 'overlay');
    const bin = join(overlay, 'usr', 'local', 'bin');
    const lib = join(overlay, 'usr', 'local', 'lib', 'node_modules');
    for (const dir of [bin, lib, join(overlay, 'usr', 'local', 'etc'), join(overlay, 'etc', 'ssl', 'certs')]) mkdirSync(dir, { recursive: true });
    copyFileSync(nodeBinary, join(bin, 'node'));
    inputs.log(`base: npm pack ${NPM_SPEC}`);
    const packed = (await runTool('npm', ['pack', NPM_SPEC, '--pack-destination', work, '--silent'], { cwd: work, timeoutMs: NPM_TIMEOUT_MS })).trim().split('\n').at(-1) ?? '';
    await runTool('tar', ['-xzf', join(work, packed), '-C', lib], { timeoutMs: NPM_TIMEOUT_MS });
    renameSync(join(lib, 'package'), join(lib, 'npm'));
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(bin, 'npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(bin, 'npx'));
    writeFileSync(join(overlay, 'usr', 'local', 'etc', 'npmrc'), npmrc);
    copyFileSync(CA_BUNDLE, join(overlay, CA_BUNDLE));

    inputs.log(`base: mmdebstrap ${SUITE} (minbase + ca-certificates) with Node and ${packed}`);
    // Written beside its final name (mmdebstrap picks the format from the .tar suffix), then renamed.
    mkdirSync(inputs.cacheDir, { recursive: true });
    const partial = join(inputs.cacheDir, `partial-${process.pid}-base.tar`);
    await runTool('mmdebstrap', [
      '--quiet', '--variant=minbase', '--include=ca-certificates',
      ...SLIM_DPKG_OPTIONS.map((opt) => `--dpkgopt=${opt}`),
      // After the packages (so the machine's CA bundle replaces the one ca-certificates made).
      `--customize-hook=sync-in ${overlay} /`,
      SUITE, partial,
    ], { timeoutMs: MMDEBSTRAP_TIMEOUT_MS });

    for (const old of readdirSync(inputs.cacheDir).filter((f) => f.startsWith('base-'))) rmSync(join(inputs.cacheDir, old), { force: true });
    renameSync(partial, path);
    return { path, key, cached: false };
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(join(inputs.cacheDir, `partial-${process.pid}-base.tar`), { force: true });
  }
}
