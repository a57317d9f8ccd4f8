// The informer's restarts on a manual clock, over a scripted source: which failure count it
// hands its retry policy, that it waits exactly what the policy says, and the watch's schedule.
// (test/fleet/informer.test.ts runs it against the API stand-in over HTTP.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { flushMicrotasks, ManualClock } from '../clock/manual-clock.ts';
import type { ObjectMeta } from './kube-types.ts';
import { Informer, WATCH_RETRY, WatchExpiredError, type ListPage, type ListWatchSource } from './list-watch.ts';

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
