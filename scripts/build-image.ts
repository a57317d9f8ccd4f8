// Builds the agent's image from the repository's Dockerfile with podman, on the base image
// scripts/image-base.ts assembles, and saves it as a docker-archive that `ctr images import`
// (and `docker load`) read.
//
//   node_modules/.bin/node scripts/build-image.ts [--json]      # or: npm run image
//
// Needs root, podman (with buildah's chroot isolation), mmdebstrap and network access to the npm
// registry and Debian's mirror: `apt-get install podman buildah mmdebstrap uidmap`.
//
// The recipe, and why each part:
//   - `podman import` of the base tar under the exact name the Dockerfile's NODE_IMAGE gives, so
//     the Dockerfile is built as it is, and `--pull=never` proves nothing else was fetched;
//   - `--isolation=chroot`: the default (OCI) isolation needs cgroup setup that fails on the
//     machines this runs on;
//   - `--build-arg REVISION=<git HEAD>[-dirty]`: the OCI revision label (-dirty when a file of the
//     build context differs from HEAD);
//   - a private podman store (--root, --runroot, --tmpdir) in a temporary folder, removed before
//     this returns, so nothing is left in the machine's /var/lib/containers;
//   - `podman save --format docker-archive`.
//
// Cached under .tools/image/ (git-ignored): the base tar (see image-base.ts) and the archive
// with its report, keyed by the base, the revision and every file the build context can hold.
// An unchanged tree therefore builds once. Older archives are removed when a new one is written.
//
// Failure modes: every command is bounded in time; a failure throws with the command and the
// tail of its output, after the private store is removed. The image's architecture is the
// machine's: IMAGE_ARCHITECTURES lists what the shipped manifests allow, and the image test
// checks the built image against it.
import { createHash, type Hash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SystemClock } from '../src/clock/clock.ts';
import { baseTar } from './image-base.ts';
import { runTool, type ToolLog } from './run-tool.ts';

/**
 * The architectures the image is built for, as `kubernetes.io/arch` names them. The DaemonSet's
 * node affinity (kustomize and chart) must allow exactly these; test/deploy holds it to that.
 */
export const IMAGE_ARCHITECTURES: readonly string[] = ['amd64'];
export const IMAGE_REPOSITORY = 'localhost/nodepulse';
/** Bump when the archive or report layout changes. */
const IMAGE_FORMAT = 'image-v1';
/** What the build context can hold (.dockerignore lets in no more than these). */
const CONTEXT_FILES = ['Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const CONTEXT_DIRS = ['src', 'proto'];
/** Two `npm ci` runs and `tsc` on a loaded 2-core machine. */
const BUILD_TIMEOUT_MS = 900_000;
const PODMAN_TIMEOUT_MS = 300_000;

export interface ImageLayer {
  /** The Dockerfile step (or `podman import`) that made it. */
  readonly createdBy: string;
  readonly bytes: number;
}

export interface BuiltImage {
  /** docker-archive with the image under `tag`. */
  readonly archive: string;
  readonly tag: string;
  readonly revision: string;
  /** The Dockerfile's NODE_IMAGE, fully qualified: the name the local base was given. */
  readonly baseName: string;
  readonly architecture: string;
  readonly os: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Uncompressed size of every layer together, as podman reports it. */
  readonly sizeBytes: number;
  readonly archiveBytes: number;
  /** Layers that hold files, oldest first (empty ones, such as ENV or LABEL, are left out). */
  readonly layers: readonly ImageLayer[];
  /** Seconds the build took (0 when the archive came from the cache). */
  readonly buildSeconds: number;
  readonly cached: boolean;
}

export interface BuildImageOptions {
  readonly repoRoot?: string;
  readonly cacheDir?: string;
  readonly log?: ToolLog;
}

const REPO_ROOT = resolve(import.meta.dirname, '..');

/** Builds the image (or finds it in the cache) and returns where its archive is, and what it is. */
export async function buildImage(options: BuildImageOptions = {}): Promise<BuiltImage> {
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const cacheDir = options.cacheDir ?? join(repoRoot, '.tools', 'image');
  const log = options.log ?? ((): void => undefined);
  const base = await baseTar({ repoRoot, cacheDir, log });
  log(`base: ${base.path}${base.cached ? ' (cached)' : ''}`);
  const revision = await gitRevision(repoRoot);
  const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const tag = `${IMAGE_REPOSITORY}:${version}`;
  const hash = createHash('sha256').update(`${IMAGE_FORMAT}\n${base.key}\n${revision}\n${tag}\n`);
  for (const file of CONTEXT_FILES) hashFile(hash, repoRoot, file);
  for (const dir of CONTEXT_DIRS) hashTree(hash, repoRoot, dir);
  const key = hash.digest('hex').slice(0, 16);
  const archive = join(cacheDir, `nodepulse-${key}.tar`);
  const reportPath = join(cacheDir, `nodepulse-${key}.json`);
  if (existsSync(archive) && existsSync(reportPath)) {
    return { ...(JSON.parse(readFileSync(reportPath, 'utf8')) as BuiltImage), archive, cached: true, buildSeconds: 0 };
  }

  const clock = new SystemClock();
  const startedMs = clock.monotonicMs();
  const baseName = qualify(nodeImageOf(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')));
  const store = mkdtempSync(join(tmpdir(), 'nodepulse-podman-'));
  const env = { ...process.env, TMPDIR: join(store, 'tmp') };
  mkdirSync(join(store, 'tmp'));
  const podman = (args: readonly string[], timeoutMs = PODMAN_TIMEOUT_MS, onLine?: ToolLog): Promise<string> =>
    runTool('podman', [
      '--root', join(store, 'root'), '--runroot', join(store, 'run'), '--tmpdir', join(store, 'tmp'),
      '--storage-driver', 'overlay', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file', ...args,
    ], { timeoutMs, env, cwd: repoRoot, ...(onLine === undefined ? {} : { onLine }) });
  const partial = join(cacheDir, `partial-${process.pid}-nodepulse.tar`);
  try {
    log(`podman import ${base.path} ${baseName}`);
    await podman(['import', '--change', 'CMD ["node"]', '--change', `ENV PATH=${BASE_PATH}`, base.path, baseName]);
    log(`podman build --pull=never --isolation=chroot -t ${tag} (revision ${revision})`);
    await podman(['build', '--pull=never', '--isolation=chroot', '--build-arg', `REVISION=${revision}`, '-t', tag, '-f', 'Dockerfile', '.'], BUILD_TIMEOUT_MS, (line) => {
      if (/^(STEP|COMMIT|\[\d)/.test(line)) log(`  ${line}`);
    });
    const [inspected] = JSON.parse(await podman(['image', 'inspect', tag])) as Array<{ Architecture: string; Os: string; Size: number; Labels: Record<string, string> | null }>;
    if (inspected === undefined) throw new Error(`podman image inspect ${tag}: must describe the image just built`);
    const history = JSON.parse(await podman(['history', '--format', 'json', tag])) as Array<{ CreatedBy?: string; createdBy?: string; size?: number; Size?: number }>;
    const layers = history.reverse().map((h) => ({ createdBy: (h.CreatedBy ?? h.createdBy ?? '').trim(), bytes: h.size ?? h.Size ?? 0 })).filter((l) => l.bytes > 0);
    log(`podman save --format docker-archive ${tag}`);
    await podman(['save', '--format', 'docker-archive', '-o', partial, tag]);
    const built: BuiltImage = {
      archive,
      tag,
      revision,
      baseName,
      architecture: inspected.Architecture,
      os: inspected.Os,
      labels: inspected.Labels ?? {},
      sizeBytes: inspected.Size,
      archiveBytes: statSync(partial).size,
      layers,
      buildSeconds: Math.round((clock.monotonicMs() - startedMs) / 100) / 10,
      cached: false,
    };
    for (const old of readdirSync(cacheDir).filter((f) => f.startsWith('nodepulse-'))) rmSync(join(cacheDir, old), { force: true });
    writeFileSync(reportPath, `${JSON.stringify(built, null, 2)}\n`);
    renameSync(partial, archive);
    return built;
  } finally {
    rmSync(partial, { force: true });
    await podman(['rmi', '--all', '--force']).catch((err: unknown) => log(`podman rmi: ${err instanceof Error ? err.message : String(err)}`));
    await runTool('umount', ['-R', store], { timeoutMs: 10_000 }).catch(() => undefined);
    rmSync(store, { recursive: true, force: true });
  }
}

/** PATH as the official Node.js images set it (a tar import carries no ENV). */
const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The default of `ARG NODE_IMAGE=…` before the first FROM. */
export function nodeImageOf(dockerfile: string): string {
  const m = /^ARG NODE_IMAGE=(\S+)\s*$/m.exec(dockerfile);
  if (m?.[1] === undefined) throw new Error('Dockerfile: must declare ARG NODE_IMAGE=<image> before the first FROM');
  return m[1];
}

/** `node:24-slim` → `docker.io/library/node:24-slim`, as podman and containerd name it. */
export function qualify(image: string): string {
  const first = image.split('/')[0] ?? '';
  if (!image.includes('/')) return `docker.io/library/${image}`;
  return /[.:]/.test(first) || first === 'localhost' ? image : `docker.io/${image}`;
}

async function gitRevision(repoRoot: string): Promise<string> {
  try {
    const head = (await runTool('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, timeoutMs: 10_000 })).trim();
    // Dirty only where the build context differs from HEAD: a changed test or manifest is not in the image.
    const context = ['--', ...CONTEXT_FILES, ...CONTEXT_DIRS];
    const dirty = (await runTool('git', ['status', '--porcelain', '--untracked-files=all', ...context], { cwd: repoRoot, timeoutMs: 10_000 })).trim() !== '';
    return dirty ? `${head}-dirty` : head;
  } catch {
    return 'unknown';
  }
}

function hashFile(hash: Hash, root: string, rel: string): void {
  const path = join(root, rel);
  hash.update(`${rel}\n`);
  if (existsSync(path)) hash.update(readFileSync(path));
}

function hashTree(hash: Hash, root: string, rel: string): void {
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const child = join(rel, entry.name);
    if (entry.isDirectory()) hashTree(hash, root, child);
    else if (entry.isFile()) hashFile(hash, root, child);
  }
}

function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { json: { type: 'boolean', default: false } } });
  const started = new SystemClock().monotonicMs();
  const built = await buildImage({ log: (line) => process.stderr.write(`${line}\n`) });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(built, null, 2)}\n`);
  } else {
    const seconds = ((new SystemClock().monotonicMs() - started) / 1000).toFixed(1);
    process.stdout.write([
      `${built.tag} (${built.os}/${built.architecture}, revision ${built.revision}) ${built.cached ? 'from the cache' : `built in ${seconds} s`}`,
      `archive: ${built.archive} (${mib(built.archiveBytes)}); import with: ctr -n k8s.io images import ${built.archive}`,
      `size: ${mib(built.sizeBytes)} in ${built.layers.length} layers`,
      ...built.layers.map((l) => `  ${mib(l.bytes).padStart(10)}  ${l.createdBy.slice(0, 100)}`),
      '',
    ].join('\n'));
  }
}
