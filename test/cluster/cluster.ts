// The test cluster, brought up and taken down as one thing.
//
//   up:   binaries (build-binaries.ts, cached) → the bridge and the block's route (network.ts)
//         → a fresh PKI (pki.ts) → etcd, kube-apiserver, kube-controller-manager, kube-scheduler
//         (control-plane.ts) → each node (node.ts), unless controlPlaneOnly.
//   down: every daemon stopped (SIGTERM, then SIGKILL), then every process left in the
//         cluster's cgroup killed (shims and pods too), the mounts under the folder undone, the
//         bridge and the route removed, the cgroups removed, the folder removed; then it looks
//         again and reports anything that stayed.
//
// The state (state.json in the cluster's folder) records every daemon as soon as it starts, so a
// failed or interrupted up can always be taken down; and down needs no state at all to find what
// up made: the cgroup, the bridge, the veths and the folder all have fixed names (layout.ts).
//
// One cluster per machine: its addresses are fixed. up refuses while one is up, or while a
// previous one left anything behind (run down).
//
// Needs root, Go (for a cold build), and ip, nsenter, unshare, mount and openssl.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import { unmountUnder, mountsUnder } from '../fixtures/host-cleanup.ts';
import { buildBinaries, type BuiltBinaries } from './build-binaries.ts';
import { cgroupsUnder, pidsUnder, removeCgroupTree } from './cgroups.ts';
import { startControlPlane } from './control-plane.ts';
import { isRunning, stopDaemon, type DaemonRecord } from './daemon.ts';
import { API_SERVER_URL, BRIDGE, CGROUP_ROOT, clusterDir, MAX_NODES, nodeVeth } from './layout.ts';
import { bridgeDown, bridgeUp, ip, linkExists } from './network.ts';
import { kernelGaps, probeKernel } from './kernel-probe.ts';
import { routePodCidrs, startNode, waitNodeReady, type NodeHandle } from './node.ts';
import { createClusterPki } from './pki.ts';

export interface NodeState {
  readonly name: string;
  readonly index: number;
  readonly address: string;
  /** The process that holds the node's namespaces open (mount, network, UTS). */
  readonly anchorPid: number;
  readonly dir: string;
  /** The runtime's socket as the host reaches it (/run/containerd/containerd.sock inside the node). */
  readonly hostSocket: string;
  /** The /24 the controller manager gave the node. */
  readonly podCidr: string;
}

export interface ClusterState {
  readonly dir: string;
  readonly server: string;
  readonly kubeconfig: string;
  readonly binDir: string;
  readonly versions: BuiltBinaries['versions'];
  readonly pkiDir: string;
  readonly caPem: string;
  /** containerd's `[grpc] gid` on every node, when up was given one. */
  readonly socketGid?: number;
  daemons: DaemonRecord[];
  nodes: NodeState[];
}

export interface UpOptions {
  readonly nodes: number;
  readonly controlPlaneOnly: boolean;
  /** containerd's `[grpc] gid` on every node: the socket is then root:<gid> 0660 (the non-root install's need). */
  readonly socketGid?: number;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}

const STATE_FILE = 'state.json';
/** A daemon's graceful stop: kube components and etcd exit within a second or two of SIGTERM. */
const STOP_GRACE_MS = 5_000;
/** Rounds of SIGKILL over the cgroup: a process forked during a sweep is caught by the next. */
const SWEEP_ROUNDS = 20;
/** A stop slower than this is logged, to see where down's time goes. */
const SLOW_STOP_MS = 1_000;
const SWEEP_PAUSE_MS = 100;
/** ctr import of the agent's image (~100 MB) on a loaded machine. */
const IMPORT_TIMEOUT_MS = 300_000;

/** The state of the cluster that is up, or undefined. */
export function readState(dir = clusterDir()): ClusterState | undefined {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as ClusterState;
}

export function writeState(state: ClusterState): void {
  const path = join(state.dir, STATE_FILE);
  writeFileSync(`${path}.partial`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${path}.partial`, path); // a reader never sees half a file
}

/** What up or down found in the way, or left behind. */
export function leftovers(dir = clusterDir()): string[] {
  const found: string[] = [];
  const pids = pidsUnder(CGROUP_ROOT);
  if (pids.length > 0) found.push(`processes in cgroup ${CGROUP_ROOT}: ${pids.join(', ')}`);
  const cgroups = cgroupsUnder(CGROUP_ROOT);
  if (cgroups.length > 0) found.push(`cgroups: ${cgroups.slice(0, 5).join(', ')}${cgroups.length > 5 ? ` and ${cgroups.length - 5} more` : ''}`);
  const mounts = mountsUnder(dir);
  if (mounts.length > 0) found.push(`mounts under ${dir}: ${mounts.join(', ')}`);
  for (const link of [BRIDGE, ...Array.from({ length: MAX_NODES }, (_, i) => nodeVeth(i + 1))]) {
    if (linkExists(link)) found.push(`network device ${link}`);
  }
  if (existsSync(dir)) found.push(`folder ${dir}`);
  return found;
}

/**
 * The control plane of a cluster that is running in the cluster's cgroup but is not the one
 * `state` (this folder's, or none) records: another NODEPULSE_CLUSTER_DIR's, or an `up` that has
 * not yet written its state. As `pid name` lines; empty when there is none. Such a cluster is
 * alive and someone's: `down` from this folder must not be run over it.
 */
export function controlPlaneOfAnother(state: ClusterState | undefined): string[] {
  const recorded = new Set((state?.daemons ?? []).filter(isRunning).map((d) => d.pid));
  const found: string[] = [];
  for (const pid of pidsUnder(CGROUP_ROOT)) {
    if (recorded.has(pid)) continue;
    let argv0 = '';
    try {
      argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    } catch {
      continue; // gone meanwhile
    }
    if (['etcd', 'kube-apiserver'].includes(basename(argv0))) found.push(`${pid} ${basename(argv0)}`);
  }
  return found;
}

/** Brings the cluster up; returns its state. On failure, takes down what it started and rethrows. */
export async function up(options: UpOptions): Promise<ClusterState> {
  const { clock, log } = options;
  if (!Number.isInteger(options.nodes) || options.nodes < 1 || options.nodes > MAX_NODES) {
    throw new Error(`nodes: ${options.nodes} must be an integer from 1 to ${MAX_NODES}`);
  }
  const dir = clusterDir();
  const inTheWay = leftovers(dir);
  if (inTheWay.length > 0) throw new Error(`up: a cluster is up, or a previous one left something behind (run down first): ${inTheWay.join('; ')}`);

  if (!options.controlPlaneOnly) {
    const gaps = kernelGaps(probeKernel());
    if (gaps.length > 0) throw new Error(`up: this kernel lacks what a node needs (kernel-probe.ts; --control-plane-only needs none of it): ${gaps.join('; ')}`);
  }

  const started = clock.monotonicMs();
  const binaries = await buildBinaries({ log, clock });
  log(`binaries: ${binaries.dir}${binaries.cached ? ' (cached)' : ` (built in ${binaries.buildSeconds} s)`}`);
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const pki = createClusterPki(join(dir, 'pki'));
  const state: ClusterState = {
    dir,
    server: API_SERVER_URL,
    kubeconfig: join(dir, 'admin.kubeconfig'),
    binDir: binaries.dir,
    versions: binaries.versions,
    pkiDir: pki.dir,
    caPem: pki.caPem,
    ...(options.socketGid === undefined ? {} : { socketGid: options.socketGid }),
    daemons: [],
    nodes: [],
  };
  writeState(state);
  try {
    bridgeUp();
    const controlPlane = await startControlPlane({
      dir, binDir: binaries.dir, pki, clock, log,
      started: (daemon) => {
        state.daemons.push(daemon);
        writeState(state);
      },
    });
    if (controlPlane.adminKubeconfig !== state.kubeconfig) throw new Error(`up: the admin kubeconfig must be ${state.kubeconfig}`);
    log(`control plane up in ${((clock.monotonicMs() - started) / 1000).toFixed(1)} s`);
    if (options.controlPlaneOnly) return state;

    const nodes: NodeHandle[] = [];
    for (let index = 1; index <= options.nodes; index++) {
      nodes.push(await startNode({
        index, clusterDir: dir, binDir: binaries.dir, pki, clock, log,
        ...(options.socketGid === undefined ? {} : { socketGid: options.socketGid }),
        started: (daemon) => {
          state.daemons.push(daemon);
          writeState(state);
        },
      }));
    }
    const cidrs = await Promise.all(nodes.map((n) => waitNodeReady(n, controlPlane.adminCredentials, pki.caPem, clock)));
    state.nodes = nodes.map((n, i) => ({ name: n.name, index: n.index, address: n.address, anchorPid: n.anchor.pid, dir: n.dir, hostSocket: n.hostSocket, podCidr: cidrs[i] ?? '' }));
    routePodCidrs(state.nodes);
    writeState(state);
    log(`${nodes.length} node(s) Ready in ${((clock.monotonicMs() - started) / 1000).toFixed(1)} s: ${state.nodes.map((n) => `${n.name} ${n.address} pods ${n.podCidr}`).join(', ')}`);
    return state;
  } catch (err) {
    log(`up failed; taking down what was started: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env['NODEPULSE_CLUSTER_KEEP_FAILED'] === '1') throw err;
    await down({ clock, log }).catch((downErr: unknown) => log(`down after a failed up: ${downErr instanceof Error ? downErr.message : String(downErr)}`));
    throw err;
  }
}

/**
 * Imports an image archive (docker-archive or OCI) into every node's containerd, in the CRI's
 * namespace (k8s.io), and tags it also as `alias` when given. Nothing is ever pulled on a node:
 * this is how every image gets there.
 *
 * An archive already imported into a node (a marker in the node's folder names the archive by
 * name and size, and every name it gave is still listed by containerd) is not imported again:
 * unpacking the agent's image takes ~10 s per node on a loaded machine.
 */
export function importImage(state: ClusterState, archive: string, alias?: string): string[] {
  const names: string[] = [];
  const id = `${basename(archive)}-${statSync(archive).size}`;
  for (const node of state.nodes) {
    const ctr = (args: readonly string[]): string =>
      execFileSync('ctr', ['-a', node.hostSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: IMPORT_TIMEOUT_MS });
    const marker = join(node.dir, 'imported', id);
    const listed = new Set(ctr(['images', 'ls', '-q']).split('\n'));
    let imported = existsSync(marker) ? readFileSync(marker, 'utf8').split('\n').filter((n) => n !== '') : [];
    if (imported.length === 0 || !imported.every((n) => listed.has(n))) {
      const out = ctr(['images', 'import', archive]);
      // ctr prints one "unpacking <name> (sha256:…)...done" line per name it imported.
      imported = [...out.matchAll(/unpacking (\S+) \(/g)].map((m) => m[1] ?? '');
      if (imported.length === 0) throw new Error(`ctr images import ${archive} on ${node.name}: must import an image, printed: ${out.trim()}`);
      mkdirSync(join(node.dir, 'imported'), { recursive: true });
      writeFileSync(marker, `${imported.join('\n')}\n`);
    }
    if (alias !== undefined && !listed.has(alias)) ctr(['images', 'tag', '--force', imported[0] ?? '', alias]);
    if (node === state.nodes[0]) names.push(...imported, ...(alias === undefined ? [] : [alias]));
  }
  return names;
}

export interface DownReport {
  readonly stopped: number;
  readonly killed: number;
  readonly unmounted: number;
  readonly removed: readonly string[];
  /** What stayed (empty when down left nothing behind). */
  readonly left: readonly string[];
}

/** Takes the cluster down as the header says; safe when nothing is up. */
export async function down(options: { clock: Clock; log: (line: string) => void }): Promise<DownReport> {
  const { clock, log } = options;
  const dir = clusterDir();
  const state = readState(dir);
  // Gracefully first, newest first: the nodes before the control plane, the API server before
  // etcd (an API server whose etcd is gone waits out its storage timeouts instead of exiting).
  let stopped = 0;
  for (const daemon of [...(state?.daemons ?? [])].reverse()) {
    if (!isRunning(daemon)) continue;
    const began = clock.monotonicMs();
    try {
      await stopDaemon(daemon, clock, STOP_GRACE_MS);
      stopped++;
      const took = clock.monotonicMs() - began;
      if (took > SLOW_STOP_MS) log(`down: ${daemon.name} took ${(took / 1000).toFixed(1)} s to stop`);
    } catch (err) {
      log(`down: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const step = (what: string, since: number): void => {
    const took = clock.monotonicMs() - since;
    if (took > SLOW_STOP_MS) log(`down: ${what} took ${(took / 1000).toFixed(1)} s`);
  };
  let killed = 0;
  const sweepBegan = clock.monotonicMs();
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    const pids = pidsUnder(CGROUP_ROOT);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // gone meanwhile
      }
    }
    await clock.sleep(SWEEP_PAUSE_MS);
  }
  step('the cgroup sweep', sweepBegan);
  let since = clock.monotonicMs();
  const mounted = mountsUnder(dir).length;
  const stuck = unmountUnder(dir);
  step('unmounting', since);
  since = clock.monotonicMs();
  const removed = bridgeDown();
  for (const index of Array.from({ length: MAX_NODES }, (_, i) => i + 1)) {
    // A node's veth goes with its network namespace; one whose namespace is still held is removed here.
    const veth = nodeVeth(index);
    if (linkExists(veth)) {
      try {
        ip(['link', 'del', veth]);
        removed.push(`link ${veth}`);
      } catch (err) {
        log(`down: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  step('removing network devices', since);
  since = clock.monotonicMs();
  const stayed = removeCgroupTree(CGROUP_ROOT);
  if (stayed.length > 0) log(`down: cgroups that would not go: ${stayed.join(', ')}`);
  step('removing cgroups', since);
  since = clock.monotonicMs();
  if (stuck.length === 0 && existsSync(dir)) {
    // The nodes' folders hold each containerd's unpacked images (tens of thousands of files): they
    // are removed side by side (libuv's thread pool), then the rest.
    const nodes = join(dir, 'nodes');
    if (existsSync(nodes)) await Promise.all(readdirSync(nodes).map((n) => rm(join(nodes, n), { recursive: true, force: true, maxRetries: 3 })));
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
  step(`removing ${dir}`, since);
  return { stopped, killed, unmounted: mounted - stuck.length, removed, left: leftovers(dir) };
}
