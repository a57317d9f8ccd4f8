// Builds the agent's image from the repository's Dockerfile with podman, once per architecture
// of IMAGE_ARCHITECTURES, and a manifest list of them; saves each image as a docker-archive
// that `ctr images import` (and `docker load`) read, and the manifest list with its images as
// an OCI archive (what a registry would serve for the multi-architecture name).
//
//   node_modules/.bin/node scripts/build-image.ts [--json]      # or: npm run image
//
// Needs root, podman (with buildah's chroot isolation), mmdebstrap, binutils for each
// architecture (readelf, <triplet>-strip) and network access to the npm registry and Debian's
// mirror: `apt-get install podman buildah mmdebstrap uidmap binutils binutils-aarch64-linux-gnu`.
//
// The recipe, and why each part:
//   - the Dockerfile's two bases, assembled here because no container registry is reachable:
//     NODE_IMAGE (scripts/image-base.ts; the build stage, on this machine's platform) and, per
//     architecture, RUNTIME_IMAGE (scripts/runtime-base.ts; the final stage), each `podman
//     import`ed under the exact name the Dockerfile gives, the runtime with its architecture, so
//     the Dockerfile is built as it is and `--pull=never` proves nothing else was fetched;
//   - `podman build --platform linux/<arch> --build-arg BUILDPLATFORM=linux/<this machine's>`:
//     the build stage runs on the build platform (its FROM says so; buildah 1.28 does not set
//     BUILDPLATFORM itself), and the final stage is COPY steps only, so no program of the target
//     architecture runs (binfmt_misc is absent on the machines this runs on). One store holds
//     both builds, so the second reuses the build stage's layers; between them the runtime base's
//     name moves to the next architecture's (`podman untag`, then import);
//   - `--isolation=chroot`: the default (OCI) isolation needs cgroup setup that fails on the
//     machines this runs on;
//   - `--build-arg REVISION=<git HEAD>[-dirty]`: the OCI revision label (-dirty when a file of the
//     build context differs from HEAD);
//   - `podman manifest create` and `add` of each image, then `podman manifest push --all` to an
//     oci-archive: the index and every image's blobs in one file;
//   - a private podman store (--root, --runroot, --tmpdir) in a temporary folder, removed before
//     this returns, so nothing is left in the machine's /var/lib/containers.
//
// Two caches:
//   - the bases (see their modules), outside the checkout in $NODEPULSE_CACHE_DIR/image-bases
//     (else ~/.cache/nodepulse/image-bases, scripts/cache-root.ts), keyed by their inputs (the
//     package list, the Debian versions a download would fetch, the architecture, Node.js):
//     assembling them was most of a fresh clone's build (106 s of 227 here, against 77 s for
//     both podman builds), and they hold nothing of this repository's code;
//   - the images: under .tools/image/ (git-ignored) in the checkout, a folder per build with the
//     archives and their report, keyed by the bases, this file and its base modules, the revision
//     and every file the build context can hold. An unchanged tree builds once; a fresh clone (a
//     CI run) always builds its image from its own JavaScript. Older builds are removed when a
//     new one is written. One build at a time per
// cache folder (a lock folder holding the builder's pid; a dead builder's lock is taken over),
// so two test files that both need the image wait for one build instead of making two.
//
// Failure modes: every command is bounded in time; a failure throws with the command and the
// tail of its output, after the private store is removed.
import { createHash, type Hash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SystemClock } from '../src/clock/clock.ts';
import { cacheRoot } from './cache-root.ts';
import { baseTar } from './image-base.ts';
import { ARCHITECTURES, RUNTIME_PATH, runtimeBaseTar, type Architecture } from './runtime-base.ts';
import { runTool, type ToolLog } from './run-tool.ts';

/**
 * The architectures the image is built for, as `kubernetes.io/arch` names them. The DaemonSet's
 * node affinity (kustomize, and the chart's image.architectures) must allow exactly these;
 * test/deploy holds it to that, and the image tests check the built manifest list against it.
 */
export const IMAGE_ARCHITECTURES: readonly string[] = ['amd64', 'arm64'];
export const IMAGE_REPOSITORY = 'localhost/nodepulse';
/** Bump when the archive or report layout changes. */
const IMAGE_FORMAT = 'image-v2';
/** What the build context can hold (.dockerignore lets in no more than these). */
const CONTEXT_FILES = ['Dockerfile', '.dockerignore', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/bundle.ts'];
const CONTEXT_DIRS = ['src', 'proto'];
/** The recipe itself: a change to how the image is made makes a new one. */
const RECIPE_FILES = ['scripts/build-image.ts', 'scripts/image-base.ts', 'scripts/runtime-base.ts'];
/** `npm ci`, `tsc` and esbuild on a loaded 2-core machine. */
const BUILD_TIMEOUT_MS = 900_000;
const PODMAN_TIMEOUT_MS = 300_000;

export interface ImageLayer {
  /** The Dockerfile step (or `podman import`) that made it. */
  readonly createdBy: string;
  readonly bytes: number;
}

/** One architecture's image. */
export interface ArchImage {
  /** docker-archive with the image under `tag`. */
  readonly archive: string;
  /** IMAGE_REPOSITORY:<version>-<architecture>. */
  readonly tag: string;
  readonly architecture: string;
  readonly os: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Uncompressed size of every layer together, as podman reports it. */
  readonly sizeBytes: number;
  readonly archiveBytes: number;
  /** Layers that hold files, oldest first (empty ones, such as ENV or LABEL, are left out). */
  readonly layers: readonly ImageLayer[];
  /** Seconds `podman build` took for this architecture (0 when the build came from the cache). */
  readonly buildSeconds: number;
}

/** The manifest list, as its OCI archive holds it (archivedIndex). */
export interface ImageIndex {
  /** oci-archive: the index and every image it names. */
  readonly archive: string;
  readonly archiveBytes: number;
  readonly mediaType: string;
  readonly manifests: ReadonlyArray<{
    readonly digest: string;
    readonly mediaType: string;
    readonly platform: { readonly architecture: string; readonly os: string };
    /** The image's config and compressed layers: what a node pulls for this architecture. */
    readonly pullBytes: number;
  }>;
}

/**
 * Every architecture's image and the manifest list. Its own ArchImage fields are this machine's
 * architecture's image: what a pod here runs.
 */
export interface BuiltImage extends ArchImage {
  /** The manifest list's name: IMAGE_REPOSITORY:<version>. */
  readonly indexTag: string;
  readonly revision: string;
  /** The Dockerfile's NODE_IMAGE and RUNTIME_IMAGE, fully qualified: the names the local bases were given. */
  readonly baseName: string;
  readonly runtimeName: string;
  /** One per IMAGE_ARCHITECTURES, in that order. */
  readonly images: readonly ArchImage[];
  readonly index: ImageIndex;
  /** Seconds the whole build took, bases included (0 when it came from the cache). */
  readonly totalSeconds: number;
  /** Seconds each base took to assemble (0 when cached). */
  readonly baseSeconds: Readonly<Record<string, number>>;
  readonly cached: boolean;
}

export interface BuildImageOptions {
  readonly repoRoot?: string;
  /** The images' cache (default .tools/image in the checkout). */
  readonly cacheDir?: string;
  /** The bases' cache (default $NODEPULSE_CACHE_DIR/image-bases). */
  readonly basesDir?: string;
  readonly log?: ToolLog;
}

const REPO_ROOT = resolve(import.meta.dirname, '..');

/** This machine's architecture, as IMAGE_ARCHITECTURES names it. */
export function hostArchitecture(): string {
  const name = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (name === undefined) throw new Error(`process.arch: ${process.arch} must be x64 or arm64`);
  return name;
}

/** Builds every architecture's image and the manifest list (or finds them in the cache). */
export async function buildImage(options: BuildImageOptions = {}): Promise<BuiltImage> {
  const repoRoot = options.repoRoot ?? REPO_ROOT;
  const cacheDir = options.cacheDir ?? join(repoRoot, '.tools', 'image');
  const basesDir = options.basesDir ?? join(cacheRoot(), 'image-bases');
  const log = options.log ?? ((): void => undefined);
  const clock = new SystemClock();
  const release = await lockCache(cacheDir, clock, log);
  try {
    return await buildLocked(repoRoot, cacheDir, basesDir, log, clock);
  } finally {
    release();
  }
}

/** How long to wait for another process's build: a cold build of both architectures and a margin. */
const LOCK_WAIT_MS = BUILD_TIMEOUT_MS * 2;
const LOCK_POLL_MS = 1_000;

/** Takes the cache folder's lock (see the header); resolves with its release. */
async function lockCache(cacheDir: string, clock: SystemClock, log: ToolLog): Promise<() => void> {
  mkdirSync(cacheDir, { recursive: true });
  const lock = join(cacheDir, 'build.lock');
  const until = clock.monotonicMs() + LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileIfAny(join(lock, 'pid')));
    if (holder > 0 && !alive(holder)) {
      log(`build lock: process ${holder} is gone; taking its lock`);
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) log(`build lock: waiting for process ${holder || '?'} to finish its build`);
    told = true;
    if (clock.monotonicMs() > until) throw new Error(`build lock: ${lock} must be released within ${LOCK_WAIT_MS} ms (held by process ${holder || '?'})`);
    await clock.sleep(LOCK_POLL_MS);
  }
}

function readFileIfAny(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function buildLocked(repoRoot: string, cacheDir: string, basesDir: string, log: ToolLog, clock: SystemClock): Promise<BuiltImage> {
  const startedMs = clock.monotonicMs();
  const seconds = (fromMs: number): number => Math.round((clock.monotonicMs() - fromMs) / 100) / 10;
  const baseSeconds: Record<string, number> = {};

  let stepMs = clock.monotonicMs();
  const base = await baseTar({ repoRoot, cacheDir: basesDir, log });
  baseSeconds['build'] = base.cached ? 0 : seconds(stepMs);
  log(`base: ${base.path}${base.cached ? ' (cached)' : ''}`);
  const arches = IMAGE_ARCHITECTURES.map((name) => {
    const arch = ARCHITECTURES[name];
    if (arch === undefined) throw new Error(`IMAGE_ARCHITECTURES: ${name} must be one of ${Object.keys(ARCHITECTURES).join(', ')}`);
    return arch;
  });
  const runtimes: Array<{ arch: Architecture; path: string; key: string }> = [];
  for (const arch of arches) {
    stepMs = clock.monotonicMs();
    const runtime = await runtimeBaseTar({ repoRoot, cacheDir: basesDir, architecture: arch, log });
    baseSeconds[`runtime-${arch.name}`] = runtime.cached ? 0 : seconds(stepMs);
    log(`runtime ${arch.name}: ${runtime.path}${runtime.cached ? ' (cached)' : ''}`);
    runtimes.push({ arch, path: runtime.path, key: runtime.key });
  }

  const revision = await gitRevision(repoRoot);
  const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
  const indexTag = `${IMAGE_REPOSITORY}:${version}`;
  const hash = createHash('sha256').update(`${IMAGE_FORMAT}\n${base.key}\n${runtimes.map((r) => `${r.arch.name}=${r.key}`).join('\n')}\n${revision}\n${indexTag}\n`);
  for (const file of [...CONTEXT_FILES, ...RECIPE_FILES]) hashFile(hash, repoRoot, file);
  for (const dir of CONTEXT_DIRS) hashTree(hash, repoRoot, dir);
  const key = hash.digest('hex').slice(0, 16);
  const folder = join(cacheDir, `nodepulse-${key}`);
  const reportPath = join(folder, 'report.json');
  if (existsSync(reportPath)) {
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as BuiltImage;
    const images = report.images.map((i) => ({ ...i, archive: join(folder, `${i.architecture}.tar`), buildSeconds: 0 }));
    const host = images.find((i) => i.architecture === hostArchitecture()) ?? images[0];
    return { ...report, ...host, images, index: { ...report.index, archive: join(folder, 'index.oci.tar') }, baseSeconds: {}, totalSeconds: 0, cached: true } as BuiltImage;
  }

  const dockerfile = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8');
  const baseName = qualify(dockerfileArg(dockerfile, 'NODE_IMAGE'));
  const runtimeName = qualify(dockerfileArg(dockerfile, 'RUNTIME_IMAGE'));
  const store = mkdtempSync(join(tmpdir(), 'nodepulse-podman-'));
  const env = { ...process.env, TMPDIR: join(store, 'tmp') };
  mkdirSync(join(store, 'tmp'));
  const podman = (args: readonly string[], timeoutMs = PODMAN_TIMEOUT_MS, onLine?: ToolLog): Promise<string> =>
    runTool('podman', [
      '--root', join(store, 'root'), '--runroot', join(store, 'run'), '--tmpdir', join(store, 'tmp'),
      '--storage-driver', 'overlay', '--cgroup-manager', 'cgroupfs', '--events-backend', 'file', ...args,
    ], { timeoutMs, env, cwd: repoRoot, ...(onLine === undefined ? {} : { onLine }) });
  mkdirSync(cacheDir, { recursive: true });
  const partial = join(cacheDir, `partial-${process.pid}-nodepulse`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  try {
    log(`podman import ${base.path} ${baseName}`);
    await podman(['import', '--change', 'CMD ["node"]', '--change', `ENV PATH=${BASE_PATH}`, base.path, baseName]);
    const images: ArchImage[] = [];
    for (const { arch, path } of runtimes) {
      log(`podman import --arch ${arch.name} ${path} ${runtimeName}`);
      await podman(['import', '--arch', arch.name, '--os', 'linux', '--change', 'CMD ["node"]', '--change', `ENV PATH=${RUNTIME_PATH}`, path, runtimeName]);
      const tag = `${IMAGE_REPOSITORY}:${version}-${arch.name}`;
      log(`podman build --platform linux/${arch.name} --pull=never --isolation=chroot -t ${tag} (revision ${revision})`);
      stepMs = clock.monotonicMs();
      await podman([
        'build', '--platform', `linux/${arch.name}`, '--build-arg', `BUILDPLATFORM=linux/${hostArchitecture()}`,
        '--pull=never', '--isolation=chroot', '--build-arg', `REVISION=${revision}`, '-t', tag, '-f', 'Dockerfile', '.',
      ], BUILD_TIMEOUT_MS, (line) => {
        if (/^(STEP|COMMIT|\[\d)/.test(line)) log(`  ${line}`);
      });
      const buildSeconds = seconds(stepMs);
      const archive = join(partial, `${arch.name}.tar`);
      log(`podman save --format docker-archive ${tag}`);
      await podman(['save', '--format', 'docker-archive', '-o', archive, tag]);
      images.push({ ...(await describe(podman, tag)), archive, archiveBytes: statSync(archive).size, buildSeconds });
      // The next architecture's runtime base takes the same name.
      await podman(['untag', runtimeName]);
    }

    log(`podman manifest create ${indexTag}, add ${images.map((i) => i.tag).join(', ')}, push --all to an oci-archive`);
    await podman(['manifest', 'create', indexTag]);
    for (const image of images) await podman(['manifest', 'add', indexTag, `containers-storage:${image.tag}`]);
    const indexArchive = join(partial, 'index.oci.tar');
    await podman(['manifest', 'push', '--all', indexTag, `oci-archive:${indexArchive}:${indexTag}`]);
    const index = await archivedIndex(indexArchive, indexTag);

    const host = images.find((i) => i.architecture === hostArchitecture()) ?? images[0];
    if (host === undefined) throw new Error('IMAGE_ARCHITECTURES: must name at least one architecture');
    const at = (image: ArchImage): ArchImage => ({ ...image, archive: join(folder, `${image.architecture}.tar`) });
    const built: BuiltImage = {
      ...at(host),
      indexTag,
      revision,
      baseName,
      runtimeName,
      images: images.map(at),
      index: { ...index, archive: join(folder, 'index.oci.tar') },
      totalSeconds: seconds(startedMs),
      baseSeconds,
      cached: false,
    };
    writeFileSync(join(partial, 'report.json'), `${JSON.stringify(built, null, 2)}\n`);
    for (const old of readdirSync(cacheDir).filter((f) => f.startsWith('nodepulse-'))) rmSync(join(cacheDir, old), { recursive: true, force: true });
    renameSync(partial, folder);
    return built;
  } finally {
    rmSync(partial, { recursive: true, force: true });
    await podman(['manifest', 'rm', indexTag]).catch(() => undefined);
    await podman(['rmi', '--all', '--force']).catch((err: unknown) => log(`podman rmi: ${err instanceof Error ? err.message : String(err)}`));
    await runTool('umount', ['-R', store], { timeoutMs: 10_000 }).catch(() => undefined);
    rmSync(store, { recursive: true, force: true });
  }
}

type Podman = (args: readonly string[]) => Promise<string>;

/**
 * The manifest list as the OCI archive holds it: index.json names it (under `tag`), and it
 * names each image's manifest. Read back from the archive, not from podman's store: pushing
 * compresses the layers, so the archived manifests are not the store's.
 */
export async function archivedIndex(archive: string, tag: string): Promise<ImageIndex> {
  const read = async (name: string): Promise<unknown> => JSON.parse(await runTool('tar', ['-xOf', archive, name], { timeoutMs: PODMAN_TIMEOUT_MS }));
  const blob = (digest: string): string => `blobs/sha256/${digest.replace(/^sha256:/, '')}`;
  const outer = (await read('index.json')) as { manifests: Array<{ digest: string; annotations?: Record<string, string> }> };
  const named = outer.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
  if (named === undefined) throw new Error(`${archive}: index.json must name ${tag}`);
  const list = (await read(blob(named.digest))) as { mediaType: string; manifests: Array<{ digest: string; mediaType: string; platform: { architecture: string; os: string } }> };
  const manifests: ImageIndex['manifests'][number][] = [];
  for (const m of list.manifests) {
    const manifest = (await read(blob(m.digest))) as { config: { size: number }; layers: Array<{ size: number }> };
    const pullBytes = manifest.config.size + manifest.layers.reduce((n, l) => n + l.size, 0);
    manifests.push({ digest: m.digest, mediaType: m.mediaType, platform: { architecture: m.platform.architecture, os: m.platform.os }, pullBytes });
  }
  return { archive, archiveBytes: statSync(archive).size, mediaType: list.mediaType, manifests };
}

/** An image's platform, labels, size and layers, as podman reports them. */
async function describe(podman: Podman, tag: string): Promise<Omit<ArchImage, 'archive' | 'buildSeconds'>> {
  const [inspected] = JSON.parse(await podman(['image', 'inspect', tag])) as Array<{ Architecture: string; Os: string; Size: number; Labels: Record<string, string> | null }>;
  if (inspected === undefined) throw new Error(`podman image inspect ${tag}: must describe the image just built`);
  const history = JSON.parse(await podman(['history', '--format', 'json', tag])) as Array<{ CreatedBy?: string; createdBy?: string; size?: number; Size?: number }>;
  const layers = history.reverse().map((h) => ({ createdBy: (h.CreatedBy ?? h.createdBy ?? '').trim(), bytes: h.size ?? h.Size ?? 0 })).filter((l) => l.bytes > 0);
  return { tag, architecture: inspected.Architecture, os: inspected.Os, labels: inspected.Labels ?? {}, sizeBytes: inspected.Size, archiveBytes: 0, layers };
}

/** PATH as the official Node.js images set it (a tar import carries no ENV). */
const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** The default of `ARG <name>=…` before the first FROM. */
export function dockerfileArg(dockerfile: string, name: string): string {
  const m = new RegExp(`^ARG ${name}=(\\S+)\\s*$`, 'm').exec(dockerfile);
  if (m?.[1] === undefined) throw new Error(`Dockerfile: must declare ARG ${name}=<image> before the first FROM`);
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
  const built = await buildImage({ log: (line) => process.stderr.write(`${line}\n`) });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(built, null, 2)}\n`);
  } else {
    const lines = [
      `${built.indexTag}: manifest list of ${built.index.manifests.map((m) => `${m.platform.os}/${m.platform.architecture}`).join(', ')} (revision ${built.revision}) ${built.cached ? 'from the cache' : `built in ${built.totalSeconds} s`}`,
      `  oci-archive: ${built.index.archive} (${mib(built.index.archiveBytes)}); pulled per architecture: ${built.index.manifests.map((m) => `${m.platform.architecture} ${mib(m.pullBytes)}`).join(', ')}`,
    ];
    for (const image of built.images) {
      lines.push(
        `${image.tag} (${image.os}/${image.architecture})${built.cached ? '' : `, podman build ${image.buildSeconds} s`}: ${mib(image.sizeBytes)} in ${image.layers.length} layers`,
        `  archive: ${image.archive} (${mib(image.archiveBytes)}); import with: ctr -n k8s.io images import ${image.archive}`,
        ...image.layers.map((l) => `  ${mib(l.bytes).padStart(10)}  ${l.createdBy.slice(0, 100)}`),
      );
    }
    if (!built.cached) lines.push(`bases: ${Object.entries(built.baseSeconds).map(([k, v]) => `${k} ${v} s`).join(', ')}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
