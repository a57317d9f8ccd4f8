// The cluster's cgroup, in every cgroup hierarchy mounted on this machine: it holds every process
// `up` starts (the control plane, each node's containerd, kubelet, kube-proxy, shims and pods),
// so `down` can find and end all of them, and nothing else, without a pid file.
//
// This machine mounts cgroup v1 controllers (cpu, cpuacct, cpuset, memory, devices, freezer,
// blkio, pids, name=systemd) beside a v2 hierarchy at /sys/fs/cgroup/unified that has no
// controllers. A daemon is placed at its path in every v1 hierarchy, as a service manager places
// a service: the kubelet reads its own cgroup from all of them, and refuses a cgroupRoot that is
// missing from any. The kubelet, told cgroupRoot=<CGROUP_ROOT>/<node>, makes its kubepods tree
// under that path, and runc puts every pod there.
//
// A cpuset cgroup takes no process until its cpuset.cpus and cpuset.mems are set: each level
// made here copies them from its parent, as the kernel's cgroup.clone_children would.
//
// Failure modes: a cgroup that will not go (a process that survived) is returned by
// removeCgroupTree for the caller to report.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface CgroupMount {
  readonly point: string;
  readonly version: 1 | 2;
  /** The controllers (v1: e.g. `pids`, `name=systemd`; v2: none listed here). */
  readonly controllers: readonly string[];
}

/** Every cgroup hierarchy (v1 and v2) mounted on this machine. */
function hierarchies(): CgroupMount[] {
  const found: CgroupMount[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [before, after] = line.split(' - ');
    const [fstype, , superOptions] = after?.split(' ') ?? [];
    const point = before?.split(' ')[4];
    if (point === undefined) continue;
    if (fstype === 'cgroup') found.push({ point, version: 1, controllers: (superOptions ?? '').split(',') });
    if (fstype === 'cgroup2') found.push({ point, version: 2, controllers: [] });
  }
  return found;
}

/** The mount points of every cgroup hierarchy. */
export function cgroupMounts(): string[] {
  return hierarchies().map((h) => h.point);
}

/**
 * Makes `path` (e.g. /nodepulse-cluster/np-node-1/kubelet) in every v1 hierarchy and returns the
 * cgroup.procs file of each, to write a pid into. Throws if this machine has no v1 hierarchy.
 */
export function makeCgroup(path: string): string[] {
  const v1 = hierarchies().filter((h) => h.version === 1);
  if (v1.length === 0) throw new Error(`cgroups: the cluster needs cgroup v1 hierarchies (found ${cgroupMounts().join(', ') || 'none'})`);
  const procs: string[] = [];
  for (const h of v1) {
    let dir = h.point;
    for (const part of path.split('/').filter((p) => p !== '')) {
      const parent = dir;
      dir = join(dir, part);
      if (!existsSync(dir)) mkdirSync(dir);
      if (h.controllers.includes('cpuset')) {
        for (const file of ['cpuset.cpus', 'cpuset.mems']) {
          if (readText(join(dir, file)).trim() === '') writeFileSync(join(dir, file), readText(join(parent, file)).trim());
        }
      }
    }
    procs.push(join(dir, 'cgroup.procs'));
  }
  return procs;
}

/** Every pid in `path` and below, in every hierarchy (pods are in the kubelet's tree). */
export function pidsUnder(path: string): number[] {
  const pids = new Set<number>();
  for (const mount of cgroupMounts()) {
    const dir = join(mount, path);
    if (!existsSync(dir)) continue;
    walk(dir, (d) => {
      for (const line of readText(join(d, 'cgroup.procs')).split('\n')) {
        const pid = Number(line);
        if (line !== '' && Number.isInteger(pid)) pids.add(pid);
      }
    });
  }
  return [...pids].sort((a, b) => a - b);
}

/** The cgroup folders at `path` and below, in every hierarchy. */
export function cgroupsUnder(path: string): string[] {
  const found: string[] = [];
  for (const mount of cgroupMounts()) {
    const dir = join(mount, path);
    if (existsSync(dir)) walk(dir, (d) => found.push(d));
  }
  return found;
}

/** Removes `path` and every cgroup below it, deepest first, in every hierarchy; returns those that stayed. */
export function removeCgroupTree(path: string): string[] {
  const stayed: string[] = [];
  for (const dir of cgroupsUnder(path).sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(dir);
    } catch {
      stayed.push(dir);
    }
  }
  return stayed;
}

function walk(dir: string, visit: (dir: string) => void): void {
  visit(dir);
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // removed meanwhile
  }
  for (const entry of entries) if (entry.isDirectory()) walk(join(dir, entry.name), visit);
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
