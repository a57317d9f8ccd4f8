// What a process costs, read from /proc as the kernel accounts it: CPU time (user + system, the
// process and its threads) and resident memory, now (VmRSS) and at its peak (VmHWM). A window's
// cost is the difference of two readings, so nothing here samples or sleeps.
//
// Failure mode: a process that is gone reads as undefined; the caller says what it was measuring.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/** sysconf(_SC_CLK_TCK): the unit of /proc/<pid>/stat's times (100 on Linux as built). */
function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return clockTicks;
}

/** User + system CPU seconds of the process so far; undefined when it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

function statusKiB(pid: number, key: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m === null ? undefined : Number(m[1]);
  } catch {
    return undefined;
  }
}

/** Resident memory now, MiB. */
export function rssMiB(pid: number): number | undefined {
  const kib = statusKiB(pid, 'VmRSS');
  return kib === undefined ? undefined : kib / 1024;
}

/** The highest resident memory so far, MiB. */
export function peakRssMiB(pid: number): number | undefined {
  const kib = statusKiB(pid, 'VmHWM');
  return kib === undefined ? undefined : kib / 1024;
}
