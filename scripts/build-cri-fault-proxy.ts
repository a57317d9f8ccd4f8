// Builds the CRI fault proxy's Go module (test/cri-fault-proxy: the proxy, and the Go CRI client
// probe beside it) into a cache outside the repository, and says where the binaries are.
//
//   node_modules/.bin/node scripts/build-cri-fault-proxy.ts      # prints {"proxy", "probe", …} as JSON
//
// Tests do not call this themselves: test/support/cri-fault-proxy.ts builds on first use, so a
// clean checkout (CI) builds inside the test run, and every later run reuses the binaries.
//
// The cache: ${NODEPULSE_CACHE_DIR:-$HOME/.cache/nodepulse}/cri-fault-proxy/<key>/, where <key>
// is Go's version and the first 16 hex digits of a sha256 over every file of the module (its
// relative path and its bytes), so a changed source, go.mod or Go builds anew and an unchanged
// one never does. Nothing is written into the repository. The cache keeps the MAX_CACHE_ENTRIES
// most recently used entries (a hit marks its entry used) and drops the rest after each build, so
// branches that differ in the module do not rebuild in turn, and old builds do not pile up.
//
// How it builds, and why:
//   - GOTOOLCHAIN=local: the machine's Go builds it; go.mod's `go` line never fetches another;
//   - GOFLAGS=-mod=readonly and GOWORK=off: go.mod and go.sum are the module's truth, a missing
//     sum fails the build instead of editing the checkout; -buildvcs=false: the binary does not
//     depend on the checkout's git state, which the key does not cover;
//   - -trimpath, into a fresh temporary folder beside the cache entry, renamed into place whole:
//     two test processes building at once leave one complete entry (the loser's copy is removed).
//
// Failure modes: no Go on PATH (nor at /usr/local/go/bin/go) throws GoMissingError, which the
// driver turns into a skip outside CI and a failure under CI=true; a failed build throws with the
// command and the tail of Go's output. Go modules come from the module proxy on a cold module
// cache; the build is bounded by BUILD_TIMEOUT_MS.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { SystemClock, wallMs } from '../src/clock/clock.ts';
import { cacheRoot } from './cache-root.ts';
import { runTool } from './run-tool.ts';

const REPO_ROOT = resolve(import.meta.dirname, '..');
/** The Go module: the proxy at its root, the probe in cri-client-probe/. */
export const CRI_FAULT_PROXY_MODULE = join(REPO_ROOT, 'test', 'cri-fault-proxy');
/** Where Go's own installer puts it, for a PATH that lacks it (a CI job's login shell may). */
const GO_FALLBACK = '/usr/local/go/bin/go';
/**
 * A cold build (an empty Go build cache, the modules already downloaded) took 3 min 34 s of wall
 * time (75 s of CPU) on a shared 2-core machine under load; with the modules to fetch as well,
 * 10 minutes is the bound. A warm build cache takes seconds, and the binaries' own cache none.
 */
export const BUILD_TIMEOUT_MS = 10 * 60_000;
const GO_ENV_TIMEOUT_MS = 30_000;
/** Builds kept in the cache (about 40 MB each). */
export const MAX_CACHE_ENTRIES = 4;
/** A staging folder this old is a build that died; it is removed. */
const STALE_STAGING_MS = BUILD_TIMEOUT_MS * 2;

export class GoMissingError extends Error {
  constructor() {
    super(`go: no Go on PATH nor at ${GO_FALLBACK}; the CRI fault proxy is built with it`);
    this.name = 'GoMissingError';
  }
}

export interface CriFaultProxyBinaries {
  /** The cache entry holding both binaries. */
  readonly dir: string;
  /** The proxy (test/cri-fault-proxy/main.go). */
  readonly proxy: string;
  /** The Go CRI client probe (test/cri-fault-proxy/cri-client-probe). */
  readonly probe: string;
  /** `<go version>-<module hash>`. */
  readonly key: string;
  /** Whether this call built them (false: found in the cache). */
  readonly built: boolean;
  /** Wall time of the build, when there was one. */
  readonly buildMs?: number;
}

/** The Go executable: on `path` (PATH's form), or at Go's default install path; undefined when neither. */
export function findGo(path: string = process.env['PATH'] ?? '', fallback: string = GO_FALLBACK): string | undefined {
  for (const dir of path.split(':')) {
    if (dir !== '' && existsSync(join(dir, 'go'))) return join(dir, 'go');
  }
  return existsSync(fallback) ? fallback : undefined;
}

/** sha256 over every file under `dir`, in path order: each relative path, a NUL, its bytes, a NUL. */
export function moduleHash(dir: string = CRI_FAULT_PROXY_MODULE): string {
  const hash = createHash('sha256');
  const files = (readdirSync(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  for (const file of files) {
    hash.update(relative(dir, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

export { cacheRoot };

function goEnv(): NodeJS.ProcessEnv {
  return { ...process.env, GOTOOLCHAIN: 'local', GOWORK: 'off', GOFLAGS: '-mod=readonly -buildvcs=false' };
}

/** Returns the cached binaries for this module and Go, building them first when they are not there. */
export async function buildCriFaultProxy(): Promise<CriFaultProxyBinaries> {
  const go = findGo();
  if (go === undefined) throw new GoMissingError();
  const goVersion = (await runTool(go, ['env', 'GOVERSION'], { timeoutMs: GO_ENV_TIMEOUT_MS, env: goEnv() })).trim();
  if (!/^go[\w.+-]+$/.test(goVersion)) throw new Error(`go env GOVERSION: ${JSON.stringify(goVersion)} must be a Go version such as go1.26.0`);
  const key = `${goVersion}-${moduleHash().slice(0, 16)}`;
  const parent = join(cacheRoot(), 'cri-fault-proxy');
  const dir = join(parent, key);
  const binaries = { dir, proxy: join(dir, 'cri-fault-proxy'), probe: join(dir, 'cri-client-probe'), key };
  const clock = new SystemClock();
  if (existsSync(binaries.proxy) && existsSync(binaries.probe)) {
    const now = new Date(wallMs(clock));
    utimesSync(dir, now, now);
    return { ...binaries, built: false };
  }

  mkdirSync(parent, { recursive: true });
  const staging = mkdtempSync(join(parent, `.${key}-`));
  const began = clock.monotonicMs();
  try {
    await runTool(go, ['build', '-trimpath', '-o', `${staging}/`, '.', './cri-client-probe'], {
      cwd: CRI_FAULT_PROXY_MODULE,
      env: goEnv(),
      timeoutMs: BUILD_TIMEOUT_MS,
    });
    try {
      renameSync(staging, dir);
    } catch (err) {
      // Another process finished the same key first: its entry is as good as ours.
      if (!(existsSync(binaries.proxy) && existsSync(binaries.probe))) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  pruneCache(parent, key, wallMs(clock));
  return { ...binaries, built: true, buildMs: Math.round(clock.monotonicMs() - began) };
}

/**
 * Keeps `keep` and the MAX_CACHE_ENTRIES - 1 most recently used other entries of `parent`, and the
 * staging folders of builds that may still run; removes the rest.
 */
export function pruneCache(parent: string, keep: string, nowMs: number): void {
  const entries = readdirSync(parent, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    // An entry another process removed meanwhile reads as unused; rmSync's force ignores it.
    .map((e) => ({ name: e.name, usedMs: statSync(join(parent, e.name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }));
  const staging = entries.filter((e) => e.name.startsWith('.') && nowMs - e.usedMs > STALE_STAGING_MS);
  const builds = entries.filter((e) => !e.name.startsWith('.') && e.name !== keep).sort((a, b) => b.usedMs - a.usedMs);
  for (const e of [...staging, ...builds.slice(MAX_CACHE_ENTRIES - 1)]) rmSync(join(parent, e.name), { recursive: true, force: true });
}

if (import.meta.main) {
  const binaries = await buildCriFaultProxy();
  process.stdout.write(`${JSON.stringify(binaries)}\n`);
}
