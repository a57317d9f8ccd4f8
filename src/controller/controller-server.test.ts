// The controller's /healthz over real HTTP, with a real LeaderElector on a manual clock: it fails
// within one retry period of the election step the loop missed, and stays ok while the loop steps.
// A stall is made by moving the clock without firing its timers (ManualClock.jump), as a blocked
// scheduler would leave the loop, or by an API request that never answers.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { Registry } from 'prom-client';
import { ManualClock } from '../clock/manual-clock.ts';
import { electionHealthCheck, STALL_RETRY_PERIODS } from '../election/election-health.ts';
import { LeaderElector, RETRY_JITTER, type ElectionLeaseApi } from '../election/leader-elector.ts';
import { KubeApiError } from '../kube/kube-api-error.ts';
import type { Lease } from '../kube/kube-types.ts';
import { createControllerServer } from './controller-server.ts';

const RETRY_MS = 2_000;
const notFound = (): Error => new KubeApiError('not_found', 'GET leases: 404', { status: 404, reason: 'NotFound', what: 'GET leases' });

/** An API server holding one election lease; `hang` makes every later request wait until aborted. */
function leaseApi(): ElectionLeaseApi & { hang: boolean; calls: number } {
  let stored: Lease | undefined;
  let version = 0;
  const api = {
    hang: false,
    calls: 0,
    answer<T>(value: () => T, signal: AbortSignal | undefined): Promise<T> {
      api.calls++;
      if (!api.hang) return Promise.resolve().then(value);
      return new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
    },
    getLease: (_ns: string, _name: string, options?: { readonly signal?: AbortSignal | undefined }) =>
      api.answer(() => {
        if (stored === undefined) throw notFound();
        return stored;
      }, options?.signal),
    createLease: (_ns: string, lease: Lease, options?: { readonly signal?: AbortSignal | undefined }) =>
      api.answer(() => (stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++version) } }), options?.signal),
    replaceLease: (_ns: string, _name: string, lease: Lease, options?: { readonly signal?: AbortSignal | undefined }) =>
      api.answer(() => (stored = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++version) } }), options?.signal),
  };
  return api;
}

async function started(t: TestContext): Promise<{ clock: ManualClock; api: ReturnType<typeof leaseApi>; elector: LeaderElector; healthz: (verbose?: boolean) => Promise<[number, string]> }> {
  const clock = new ManualClock();
  const api = leaseApi();
  const elector = new LeaderElector({ api, clock, identity: 'a', namespace: 'ns', retryPeriodMs: RETRY_MS, random: () => 0 });
  const server: Server = createControllerServer({
    checks: () => [electionHealthCheck(elector.heartbeat.snapshot(), clock.monotonicMs(), elector.retryPeriodMs, elector.isLeader())],
    collect: () => undefined,
    registry: new Registry(),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    await elector.abort();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const port = (server.address() as AddressInfo).port;
  const healthz = async (verbose = false): Promise<[number, string]> => {
    const res = await fetch(`http://127.0.0.1:${port}/healthz${verbose ? '?verbose' : ''}`);
    return [res.status, await res.text()];
  };
  elector.start();
  await clock.advance(0);
  assert.equal(elector.isLeader(), true, 'precondition: the first step created the lease and leads');
  return { clock, api, elector, healthz };
}

test('controller /healthz: ok while the election loop steps, leading or not', async (t) => {
  const { clock, api, healthz } = await started(t);
  assert.deepEqual(await healthz(), [200, 'ok\n']);
  const before = api.calls;
  await clock.advance(10 * RETRY_MS);
  assert.ok(api.calls >= before + 10, `precondition: the loop kept stepping (${api.calls - before} requests)`);
  assert.deepEqual(await healthz(true), [200, '[+]leader-election ok\nhealthz check passed\n']);
});

test('controller /healthz: a loop whose next step never begins fails within one retry period of the step it missed', async (t) => {
  const { clock, healthz } = await started(t);
  await clock.advance(RETRY_MS); // one more step, which ends at once: the loop is idle from here
  const lastEnded = clock.monotonicMs();
  const missedAt = lastEnded + RETRY_MS * (1 + RETRY_JITTER); // the latest the next step may begin
  clock.jump(STALL_RETRY_PERIODS * RETRY_MS); // the timer of the next step does not fire
  assert.deepEqual(await healthz(), [200, 'ok\n'], 'two retry periods without a step is not yet a stall');
  clock.jump(1);
  const [status, body] = await healthz();
  assert.deepEqual([status, body], [503, '[-]leader-election failed: Stalled: last tick ended 4.001s ago; idle window is 4s\nhealthz check failed\n']);
  assert.ok(clock.monotonicMs() - missedAt <= RETRY_MS, 'failed within one retry period of the missed step');
});

test('controller /healthz: a step waiting on the API for more than two retry periods fails; the loop ending fails at once', async (t) => {
  const { clock, api, elector, healthz } = await started(t);
  api.hang = true;
  await clock.advance(RETRY_MS); // the next step begins, and waits on its GET
  await clock.advance(STALL_RETRY_PERIODS * RETRY_MS);
  assert.deepEqual(await healthz(), [200, 'ok\n'], 'a step in flight for two retry periods is not yet a stall');
  await clock.advance(1);
  assert.deepEqual(await healthz(), [503, '[-]leader-election failed: Stalled: tick in flight for 4.001s; stuck window is 4s\nhealthz check failed\n']);
  await elector.abort();
  assert.deepEqual(await healthz(), [503, '[-]leader-election failed: Dead: loop ended: stopped\nhealthz check failed\n']);
});
