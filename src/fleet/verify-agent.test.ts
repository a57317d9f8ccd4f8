// verify-agent.ts on a manual clock, with a strict scripted API and /readyz: each step's table
// row, the one deadline over all of them, and the exact calls made.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import type { CallOptions } from '../kube/kube-client.ts';
import { KubeApiError } from '../kube/kube-api-error.ts';
import type { Lease } from '../kube/kube-types.ts';
import type { AgentPod } from './agent-pod.ts';
import { verifyAgent, type ReadyzGet, type VerifyApi, type VerifyResult } from './verify-agent.ts';

const SELECTOR = 'app.kubernetes.io/name=nodepulse,app.kubernetes.io/component=agent';
const OPTIONS = { agentNamespace: 'ops', agentSelector: SELECTOR, leaseNamespace: 'leases', timeoutMs: 5_000, pollMs: 1_000 };

function agentPod(name: string, node: string, ready = true): AgentPod {
  return {
    metadata: { name },
    spec: { nodeName: node, containers: [{ ports: [{ name: 'metrics', containerPort: 9356 }] }] },
    status: { phase: 'Running', podIP: '10.1.0.7', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function lease(renewTime: string): Lease {
  return { metadata: { name: 'node-a', namespace: 'leases' }, spec: { holderIdentity: 'node-a', renewTime } };
}

type Answer<T> = T | Error;

/** A strict double: each call takes the next scripted answer, and records when it was made; a call with none left fails the test. */
class Script {
  readonly calls: string[] = [];
  readonly #pods: Answer<AgentPod[]>[];
  readonly #leases: Answer<Lease>[];
  readonly #readyz: Answer<{ status: number; body: string }>[];
  readonly #clock: ManualClock;

  constructor(clock: ManualClock, s: { pods?: Answer<AgentPod[]>[]; leases?: Answer<Lease>[]; readyz?: Answer<{ status: number; body: string }>[] }) {
    this.#clock = clock;
    this.#pods = [...(s.pods ?? [])];
    this.#leases = [...(s.leases ?? [])];
    this.#readyz = [...(s.readyz ?? [])];
  }

  #take<T>(what: string, queue: Answer<T>[]): Promise<T> {
    this.calls.push(`${this.#clock.monotonicMs()}ms ${what}`);
    const next = queue.shift();
    assert.ok(next !== undefined, `unexpected call: ${what} (no answer scripted)`);
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }

  get api(): VerifyApi {
    return {
      listPods: (ns: string, selector: string, o: CallOptions) => {
        assert.ok((o.timeoutMs ?? 0) > 0 && (o.timeoutMs ?? 0) <= 10_000, 'every call is bounded');
        return this.#take(`list pods ${ns} ${selector}`, this.#pods);
      },
      getLease: (ns: string, name: string) => this.#take(`get lease ${ns}/${name}`, this.#leases),
    };
  }

  get readyz(): ReadyzGet {
    return (hostPort) => this.#take(`GET http://${hostPort}/readyz`, this.#readyz);
  }

  done(): void {
    assert.deepEqual([this.#pods.length, this.#leases.length, this.#readyz.length], [0, 0, 0], 'every scripted answer was taken');
  }
}

async function run(clock: ManualClock, script: Script, signal = new AbortController().signal): Promise<VerifyResult> {
  const result = verifyAgent({ api: script.api, readyz: script.readyz, clock }, OPTIONS, signal);
  let settled = false;
  void result.finally(() => { settled = true; });
  for (let i = 0; i < 20 && !settled; i++) await clock.advance(500);
  assert.ok(settled, 'precondition: the check ends within 10 s of the manual clock');
  return result;
}

test('verify passes: a Ready agent pod, /readyz 200, and a renewTime that moves on the third read', async () => {
  const clock = new ManualClock();
  const script = new Script(clock, {
    pods: [[agentPod('np-b', 'node-b', false), agentPod('np-a', 'node-a')]],
    readyz: [{ status: 200, body: 'ok\n' }],
    leases: [lease('2026-01-02T03:04:00.000000Z'), lease('2026-01-02T03:04:00.000000Z'), lease('2026-01-02T03:04:10.000000Z')],
  });
  const result = await run(clock, script);
  assert.deepEqual(result, {
    outcome: 'passed',
    lines: [
      'agent pod np-a on node node-a at 10.1.0.7:9356 (Ready; 2 usable of the listed agent pods)',
      '/readyz of pod np-a (10.1.0.7:9356) answered 200: ok',
      'lease leases/node-a renewed: renewTime 2026-01-02T03:04:00.000000Z, then 2026-01-02T03:04:10.000000Z 2s later',
    ],
  });
  assert.deepEqual(script.calls, [
    `0ms list pods ops ${SELECTOR}`,
    '0ms GET http://10.1.0.7:9356/readyz',
    '0ms get lease leases/node-a',
    '1000ms get lease leases/node-a',
    '2000ms get lease leases/node-a',
  ]);
  script.done();
});

test('verify fails when /readyz never answers 200 within the deadline: tried once a second, the last answer given', async () => {
  const clock = new ManualClock();
  const notReady = { status: 503, body: 'not ready: relister Unknown\n' };
  const script = new Script(clock, { pods: [[agentPod('np-a', 'node-a')]], readyz: [notReady, notReady, notReady, notReady, notReady] });
  const result = await run(clock, script);
  assert.deepEqual(result, {
    outcome: 'failed',
    lines: ['agent pod np-a on node node-a at 10.1.0.7:9356 (Ready; 1 usable of the listed agent pods)'],
    reason: '/readyz of pod np-a (10.1.0.7:9356) answered 503: not ready: relister Unknown',
  });
  assert.deepEqual(script.calls.filter((c) => c.includes('readyz')).map((c) => c.split(' ')[0]), ['0ms', '1000ms', '2000ms', '3000ms', '4000ms']);
  script.done();
});

test('verify fails when the lease stands still: renewTime stayed the same from the first read to the deadline', async () => {
  const clock = new ManualClock();
  const still = lease('2026-01-02T03:00:00.000000Z');
  const script = new Script(clock, { pods: [[agentPod('np-a', 'node-a')]], readyz: [{ status: 200, body: 'ok' }], leases: [still, still, still, still, still] });
  const result = await run(clock, script);
  assert.equal(result.outcome, 'failed');
  assert.equal(result.reason, 'lease leases/node-a was not renewed: renewTime stayed 2026-01-02T03:00:00.000000Z for 4s');
  script.done();
});

test('verify waits for a lease that does not exist yet, then for it to move', async () => {
  const clock = new ManualClock();
  const notFound = new KubeApiError('not_found', 'leases "node-a" not found', { what: 'GET leases leases/node-a', status: 404, reason: 'NotFound', retryAfterMs: undefined });
  const script = new Script(clock, {
    pods: [[agentPod('np-a', 'node-a')]],
    readyz: [{ status: 200, body: 'ok' }],
    leases: [notFound, lease('2026-01-02T03:04:01.000000Z'), lease('2026-01-02T03:04:11.000000Z')],
  });
  const result = await run(clock, script);
  assert.equal(result.outcome, 'passed');
  assert.equal(result.lines[2], 'lease leases/node-a renewed: renewTime 2026-01-02T03:04:01.000000Z, then 2026-01-02T03:04:11.000000Z 1s later');
  script.done();
});

test('verify fails when no agent pod can be checked, saying why for each', async () => {
  const clock = new ManualClock();
  const pending: AgentPod = { metadata: { name: 'np-a' }, spec: { nodeName: 'node-a' }, status: { phase: 'Pending' } };
  const script = new Script(clock, { pods: [[], [], [pending], [pending], [pending]] });
  const result = await run(clock, script);
  assert.deepEqual(result, { outcome: 'failed', lines: [], reason: `no agent pod can be checked (np-a: phase Pending) in namespace ops (selector ${SELECTOR})` });
  script.done();
});

test('verify is api-failed when the pods cannot be listed until the deadline', async () => {
  const clock = new ManualClock();
  const down = new Error('connect ECONNREFUSED 10.96.0.1:443');
  const script = new Script(clock, { pods: [down, down, down, down, down] });
  const result = await run(clock, script);
  assert.deepEqual(result, { outcome: 'api-failed', lines: [], reason: 'could not list the agent pods: connect ECONNREFUSED 10.96.0.1:443' });
  script.done();
});

test('verify is api-failed when the lease cannot be read (not a 404), and failed when a 404 was the last answer', async () => {
  const clock = new ManualClock();
  const forbidden = new KubeApiError('forbidden', 'leases "node-a" is forbidden', { what: 'GET leases leases/node-a', status: 403, reason: 'Forbidden', retryAfterMs: undefined });
  const script = new Script(clock, { pods: [[agentPod('np-a', 'node-a')]], readyz: [{ status: 200, body: 'ok' }], leases: [forbidden, forbidden, forbidden, forbidden, forbidden] });
  const result = await run(clock, script);
  assert.equal(result.outcome, 'api-failed');
  assert.match(result.reason ?? '', /^could not read lease leases\/node-a: /);
  script.done();

  const later = new ManualClock();
  const notFound = new KubeApiError('not_found', 'leases "node-a" not found', { what: 'GET leases leases/node-a', status: 404, reason: 'NotFound', retryAfterMs: undefined });
  const missing = new Script(later, { pods: [[agentPod('np-a', 'node-a')]], readyz: [{ status: 200, body: 'ok' }], leases: [forbidden, forbidden, forbidden, forbidden, notFound] });
  const last = await run(later, missing);
  assert.deepEqual([last.outcome, last.reason], ['failed', 'lease leases/node-a does not exist']);
  missing.done();
});

test('an interrupted check rejects with the signal\'s reason', async () => {
  const clock = new ManualClock();
  const abort = new AbortController();
  const script = new Script(clock, { pods: [[]] });
  const result = verifyAgent({ api: script.api, readyz: script.readyz, clock }, OPTIONS, abort.signal);
  await clock.advance(10);
  abort.abort(new Error('received SIGTERM'));
  await assert.rejects(result, /received SIGTERM/);
});
