// A process in a private mount namespace whose /run holds only what the test puts there, and the
// shipped DaemonSet's settings for the agent started in it.
//
// FACTS.md's recipe for a runtime at CRI-O's path: `unshare -m` as root, an empty tmpfs over
// /run/containerd, and a bind mount at /run/crio of a folder holding crio.sock. Here the tmpfs
// covers /run itself: on a clean CI machine /run/containerd may not exist, and mounting over it
// would mean creating it on the host first, while /run always exists. Inside, the three
// directories the DaemonSet mounts are made empty (as DirectoryOrCreate leaves them on a node
// without that runtime), then each folder the test gives is bind-mounted at its path. The host's
// containerd socket, if any, is out of sight.
//
// Guarantees, and how each holds:
//   - nothing reaches the host: `unshare --propagation private`, so no mount event propagates
//     out; hostRunSnapshot() before and after lets a test assert it;
//   - the namespace ends with its process: the launcher execs the command (sh, then the agent),
//     so the spawned pid is the namespace's only process, and the kernel drops every mount of
//     the namespace when it exits, even after SIGKILL.
//
// Needs root, `unshare` and `mount` (util-linux): requireMountNamespace(t) first.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { only, renderKustomize } from '../deploy/render.ts';
import { findExecutable, isRoot, requireExecutables } from './require.ts';

/** The directories the shipped DaemonSet mounts, made empty inside the namespace. */
export const RUNTIME_DIRS: readonly string[] = ['/run/containerd', '/run/crio', '/run/k3s/containerd'];
/** The tmpfs's source name, so a leaked mount is easy to spot in mountinfo. */
export const TMPFS_SOURCE = 'nodepulse-test-run';
const SAFE_PATH = /^\/[\w./-]+$/;

/** Whether this test can make mount namespaces: skips outside CI, fails under CI=true. */
export function requireMountNamespace(t: TestContext, extra: readonly string[] = []): boolean {
  if (requireExecutables(t, ['unshare', 'mount', ...extra]) === undefined) return false;
  if (!isRoot()) {
    if (process.env['CI'] === 'true') throw new Error('precondition: a private mount namespace needs root, and CI must run as root');
    t.skip('needs root to make a mount namespace');
    return false;
  }
  return true;
}

/**
 * The command prefix that runs a command in a fresh private mount namespace: tmpfs on /run, the
 * DaemonSet's directories made, `binds` (target under /run → host folder) bind-mounted, then
 * `exec "$@"`. Paths must be plain (letters, digits, `._-/`): they are written into the script.
 */
export function namespaceLauncher(binds: Readonly<Record<string, string>>): string[] {
  // -n: libmount writes no utab under the host's /run/mount before the tmpfs covers /run.
  const lines = ['set -eu', `mount -n -t tmpfs -o mode=0755,size=1m ${TMPFS_SOURCE} /run`, `mkdir -p ${RUNTIME_DIRS.join(' ')}`];
  for (const [target, source] of Object.entries(binds)) {
    assert.match(target, SAFE_PATH, `bind target ${target} must be a plain absolute path`);
    assert.ok(target.startsWith('/run/'), `bind target ${target} must be under /run`);
    assert.match(source, SAFE_PATH, `bind source ${source} must be a plain absolute path`);
    lines.push(`mkdir -p ${target}`, `mount -n --bind ${source} ${target}`);
  }
  lines.push('exec "$@"');
  return [findExecutable('unshare') ?? 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', lines.join('\n'), 'sh'];
}

/** What a leak would change on the host: the DaemonSet's paths, and mounts at /run or from our tmpfs. */
export interface HostRunSnapshot {
  readonly exists: Readonly<Record<string, boolean>>;
  readonly mounts: readonly string[];
}

export function hostRunSnapshot(): HostRunSnapshot {
  const watched = ['/run', '/run/k3s', '/run/mount', ...RUNTIME_DIRS, '/run/containerd/containerd.sock', '/run/crio/crio.sock'];
  const exists = Object.fromEntries(watched.map((p) => [p, existsSync(p)]));
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .flatMap((line) => {
      const fields = line.split(' ');
      const mountPoint = fields[4] ?? '';
      const source = line.split(' - ')[1]?.split(' ')[1] ?? '';
      return mountPoint === '/run' || mountPoint.startsWith('/run/crio') || mountPoint.startsWith('/run/k3s') || source === TMPFS_SOURCE
        ? [`${mountPoint} ${source}`]
        : [];
    })
    .sort();
  return { exists, mounts };
}

/** The agent container of the DaemonSet `kubectl kustomize deploy` renders: its env (fieldRefs resolved as the kubelet would) and args. */
export function shippedAgentSettings(nodeName: string): { env: Record<string, string>; args: string[] } {
  const ds = only(renderKustomize('deploy'), 'DaemonSet') as unknown as {
    metadata: { namespace?: string };
    spec: { template: { spec: { containers: Array<{ name: string; command?: string[]; args?: string[]; env?: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }> }> } } };
  };
  const agent = ds.spec.template.spec.containers.find((c) => c.name === 'agent');
  assert.ok(agent, 'precondition: the shipped DaemonSet has an agent container');
  assert.equal(agent.command, undefined, 'precondition: the image\'s own entrypoint runs `nodepulse agent`');
  const fields: Record<string, string> = { 'spec.nodeName': nodeName, 'metadata.namespace': ds.metadata.namespace ?? 'default' };
  const env: Record<string, string> = {};
  for (const e of agent.env ?? []) {
    const fieldPath = e.valueFrom?.fieldRef?.fieldPath;
    const value = e.value ?? (fieldPath === undefined ? undefined : fields[fieldPath]);
    assert.ok(value !== undefined, `precondition: env ${e.name} (${JSON.stringify(e.valueFrom)}) must resolve to a value here`);
    env[e.name] = value;
  }
  return { env, args: [...(agent.args ?? [])] };
}
