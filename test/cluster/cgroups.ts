// The cluster's cgroup, in every cgroup hierarchy mounted on this machine: it holds every process
// `up` starts (the control plane, each node's containerd, kubelet, kube-proxy, shims and pods),
// so `down` can find and end all of them, and nothing else, without a pid file.
//
// This machine mounts cgroup v1 controllers (cpu, cpuacct, cpuset, memory, devices, freezer,
// blkio, pids, name=systemd) beside a v2 hierarchy at /sys/fs/cgroup/unified. The daemons are
// placed in the `pids` hierarchy only (PLACEMENT): enough to enumerate them, and their memory
// stays accounted where it was. The kubelet, told cgroupRoot=<CGROUP_ROOT>/<node>, makes its own
// kubepods tree under the same path in each controller it manages, and runc puts every pod there.
//
// Failure modes: a hierarchy that is not mounted is skipped; a cgroup that will not go (a process
// that survived) is returned by removeCgroupTree for the caller to report.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The hierarchy in which daemons are placed, and through which `down` finds them. */
export const PLACEMENT = 'pids';

interface CgroupMount {
  readonly point: string;
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
    if ((fstype === 'cgroup' || fstype === 'cgroup2') && point !== undefined) {
      found.push({ point, controllers: fstype === 'cgroup' ? (superOptions ?? '').split(',') : [] });
    }
  }
  return found;
}

/** The mount points of every cgroup hierarchy. */
export function cgroupMounts(): string[] {
  return hierarchies().map((h) => h.point);
}

/** The placement hierarchy's mount point; throws if it is missing (the cluster cannot be ended then). */
export function placementMount(): string {
  const found = hierarchies().find((h) => h.controllers.includes(PLACEMENT));
  if (found === undefined) throw new Error(`cgroups: a cgroup v1 hierarchy with the ${PLACEMENT} controller must be mounted (found ${cgroupMounts().join(', ') || 'none'})`);
  return found.point;
}

/** Makes `path` (e.g. /nodepulse-cluster/control-plane) in the placement hierarchy; returns its cgroup.procs. */
export function makePlacement(path: string): string {
  const dir = join(placementMount(), path);
  mkdirSync(dir, { recursive: true });
  return join(dir, 'cgroup.procs');
}

/** Moves a running process into `path` of the placement hierarchy. */
export function place(pid: number, path: string): void {
  writeFileSync(makePlacement(path), String(pid));
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
