// A cluster daemon (etcd, kube-apiserver, a node's containerd or kubelet, …) started so that it
// outlives the `up` command: its own session (setsid), stdin closed, stdout and stderr appended
// to a log file, placed in a cgroup of the cluster's before it execs, and, for a node's daemons,
// inside that node's namespaces (nsenter into the node's anchor process).
//
//   sh -c 'for f in <each hierarchy's cgroup.procs>; do echo $$ > $f; done && exec "$@"' \
//     sh [nsenter -t ANCHOR -m -n -u --] FILE ARGS…
//
// The shell execs, and nsenter execs too (it forks only to enter a pid namespace, which is not
// used here), so the pid spawn returns IS the daemon's pid, already in its cgroup before the
// daemon's first instruction: nothing it forks can escape the cgroup `down` sweeps.
//
// A daemon is recorded by pid and by its start time (field 22 of /proc/<pid>/stat), so a pid
// reused by another process after the daemon exited is never signalled by mistake.
//
// Failure modes: a daemon that exits at once is seen by the caller's readiness wait, with the
// tail of its log (logTail); stop() escalates SIGTERM → SIGKILL within its bounds and throws if
// the process is still there.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import type { Clock } from '../../src/clock/clock.ts';
import { makeCgroup } from './cgroups.ts';

/** What `down` and the tests need to find, stop or restart a daemon. */
export interface DaemonRecord {
  readonly name: string;
  readonly pid: number;
  /** Clock ticks since boot when the process started (/proc/<pid>/stat field 22). */
  readonly startTicks: number;
  readonly argv: readonly string[];
  readonly cgroup: string;
  readonly log: string;
  /** The anchor pid whose namespaces it runs in, for a node's daemon. */
  readonly anchorPid?: number;
  readonly env?: Readonly<Record<string, string>>;
}

export interface DaemonSpec {
  readonly name: string;
  readonly argv: readonly string[];
  readonly cgroup: string;
  readonly log: string;
  readonly anchorPid?: number;
  /** Added to a minimal environment (PATH, HOME): the daemons inherit nothing else of ours. */
  readonly env?: Readonly<Record<string, string>>;
}

const STOP_POLL_MS = 50;
/** Bytes of a log kept for an error message. */
const LOG_TAIL_BYTES = 4096;

/** Starts the daemon as the header says; returns its record at once. */
export function startDaemon(spec: DaemonSpec): DaemonRecord {
  const procs = makeCgroup(spec.cgroup);
  const enter = spec.anchorPid === undefined ? [] : ['nsenter', '-t', String(spec.anchorPid), '-m', '-n', '-u', '--'];
  const fd = openSync(spec.log, 'a');
  try {
    const child = spawn('sh', ['-c', `for f in ${procs.join(' ')}; do echo $$ > $f; done && exec "$@"`, 'sh', ...enter, ...spec.argv], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { PATH: process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin', HOME: process.env['HOME'] ?? '/root', ...spec.env },
    });
    child.unref();
    const pid = child.pid;
    if (pid === undefined) throw new Error(`${spec.name}: could not be spawned (${spec.argv[0]})`);
    return {
      name: spec.name,
      pid,
      startTicks: startTicks(pid) ?? 0,
      argv: [...spec.argv],
      cgroup: spec.cgroup,
      log: spec.log,
      ...(spec.anchorPid === undefined ? {} : { anchorPid: spec.anchorPid }),
      ...(spec.env === undefined ? {} : { env: spec.env }),
    };
  } finally {
    closeSync(fd);
  }
}

/** Whether the recorded process still runs (not a zombie, and not a reused pid). */
export function isRunning(record: Pick<DaemonRecord, 'pid' | 'startTicks'>): boolean {
  const stat = procStat(record.pid);
  if (stat === undefined || stat.state === 'Z') return false;
  return record.startTicks === 0 || stat.startTicks === record.startTicks;
}

/** SIGTERM, then SIGKILL after graceMs; resolves once it is gone, throws if it stays. */
export async function stopDaemon(record: DaemonRecord, clock: Clock, graceMs: number, killWaitMs = 5_000): Promise<void> {
  if (!isRunning(record)) return;
  signal(record.pid, 'SIGTERM');
  if (await waitGone(record, clock, graceMs)) return;
  signal(record.pid, 'SIGKILL');
  if (await waitGone(record, clock, killWaitMs)) return;
  throw new Error(`${record.name}: pid ${record.pid} must exit within ${graceMs + killWaitMs} ms of SIGTERM and SIGKILL`);
}

/** Starts the same command again, in the same cgroup and namespaces, appending to the same log. */
export function restartDaemon(record: DaemonRecord): DaemonRecord {
  return startDaemon({
    name: record.name,
    argv: record.argv,
    cgroup: record.cgroup,
    log: record.log,
    ...(record.anchorPid === undefined ? {} : { anchorPid: record.anchorPid }),
    ...(record.env === undefined ? {} : { env: record.env }),
  });
}

/** The newest bytes of a daemon's log, for error messages. */
export function logTail(path: string, bytes = LOG_TAIL_BYTES): string {
  try {
    const size = statSync(path).size;
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(bytes, size));
      readSync(fd, buffer, 0, buffer.length, size - buffer.length);
      return buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return '(no log)';
  }
}

async function waitGone(record: DaemonRecord, clock: Clock, timeoutMs: number): Promise<boolean> {
  const until = clock.monotonicMs() + timeoutMs;
  while (isRunning(record)) {
    if (clock.monotonicMs() > until) return false;
    await clock.sleep(STOP_POLL_MS);
  }
  return true;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

interface ProcStat {
  readonly state: string;
  readonly startTicks: number;
}

/** /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses. */
function procStat(pid: number): ProcStat | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    return { state: fields[0] ?? '', startTicks: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

function startTicks(pid: number): number | undefined {
  return procStat(pid)?.startTicks;
}
