// The Node condition and its Events, asserted on the API stand-in's request record over real
// HTTP, on a manual clock, with a real Relister (scripted runtime).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeEvent, Node, NodeCondition as KubeNodeCondition } from '../kube/kube-types.ts';
import { harness, NODE, NODE_PATH, seedNode, THRESHOLD_MS, type Harness } from '../stand-ins/doubles/lease-test-harness.ts';
import type { RuntimeHealth } from '../relist/relist-ledger.ts';
import { CONDITION_TYPE } from './desired-condition.ts';
import { NodeCondition, type NodeConditionOptions } from './node-condition.ts';

const EVENTS_PATH = '/apis/events.k8s.io/v1/namespaces/default/events';
const STATUS_PATH = `${NODE_PATH}/status`;
const KUBELET_READY: KubeNodeCondition = {
  type: 'Ready',
  status: 'True',
  reason: 'KubeletReady',
  message: 'kubelet is posting ready status',
  lastHeartbeatTime: '2026-01-02T03:00:00Z',
  lastTransitionTime: '2026-01-01T00:00:00Z',
};

function nodeCondition(h: Harness, extra: Partial<NodeConditionOptions> = {}): NodeCondition {
  return new NodeCondition({
    client: h.client,
    clock: h.clock,
    nodeName: NODE,
    runtimeHealth: () => h.runtimeHealth(),
    thresholdMs: THRESHOLD_MS,
    periodMs: 1_000,
    logger: h.logger,
    ...extra,
  });
}

function node(h: Harness): Node {
  return h.api.store.get('nodes', undefined, NODE) as unknown as Node;
}

function ours(h: Harness): KubeNodeCondition | undefined {
  return node(h).status?.conditions?.find((c) => c.type === CONDITION_TYPE);
}

function events(h: Harness): KubeEvent[] {
  return h.api.store.list('events.events.k8s.io', 'default') as unknown as KubeEvent[];
}

/** "METHOD path status" for every request after seq. */
function calls(h: Harness, afterSeq: number): string[] {
  return h.api.requests.since(afterSeq).map((r) => `${r.method} ${r.path} ${r.status ?? '-'}`);
}

/** Ticks n times, one second apart, with a relist of the given outcome before each. */
async function ticks(h: Harness, condition: NodeCondition, n: number, relist: 'answer' | 'fail' | 'none'): Promise<void> {
  for (let i = 0; i < n; i++) {
    await h.clock.advance(1_000);
    if (relist !== 'none') await h.relist(relist);
    assert.equal(await condition.tick(h.signal), 1_000);
  }
}

test('the condition is written on each change of state and never on an unchanged tick', async (t) => {
  const h = await harness(t, { node: false });
  seedNode(h.api, [KUBELET_READY]);
  const condition = nodeCondition(h);
  await h.relist('answer');
  let from = h.api.requests.lastSeq();
  assert.equal(await condition.tick(h.signal), 1_000);
  assert.deepEqual(calls(h, from), [`GET ${NODE_PATH} 200`, `PATCH ${STATUS_PATH} 200`, `POST ${EVENTS_PATH} 201`]);
  const patch = h.api.requests.filter({ method: 'PATCH', path: STATUS_PATH })[0];
  assert.equal(patch?.contentType, 'application/strategic-merge-patch+json');
  assert.deepEqual(patch?.parsed, {
    status: {
      conditions: [
        {
          type: CONDITION_TYPE,
          status: 'False',
          reason: 'RelistHealthy',
          message: 'relist succeeded within the threshold of 3m0s',
          lastHeartbeatTime: '2026-01-02T03:04:05Z',
          lastTransitionTime: '2026-01-02T03:04:05Z',
        },
      ],
    },
  });

  // Healthy for a minute: nothing is sent.
  from = h.api.requests.lastSeq();
  await ticks(h, condition, 60, 'answer');
  assert.deepEqual(calls(h, from), [], 'no request on an unchanged tick');

  // Every relist now fails; past the threshold the state changes once.
  await ticks(h, condition, THRESHOLD_MS / 1_000 + 30, 'fail');
  assert.deepEqual(calls(h, from), [`PATCH ${STATUS_PATH} 200`, `POST ${EVENTS_PATH} 201`]);
  const stale = ours(h);
  assert.equal(stale?.status, 'True');
  assert.equal(stale?.reason, 'RelistStale');
  // The last answered relist began at 60 s; the first check past the threshold is at 241 s.
  assert.equal(stale?.message, 'relist was last seen active 3m1s ago; threshold is 3m0s; last relist failed: unavailable: connection refused');
  assert.equal(stale?.lastTransitionTime, '2026-01-02T03:08:06Z');

  // It answers again: back to False, once.
  from = h.api.requests.lastSeq();
  await ticks(h, condition, 30, 'answer');
  assert.deepEqual(calls(h, from), [`PATCH ${STATUS_PATH} 200`, `POST ${EVENTS_PATH} 201`]);
  assert.equal(ours(h)?.status, 'False');
  assert.deepEqual(
    h.lines('Node condition changed').map((l) => [l['status'], l['reason'], l['previousReason']]),
    [['True', 'RelistStale', 'RelistHealthy'], ['False', 'RelistHealthy', 'RelistStale']],
  );
  assert.deepEqual(events(h).map((e) => [e.type, e.reason]), [['Normal', 'RelistHealthy'], ['Warning', 'RelistStale'], ['Normal', 'RelistHealthy']]);
});

test('nothing is written in the first seconds of a restart against a healthy runtime', async (t) => {
  const h = await harness(t, { node: false });
  const before: KubeNodeCondition = {
    type: CONDITION_TYPE,
    status: 'False',
    reason: 'RelistHealthy',
    message: 'relist succeeded within the threshold of 3m0s',
    lastHeartbeatTime: '2026-01-02T03:02:00Z',
    lastTransitionTime: '2026-01-01T12:00:00Z',
  };
  seedNode(h.api, [KUBELET_READY, before]);
  const condition = nodeCondition(h);
  // The agent restarted: its first relists have not answered yet.
  await ticks(h, condition, 3, 'none');
  assert.equal(h.runtimeHealth().state, 'NotYetObserved', 'precondition: no relist has answered yet');
  assert.deepEqual(h.requests(), [], 'nothing at all while the runtime is not yet observed');
  await h.relist('answer');
  await condition.tick(h.signal);
  await ticks(h, condition, 30, 'answer');
  assert.deepEqual(calls(h, 0), [`GET ${NODE_PATH} 200`], 'one read, and no write: the Node already shows the verdict');
  assert.deepEqual(ours(h), before, 'the condition is untouched, lastTransitionTime included');
  assert.deepEqual(events(h), []);
});

test('a runtime never observed past the threshold since start is True/RelistNeverSucceeded', async (t) => {
  const h = await harness(t);
  const condition = nodeCondition(h);
  await ticks(h, condition, THRESHOLD_MS / 1_000, 'fail');
  assert.deepEqual(h.requests(), [], 'nothing within the threshold of start');
  await ticks(h, condition, 1, 'fail');
  assert.equal(ours(h)?.status, 'True');
  assert.equal(ours(h)?.reason, 'RelistNeverSucceeded');
  assert.equal(ours(h)?.message, 'relist has yet to be successful: unavailable: connection refused; agent started 3m1s ago; threshold is 3m0s');
});

test('an agent that cannot observe writes nothing within the threshold of start, then Unknown/AgentCannotObserve (a Warning), kept while it lasts, never True', async (t) => {
  const h = await harness(t);
  const eacces = 'RuntimeService/ListPodSandbox: rpc error: code = Unavailable desc = connect EACCES /run/containerd/containerd.sock';
  const blind: RuntimeHealth = {
    state: 'CannotObserve',
    why: 'permission-denied',
    fault: { code: 'unavailable', message: eacces, cause: 'permission-denied' },
    lastSuccess: undefined,
    message: `the agent cannot observe the runtime (permission-denied): ${eacces}; no relist has succeeded since the agent started`,
  };
  const condition = nodeCondition(h, { runtimeHealth: () => blind });
  await ticks(h, condition, THRESHOLD_MS / 1_000, 'none');
  assert.deepEqual(h.requests(), [], 'nothing within the threshold of start');
  await ticks(h, condition, 1, 'none');
  assert.equal(ours(h)?.status, 'Unknown');
  assert.equal(ours(h)?.reason, 'AgentCannotObserve');
  assert.equal(ours(h)?.message, blind.message);
  assert.deepEqual(events(h).map((e) => [e.type, e.reason, e.note]), [['Warning', 'AgentCannotObserve', blind.message]]);
  const from = h.api.requests.lastSeq();
  await ticks(h, condition, 60, 'none');
  assert.deepEqual(calls(h, from), [], 'kept while the state lasts, with no write');
  assert.equal(h.api.requests.count({ method: 'PATCH', path: STATUS_PATH }), 1);
});

test("another writer's condition on the same Node survives", async (t) => {
  const h = await harness(t, { node: false });
  const other: KubeNodeCondition = { type: 'ContainerRuntimeUnhealthy', status: 'False', reason: 'ContainerRuntimeIsHealthy', message: 'npd', lastHeartbeatTime: '2026-01-02T03:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' };
  seedNode(h.api, [KUBELET_READY, other]);
  const condition = nodeCondition(h);
  await h.relist('answer');
  await condition.tick(h.signal);
  await ticks(h, condition, THRESHOLD_MS / 1_000 + 5, 'fail');
  assert.equal(h.api.requests.count({ method: 'PATCH', path: STATUS_PATH }), 2, 'precondition: two writes of ours');
  const conditions = node(h).status?.conditions ?? [];
  assert.deepEqual(conditions.find((c) => c.type === 'Ready'), KUBELET_READY);
  assert.deepEqual(conditions.find((c) => c.type === 'ContainerRuntimeUnhealthy'), other);
  assert.equal(conditions.length, 3);
});

test('a leftover Unknown is repaired at start, and the Event is recorded', async (t) => {
  const h = await harness(t, { node: false });
  const uid = seedNode(h.api, [
    KUBELET_READY,
    { type: CONDITION_TYPE, status: 'Unknown', reason: 'AgentLeaseStale', message: 'the agent lease stopped moving', lastHeartbeatTime: '2026-01-02T03:00:00Z', lastTransitionTime: '2026-01-02T03:00:00Z' },
  ]);
  const condition = nodeCondition(h);
  await h.relist('answer');
  await condition.tick(h.signal);
  assert.deepEqual(ours(h), {
    type: CONDITION_TYPE,
    status: 'False',
    reason: 'RelistHealthy',
    message: 'relist succeeded within the threshold of 3m0s',
    lastHeartbeatTime: '2026-01-02T03:04:05Z',
    lastTransitionTime: '2026-01-02T03:04:05Z',
  });
  assert.equal(h.lines('Node condition repaired')[0]?.['previousStatus'], 'Unknown');
  const [event, ...more] = events(h);
  assert.equal(more.length, 0);
  assert.ok(event !== undefined);
  assert.equal(event.metadata.namespace, 'default');
  assert.match(event.metadata.name ?? '', /^node-1\.[0-9a-f]+$/);
  assert.deepEqual(
    { ...event, metadata: undefined },
    {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: undefined,
      eventTime: '2026-01-02T03:04:05.000000Z',
      reportingController: 'nodepulse.io/agent',
      reportingInstance: 'nodepulse-agent-node-1',
      action: 'SetCondition',
      reason: 'RelistHealthy',
      type: 'Normal',
      note: 'relist succeeded within the threshold of 3m0s',
      regarding: { apiVersion: 'v1', kind: 'Node', name: NODE, uid },
    },
  );
});

test('lastHeartbeatTime is refreshed every 5 minutes without a change, and a condition overwritten meanwhile is repaired', async (t) => {
  const h = await harness(t, { node: false });
  seedNode(h.api, [KUBELET_READY]);
  const condition = nodeCondition(h);
  await h.relist('answer');
  await condition.tick(h.signal);
  const first = ours(h);
  const from = h.api.requests.lastSeq();
  await ticks(h, condition, 300, 'answer');
  assert.deepEqual(calls(h, from), [`GET ${NODE_PATH} 200`, `PATCH ${STATUS_PATH} 200`], 'one refresh at 5 min: a read and a heartbeat');
  assert.deepEqual(h.api.requests.since(from).at(-1)?.parsed, {
    status: { conditions: [{ type: CONDITION_TYPE, status: 'False', reason: 'RelistHealthy', lastHeartbeatTime: '2026-01-02T03:09:05Z' }] },
  });
  assert.deepEqual(ours(h), { ...first, lastHeartbeatTime: '2026-01-02T03:09:05Z' }, 'only lastHeartbeatTime moved');
  assert.equal(events(h).length, 1, 'a refresh is not a change: no Event');

  // Someone (the fleet controller) marks it Unknown; the next refresh repairs it.
  const current = node(h);
  h.api.store.put({
    ...(current as unknown as Record<string, never>),
    status: { conditions: [KUBELET_READY, { ...first, status: 'Unknown', reason: 'AgentLeaseStale', message: 'x' }] } as never,
  });
  const mid = h.api.requests.lastSeq();
  await ticks(h, condition, 300, 'answer');
  assert.deepEqual(calls(h, mid), [`GET ${NODE_PATH} 200`, `PATCH ${STATUS_PATH} 200`, `POST ${EVENTS_PATH} 201`]);
  assert.equal(ours(h)?.status, 'False');
  assert.equal(ours(h)?.lastTransitionTime, '2026-01-02T03:14:05Z');
  assert.equal(events(h).length, 2);
});

test('a failed write backs off and is written again; the state counts as written only once it was', async (t) => {
  const h = await harness(t);
  const condition = nodeCondition(h);
  h.api.faults.failNext(3, `PATCH ${STATUS_PATH}`, 500);
  await h.relist('answer');
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    const delay = await condition.tick(h.signal);
    delays.push(delay);
    await h.clock.advance(delay);
  }
  assert.deepEqual(delays, [200, 400, 800, 1_000]);
  assert.deepEqual(h.api.requests.filter({ method: 'PATCH' }).map((r) => r.status), [500, 500, 500, 200]);
  assert.equal(events(h).length, 1, 'one Event, for the write that landed');
  assert.equal(h.lines('Node condition write failing').length, 1);
  assert.equal(h.lines('Node condition write recovered')[0]?.['failures'], 3);
});
