// The versions of some Debian packages that a download would fetch now, as this machine's apt
// sees them (`apt-cache policy`, its candidate versions): part of the cache key of the image's
// bases (image-base.ts, runtime-base.ts), so a new Debian release of a package they take makes
// a new base, and nothing else does.
//
// Assumptions: mmdebstrap, run without a mirror, uses this machine's apt sources, so the host's
// lists name what it downloads; CI refreshes them (`apt-get update`) before it builds the image.
// The lists are this machine's architecture's; Debian builds one source version for every
// architecture of a suite, so they name the other architectures' versions too (a rebuild of one
// architecture alone, a binNMU, would go unseen until the next source version).
//
// Failure modes: apt-cache missing or failing throws with its output; a package with no
// candidate (unknown to the lists) throws, naming it.
import { runTool } from './run-tool.ts';

const APT_TIMEOUT_MS = 60_000;

/** `name=version` lines, in the order given. */
export async function debianVersions(packages: readonly string[]): Promise<string> {
  const out = await runTool('apt-cache', ['policy', ...packages], { timeoutMs: APT_TIMEOUT_MS });
  return packages.map((name) => `${name}=${candidateOf(out, name)}`).join('\n');
}

/** The `Candidate:` of one package's block in `apt-cache policy` output. */
export function candidateOf(policy: string, name: string): string {
  const lines = policy.split('\n');
  const start = lines.findIndex((line) => line === `${name}:`);
  const candidate = start < 0 ? undefined : lines.slice(start + 1).find((line) => /^\s+Candidate:/.test(line));
  const version = candidate?.replace(/^\s+Candidate:\s*/, '').trim();
  if (version === undefined || version === '' || version === '(none)') throw new Error(`apt-cache policy: ${name} must have a candidate version (run apt-get update)`);
  return version;
}
