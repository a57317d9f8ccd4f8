// Builds the kubelet lease simulator (test/scale/kubelet-leases, a Go test tool) on first use into
// a cache outside the repository, keyed by Go's version and a hash of the module's files, as the
// CRI fault proxy's build is (scripts/build-cri-fault-proxy.ts): GOTOOLCHAIN=local,
// GOFLAGS=-mod=readonly, GOWORK=off, -trimpath, into a staging folder renamed into place whole.
//
// Failure modes: no Go, or a failed build, throws with the command and the tail of Go's output.
// A cold build fetches client-go and component-helpers v0.34.4 from the module proxy unless the
// test cluster's build already did.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const KUBELET_LEASES_MODULE = join(import.meta.dirname, 'kubelet-leases');
const GO_CANDIDATES = ['go', '/usr/local/go/bin/go'];
const BUILD_TIMEOUT_MS = 15 * 60_000;

function findGo(): string {
  for (const go of GO_CANDIDATES) {
    try {
      execFileSync(go, ['version'], { stdio: 'ignore', timeout: 30_000 });
      return go;
    } catch {
      // next
    }
  }
  throw new Error(`kubelet-leases: Go must be installed (tried ${GO_CANDIDATES.join(', ')})`);
}

/** The binary's path, built if the cache lacks it. */
export function buildKubeletLeases(log: (line: string) => void): string {
  const go = findGo();
  const version = execFileSync(go, ['env', 'GOVERSION'], { encoding: 'utf8' }).trim();
  const hash = createHash('sha256');
  for (const file of readdirSync(KUBELET_LEASES_MODULE).sort()) {
    hash.update(file);
    hash.update(readFileSync(join(KUBELET_LEASES_MODULE, file)));
  }
  const root = join(process.env['NODEPULSE_CACHE_DIR'] ?? join(homedir(), '.cache', 'nodepulse'), 'kubelet-leases');
  const entry = join(root, `${version}-${hash.digest('hex').slice(0, 16)}`);
  const binary = join(entry, 'kubelet-leases');
  if (existsSync(binary)) return binary;
  mkdirSync(root, { recursive: true });
  const staging = mkdtempSync(join(root, '.staging-'));
  log(`building kubelet-leases with ${version} into ${entry}`);
  try {
    execFileSync(go, ['build', '-trimpath', '-o', join(staging, 'kubelet-leases'), '.'], {
      cwd: KUBELET_LEASES_MODULE,
      env: { ...process.env, GOTOOLCHAIN: 'local', GOWORK: 'off', GOFLAGS: '-mod=readonly -buildvcs=false' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: BUILD_TIMEOUT_MS,
    });
    try {
      renameSync(staging, entry);
    } catch {
      rmSync(staging, { recursive: true, force: true }); // another build won the race
    }
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    const out = `${(err as { stdout?: Buffer }).stdout?.toString() ?? ''}${(err as { stderr?: Buffer }).stderr?.toString() ?? ''}`;
    throw new Error(`kubelet-leases: go build failed: ${out.slice(-3000) || (err as Error).message}`, { cause: err });
  }
  return binary;
}
