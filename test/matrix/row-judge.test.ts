// judgeRow, rule by rule of row-judge.ts's table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeRow, type RowExpectations, type Sighting } from './row-judge.ts';

const expect: RowExpectations = {
  must: [
    { signal: 'condition True/RelistStale', from: 'onset', loMs: 9_000, hiMs: 15_000, why: 'threshold' },
    { signal: 'lease stopped', from: 'onset', loMs: 0, hiMs: 11_000, why: 'gate' },
    { signal: 'fleet Stale', from: { after: 'lease stopped' }, loMs: 20_000, hiMs: 23_000, why: 'grace' },
    { signal: 'condition False/RelistHealthy', from: 'end', loMs: 0, hiMs: 3_000, why: 'back' },
  ],
  mustNot: [{ signal: 'condition Unknown/AgentLeaseStale', untilMs: 60_000, why: 'the agent says True' }],
  order: [['lease stopped', 'condition True/RelistStale'], ['condition True/RelistStale', 'fleet Stale']],
};

const good: Sighting[] = [
  { atMs: -2_000, signal: 'condition False/RelistHealthy' },
  { atMs: 9_500, signal: 'lease stopped' },
  { atMs: 10_400, signal: 'condition True/RelistStale' },
  { atMs: 30_100, signal: 'fleet Stale' },
  { atMs: 41_000, signal: 'condition False/RelistHealthy' },
];

test('a timeline that keeps every rule has no problems, and gives each first sighting after its anchor', () => {
  const out = judgeRow(expect, good, 40_000);
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.seen, { 'condition True/RelistStale': 10_400, 'lease stopped': 9_500, 'fleet Stale': 30_100, 'condition False/RelistHealthy': 41_000 });
});

test('each rule breaks on its own, with a line that names the signal, the time and the window', () => {
  const rows: Array<[string, Sighting[], number | undefined, string[]]> = [
    ['too late', good.map((x) => (x.signal === 'condition True/RelistStale' ? { ...x, atMs: 16_000 } : x)), 40_000, [
      'condition True/RelistStale: seen 16.0 s after onset; must be 9.0 s to 15.0 s (threshold)',
    ]],
    ['too early', good.map((x) => (x.signal === 'condition True/RelistStale' ? { ...x, atMs: 8_000 } : x)), 40_000, [
      'condition True/RelistStale: seen 8.0 s after onset; must be 9.0 s to 15.0 s (threshold)',
      'order: lease stopped (9.5 s) must come before condition True/RelistStale (8.0 s)',
    ]],
    ['missing', good.filter((x) => x.signal !== 'fleet Stale'), 40_000, ['fleet Stale: not seen; must be seen 20.0 s to 23.0 s after lease stopped (grace)']],
    ['anchor missing', good.filter((x) => x.signal !== 'lease stopped'), 40_000, [
      'lease stopped: not seen; must be seen 0.0 s to 11.0 s after onset (gate)',
      'fleet Stale: its anchor lease stopped must have been seen (grace)',
    ]],
    ['relative window', good.map((x) => (x.signal === 'fleet Stale' ? { ...x, atMs: 33_000 } : x)), 40_000, ['fleet Stale: seen 23.5 s after lease stopped; must be 20.0 s to 23.0 s (grace)']],
    ['the end never came', good, undefined, ['condition False/RelistHealthy: its anchor end must have been seen (back)']],
    ['a sighting before the end does not count as the way back', good.filter((x) => x.atMs !== 41_000), 40_000, ['condition False/RelistHealthy: not seen; must be seen 0.0 s to 3.0 s after end (back)']],
    ['must-not seen', [...good, { atMs: 55_000, signal: 'condition Unknown/AgentLeaseStale', detail: 'by the controller' }], 40_000, [
      'condition Unknown/AgentLeaseStale: seen at 55.0 s (by the controller); must not be seen by 60.0 s (the agent says True)',
    ]],
    ['must-not seen after its horizon is fine', [...good, { atMs: 61_000, signal: 'condition Unknown/AgentLeaseStale' }], 40_000, []],
  ];
  for (const [name, timeline, end, problems] of rows) {
    assert.deepEqual(judgeRow(expect, timeline, end).problems, problems, name);
  }
});

test('may: unseen is fine, seen must be within its window; mustNot from an anchor holds only after it', () => {
  const e: RowExpectations = {
    must: [{ signal: 'a', from: 'onset', loMs: 0, hiMs: 10_000, why: 'w' }],
    may: [{ signal: 'm', from: { after: 'a' }, loMs: 5_000, hiMs: 6_000, why: 'grace' }],
    mustNot: [{ signal: 'm', from: { after: 'b' }, untilMs: 60_000, why: 'b spoke' }],
    order: [],
  };
  assert.deepEqual(judgeRow(e, [{ atMs: 1_000, signal: 'a' }], undefined).problems, []);
  assert.deepEqual(judgeRow(e, [{ atMs: 1_000, signal: 'a' }, { atMs: 6_500, signal: 'm' }], undefined).problems, []);
  assert.deepEqual(judgeRow(e, [{ atMs: 1_000, signal: 'a' }, { atMs: 8_000, signal: 'm' }], undefined).problems, [
    'm: seen 7.0 s after a; when seen, must be 5.0 s to 6.0 s (grace)',
  ]);
  assert.deepEqual(judgeRow(e, [{ atMs: 1_000, signal: 'a' }, { atMs: 6_500, signal: 'm' }, { atMs: 7_000, signal: 'b' }], undefined).problems, []);
  assert.deepEqual(judgeRow(e, [{ atMs: 1_000, signal: 'a' }, { atMs: 7_000, signal: 'b' }, { atMs: 9_000, signal: 'm' }], undefined).problems, [
    'm: seen 8.0 s after a; when seen, must be 5.0 s to 6.0 s (grace)',
    'm: seen at 9.0 s; must not be seen after b by 60.0 s (b spoke)',
  ]);
});

test('mustNot after a signal anchor is strict: the anchor\'s own sighting is not after it', () => {
  const e: RowExpectations = { must: [], mustNot: [{ signal: 'lease renewed', from: { after: 'lease stopped' }, untilMs: 100, why: 'stopped' }], order: [] };
  const stopped = [{ atMs: 10, signal: 'lease renewed' }, { atMs: 10, signal: 'lease stopped' }];
  assert.deepEqual(judgeRow(e, stopped, undefined).problems, []);
  assert.deepEqual(judgeRow(e, [...stopped, { atMs: 11, signal: 'lease renewed' }], undefined).problems, ['lease renewed: seen at 0.0 s; must not be seen after lease stopped by 0.1 s (stopped)']);
});

test('a signal seen before its anchor does not count: the first sighting at or after it does', () => {
  const e: RowExpectations = { must: [{ signal: 'x', from: 'end', loMs: 0, hiMs: 1_000, why: 'w' }], mustNot: [], order: [] };
  assert.deepEqual(judgeRow(e, [{ atMs: 5, signal: 'x' }, { atMs: 10_500, signal: 'x' }], 10_000).problems, []);
  assert.deepEqual(judgeRow(e, [{ atMs: 5, signal: 'x' }, { atMs: 11_500, signal: 'x' }], 10_000).problems, ['x: seen 1.5 s after end; must be 0.0 s to 1.0 s (w)']);
});

test('a window that opens before its anchor counts sightings from where it opens', () => {
  const e: RowExpectations = { must: [{ signal: 'lease stopped', from: 'onset', loMs: -5_000, hiMs: 1_000, why: 'the last renewal' }], mustNot: [], order: [] };
  assert.deepEqual(judgeRow(e, [{ atMs: -300, signal: 'lease stopped' }], undefined).problems, []);
  assert.deepEqual(judgeRow(e, [{ atMs: -300, signal: 'lease stopped' }], undefined).seen, { 'lease stopped': -300 });
  assert.deepEqual(judgeRow(e, [{ atMs: -6_000, signal: 'lease stopped' }], undefined).problems, ['lease stopped: not seen; must be seen -5.0 s to 1.0 s after onset (the last renewal)']);
});
