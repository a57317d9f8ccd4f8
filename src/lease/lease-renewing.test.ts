// leaseRenewing's table, read from docs/design.md ("Why the lease is not renewed", under "The
// lease gate"): each row's snapshots and gates are judged, and the answer must be the row's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import type { GateVerdict } from './lease-gate.ts';
import { leaseRenewing } from './lease-renewing.ts';
import type { NodeLeaseSnapshot } from './node-lease.ts';

const RENEWED: NodeLeaseSnapshot = { namespace: 'nodepulse', name: 'node-1', renewing: true, lastRenewTime: '2026-01-02T03:04:05.000000Z', lastError: undefined };
const NOT_RENEWED: NodeLeaseSnapshot = { ...RENEWED, renewing: false };
const FAILED: NodeLeaseSnapshot = { ...NOT_RENEWED, lastError: 'PATCH leases nodepulse/node-1: 503 Service Unavailable' };
const NEVER: NodeLeaseSnapshot = { ...NOT_RENEWED, lastRenewTime: undefined };
const RENEW: GateVerdict = { action: 'renew' };
const WITHHOLD: GateVerdict = { action: 'withhold', reason: 'runtime-unhealthy', message: 'relist was last seen active 3m1s ago; threshold is 3m0s' };
const GATES = [RENEW, WITHHOLD];

interface Case {
  readonly lease: NodeLeaseSnapshot;
  readonly gate: GateVerdict;
  /** What the row's words stand for in this case. */
  readonly words: Readonly<Record<string, string>>;
}

const CASES: Readonly<Record<string, readonly Case[]>> = {
  'renewed | – | any': GATES.map((gate) => ({ lease: RENEWED, gate, words: { '<namespace>/<name>': 'nodepulse/node-1' } })),
  'not renewed | an error | any': GATES.map((gate) => ({ lease: FAILED, gate, words: { 'that error': FAILED.lastError ?? '' } })),
  'not renewed | none | withhold': [NOT_RENEWED, NEVER].map((lease) => ({ lease, gate: WITHHOLD, words: { "the gate's words": WITHHOLD.action === 'withhold' ? WITHHOLD.message : '' } })),
  'not renewed | none | renew': [NOT_RENEWED, NEVER].map((lease) => ({ lease, gate: RENEW, words: {} })),
};

/** The row's answer (`ok: …` or `failed: …`), its words replaced by what they stand for. */
function expectedOf(cell: string, words: Readonly<Record<string, string>>): { renewing: boolean; reason: string } {
  const m = /^(ok|failed): (.*)$/.exec(cell);
  assert.ok(m, `precondition: the cell "${cell}" reads "ok: …" or "failed: …"`);
  let reason = m[2] ?? '';
  for (const [word, value] of Object.entries(words)) reason = reason.replace(word, value);
  return { renewing: m[1] === 'ok', reason };
}

describe("leaseRenewing: docs/design.md's table", () => {
  for (const { key, expected, case: cases } of casesOf(designTable('The lease gate', "the lease loop's last tick"), 3, CASES)) {
    test(`${key} → ${expected[0]}`, () => {
      for (const c of cases) assert.deepEqual(leaseRenewing(c.lease, c.gate), expectedOf(expected[0] ?? '', c.words), `${JSON.stringify(c.lease)}, gate ${c.gate.action}`);
    });
  }
});
