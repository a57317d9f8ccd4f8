// The kubelet side of the relist benchmark: bench/kubelet-cri (k8s.io/cri-client v0.34.4, the
// CRI client of Kubernetes 1.34.4's kubelet), built with the Go on PATH.
//
// The binary is built once and kept OUTSIDE the repository, in a cache folder keyed by what
// decides its bytes: the Go version (`go env GOVERSION`) and the sha256 of go.mod, go.sum and
// main.go. A second run with the same inputs finds it and builds nothing; a change to any of them
// builds a new one beside the old. The cache is $NODEPULSE_CACHE_DIR, else $XDG_CACHE_HOME/nodepulse,
// else ~/.cache/nodepulse.
//
// The build: `go build -trimpath`, static (CGO_ENABLED=0, as Kubernetes builds its binaries), with GOTOOLCHAIN=local (the Go on PATH, never a downloaded
// toolchain) and -mod=readonly (go.sum must already hold every module; the modules themselves
// come from the Go module proxy the first time). It writes to a temp name and renames, so an
// interrupted build never leaves a half-written binary under the final name.
//
// Failure modes: no `go` on PATH, a Go older than the module's `go` line, or a failed build:
// kubeletSide() rejects with the reason, and the harness decides (a note outside CI, a failure
// under CI=true).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Clock } from '../src/clock/clock.ts';
import { findExecutable } from '../test/support/require.ts';

const execFileAsync = promisify(execFile);

/** The module's folder, under bench/. */
export const KUBELET_CRI_DIR = 'kubelet-cri';
const SOURCES = ['go.mod', 'go.sum', 'main.go'] as const;
/** A cold build here took about 75 s on a loaded 2-core machine; the bound only stops a hung one. */
const BUILD_TIMEOUT_MS = 600_000;

export interface KubeletBinary {
  readonly path: string;
  /** Whether this call built it (false: found in the cache). */
  readonly built: boolean;
  readonly goVersion: string;
  /** The build in seconds, when built. */
  readonly buildSeconds?: number;
}

export function cacheRoot(): string {
  const own = process.env['NODEPULSE_CACHE_DIR'];
  if (own !== undefined && own !== '') return own;
  const xdg = process.env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'nodepulse');
}

/** The cached binary for these sources and this Go, building it first when it is not there. */
export async function kubeletBinary(benchDir: string, clock: Clock, log: (line: string) => void): Promise<KubeletBinary> {
  const go = findExecutable('go');
  if (go === undefined) throw new Error('go: not on PATH (the kubelet side is built with Go 1.24 or later)');
  const moduleDir = join(benchDir, KUBELET_CRI_DIR);
  const env = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly -buildvcs=false', CGO_ENABLED: '0' };
  const goVersion = (await execFileAsync(go, ['env', 'GOVERSION'], { env })).stdout.trim();
  const hash = createHash('sha256').update(goVersion);
  for (const file of SOURCES) hash.update(`\0${file}\0`).update(readFileSync(join(moduleDir, file)));
  const dir = join(cacheRoot(), 'kubelet-cri', `${goVersion}-${hash.digest('hex').slice(0, 16)}`);
  const path = join(dir, 'kubelet-cri');
  if (existsSync(path)) return { path, built: false, goVersion };

  mkdirSync(dir, { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  log(`building the kubelet side with ${goVersion} into ${dir} (once per go.sum and Go version)`);
  const startedMs = clock.monotonicMs();
  try {
    await execFileAsync(go, ['build', '-trimpath', '-o', partial, '.'], { cwd: moduleDir, env, timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
    renameSync(partial, path);
  } catch (err) {
    rmSync(partial, { force: true });
    const stderr = (err as { stderr?: string }).stderr?.trim() ?? '';
    throw new Error(`go build of ${moduleDir} failed: ${err instanceof Error ? err.message : String(err)}${stderr === '' ? '' : `: ${stderr}`}`);
  }
  const buildSeconds = (clock.monotonicMs() - startedMs) / 1000;
  return { path, built: true, goVersion, buildSeconds };
}
