// The lifecycle-event counters and the dropped counter, as one relist outcome after another is
// recorded on real metrics from a real Relister (scripted runtime, manual clock).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../clock/manual-clock.ts';
import { ScriptedRuntimeClient, testContainer, testSandbox } from '../stand-ins/doubles/scripted-runtime-client.ts';
import type { Container } from '../cri/types.ts';
import { createAgentMetrics } from '../metrics/metrics.ts';
import { Relister, type RelistOutcome } from '../relist/relister.ts';
import { createRelistMetricsState, recordRelistOutcome } from './relist-metrics.ts';

async function world(eventCapacity: number) {
  const clock = new ManualClock();
  const runtime = new ScriptedRuntimeClient();
  const registry = new Registry();
  const metrics = createAgentMetrics(registry, { relistDeadlineMs: 60_000, version: 'test', defaultMetrics: false });
  const memo = createRelistMetricsState();
  const outcomes: RelistOutcome[] = [];
  const relister = new Relister({
    client: runtime,
    clock,
    deadlineMs: 60_000,
    thresholdMs: 180_000,
    eventCapacity,
    onOutcome: (outcome) => {
      recordRelistOutcome(metrics, memo, outcome);
      outcomes.push(outcome);
    },
  });
  const relist = async (containers: Container[]): Promise<void> => {
    const done = relister.tick();
    runtime.next().answer({ sandboxes: [testSandbox('pod-1', 'SANDBOX_READY')], containers });
    await done;
    await clock.advance(1_000);
  };
  const counters = async (): Promise<Record<string, number>> => {
    const out: Record<string, number> = {};
    for (const name of ['nodepulse_lifecycle_events_total', 'nodepulse_lifecycle_events_dropped_total']) {
      for (const v of (await registry.getSingleMetric(name)?.get())?.values ?? []) {
        const type = v.labels['type'];
        out[type === undefined ? name : String(type)] = v.value;
      }
    }
    return out;
  };
  return { relister, relist, counters, outcomes };
}

const running = (id: string): Container => testContainer(id, 'CONTAINER_RUNNING');
const exited = (id: string): Container => testContainer(id, 'CONTAINER_EXITED');

test('each lifecycle event is counted once under its type; the first relist is the baseline and counts none', async () => {
  const w = await world(256);
  await w.relist([running('a'), running('b')]);
  assert.deepEqual(await w.counters(), {
    ContainerStarted: 0, ContainerDied: 0, ContainerRemoved: 0, ContainerChanged: 0, nodepulse_lifecycle_events_dropped_total: 0,
  }, 'the baseline counts nothing');
  await w.relist([exited('a'), running('b'), running('c'), testContainer('d', 'CONTAINER_CREATED')]);
  await w.relist([running('b'), running('c'), running('d')]); // a removed (it had exited), d started
  await w.relist([running('c'), running('d')]); // b died and was removed in one step
  assert.deepEqual(await w.counters(), {
    ContainerStarted: 2, // c, then d
    ContainerDied: 2, // a, then b
    ContainerRemoved: 2, // a, then b
    ContainerChanged: 1, // d appeared as created (unknown to PLEG)
    nodepulse_lifecycle_events_dropped_total: 0,
  });
});

test('the dropped counter follows the bounded buffer: it grows by the new drops only, never by the running total', async () => {
  const w = await world(2);
  await w.relist([]);
  await w.relist([running('a'), running('b'), running('c'), running('d'), running('e')]); // 5 events into a buffer of 2
  assert.equal(w.outcomes.at(-1)?.eventsDropped, 3, 'precondition: the buffer dropped 3');
  assert.equal((await w.counters())['nodepulse_lifecycle_events_dropped_total'], 3);
  await w.relist([running('a'), running('b'), running('c'), running('d'), running('e'), running('f'), running('g')]); // 2 more
  assert.equal(w.outcomes.at(-1)?.eventsDropped, 2, 'precondition: 2 more dropped');
  assert.equal((await w.counters())['nodepulse_lifecycle_events_dropped_total'], 5, 'counted 3 then 2, not 3 then 5');
  await w.relist([running('a'), running('b'), running('c'), running('d'), running('e'), running('f'), running('g')]); // nothing new
  assert.equal((await w.counters())['nodepulse_lifecycle_events_dropped_total'], 5, 'a relist without events drops nothing');
  assert.deepEqual(w.relister.recentEvents().map((e) => e.id), ['f', 'g'], 'the buffer holds the newest two');
});
