// The relister's fast path for a listing it has already tracked (cri/answer-memo.ts gives such a
// listing the content ids of the one before): a success like any other, stamped when it asked,
// with no lifecycle events and the same counts; and every change still seen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import type { Listing } from '../cri/types.ts';
import { ScriptedRuntimeClient, testContainer, testSandbox } from '../stand-ins/doubles/scripted-runtime-client.ts';
import { Relister, type RelistOutcome } from './relister.ts';

const THRESHOLD = 180_000;
const DEADLINE = 60_000;

function setup(): { clock: ManualClock; client: ScriptedRuntimeClient; relister: Relister; outcomes: RelistOutcome[] } {
  const clock = new ManualClock();
  const client = new ScriptedRuntimeClient();
  const outcomes: RelistOutcome[] = [];
  const relister = new Relister({ client, clock, deadlineMs: DEADLINE, thresholdMs: THRESHOLD, onOutcome: (o) => outcomes.push(o) });
  return { clock, client, relister, outcomes };
}

/** One relist answered with `listing` after `answerAfterMs` on the manual clock. */
async function relist(s: ReturnType<typeof setup>, listing: Partial<Listing> | 'fail', answerAfterMs = 0): Promise<RelistOutcome> {
  const tick = s.relister.tick();
  await Promise.resolve();
  assert.equal(s.client.pending.length, 1, 'precondition: the relist reached the runtime');
  await s.clock.advance(answerAfterMs);
  if (listing === 'fail') s.client.next().fail('unavailable', 'connection refused');
  else s.client.next().answer(listing);
  const outcome = await tick;
  assert.ok(outcome !== undefined, 'precondition: the relist was not aborted');
  return outcome;
}

const pod = testSandbox('pod-1', 'SANDBOX_READY');
const running = testContainer('c-1', 'CONTAINER_RUNNING');
const exited = testContainer('c-1', 'CONTAINER_EXITED');

test('a listing with the content ids of the last one is a success stamped when it asked, with no events and the same counts', async () => {
  const s = setup();
  await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  const counts = s.relister.counts();
  await s.clock.advance(1_000);
  const askedAt = s.clock.monotonicMs();
  // Answered 700 ms after it asked: the stamp is the asking, as for any relist.
  const outcome = await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } }, 700);
  assert.equal(outcome.result, 'success');
  assert.deepEqual(outcome.events, []);
  assert.equal(outcome.began.monotonicMs, askedAt);
  assert.equal(s.relister.ledger.record().lastSuccess?.monotonicMs, askedAt);
  assert.equal(s.relister.counts(), counts, 'the same counts object');
  assert.equal(s.relister.knownIds, 2);
});

test('a listing with new content ids is diffed: a container that died is seen', async () => {
  const s = setup();
  await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  const outcome = await relist(s, { sandboxes: [pod], containers: [exited], contentIds: { sandboxes: 1, containers: 3 } });
  assert.deepEqual(outcome.events, [{ type: 'ContainerDied', id: 'c-1', podSandboxId: 'pod-1', kind: 'container', name: 'c-1' }]);
  assert.equal(s.relister.counts()?.containersByState['CONTAINER_EXITED'], 1);
});

test('after a failed relist, the content ids are still compared with the last listing tracked', async () => {
  const s = setup();
  await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  await relist(s, 'fail');
  const same = await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  assert.deepEqual(same.events, []);
  // The client saw a listing the relister never took (ids 3) before this one (ids 4).
  const changed = await relist(s, { sandboxes: [pod], containers: [exited], contentIds: { sandboxes: 1, containers: 4 } });
  assert.equal(changed.events.length, 1);
});

test('a listing with an id listed twice is diffed every time: its order decides which listing of the id counts', async () => {
  const s = setup();
  const ids = { sandboxes: 1, containers: 2 };
  await relist(s, { sandboxes: [pod], containers: [running, exited], contentIds: ids });
  // The same items in another order (the same content ids): the id's last listing is now running.
  const outcome = await relist(s, { sandboxes: [pod], containers: [exited, running], contentIds: ids });
  assert.deepEqual(outcome.events.map((e) => e.type), ['ContainerStarted']);
});

test('only the listing tracked last counts: ids seen two listings ago are diffed', async () => {
  const s = setup();
  await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  await relist(s, { sandboxes: [pod], containers: [exited], contentIds: { sandboxes: 1, containers: 3 } });
  const back = await relist(s, { sandboxes: [pod], containers: [running], contentIds: { sandboxes: 1, containers: 2 } });
  assert.deepEqual(back.events.map((e) => e.type), ['ContainerStarted']);
});

test('a client that gives no content ids is diffed every time', async () => {
  const s = setup();
  await relist(s, { sandboxes: [pod], containers: [running] });
  const outcome = await relist(s, { sandboxes: [pod], containers: [exited] });
  assert.deepEqual(outcome.events.map((e) => e.type), ['ContainerDied']);
});
