import assert from 'node:assert/strict';
import { test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { KubeApiError, type KubeApiErrorCode } from '../kube/kube-api-error.ts';
import type { LeaseSpec } from '../kube/kube-types.ts';
import {
  failedWrite,
  type ElectionWrite,
  afterWrite,
  decideElectionStep,
  leadsAt,
  observeRecord,
  releasedSpec,
  type Candidate,
  type ElectionStep,
  type Seen,
} from './election-step.ts';

const SELF: Candidate = { identity: 'a', leaseDurationMs: 15_000, renewDeadlineMs: 10_000 };
/** Our wall clock now, as written into the record. */
const STAMP = '2026-01-02T03:04:05.000000Z';
const EARLIER = '2026-01-02T03:00:00.000000Z';

const MINE: LeaseSpec = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: EARLIER, renewTime: EARLIER, leaseTransitions: 3 };
const THEIRS: LeaseSpec = { ...MINE, holderIdentity: 'b' };
const RELEASED: LeaseSpec = { ...MINE, holderIdentity: '', leaseDurationSeconds: 1 };

const CREATED: LeaseSpec = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: STAMP, renewTime: STAMP, leaseTransitions: 0 };
/** Renewed: acquireTime and leaseTransitions kept. */
const RENEWED: LeaseSpec = { ...MINE, renewTime: STAMP };
/** Taken over: leaseTransitions + 1, acquireTime new. */
const TAKEN: LeaseSpec = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: STAMP, renewTime: STAMP, leaseTransitions: 4 };

function read(spec: LeaseSpec | undefined, observedAtMs = 1_000): Seen {
  return { via: 'read', sighting: spec === undefined ? undefined : { spec, observedAtMs } };
}

function remembered(spec: LeaseSpec | undefined, observedAtMs = 1_000): Seen {
  return { via: 'memory', sighting: spec === undefined ? undefined : { spec, observedAtMs } };
}

interface Row {
  readonly name: string;
  readonly seen: Seen;
  readonly nowMs: number;
  readonly lastWriteOkMs: number | undefined;
  readonly step: ElectionStep;
}

// The candidate's steps of each of docs/design.md's first six rows ("Leader election"), by the
// row's first two cells, each at both sides of its window. lastWriteOk and observedAt are 1 000 ms
// on the candidate's clock. The action and the belief must be the row's, and the whole step the
// case's own.
const STEP_CASES: Readonly<Record<string, readonly Row[]>> = {
  'no lease | –': [
    {
      name: 'no lease: it creates the lease holding it, and believes only once the create succeeds',
      seen: read(undefined),
      nowMs: 5_000,
      lastWriteOkMs: undefined,
      step: { action: 'create', believes: 'once-written', spec: CREATED },
    },
  ],
  'held by itself | now − lastWriteOk < renewDeadline': [
    {
      name: 'held by itself, its last write sent 2 000 ms ago: it renews and believes it leads',
      seen: remembered(MINE),
      nowMs: 3_000,
      lastWriteOkMs: 1_000,
      step: { action: 'renew', believes: 'yes', spec: RENEWED },
    },
    {
      name: 'held by itself, its last write sent renewDeadline − 1 ms ago: it still renews and believes',
      seen: remembered(MINE),
      nowMs: 10_999,
      lastWriteOkMs: 1_000,
      step: { action: 'renew', believes: 'yes', spec: RENEWED },
    },
  ],
  'held by itself | now − lastWriteOk ≥ renewDeadline': [
    {
      name: 'held by itself, its last write sent exactly renewDeadline ago: it stops leading at once and reads again',
      seen: remembered(MINE),
      nowMs: 11_000,
      lastWriteOkMs: 1_000,
      step: { action: 'read', believes: 'no', endsBelief: 'renew deadline passed' },
    },
    {
      name: 'held by itself, its last write sent long ago: it stops leading at once and reads again',
      seen: remembered(MINE),
      nowMs: 60_000,
      lastWriteOkMs: 1_000,
      step: { action: 'read', believes: 'no', endsBelief: 'renew deadline passed' },
    },
  ],
  'held by another | now − observedAt < leaseDuration': [
    {
      name: 'held by another, seen to change 2 000 ms ago: it waits, not leading, and wakes by the expiry',
      seen: read(THEIRS),
      nowMs: 3_000,
      lastWriteOkMs: undefined,
      step: { action: 'wait', believes: 'no', endsBelief: 'another holder: b', wakeWithinMs: 13_001 },
    },
    {
      name: 'held by another, seen to change leaseDuration − 1 ms ago: it waits, and wakes 2 ms later, just past the expiry',
      seen: read(THEIRS),
      nowMs: 15_999,
      lastWriteOkMs: undefined,
      step: { action: 'wait', believes: 'no', endsBelief: 'another holder: b', wakeWithinMs: 2 },
    },
  ],
  'held by another | now − observedAt ≥ leaseDuration': [
    {
      name: 'held by another, seen to change exactly leaseDuration ago: it takes over with leaseTransitions + 1, believing once written',
      seen: read(THEIRS),
      nowMs: 16_000,
      lastWriteOkMs: undefined,
      step: { action: 'take-over', believes: 'once-written', spec: TAKEN, endsBelief: 'another holder: b' },
    },
  ],
  'empty holder (released) | –': [
    {
      name: 'empty holder (released), seen this very moment: it takes over at once, believing once written',
      seen: read(RELEASED, 5_000),
      nowMs: 5_000,
      lastWriteOkMs: undefined,
      step: { action: 'take-over', believes: 'once-written', spec: TAKEN },
    },
    {
      name: 'no holder field at all: read as released, taken over at once',
      seen: read({ leaseTransitions: 3 }, 5_000),
      nowMs: 5_000,
      lastWriteOkMs: undefined,
      step: { action: 'take-over', believes: 'once-written', spec: TAKEN },
    },
  ],
};

// Read again as a candidate after its belief ended (the row "held by itself, ≥ renewDeadline"
// says: read again): a record that still names it is renewed, believed once written.
const AFTER_READ: readonly Row[] = [
  {
    name: 'held by itself, read again as a candidate: it renews, and believes only once the update succeeds',
    seen: read(MINE),
    nowMs: 11_000,
    lastWriteOkMs: undefined,
    step: { action: 'renew', believes: 'once-written', spec: RENEWED },
  },
];

// Expiry is timed on the local monotonic clock from when the record was last seen to change,
// never from its renewTime (the holder's wall clock, skewed any amount), over the duration the
// holder announced.
const EXPIRY: readonly Row[] = [
  {
    name: 'held by another whose renewTime is years old on our wall clock, seen to change 2 000 ms ago: it waits',
    seen: read({ ...THEIRS, renewTime: '2020-01-01T00:00:00.000000Z' }),
    nowMs: 3_000,
    lastWriteOkMs: undefined,
    step: { action: 'wait', believes: 'no', endsBelief: 'another holder: b', wakeWithinMs: 13_001 },
  },
  {
    name: 'held by another whose renewTime is years ahead of our wall clock, unchanged for leaseDuration: it takes over',
    seen: read({ ...THEIRS, renewTime: '2030-01-01T00:00:00.000000Z' }),
    nowMs: 16_000,
    lastWriteOkMs: undefined,
    step: { action: 'take-over', believes: 'once-written', spec: TAKEN, endsBelief: 'another holder: b' },
  },
  {
    name: 'held by another announcing 40 s, seen to change 39 999 ms ago: it waits for the announced duration',
    seen: read({ ...THEIRS, leaseDurationSeconds: 40 }),
    nowMs: 40_999,
    lastWriteOkMs: undefined,
    step: { action: 'wait', believes: 'no', endsBelief: 'another holder: b', wakeWithinMs: 2 },
  },
  {
    name: 'held by another announcing 40 s, seen to change 40 000 ms ago: it takes over, announcing its own 15 s',
    seen: read({ ...THEIRS, leaseDurationSeconds: 40 }),
    nowMs: 41_000,
    lastWriteOkMs: undefined,
    step: { action: 'take-over', believes: 'once-written', spec: TAKEN, endsBelief: 'another holder: b' },
  },
  {
    name: 'held by another announcing no duration, seen to change leaseDuration − 1 ms ago: it waits on its own leaseDuration',
    seen: read({ holderIdentity: 'b', acquireTime: EARLIER, renewTime: EARLIER, leaseTransitions: 3 }),
    nowMs: 15_999,
    lastWriteOkMs: undefined,
    step: { action: 'wait', believes: 'no', endsBelief: 'another holder: b', wakeWithinMs: 2 },
  },
];

// Before reading, only its own record in time is acted on; anything else is read again first.
const MEMORY: readonly Row[] = [
  {
    name: 'nothing remembered (first step, or after a conflict): it reads',
    seen: remembered(undefined),
    nowMs: 3_000,
    lastWriteOkMs: undefined,
    step: { action: 'read', believes: 'no' },
  },
  {
    name: "another's record remembered, however recent: it reads again before judging",
    seen: remembered(THEIRS, 3_000),
    nowMs: 3_000,
    lastWriteOkMs: undefined,
    step: { action: 'read', believes: 'no' },
  },
  {
    name: 'its own record remembered while it holds no belief: it reads, with no belief to end',
    seen: remembered(MINE),
    nowMs: 3_000,
    lastWriteOkMs: undefined,
    step: { action: 'read', believes: 'no' },
  },
];

/** What the row's "it does" cell means as a step's action. */
function documentedAction(cell: string): ElectionStep['action'] {
  if (cell.startsWith('create')) return 'create';
  if (cell.startsWith('renew')) return 'renew';
  if (cell.startsWith('stop leading; read again')) return 'read';
  if (cell.startsWith('wait')) return 'wait';
  if (cell.startsWith('take over')) return 'take-over';
  throw new Error(`precondition: "${cell}" names an action of the elector`);
}

/** What the row's "it believes it leads" cell means: the step's belief, and whether a belief held ends. */
function documentedBelief(cell: string): { believes: ElectionStep['believes']; ends: boolean } {
  if (cell.startsWith('once')) return { believes: 'once-written', ends: false };
  if (cell === 'yes') return { believes: 'yes', ends: false };
  if (cell === 'no, at once') return { believes: 'no', ends: true };
  if (cell === 'no') return { believes: 'no', ends: false };
  throw new Error(`precondition: "${cell}" says whether it believes`);
}

const electionTable = designTable('Leader election', 'the candidate sees');
const stepRows = { ...electionTable, rows: electionTable.rows.filter((r) => r[0] !== 'any write') };
for (const { key, expected, case: rows } of casesOf(stepRows, 2, STEP_CASES)) {
  const [does = '', belief = ''] = expected;
  test(`election step, docs/design.md's table: ${key} → ${does}; believes: ${belief}`, () => {
    const want = documentedBelief(belief);
    for (const row of rows) {
      const step = decideElectionStep(row.seen, { nowMs: row.nowMs, lastWriteOkMs: row.lastWriteOkMs, stamp: STAMP }, SELF);
      assert.equal(step.action, documentedAction(does), row.name);
      assert.equal(step.believes, want.believes, row.name);
      // A belief held ends only where the row says so ("no, at once"), or when another holds it.
      if (want.ends) assert.ok(step.endsBelief !== undefined, `${row.name}: a belief held ends`);
      assert.deepEqual(step, row.step, row.name);
    }
  });
}

// The two "any write" rows: what the elector does after a write, and whether it still believes.
// A prior write was sent at 1 000 ms; this one at 4 000 ms.
const WRITE_CASES: Readonly<Record<string, () => void>> = {
  'any write | 409 Conflict': () => {
    const after = afterWrite('conflict', 4_000, 1_000);
    assert.deepEqual(after, { lastWriteOkMs: undefined, endsBelief: 'write conflict', reread: true, next: 'jittered-retry' });
    assert.equal(leadsAt(after.lastWriteOkMs, 4_001, SELF.renewDeadlineMs), false, 'no, at once');
  },
  'any write | other error or timeout': () => {
    const after = afterWrite('failed', 4_000, 1_000);
    assert.deepEqual(after, { lastWriteOkMs: 1_000, reread: false, next: 'jittered-retry' });
    assert.equal(leadsAt(after.lastWriteOkMs, 10_999, SELF.renewDeadlineMs), true, 'until renewDeadline ends');
    assert.equal(leadsAt(after.lastWriteOkMs, 11_000, SELF.renewDeadlineMs), false, 'until renewDeadline ends');
    assert.deepEqual(afterWrite('failed', 4_000, undefined).lastWriteOkMs, undefined, 'a failure gives no belief to a candidate');
  },
};
const writeRows = { ...electionTable, rows: electionTable.rows.filter((r) => r[0] === 'any write') };
for (const { key, expected, case: check } of casesOf(writeRows, 2, WRITE_CASES)) {
  test(`election step, docs/design.md's table: ${key} → ${expected.join('; ')}`, check);
}

for (const row of [...AFTER_READ, ...EXPIRY, ...MEMORY]) {
  test(`election step: ${row.name}`, () => {
    const step = decideElectionStep(row.seen, { nowMs: row.nowMs, lastWriteOkMs: row.lastWriteOkMs, stamp: STAMP }, SELF);
    assert.deepEqual(step, row.step);
  });
}

// The success the "once written" cells wait for. A prior write was sent at 1 000 ms; this one at
// 4 000 ms.
test('election step: a write that succeeds counts from when it was sent: belief until sent + renewDeadline, then renew every retryPeriod', () => {
  const after = afterWrite('ok', 4_000, 1_000);
  assert.deepEqual(after, { lastWriteOkMs: 4_000, reread: false, next: 'retry-period' });
  assert.equal(leadsAt(after.lastWriteOkMs, 13_999, SELF.renewDeadlineMs), true);
  assert.equal(leadsAt(after.lastWriteOkMs, 14_000, SELF.renewDeadlineMs), false);
});

test('election step: belief holds while now − lastWriteOk < renewDeadline, and never without a successful write', () => {
  assert.equal(leadsAt(1_000, 1_000, 10_000), true);
  assert.equal(leadsAt(1_000, 10_999, 10_000), true);
  assert.equal(leadsAt(1_000, 11_000, 10_000), false);
  assert.equal(leadsAt(undefined, 0, 10_000), false);
});

test('election step: observedAt moves only when holder, renewTime, acquireTime or leaseTransitions change', () => {
  const first = observeRecord(undefined, THEIRS, 1_000);
  assert.deepEqual(first, { spec: THEIRS, observedAtMs: 1_000 }, 'a first sighting is a change');
  assert.equal(observeRecord(first, { ...THEIRS }, 9_000).observedAtMs, 1_000, 'the same record seen again');
  for (const changed of [
    { holderIdentity: 'c' },
    { renewTime: STAMP },
    { acquireTime: STAMP },
    { leaseTransitions: 4 },
  ] satisfies LeaseSpec[]) {
    const field = Object.keys(changed)[0];
    assert.equal(observeRecord(first, { ...THEIRS, ...changed }, 9_000).observedAtMs, 9_000, `${field} changed`);
  }
});

test('election step: a holder renewing every retryPeriod is never taken over; once it stops, the lease is taken exactly leaseDuration after its last change', () => {
  let sighting = observeRecord(undefined, THEIRS, 0);
  let lastChangeMs = 0;
  const micro = (ms: number): string => `2026-01-02T03:04:${String(5 + ms / 1000).padStart(2, '0')}.000000Z`;
  for (let t = 0; t <= 40_000; t += 500) {
    if (t <= 20_000 && t % 2_000 === 0) lastChangeMs = t; // the holder renews until 20 s, then stops
    sighting = observeRecord(sighting, { ...THEIRS, renewTime: micro(lastChangeMs) }, t);
    const step = decideElectionStep({ via: 'read', sighting }, { nowMs: t, lastWriteOkMs: undefined, stamp: STAMP }, SELF);
    const expected = t < 20_000 + SELF.leaseDurationMs ? 'wait' : 'take-over';
    assert.equal(step.action, expected, `at ${t} ms (last change ${lastChangeMs} ms)`);
  }
});

test('election step: a clean stop releases the lease: holder "", 1 s duration, stamped now, transitions kept', () => {
  assert.deepEqual(releasedSpec(MINE, STAMP), { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: STAMP, renewTime: STAMP, leaseTransitions: 3 });
});

// failedWrite's table, read from docs/design.md ("Whether a failed write lost the race", under
// "Leader election"): each row's writes meet each row's answers, and count as the row says.
const apiError = (code: KubeApiErrorCode, status: number, reason: string): KubeApiError =>
  new KubeApiError(code, `${status} ${reason}`, { status, reason, what: 'PUT leases nodepulse/nodepulse-controller' });
const OTHER_ANSWERS: readonly unknown[] = [
  apiError('unavailable', 503, 'ServiceUnavailable'),
  apiError('unavailable', 0, 'timeout'),
  apiError('invalid', 422, 'Invalid'),
  apiError('forbidden', 403, 'Forbidden'),
  apiError('too_many_requests', 429, 'TooManyRequests'),
  new Error('socket hang up'),
];
const PUTS: readonly ElectionWrite[] = ['renew', 'take-over'];
const LOST_RACE: Readonly<Record<string, ReadonlyArray<readonly [ElectionWrite, unknown]>>> = {
  'create (POST) | 409 AlreadyExists': [['create', apiError('already_exists', 409, 'AlreadyExists')]],
  'create (POST) | 409 Conflict': [['create', apiError('conflict', 409, 'Conflict')]],
  'renew, take-over (PUT with resourceVersion) | 409 Conflict': PUTS.map((w) => [w, apiError('conflict', 409, 'Conflict')] as const),
  'renew, take-over (PUT with resourceVersion) | 404 NotFound': PUTS.map((w) => [w, apiError('not_found', 404, 'NotFound')] as const),
  'any | any other error, or no answer (a timeout)': [
    ...(['create', 'renew', 'take-over'] as const).flatMap((w) => OTHER_ANSWERS.map((e) => [w, e] as const)),
    ['create', apiError('not_found', 404, 'NotFound')],
    ...PUTS.map((w) => [w, apiError('already_exists', 409, 'AlreadyExists')] as const),
  ],
};

for (const { key, expected, case: writes } of casesOf(designTable('Leader election', 'the write'), 2, LOST_RACE)) {
  const counts = (expected[0] ?? '').split(':')[0];
  test(`election step: a failed write: ${key} → ${counts}`, () => {
    for (const [write, err] of writes) assert.equal(failedWrite(write, err), counts, `${write}: ${err instanceof Error ? err.message : String(err)}`);
  });
}
