// What this machine must have before the test cluster can come up: root, Go (the binaries are
// built from the official modules, or found in the cache under a key that names the Go version),
// and the tools `up` runs. Each missing part is named with what to install.
//
// test/run.ts asks before bringing the cluster up: under CI=true a missing part fails the run;
// outside CI the cluster tests are skipped with these reasons.
import { findExecutable, isRoot } from '../support/require.ts';

/** Each tool `up` runs, and the Debian package that has it. */
const TOOLS: Readonly<Record<string, string>> = {
  go: 'Go 1.24 or later (/usr/local/go/bin on the project machines)',
  ip: 'iproute2',
  nsenter: 'util-linux',
  unshare: 'util-linux',
  mount: 'mount',
  openssl: 'openssl',
};

/** What is missing, one line each; empty when the cluster can come up. */
export function missingForCluster(): string[] {
  const missing: string[] = [];
  if (!isRoot()) missing.push('root (the cluster makes network devices, cgroups and mounts)');
  for (const [tool, from] of Object.entries(TOOLS)) {
    if (findExecutable(tool) === undefined) missing.push(`${tool} on PATH (${from})`);
  }
  return missing;
}
