// What this machine must have before the test cluster can come up: root, Go (the binaries are
// built from the official modules, or found in the cache under a key that names the Go version),
// the tools `up` runs, and for nodes containerd, runc, iptables and the CNI plugins. Each missing
// part is named with what to install. The kernel's side is kernel-probe.ts's.
//
// test/run.ts asks before bringing the cluster up: under CI=true a missing part fails the run;
// outside CI the cluster tests are skipped with these reasons.
import { join } from 'node:path';
import { findExecutable, isRoot } from '../support/require.ts';

/** Each tool `up` runs, and the Debian package that has it. */
const TOOLS: Readonly<Record<string, string>> = {
  go: 'Go 1.24 or later (/usr/local/go/bin on the project machines)',
  ip: 'iproute2',
  nsenter: 'util-linux',
  unshare: 'util-linux',
  mount: 'mount',
  openssl: 'openssl',
  containerd: 'containerd',
  ctr: 'containerd',
  runc: 'runc',
  iptables: 'iptables',
  busybox: 'busybox-static (the pause and test image)',
};
/** The CNI plugins each node's containerd runs, from Debian's containernetworking-plugins. */
const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'];
export const CNI_BIN_DIR = '/usr/lib/cni';

/** What is missing, one line each; empty when the cluster can come up. */
export function missingForCluster(): string[] {
  const missing: string[] = [];
  if (!isRoot()) missing.push('root (the cluster makes network devices, cgroups and mounts)');
  for (const [tool, from] of Object.entries(TOOLS)) {
    if (findExecutable(tool) === undefined) missing.push(`${tool} on PATH (${from})`);
  }
  for (const plugin of CNI_PLUGINS) {
    if (findExecutable(join(CNI_BIN_DIR, plugin)) === undefined) missing.push(`${join(CNI_BIN_DIR, plugin)} (containernetworking-plugins)`);
  }
  return missing;
}
