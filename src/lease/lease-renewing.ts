// Whether the node's Lease is being renewed, and if not, why: the `lease-renewing` check of
// /healthz. A pure function of what the lease loop last did (its snapshot) and the gate now.
//
// The table is docs/design.md's "Why the lease is not renewed" (under "The lease gate");
// lease-renewing.test.ts reads it from there. Why its rows are what they are:
// - A write that failed is the most specific reason there is, and it stands until a write
//   succeeds: a loop that failed and is now withheld still has an API to fix.
// - Otherwise the gate speaks: a withheld lease says what withholds it, in the loop's or the
//   ledger's own words.
// - The gate open and nothing renewed yet is the moment between start (or a withhold) and the
//   next write.
import type { GateVerdict } from './lease-gate.ts';
import type { NodeLeaseSnapshot } from './node-lease.ts';

export interface LeaseRenewing {
  readonly renewing: boolean;
  readonly reason: string;
}

export function leaseRenewing(lease: NodeLeaseSnapshot, gate: GateVerdict): LeaseRenewing {
  if (lease.renewing) return { renewing: true, reason: `renewing ${lease.namespace}/${lease.name}` };
  if (lease.lastError !== undefined) return { renewing: false, reason: lease.lastError };
  if (gate.action === 'withhold') return { renewing: false, reason: `withheld: ${gate.message}` };
  return { renewing: false, reason: 'not renewed yet' };
}
