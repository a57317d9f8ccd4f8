// The elector's own I/O around the rules (election-step.ts), on a manual clock against a strict
// scripted Lease API: the clock readings it hands the rules, and acting on their verdicts at
// once. Elections between electors over HTTP are in test/fleet/leader-election.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { KubeApiError } from '../kube/kube-api-error.ts';
import type { Lease } from '../kube/kube-types.ts';
import { LeaderElector, type ElectionLeaseApi } from './leader-elector.ts';

interface Scripted {
  readonly call: 'get' | 'create' | 'replace';
  /** The answer: a lease, or an error to throw. Gets the lease sent, for a write. */
  readonly answer: (sent: Lease | undefined) => Lease | Error;
  /** How long the request takes on the candidate's clock (moved without firing its timers). */
  readonly takesMs?: number;
}

/** A strict fake: every call must be the next one scripted, or the test fails. */
function scriptedApi(clock: ManualClock, script: Scripted[]): ElectionLeaseApi & { readonly left: () => number } {
  const answer = (call: Scripted['call'], sent?: Lease): Promise<Lease> => {
    const next = script.shift();
    if (next?.call !== call) return Promise.reject(new Error(`unexpected ${call}: the script expected ${next?.call ?? 'nothing'}`));
    clock.jump(next.takesMs ?? 0);
    const result = next.answer(sent);
    return result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
  };
  return {
    getLease: () => answer('get'),
    createLease: (_ns, lease) => answer('create', lease),
    replaceLease: (_ns, _name, lease) => answer('replace', lease),
    left: () => script.length,
  };
}

const notFound = (): Error => new KubeApiError('not_found', 'GET leases: 404', { status: 404, reason: 'NotFound', what: 'GET leases' });
const stored = (sent: Lease | undefined, resourceVersion: string): Lease => {
  if (sent === undefined) throw new Error('precondition: a write sends a lease');
  return { ...sent, metadata: { ...sent.metadata, resourceVersion } };
};

function elector(api: ElectionLeaseApi, clock: ManualClock, reasons: string[] = []): LeaderElector {
  return new LeaderElector({ api, clock, identity: 'a', namespace: 'ns', random: () => 0, onStoppedLeading: (_term, reason) => reasons.push(reason) });
}

test('elector: belief counts from when the create was sent, not from when its answer arrived', async () => {
  const clock = new ManualClock();
  const api = scriptedApi(clock, [
    { call: 'get', answer: notFound },
    { call: 'create', answer: (sent) => stored(sent, '1'), takesMs: 3_000 },
  ]);
  const a = elector(api, clock);
  assert.equal(await a.tick(new AbortController().signal), 2_000, 'renews every retryPeriod');
  assert.equal(clock.monotonicMs(), 3_000, 'precondition: the answer came 3 000 ms after the create was sent');
  assert.equal(api.left(), 0);
  clock.jump(6_999);
  assert.equal(a.isLeader(), true, 'renewDeadline − 1 ms after the create was sent');
  clock.jump(1);
  assert.equal(a.isLeader(), false, 'renewDeadline after the create was sent, though only 7 000 ms after its answer');
});

test('elector: a leader starved past its renew deadline ends its term on its next step, before its overdue timer runs, and reads before any write', async () => {
  const clock = new ManualClock();
  const reasons: string[] = [];
  const api = scriptedApi(clock, [
    { call: 'get', answer: notFound },
    { call: 'create', answer: (sent) => stored(sent, '1') },
    { call: 'get', answer: () => ({ metadata: { name: 'nodepulse-controller', resourceVersion: '2' }, spec: { holderIdentity: 'b', leaseDurationSeconds: 15 } }) },
  ]);
  const a = elector(api, clock, reasons);
  await a.tick(new AbortController().signal);
  const term = a.term;
  assert.ok(term !== undefined, 'precondition: a leads after its create');
  const pending = clock.pendingTimers();
  clock.jump(20_000); // the event loop was blocked: no timer has run
  assert.equal(clock.pendingTimers(), pending, 'precondition: the belief timer has not run');
  const delay = await a.tick(new AbortController().signal);
  assert.deepEqual(reasons, ['renew deadline passed']);
  assert.equal(term.signal.aborted, true, "the term's signal aborted during the step");
  assert.equal(delay, 2_000, 'it waits a retryPeriod for the lease b holds');
  assert.equal(api.left(), 0, 'it read the lease, and wrote nothing');
});

test('elector: refuses timings that break the rules the controller checks, with the same lines', () => {
  const clock = new ManualClock();
  const build = (leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): string => {
    try {
      new LeaderElector({ api: scriptedApi(clock, []), clock, identity: 'a', namespace: 'ns', leaseDurationMs, renewDeadlineMs, retryPeriodMs });
      return 'built';
    } catch (err) {
      return (err as Error).message;
    }
  };
  assert.equal(build(15_000, 10_000, 2_000), 'built', 'precondition: the default timings hold');
  assert.equal(build(15_000, 10_000, 8_334), 'leaderElectRetryPeriod: 8.334s must be shorter than leaderElectRenewDeadline (10s) with 20% jitter added');
  assert.equal(build(15_000, 15_000, 0), [
    'leaderElectRenewDeadline: 15s must be shorter than leaderElectLeaseDuration (15s)',
    'leaderElectRetryPeriod: 0s must be more than 0',
  ].join('\n'));
  assert.equal(build(15_500, 10_000, 2_000), 'leaderElectLeaseDuration: 15.5s must be a positive whole number of seconds (leaseDurationSeconds is an integer)');
});
