import { test } from 'node:test';
import assert from 'node:assert/strict';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { ManualClock } from '../clock/manual-clock.ts';
import { parseLabelSelector } from './label-selector.ts';
import {
  judgeNode,
  observeLease,
  summarizeFleet,
  type LeaseSighting,
  type NodeFacts,
  type ReadinessOptions,
  type Verdict,
} from './readiness.ts';

const GRACE = 50_000;
const LINUX = parseLabelSelector('kubernetes.io/os=linux');
const OBSERVED: ReadinessOptions = { graceMs: GRACE, selector: LINUX, basis: 'reader-clock' };
const LISTING: ReadinessOptions = { graceMs: GRACE, selector: LINUX, basis: 'wall-clock' };

function node(overrides: Partial<NodeFacts> = {}): NodeFacts {
  return {
    name: 'node-a',
    labels: { 'kubernetes.io/os': 'linux' },
    createdWallMicros: Date.UTC(2025, 0, 1) * 1000,
    unschedulable: false,
    condition: undefined,
    ...overrides,
  };
}

// A scenario: the writer renews (or not) on its own wall clock, the reader watches on its own.
// Each step advances both machines by `ms`; `renew` says what renewTime the writer publishes
// relative to its wall now (0 = now, -3_600_000 = an hour back), or nothing.
interface Step {
  readonly ms: number;
  readonly renew?: number | 'same';
  readonly expect?: Verdict;
}

interface Row {
  readonly name: string;
  readonly readerWallOffsetMs?: number;
  readonly steps: readonly Step[];
}

const ROWS: readonly Row[] = [
  {
    name: 'a lease that advances every 10s stays fresh',
    steps: [
      { ms: 0, renew: 0, expect: 'Fresh' },
      ...Array.from({ length: 12 }, () => ({ ms: 10_000, renew: 0, expect: 'Fresh' as const })),
    ],
  },
  {
    name: 'a lease that stops goes stale at grace + 1 ms, not before',
    steps: [
      { ms: 0, renew: 0, expect: 'Fresh' },
      { ms: 10_000, renew: 0, expect: 'Fresh' }, // last advance, at 10 s
      { ms: 30_000, renew: 'same', expect: 'Fresh' },
      { ms: 19_999, renew: 'same', expect: 'Fresh' }, // 49.999 s since it moved
      { ms: 1, renew: 'same', expect: 'Fresh' }, // exactly grace: still fresh (strict >)
      { ms: 1, expect: 'Stale' }, // grace + 1 ms
    ],
  },
  {
    name: 'the first sighting counts as an observation, even of a lease last renewed a day ago',
    steps: [
      { ms: 0, renew: -86_400_000, expect: 'Fresh' },
      { ms: GRACE, renew: 'same', expect: 'Fresh' },
      { ms: 1, expect: 'Stale' },
    ],
  },
  {
    name: 'a reader whose wall clock is an hour ahead of the writer decides the same',
    readerWallOffsetMs: 3_600_000,
    steps: [
      { ms: 0, renew: 0, expect: 'Fresh' },
      { ms: 10_000, renew: 0, expect: 'Fresh' },
      { ms: GRACE, expect: 'Fresh' },
      { ms: 1, expect: 'Stale' },
    ],
  },
  {
    name: 'a reader whose wall clock is an hour behind the writer decides the same',
    readerWallOffsetMs: -3_600_000,
    steps: [
      { ms: 0, renew: 0, expect: 'Fresh' },
      { ms: 10_000, renew: 0, expect: 'Fresh' },
      { ms: GRACE, expect: 'Fresh' },
      { ms: 1, expect: 'Stale' },
    ],
  },
  {
    name: 'a backwards renewTime is not an advance',
    steps: [
      { ms: 0, renew: 0, expect: 'Fresh' },
      { ms: 30_000, renew: -3_600_000, expect: 'Fresh' }, // written an hour back: no advance
      { ms: 20_000, renew: -3_599_000, expect: 'Fresh' }, // still below the high-water mark
      { ms: 1, expect: 'Stale' }, // 50.001 s since the only real observation
      { ms: 1_000, renew: 0, expect: 'Fresh' }, // past the old mark: an advance
    ],
  },
];

for (const row of ROWS) {
  test(`readiness: ${row.name}`, () => {
    const writer = new ManualClock();
    const reader = new ManualClock({ startMonotonicMs: 987_654 });
    reader.wallOffsetMs = row.readerWallOffsetMs ?? 0;
    let sighting: LeaseSighting | undefined;
    let published: number | undefined;
    for (const [i, step] of row.steps.entries()) {
      writer.jump(step.ms);
      reader.jump(step.ms);
      if (typeof step.renew === 'number') published = writer.wallMicros() + step.renew * 1000;
      if (step.renew !== undefined) sighting = observeLease(sighting, published, reader.monotonicMs());
      if (step.expect !== undefined) {
        const r = judgeNode(node(), sighting, reader.monotonicMs(), reader.wallMicros(), OBSERVED);
        assert.equal(r.verdict, step.expect, `step ${i}`);
        assert.equal(r.basis, 'reader-clock');
        assert.equal(r.judged, true);
      }
    }
  });
}

test('readiness: a node with no lease is Missing', () => {
  const r = judgeNode(node(), undefined, 0, Date.UTC(2026, 0, 2) * 1000, OBSERVED);
  assert.equal(r.verdict, 'Missing');
  assert.equal(r.markable, true);
  assert.equal(r.leaseWallAgeMs, undefined);
});

interface WhoRow {
  readonly name: string;
  readonly node: NodeFacts;
  readonly judged: boolean;
  readonly notJudged: 'selector' | 'too-young' | undefined;
  readonly markable: boolean;
  readonly cordoned: boolean;
}

const NOW_WALL = Date.UTC(2026, 0, 2, 3, 4, 5) * 1000;

const WHO: readonly WhoRow[] = [
  { name: 'a linux node is judged and markable', node: node(), judged: true, notJudged: undefined, markable: true, cordoned: false },
  {
    name: 'a Windows node is not judged (selector)',
    node: node({ labels: { 'kubernetes.io/os': 'windows' } }),
    judged: false, notJudged: 'selector', markable: false, cordoned: false,
  },
  {
    name: 'a node with no os label is not judged (selector)',
    node: node({ labels: {} }),
    judged: false, notJudged: 'selector', markable: false, cordoned: false,
  },
  {
    name: 'a node younger than the grace period is not judged',
    node: node({ createdWallMicros: NOW_WALL - (GRACE - 1) * 1000 }),
    judged: false, notJudged: 'too-young', markable: false, cordoned: false,
  },
  {
    name: 'a node exactly the grace period old is judged',
    node: node({ createdWallMicros: NOW_WALL - GRACE * 1000 }),
    judged: true, notJudged: undefined, markable: true, cordoned: false,
  },
  {
    name: 'a cordoned node is judged and reported but never markable',
    node: node({ unschedulable: true }),
    judged: true, notJudged: undefined, markable: false, cordoned: true,
  },
];

for (const row of WHO) {
  test(`readiness: ${row.name}`, () => {
    const stale: LeaseSighting = { renewTimeMicros: NOW_WALL - 3_600_000_000, lastMovedMs: 0, firstSeenMs: 0, advances: 0 };
    const r = judgeNode(row.node, stale, GRACE + 1, NOW_WALL, OBSERVED);
    assert.equal(r.verdict, 'Stale', 'the verdict is still given for people');
    assert.equal(r.judged, row.judged);
    assert.equal(r.notJudged, row.notJudged);
    assert.equal(r.markable, row.markable);
    assert.equal(r.cordoned, row.cordoned);
  });
}

interface ListingRow {
  readonly name: string;
  readonly wallAgeMs: number | undefined;
  readonly expect: Verdict;
}

const LISTINGS: readonly ListingRow[] = [
  { name: 'wall age within grace is Fresh', wallAgeMs: 10_000, expect: 'Fresh' },
  { name: 'wall age exactly grace is Fresh', wallAgeMs: GRACE, expect: 'Fresh' },
  { name: 'wall age grace + 1 ms is Stale', wallAgeMs: GRACE + 1, expect: 'Stale' },
  { name: 'a lease without renewTime is Stale', wallAgeMs: undefined, expect: 'Stale' },
];

for (const row of LISTINGS) {
  test(`readiness, single listing: ${row.name}, and says it judged by wall clock`, () => {
    const renew = row.wallAgeMs === undefined ? undefined : NOW_WALL - row.wallAgeMs * 1000;
    const sighting = observeLease(undefined, renew, 5);
    const r = judgeNode(node(), sighting, 5, NOW_WALL, LISTING);
    assert.equal(r.verdict, row.expect);
    assert.equal(r.basis, 'wall-clock');
    assert.equal(r.leaseWallAgeMs, row.wallAgeMs);
  });
}

test('readiness: the summary counts judged nodes only and is allFresh only when all judged are Fresh', () => {
  const fresh = observeLease(undefined, NOW_WALL, 0);
  const readings = [
    judgeNode(node({ name: 'a' }), fresh, 0, NOW_WALL, OBSERVED),
    judgeNode(node({ name: 'w', labels: { 'kubernetes.io/os': 'windows' } }), undefined, 0, NOW_WALL, OBSERVED),
  ];
  assert.deepEqual(summarizeFleet(readings), { judged: 1, fresh: 1, stale: 0, missing: 0, notJudged: 1, allFresh: true });
  readings.push(judgeNode(node({ name: 'b' }), undefined, 0, NOW_WALL, OBSERVED));
  assert.deepEqual(summarizeFleet(readings), { judged: 2, fresh: 1, stale: 0, missing: 1, notJudged: 1, allFresh: false });
});

// judgeNode's verdicts, read from docs/design.md ("A reader's view of a lease"): each row's
// readings, at both sides of the grace where it has one, must give the row's verdict. A reading:
// what the reader saw of the lease (a sighting, or none), its own clocks now, and how it judges.
interface Reading {
  readonly sighting: LeaseSighting | undefined;
  readonly nowMs: number;
  readonly options: ReadinessOptions;
}
const seen = (movedMs: number, renewWallAgeMs: number | undefined): LeaseSighting =>
  observeLease(undefined, renewWallAgeMs === undefined ? undefined : NOW_WALL - renewWallAgeMs * 1000, movedMs);
const advanced = (firstMs: number, movedMs: number): LeaseSighting => observeLease(seen(firstMs, 30_000), NOW_WALL, movedMs);
const listing = (wallAgeMs: number | undefined): Reading => ({ sighting: seen(5, wallAgeMs), nowMs: 5, options: LISTING });
const VERDICT_CASES: Readonly<Record<string, readonly Reading[]>> = {
  'none exists': [
    { sighting: undefined, nowMs: 0, options: OBSERVED },
    { sighting: undefined, nowMs: 0, options: LISTING },
  ],
  "renewTime advanced (or first seen) ≤ grace ago, reader's clock": [
    { sighting: seen(1_000, 3_600_000), nowMs: 1_000, options: OBSERVED },
    { sighting: seen(1_000, 3_600_000), nowMs: 1_000 + GRACE, options: OBSERVED },
    { sighting: advanced(1_000, 40_000), nowMs: 40_000 + GRACE, options: OBSERVED },
  ],
  'renewTime advanced (or first seen) > grace ago (strict >)': [
    { sighting: seen(1_000, 0), nowMs: 1_000 + GRACE + 1, options: OBSERVED },
    { sighting: advanced(1_000, 40_000), nowMs: 40_000 + GRACE + 1, options: OBSERVED },
  ],
  'single listing only: wall age now − renewTime ≤ grace': [listing(0), listing(10_000), listing(GRACE)],
  'single listing only: wall age > grace, or no renewTime': [listing(GRACE + 1), listing(undefined)],
};

for (const { key, expected, case: readings } of casesOf(designTable("A reader's view of a lease"), 1, VERDICT_CASES)) {
  test(`readiness, docs/design.md's table: ${key} → ${expected[0]}`, () => {
    for (const r of readings) {
      assert.equal(judgeNode(node(), r.sighting, r.nowMs, NOW_WALL, r.options).verdict, expected[0], JSON.stringify(r));
    }
  });
}
