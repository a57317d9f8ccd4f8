import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../clock/manual-clock.ts';
import { Term } from '../election/term.ts';
import { nodeRecord } from '../fleet/fleet-view.ts';
import type { NodeReadiness } from '../fleet/readiness.ts';
import { KubeApiError } from '../kube/kube-api-error.ts';
import type { Node } from '../kube/kube-types.ts';
import { createControllerMetrics, type ControllerMetrics } from './controller-metrics.ts';
import { NodeMarker, type MarkerApi } from './node-marker.ts';
import { TokenBucket } from './token-bucket.ts';

const NODE: Node = { metadata: { name: 'node-1', uid: 'u-1', resourceVersion: '7' }, status: { conditions: [] } };
const READING: NodeReadiness = {
  node: 'node-1', verdict: 'Stale', judged: true, notJudged: undefined, cordoned: false, markable: true, basis: 'reader-clock',
  leaseWallAgeMs: 60_000, sinceMovedMs: 60_000, seenMoving: true, renewTimeMicros: 1, condition: undefined,
};

function apiError(code: 'conflict' | 'not_found' | 'unavailable', status: number): KubeApiError {
  return new KubeApiError(code, `PATCH nodes/status node-1: ${code}`, { status, what: 'PATCH nodes/status node-1' });
}

/** A strict MarkerApi: each write answers from its script, in order; an unscripted write fails the test. */
function scriptedApi(script: { status?: Array<Error | Node>; events?: Array<Error | 'ok'> }): MarkerApi {
  const status = [...(script.status ?? [])];
  const events = [...(script.events ?? [])];
  return {
    patchNodeStatus: () => {
      const next = status.shift();
      if (next === undefined) throw new Error('unscripted PATCH nodes/status');
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
    patchNode: () => Promise.reject(new Error('unscripted PATCH nodes')),
    createEvent: () => {
      const next = events.shift();
      if (next === undefined) throw new Error('unscripted POST events');
      return next instanceof Error ? Promise.reject(next) : Promise.resolve({});
    },
  };
}

function marker(api: MarkerApi): { marker: NodeMarker; metrics: ControllerMetrics; registry: Registry } {
  const clock = new ManualClock();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry);
  const m = new NodeMarker({ api, clock, bucket: new TokenBucket(clock, 100), identity: 'ctl', leaseNamespace: 'nodepulse', taint: false, metrics, logger: undefined });
  return { marker: m, metrics, registry };
}

async function writeErrors(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('nodepulse_controller_write_errors_total')?.get();
  return Object.fromEntries((metric?.values ?? []).map((v) => [String(v.labels['resource']), v.value]));
}

const term = (): Term => new Term({ believes: () => true, identity: 'ctl' }, 1, new AbortController().signal);

test('node marker: a failed status write counts one nodes/status write error and rejects', async () => {
  const { marker: m, registry } = marker(scriptedApi({ status: [apiError('unavailable', 503)] }));
  await assert.rejects(m.markStale(term(), nodeRecord(NODE), READING), /unavailable/);
  assert.deepEqual(await writeErrors(registry), { 'nodes/status': 1, nodes: 0, events: 0 });
});

test('node marker: a conflict or a not-found is no write error (the newer Node is judged again)', async () => {
  const { marker: m, registry } = marker(scriptedApi({ status: [apiError('conflict', 409), apiError('not_found', 404)] }));
  await assert.rejects(m.markStale(term(), nodeRecord(NODE), READING), /conflict/);
  await assert.rejects(m.markStale(term(), nodeRecord(NODE), READING), /not_found/);
  assert.deepEqual(await writeErrors(registry), { 'nodes/status': 0, nodes: 0, events: 0 });
});

test('node marker: a failed Event counts one events write error and keeps the mark', async () => {
  const { marker: m, registry } = marker(scriptedApi({ status: [NODE], events: [apiError('unavailable', 503)] }));
  const written = await m.markStale(term(), nodeRecord(NODE), READING);
  assert.equal(written.name, 'node-1');
  assert.deepEqual(await writeErrors(registry), { 'nodes/status': 0, nodes: 0, events: 1 });
});

test('node marker: a write refused because the term ended is no write error', async () => {
  const { marker: m, registry } = marker(scriptedApi({}));
  const ended = new Term({ believes: () => false, identity: 'ctl' }, 1, new AbortController().signal);
  await assert.rejects(m.markStale(ended, nodeRecord(NODE), READING), /refused: term 1 of ctl has ended/);
  assert.deepEqual(await writeErrors(registry), { 'nodes/status': 0, nodes: 0, events: 0 });
});
