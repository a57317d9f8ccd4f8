// Runs a process as a pod runs it, as far as its API credentials go: in a private mount namespace
// whose /var/run/secrets/kubernetes.io/serviceaccount holds the files of a folder of the test's
// (token, ca.crt, namespace), with KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT pointing at
// the API stand-in, which must serve HTTPS (in-cluster config is always https://).
//
// How: `unshare --mount --propagation private` (root only), then a tmpfs over /run (/var/run links
// to it), the service-account folder made in it, and each file linked to the test's folder, so a
// token the test rotates is the token the process reads next, as kubelet swaps a projected token
// under a running pod. The rest of the host stays as it is; the tmpfs hides the host's /run from
// this process alone, and goes with it. Callers check isRoot() first.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where every pod finds its service account (upstream rest.InClusterConfig). */
const MOUNT = '/run/secrets/kubernetes.io/serviceaccount';

const SCRIPT = [
  'set -e',
  'mount -n -t tmpfs -o size=1m,mode=755 nodepulse-pod-run /run',
  `mkdir -p ${MOUNT}`,
  `for f in ca.crt token namespace; do ln -s "$1/$f" ${MOUNT}/$f; done`,
  'shift',
  'exec "$@"',
].join('\n');

export interface ServiceAccount {
  /** The test's folder that the process sees as its service-account mount. */
  readonly dir: string;
  /** KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT of the stand-in. */
  readonly env: Readonly<Record<string, string>>;
}

/** Writes token, ca.crt and namespace into `dir` for the stand-in at `server` (https://127.0.0.1:PORT). */
export function writeServiceAccount(dir: string, options: { server: string; ca: string; token: string; namespace: string }): ServiceAccount {
  const url = new URL(options.server);
  if (url.protocol !== 'https:') throw new Error(`precondition: in-cluster config needs an https:// server, got ${options.server}`);
  writeFileSync(join(dir, 'ca.crt'), options.ca);
  writeFileSync(join(dir, 'token'), options.token, { mode: 0o600 });
  writeFileSync(join(dir, 'namespace'), options.namespace);
  return { dir, env: { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port } };
}

/** The command line that runs `file args` with `account` mounted where a pod has it. */
export function inPodCommand(account: ServiceAccount, file: string, args: readonly string[]): { file: string; args: string[] } {
  return { file: 'unshare', args: ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', SCRIPT, 'sh', account.dir, file, ...args] };
}
