// The informer's restarts on a manual clock, over a scripted source: which failure count it
// hands its retry policy, that it waits exactly what the policy says, and the watch's schedule;
// the streaming list (when the store is complete, what a restream removes, refusal) and readAll.
// (test/fleet/informer.test.ts runs it against the API stand-in over HTTP.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flushMicrotasks, ManualClock } from '../clock/manual-clock.ts';
import type { ObjectMeta } from './kube-types.ts';
import {
  INITIAL_EVENTS_END, Informer, readAll, StreamingListRefusedError, WATCH_RETRY, WatchExpiredError, type ListPage, type ListWatchSource, type WatchEvent,
} from './list-watch.ts';

interface Thing {
  readonly metadata: ObjectMeta;
}

/** A source whose every list and watch does what the next scripted step says, and no more. */
function scriptedSource(steps: Array<'ok' | 'fail' | 'expire'>): ListWatchSource<Thing> & { calls: string[] } {
  const calls: string[] = [];
  const next = (call: string): void => {
    calls.push(call);
    const step = steps.shift();
    if (step === undefined) throw new Error(`unscripted ${call}`);
    if (step === 'fail') throw new Error(`${call} refused`);
    if (step === 'expire') throw new WatchExpiredError(`${call} expired`);
  };
  return {
    what: '/things',
    calls,
    list: async () => {
      next('list');
      return { items: [], metadata: { resourceVersion: '1' } } satisfies ListPage<Thing>;
    },
    watch: async (_rv, signal) => {
      next('watch');
      // A watch that was scripted 'ok' lasts until the test ends.
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

test('informer: the retry policy gets the failures in a row, counted afresh after a successful list, and is waited exactly', async (t) => {
  const clock = new ManualClock();
  // list fails, list fails, list ok + watch fails, list ok + watch expires (no wait), list ok + watch ok
  const source = scriptedSource(['fail', 'fail', 'ok', 'fail', 'ok', 'expire', 'ok', 'ok']);
  const asked: number[] = [];
  const informer = new Informer<Thing, string>({
    source,
    clock,
    project: (o) => o.metadata.name ?? '',
    retry: (failures) => {
      asked.push(failures);
      return 1_000 * failures;
    },
  });
  const abort = new AbortController();
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
  });

  await flushMicrotasks();
  assert.deepEqual(source.calls, ['list'], 'the first list failed, and the informer waits');
  await clock.advance(999);
  assert.deepEqual(source.calls, ['list'], 'not before the 1 s the policy gave for one failure');
  await clock.advance(1);
  assert.deepEqual(source.calls, ['list', 'list'], 'relisted once the wait was over');
  await clock.advance(1_999);
  assert.equal(source.calls.length, 2, 'not before the 2 s the policy gave for two failures');
  await clock.advance(1);
  assert.deepEqual(source.calls, ['list', 'list', 'list', 'watch'], 'the third list succeeded and the watch failed');
  await clock.advance(1_000);
  assert.deepEqual(source.calls, ['list', 'list', 'list', 'watch', 'list', 'watch', 'list', 'watch'], 'a failure after a good list waits one step; an expired watch relists at once');
  assert.deepEqual(asked, [1, 2, 1], 'the policy saw 1, 2, then 1 again after the successful list, and nothing for the expiry');
  assert.ok(informer.synced);
});

// The watch's schedule: [failures, random draw, delay]
const WATCH_TABLE: ReadonlyArray<[number, number, number]> = [
  [1, 0, 200],
  [1, 0.5, 250],
  [2, 0, 400],
  [8, 0, 25_600],
  [9, 0, 30_000],
  [9, 0.5, 37_500],
  [1_000, 0.999, 44_985],
];

for (const [failures, draw, expected] of WATCH_TABLE) {
  test(`watch schedule: after ${failures} failures with a draw of ${draw} the informer waits ${expected} ms`, () => {
    assert.equal(WATCH_RETRY(failures, () => draw), expected);
  });
}

// ---- the streaming list ---------------------------------------------------------------------

type Script = { readonly events: ReadonlyArray<WatchEvent<Thing>>; readonly end: 'fail' | 'clean' | 'refuse' | 'hang' };

const thing = (name: string, rv: string): Thing => ({ metadata: { name, resourceVersion: rv } });
const added = (name: string, rv: string): WatchEvent<Thing> => ({ type: 'ADDED', object: thing(name, rv) });
const initialEnd = (rv: string): WatchEvent<Thing> => ({ type: 'BOOKMARK', object: { metadata: { resourceVersion: rv, annotations: { [INITIAL_EVENTS_END]: 'true' } } } });

/** A source whose streaming lists play the scripts in turn; lists and watches are recorded. */
function streamingSource(scripts: Script[]): ListWatchSource<Thing> & { calls: string[] } {
  const calls: string[] = [];
  // As the client does: a request whose signal aborts (or has aborted) rejects.
  const hang = (signal: AbortSignal): Promise<void> =>
    new Promise<void>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  return {
    what: '/things',
    calls,
    list: async () => {
      calls.push('list');
      return { items: [thing('paged', '7')], metadata: { resourceVersion: '7' } } satisfies ListPage<Thing>;
    },
    watch: async (rv, signal) => {
      calls.push(`watch ${rv}`);
      await hang(signal);
    },
    watchList: async (signal, onEvent) => {
      calls.push('stream');
      const script = scripts.shift();
      if (script === undefined) throw new Error('unscripted stream');
      if (script.end === 'refuse') throw new StreamingListRefusedError('WATCH /things (streaming list): HTTP 422 Unprocessable Entity');
      for (const e of script.events) onEvent(e);
      if (script.end === 'fail') throw new Error('stream broke');
      if (script.end === 'hang') await hang(signal);
    },
  };
}

test('informer, streaming: the store is complete at the initial-events-end bookmark, not before; a restream removes what it no longer sends; a clean end watches on from the last resourceVersion', async (t) => {
  const clock = new ManualClock();
  const source = streamingSource([
    { events: [added('a', '2'), added('b', '3'), initialEnd('4'), { type: 'MODIFIED', object: thing('a', '5') }], end: 'fail' },
    { events: [added('a', '6'), initialEnd('8')], end: 'clean' },
  ]);
  const events: string[] = [];
  const asked: number[] = [];
  const synced: boolean[] = [];
  const informer: Informer<Thing, string> = new Informer<Thing, string>({
    source,
    clock,
    project: (o) => o.metadata.resourceVersion ?? '',
    onEvent: (e) => {
      events.push(`${e.type} ${e.key}${e.type === 'upsert' ? ` ${e.value}` : ''}`);
      synced.push(informer.synced);
    },
    retry: (failures) => {
      asked.push(failures);
      return 1_000;
    },
  });
  const abort = new AbortController();
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
  });
  await flushMicrotasks();
  assert.deepEqual(events, ['upsert a 2', 'upsert b 3', 'upsert a 5'], 'every object as it came, and the change after the bookmark');
  assert.deepEqual(synced, [false, false, true], 'not synced before the bookmark, synced after it');
  assert.equal(informer.synced, true, 'synced at the bookmark');
  assert.deepEqual(source.calls, ['stream'], 'one streaming list, no LIST');
  assert.deepEqual(asked, [1], 'the stream that broke after its bookmark is one failure');
  await clock.advance(1_000);
  assert.deepEqual(events.slice(3), ['upsert a 6', 'delete b'], 'the restream upserts what it sends, and at its bookmark removes what it did not');
  assert.deepEqual(source.calls, ['stream', 'stream', 'watch 8'], 'a clean end: a watch from the last resourceVersion, the bookmark\'s');
  assert.deepEqual(informer.counts, { lists: 2, watches: 3 });
});

test('informer, streaming: a stream that ends or breaks before its initial events did gets pages at once, and they are the listing', async (t) => {
  const clock = new ManualClock();
  const source = streamingSource([
    { events: [added('a', '2'), added('b', '3'), initialEnd('4')], end: 'fail' },
    { events: [added('a', '6')], end: 'clean' },
    { events: [added('a', '6'), added('b', '7'), initialEnd('8')], end: 'hang' },
  ]);
  const events: string[] = [];
  const asked: number[] = [];
  const informer = new Informer<Thing, string>({
    source,
    clock,
    project: (o) => o.metadata.resourceVersion ?? '',
    onEvent: (e) => events.push(`${e.type} ${e.key}`),
    retry: (failures) => {
      asked.push(failures);
      return 1_000;
    },
  });
  const abort = new AbortController();
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
  });
  await flushMicrotasks();
  assert.deepEqual(asked, [1], 'the stream that broke after its bookmark is a watch failure');
  await clock.advance(1_000);
  assert.deepEqual(source.calls, ['stream', 'stream', 'list', 'watch 7'], 'the short stream: a paged LIST at once, then a watch from its resourceVersion');
  assert.deepEqual(events, ['upsert a', 'upsert b', 'upsert a', 'upsert paged', 'delete a', 'delete b'], 'the pages are the listing: what they lack is removed, only once they are in');
  assert.deepEqual(asked, [1], 'the short stream is not a failure: the pages were read');
});

test('informer, streaming: a server that refuses it gets pages, for good', async (t) => {
  const clock = new ManualClock();
  const source = streamingSource([{ events: [], end: 'refuse' }]);
  const informer = new Informer<Thing, string>({ source, clock, project: (o) => o.metadata.resourceVersion ?? '', retry: () => 1_000 });
  const abort = new AbortController();
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
  });
  await flushMicrotasks();
  assert.deepEqual(source.calls, ['stream', 'list', 'watch 7'], 'refused: a paged LIST at once (no wait), then a watch from its resourceVersion');
  assert.deepEqual([...informer.store], [['paged', '7']]);
  assert.ok(informer.synced);
});

test('informer, streaming: a stream that fails before its first event (a cache behind etcd: 504) gets pages at once', async (t) => {
  const clock = new ManualClock();
  const source = streamingSource([{ events: [], end: 'fail' }]);
  const asked: number[] = [];
  const informer = new Informer<Thing, string>({
    source, clock, project: (o) => o.metadata.resourceVersion ?? '',
    retry: (failures) => {
      asked.push(failures);
      return 1_000;
    },
  });
  const abort = new AbortController();
  const running = informer.run(abort.signal);
  t.after(async () => {
    abort.abort();
    await running;
  });
  await flushMicrotasks();
  assert.deepEqual(source.calls, ['stream', 'list', 'watch 7'], 'a paged LIST at once (no wait), then a watch from its resourceVersion');
  assert.deepEqual([[...informer.store], informer.synced, asked], [[['paged', '7']], true, []], 'synced from the pages; not counted as a failure');
});

test('readAll: each object of the streaming list up to its bookmark, and nothing after; pages where refused or cut short, ending with exactly the pages\' listing', async () => {
  const seen: string[] = [];
  const streamed = streamingSource([{ events: [added('a', '2'), added('b', '3'), initialEnd('4'), added('late', '5')], end: 'hang' }]);
  await readAll(streamed, new AbortController().signal, (o) => seen.push(o.metadata.name ?? ''));
  assert.deepEqual(seen, ['a', 'b']);
  assert.deepEqual(streamed.calls, ['stream']);

  const paged: string[] = [];
  const refused = streamingSource([{ events: [], end: 'refuse' }]);
  await readAll(refused, new AbortController().signal, (o) => paged.push(o.metadata.name ?? ''));
  assert.deepEqual([paged, refused.calls], [['paged'], ['stream', 'list']]);

  const unstarted: string[] = [];
  const failedFirst = streamingSource([{ events: [], end: 'fail' }]);
  await readAll(failedFirst, new AbortController().signal, (o) => unstarted.push(o.metadata.name ?? ''));
  assert.deepEqual([unstarted, failedFirst.calls], [['paged'], ['stream', 'list']], 'failed before its first event: pages');

  for (const end of ['clean', 'fail'] as const) {
    const got: string[] = [];
    const cut = streamingSource([{ events: [added('a', '2'), added('paged', '3')], end }]);
    await readAll(cut, new AbortController().signal, (o) => got.push(o.metadata.name ?? ''), (name) => got.push(`gone ${name}`));
    assert.deepEqual([got, cut.calls], [['a', 'paged', 'paged', 'gone a'], ['stream', 'list']], `a stream that ${end === 'clean' ? 'ends' : 'breaks'} before its bookmark: pages, and what they no longer hold is gone`);
  }
});
