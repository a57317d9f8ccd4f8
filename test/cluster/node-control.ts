// Faults and changes made to a running node of the test cluster, for tests that stop, freeze or
// move its parts (the fault matrix, a CRI proxy in front of its containerd):
//
// | call                                   | what it does                                                       |
// |----------------------------------------|--------------------------------------------------------------------|
// | daemonOf(state, 'np-node-1/kubelet')   | the running record (pid, command line, log) of a node's daemon     |
// | stopNodeDaemon(state, name, clock)     | SIGTERM, then SIGKILL; the record stays, so it can start again     |
// | startNodeDaemon(state, name)           | the same command again, in the same namespaces and cgroup; the new |
// |                                        | pid replaces the old in the state file                             |
// | moveContainerdSocket(state, node, p)   | containerd restarted listening at p (a path under /run/containerd  |
// |                                        | inside the node); the default path is then free for a proxy; its   |
// |                                        | pods live on (their shims outlive containerd)                      |
// | hostPath(node, p)                      | where the host reaches the node's path p under /run/containerd     |
// | inNode(node, argv)                     | the command line that runs argv in the node's namespaces           |
//
// A node's /run/containerd is the host folder nodes/<node>/run-containerd bound into the node,
// so a socket made at its host path is the node's socket at that path: a proxy can run on the
// host (or in the node, through inNode) and listen where the kubelet and the agent dial.
//
// SIGSTOP and SIGCONT need nothing here: process.kill(daemonOf(...).pid, 'SIGSTOP').
import { execFileSync } from 'node:child_process';
import { join, relative } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import { writeState, type ClusterState, type NodeState } from './cluster.ts';
import { isRunning, restartDaemon, stopDaemon, type DaemonRecord } from './daemon.ts';
import { CONTAINERD_SOCKET, RUN_CONTAINERD, writeContainerdConfig } from './node.ts';
import { waitFor } from './wait.ts';

const RUN_DIR = '/run/containerd';
/** containerd serves in about a second; a loaded machine gets margin. */
const CONTAINERD_READY_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export function daemonOf(state: ClusterState, name: string): DaemonRecord {
  const found = state.daemons.find((d) => d.name === name);
  if (found === undefined) throw new Error(`daemon: ${name} must be one of ${state.daemons.map((d) => d.name).join(', ')}`);
  return found;
}

export function nodeOf(state: ClusterState, name: string): NodeState {
  const found = state.nodes.find((n) => n.name === name);
  if (found === undefined) throw new Error(`node: ${name} must be one of ${state.nodes.map((n) => n.name).join(', ')}`);
  return found;
}

export async function stopNodeDaemon(state: ClusterState, name: string, clock: Clock): Promise<void> {
  await stopDaemon(daemonOf(state, name), clock, STOP_GRACE_MS);
}

/** Starts a stopped daemon again (a running one is refused); records the new pid. */
export function startNodeDaemon(state: ClusterState, name: string): DaemonRecord {
  const old = daemonOf(state, name);
  if (isRunning(old)) throw new Error(`daemon: ${name} (pid ${old.pid}) must be stopped before it is started again`);
  const started = restartDaemon(old);
  state.daemons = state.daemons.map((d) => (d.name === name ? started : d));
  writeState(state);
  return started;
}

/** The host path of `inner`, a path under /run/containerd inside the node. */
export function hostPath(node: NodeState, inner: string): string {
  const rel = relative(RUN_DIR, inner);
  if (rel.startsWith('..') || rel === '') throw new Error(`path: ${inner} must be under ${RUN_DIR}`);
  return join(node.dir, RUN_CONTAINERD, rel);
}

/** The command line that runs argv inside the node's mount, network and UTS namespaces. */
export function inNode(node: NodeState, argv: readonly string[]): string[] {
  return ['nsenter', '-t', String(node.anchorPid), '-m', '-n', '-u', '--', ...argv];
}

/**
 * Restarts the node's containerd listening at `inner` (CONTAINERD_SOCKET puts it back); resolves
 * once it answers there. Returns the socket's host path.
 */
export async function moveContainerdSocket(state: ClusterState, nodeName: string, inner: string, clock: Clock): Promise<string> {
  const node = nodeOf(state, nodeName);
  const socket = hostPath(node, inner);
  const name = `${nodeName}/containerd`;
  await stopNodeDaemon(state, name, clock);
  writeContainerdConfig(node.dir, { ...(state.socketGid === undefined ? {} : { socketGid: state.socketGid }), address: inner });
  const started = startNodeDaemon(state, name);
  await waitFor(`${name} answers at ${inner}`, () => {
    execFileSync('ctr', ['-a', socket, 'version'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  }, { clock, timeoutMs: CONTAINERD_READY_MS, daemon: started });
  return socket;
}

export { CONTAINERD_SOCKET };
