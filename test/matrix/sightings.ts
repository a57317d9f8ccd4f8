// What a fault-matrix row saw, as the timeline row-judge.ts reads: raw readings of the cluster
// (the faulted Node polled, its agent Lease's renewTimes, `nodepulse fleet --watch` lines) turned
// into signals, each at the moment it was first seen, in ms from the fault's onset.
//
// | reading                                   | signal, emitted when it changes (the first reading too) |
// |-------------------------------------------|---------------------------------------------------------|
// | the Node's Ready condition status         | `kubelet Ready=<status>` (detail: reason: message)       |
// | RuntimeRelistUnhealthy (status, reason)   | `condition <status>/<reason>` (detail: the message)      |
// | every distinct renewTime                  | `lease renewed`, at the renewTime itself (the writer's   |
// |                                           | clock, this machine's), not when it was read             |
// | the first stop after the onset            | `lease stopped` at its last renewal, `lease moves` at    |
// |                                           | the next (lease-gaps.ts leaseStop)                       |
// | fleet's verdict for the node              | `fleet <verdict>`                                        |
//
// A condition that is absent from the Node emits nothing. Pure: the cluster test reads, this
// names what it read.
import { leaseStop } from './lease-gaps.ts';
import { SIG } from './matrix-rows.ts';
import type { Sighting } from './row-judge.ts';

export interface NodeReading {
  /** ms since the onset, when the answer arrived. */
  readonly atMs: number;
  readonly ready: { readonly status: string; readonly reason?: string; readonly message?: string } | undefined;
  readonly condition: { readonly status: string; readonly reason?: string; readonly message?: string } | undefined;
}

export interface FleetReading {
  readonly atMs: number;
  readonly verdict: 'Fresh' | 'Stale' | 'Missing';
}

export interface RowReadings {
  readonly nodes: readonly NodeReading[];
  /** Every renewTime read, ms from the onset (duplicates allowed). */
  readonly renewalsMs: readonly number[];
  readonly fleet: readonly FleetReading[];
  /** When the row stopped reading, ms from the onset. */
  readonly endOfWatchMs: number;
  /** A gap between renewals longer than this is the lease standing still. */
  readonly leaseAllowedMs: number;
}

export function sightings(r: RowReadings): Sighting[] {
  const out: Sighting[] = [];
  let ready: string | undefined;
  let condition: string | undefined;
  for (const n of [...r.nodes].sort((a, b) => a.atMs - b.atMs)) {
    if (n.ready !== undefined && n.ready.status !== ready) {
      ready = n.ready.status;
      out.push({ atMs: n.atMs, signal: SIG.ready(n.ready.status as 'True'), detail: `${n.ready.reason ?? ''}: ${n.ready.message ?? ''}` });
    }
    const state = n.condition === undefined ? undefined : SIG.condition(n.condition.status, n.condition.reason ?? '');
    if (state !== undefined && state !== condition) {
      condition = state;
      out.push({ atMs: n.atMs, signal: state, detail: n.condition?.message ?? '' });
    }
  }
  const renewals = [...new Set(r.renewalsMs)].sort((a, b) => a - b);
  for (const at of renewals) out.push({ atMs: at, signal: SIG.leaseRenewed });
  const stop = leaseStop(renewals, r.leaseAllowedMs, 0, r.endOfWatchMs);
  if (stop !== undefined) {
    out.push({ atMs: stop.stoppedAtMs, signal: SIG.leaseStopped });
    if (stop.movedAtMs !== undefined) out.push({ atMs: stop.movedAtMs, signal: SIG.leaseMoves });
  }
  let verdict: string | undefined;
  for (const f of [...r.fleet].sort((a, b) => a.atMs - b.atMs)) {
    if (f.verdict !== verdict) {
      verdict = f.verdict;
      out.push({ atMs: f.atMs, signal: SIG.fleet(f.verdict) });
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}
