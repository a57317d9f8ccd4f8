// Builds the test cluster's seven binaries from the Go module in test/cluster/k8s/ (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl) into a
// cache outside the repository, so only the first run on a machine pays for the build.
//
//   npm run cluster -- build            # prints the folder; builds only when the cache is cold
//
// The cache: `${NODEPULSE_CACHE_DIR:-$HOME/.cache/nodepulse}/k8s/<key>/`, where the key names the
// Kubernetes and etcd versions go.mod pins and the Go version, plus a hash of everything that
// decides the bytes: go.mod, go.sum, etcd's main.go and the link recipe below. A folder is
// written under a temporary name and renamed into place, so a reader never sees half a build, and
// two builds racing both end with one complete folder.
//
// Version stamping, as Kubernetes' own build (hack/lib/version.sh) does it, so `kubectl version`,
// the version-skew checks and Helm's `kubeVersion` see the pinned release and not
// `v0.0.0-master`: `-ldflags -X` on k8s.io/component-base/version and on client-go's
// pkg/version (kubectl reports its client version from the latter) for gitVersion, gitMajor,
// gitMinor, gitTreeState and buildDate. buildDate is the module's release time from the Go
// module proxy (`go list -m -json`), so two builds of one key link the same flags. etcd
// carries its version as a constant of its own module; it needs no stamping.
//
// `-s -w` (no symbol table, no DWARF): the binaries are about a third smaller and link faster; a
// panic still prints its stack trace (that needs pclntab, which -s keeps).
//
// Failure modes: a missing Go, an unreadable go.mod or a failed build throws with the command and
// the tail of its output; nothing partial stays in the cache. The Go build itself is bounded in
// time (COLD_BUILD_TIMEOUT_MS).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SystemClock, type Clock } from '../../src/clock/clock.ts';
import { runTool, type ToolLog } from '../../scripts/run-tool.ts';

/** The Go module that pins the versions, and where etcd's main package lives in it. */
export const GO_MODULE_DIR = resolve(import.meta.dirname, 'k8s');

/** Every binary the cluster runs, and the package each is built from (relative to the module). */
export const COMPONENTS = {
  'etcd': './etcd',
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
  'kubelet': 'k8s.io/kubernetes/cmd/kubelet',
  'kube-proxy': 'k8s.io/kubernetes/cmd/kube-proxy',
  'kubectl': 'k8s.io/kubernetes/cmd/kubectl',
} as const;
export type Component = keyof typeof COMPONENTS;

/** Bump when the link recipe or the folder's layout changes: older folders are then never reused. */
const RECIPE = 'k8s-build-v1';
/** Measured: about 10 minutes cold on an idle 2-core machine; a loaded one may take several times that. */
const COLD_BUILD_TIMEOUT_MS = 60 * 60_000;
const GO_QUERY_TIMEOUT_MS = 120_000;
const REPORT = 'build.json';

export interface PinnedVersions {
  /** `v1.34.4`: the k8s.io/kubernetes module version go.mod requires. */
  readonly kubernetes: string;
  /** `v3.6.4`: the go.etcd.io/etcd/server/v3 module version. */
  readonly etcd: string;
}

export interface BuiltBinaries {
  /** The cache folder holding one executable per component, named after it. */
  readonly dir: string;
  readonly key: string;
  readonly versions: PinnedVersions;
  readonly goVersion: string;
  /** The module's release time, stamped as buildDate. */
  readonly buildDate: string;
  /** Seconds the Go build took, when this call built it. */
  readonly buildSeconds: number;
  readonly bytes: number;
  readonly cached: boolean;
}

export interface BuildOptions {
  /** The cache root (default: NODEPULSE_CACHE_DIR, else ~/.cache/nodepulse). */
  readonly cacheRoot?: string;
  readonly log?: ToolLog;
  readonly clock?: Clock;
  /** Extra environment for `go` (GOCACHE, for a measured cold build). */
  readonly env?: NodeJS.ProcessEnv;
}

/** The cache root the header names. */
export function defaultCacheRoot(): string {
  return process.env['NODEPULSE_CACHE_DIR'] ?? join(homedir(), '.cache', 'nodepulse');
}

/** The versions go.mod pins, read from its require lines. */
export function pinnedVersions(goMod: string): PinnedVersions {
  const version = (module: string): string => {
    const m = new RegExp(`^\\s*(?:require\\s+)?${module.replaceAll('.', '\\.')}\\s+(v[0-9][^\\s]*)`, 'm').exec(goMod);
    if (m?.[1] === undefined) throw new Error(`test/cluster/k8s/go.mod: must require ${module} at a version`);
    return m[1];
  };
  return { kubernetes: version('k8s.io/kubernetes'), etcd: version('go.etcd.io/etcd/server/v3') };
}

/** The `-ldflags` value: stripped, and stamped with the release as the header says. */
export function linkFlags(kubernetes: string, buildDate: string): string {
  const m = /^v(\d+)\.(\d+)\.\d+$/.exec(kubernetes);
  if (m === null) throw new Error(`k8s.io/kubernetes: ${kubernetes} must be a release version vMAJOR.MINOR.PATCH`);
  const stamp = { gitVersion: kubernetes, gitMajor: m[1], gitMinor: m[2], gitTreeState: 'clean', gitCommit: '', buildDate };
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    for (const [name, value] of Object.entries(stamp)) flags.push(`-X '${pkg}.${name}=${value}'`);
  }
  return flags.join(' ');
}

/** The cache key: readable versions first, then a hash of every input that decides the bytes. */
export function cacheKey(versions: PinnedVersions, goVersion: string, inputs: readonly Buffer[]): string {
  const hash = createHash('sha256').update(`${RECIPE}\n`);
  for (const input of inputs) hash.update(createHash('sha256').update(input).digest('hex')).update('\n');
  return `k8s-${versions.kubernetes}-etcd-${versions.etcd}-${goVersion}-${hash.digest('hex').slice(0, 12)}`;
}

/** Builds the binaries, or finds them in the cache. */
export async function buildBinaries(options: BuildOptions = {}): Promise<BuiltBinaries> {
  const log = options.log ?? ((): void => undefined);
  const clock = options.clock ?? new SystemClock();
  const env = { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local', ...options.env };
  const go = (args: readonly string[], timeoutMs = GO_QUERY_TIMEOUT_MS, onLine?: ToolLog): Promise<string> =>
    runTool('go', args, { cwd: GO_MODULE_DIR, env, timeoutMs, ...(onLine === undefined ? {} : { onLine }) });

  const goMod = readFileSync(join(GO_MODULE_DIR, 'go.mod'));
  const versions = pinnedVersions(goMod.toString());
  const goVersion = (await go(['env', 'GOVERSION'])).trim();
  const key = cacheKey(versions, goVersion, moduleInputs(goMod));
  const root = join(options.cacheRoot ?? defaultCacheRoot(), 'k8s');
  const dir = join(root, key);
  if (isComplete(dir)) {
    const report = JSON.parse(readFileSync(join(dir, REPORT), 'utf8')) as BuiltBinaries;
    return { ...report, dir, cached: true };
  }

  const info = JSON.parse(await go(['list', '-m', '-json', 'k8s.io/kubernetes'])) as { Time?: string };
  const buildDate = (info.Time ?? '').replace(/\.\d+Z$/, 'Z');
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(buildDate)) throw new Error(`go list -m k8s.io/kubernetes: Time ${info.Time} must be an RFC 3339 UTC time`);

  mkdirSync(root, { recursive: true });
  const partial = join(root, `.partial-${key}-${process.pid}`);
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial);
  try {
    const started = clock.monotonicMs();
    log(`go build ${Object.keys(COMPONENTS).join(' ')} (Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}, ${goVersion}) into ${dir}`);
    await go(['build', '-trimpath', '-ldflags', linkFlags(versions.kubernetes, buildDate), '-o', `${partial}/`, ...Object.values(COMPONENTS)], COLD_BUILD_TIMEOUT_MS, (line) => log(`  ${line}`));
    const buildSeconds = Math.round((clock.monotonicMs() - started) / 100) / 10;
    let bytes = 0;
    for (const name of Object.keys(COMPONENTS)) {
      const path = join(partial, name);
      if (!existsSync(path)) throw new Error(`go build: must have written ${name} into ${partial}`);
      bytes += statSync(path).size;
    }
    const report: BuiltBinaries = { dir, key, versions, goVersion, buildDate, buildSeconds, bytes, cached: false };
    writeFileSync(join(partial, REPORT), `${JSON.stringify(report, null, 2)}\n`);
    try {
      renameSync(partial, dir);
    } catch (err) {
      // Another build of the same key won the race: its folder is as good as ours.
      if (!isComplete(dir)) throw err;
    }
    pruneOthers(root, key);
    return report;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** The bytes that decide the build besides the Go version: go.mod, go.sum and etcd's main. */
function moduleInputs(goMod: Buffer): Buffer[] {
  return [goMod, readFileSync(join(GO_MODULE_DIR, 'go.sum')), readFileSync(join(GO_MODULE_DIR, 'etcd', 'main.go'))];
}

function isComplete(dir: string): boolean {
  return existsSync(join(dir, REPORT)) && Object.keys(COMPONENTS).every((name) => existsSync(join(dir, name)));
}

/** Older keys' folders are removed once a new one is in place: each holds about 700 MB. */
function pruneOthers(root: string, keep: string): void {
  for (const entry of readdirSync(root)) {
    if (entry !== keep && !entry.startsWith('.partial-')) rmSync(join(root, entry), { recursive: true, force: true });
  }
}
