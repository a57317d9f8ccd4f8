// The world every API fault test runs in: the API stand-in (in this process, holding the Node),
// the simulated runtime (in this process, on a unix socket in the test's temp dir) and the BUILT
// agent as a real process, at test-shortened timings. Plus the bound every API fault is held to
// and the readings the tests take from the stand-in's request record.
//
// The bound (issue 6, acceptance 2): once an API fault ends, the first renewal comes within the
// backoff step in force (or the Retry-After in force) + RECHECK. The step in force is the delay
// the lease loop chose after its last failed write: backoffMs(failures in a row), from the
// stand-in's record of the failed lease writes, or the server's Retry-After when it is longer,
// and never more than the renew interval.
//
// Timings (all valid together; see src/config/agent-config-schema.ts for the rules):
//   relist every 100 ms, threshold 2 s, deadline 1 s: the runtime judgement reacts in seconds;
//   lease duration 4 s → renew every 1 s (0.25 × duration, upstream's ratio);
//   API timeout 1 s: a hung request ends in a second.
// Assumption: the stand-in's clock and this process's clock are the same SystemClock readings
// (performance.now() of this process), so request times and fault times compare directly.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { RecordedRequest } from '../../src/stand-ins/api-server/request-log.ts';
import type { ApiServerOptions } from '../../src/stand-ins/api-server/api-server.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { startSimRuntime, type SimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { retryDelayMs } from '../../src/lease/backoff.ts';
import { RECHECK_MS } from '../../src/lease/node-lease.ts';
import { startAgentProcess, startStandIn, type AgentProcess, type StandIn } from '../support/agent-process.ts';

export { RECHECK_MS };
export const clock = new SystemClock();

/** Lease duration 4 s: renewals every 1 s. */
export const RENEW_INTERVAL_MS = 1_000;
export const API_TIMEOUT_MS = 1_000;
export const AGENT_TIMINGS: readonly string[] = [
  '--relist-period', '100ms',
  '--relist-threshold', '2s',
  '--relist-deadline', '1s',
  '--lease-duration', '4s',
  '--api-timeout', '1s',
  '--status-period', '1s',
];

export interface ApiWorld {
  readonly standIn: StandIn;
  readonly sim: SimRuntime;
  readonly agent: AgentProcess;
  /** `/apis/coordination.k8s.io/v1/namespaces/nodepulse/leases/<node>`. */
  readonly leasePath: string;
}

export interface ApiWorldOptions {
  readonly nodeName: string;
  readonly api?: ApiServerOptions;
  readonly token?: string;
  readonly tokenFile?: string;
  /** More agent flags (after the timings, so they win). */
  readonly args?: readonly string[];
  /** Called after the stand-in is up and before the agent starts. */
  readonly beforeAgent?: (standIn: StandIn) => Promise<void> | void;
  /** Wait for the first renewal before returning (default true). */
  readonly waitForRenewal?: boolean;
}

/** How long the first renewal may take after start: relist, Node read, create. */
export const FIRST_RENEWAL_TIMEOUT_MS = 10_000;

export async function startApiWorld(t: TestContext, options: ApiWorldOptions): Promise<ApiWorld> {
  const standIn = await startStandIn(t, {
    nodeName: options.nodeName,
    ...(options.api === undefined ? {} : { api: options.api }),
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.tokenFile === undefined ? {} : { tokenFile: options.tokenFile }),
  });
  const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 3, containersPerPod: 2 });
  t.after(() => sim.close());
  await options.beforeAgent?.(standIn);
  const agent = await startAgentProcess(t, {
    args: [
      '--node-name', options.nodeName,
      '--cri-endpoint', sim.endpoint,
      '--kubeconfig', standIn.kubeconfig,
      ...AGENT_TIMINGS,
      ...(options.args ?? []),
    ],
  });
  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${standIn.leaseNamespace}/leases/${options.nodeName}`;
  const world = { standIn, sim, agent, leasePath };
  if (options.waitForRenewal !== false) await firstRenewalAfter(world, 0, FIRST_RENEWAL_TIMEOUT_MS);
  return world;
}

/** Requests to the Lease (its item path and its collection), oldest first. */
export function leaseRequests(world: ApiWorld): RecordedRequest[] {
  const list = world.leasePath.slice(0, world.leasePath.lastIndexOf('/'));
  return world.standIn.api.requests.all().filter((r) => r.path === world.leasePath || r.path === list);
}

/** Lease writes (PATCH, POST, PUT) that succeeded, oldest first. */
export function leaseRenewals(world: ApiWorld): RecordedRequest[] {
  return leaseRequests(world).filter((r) => r.method !== 'GET' && r.status !== undefined && r.status >= 200 && r.status < 300);
}

/** Lease writes that failed (any status ≥ 300, or no answer at all), in [fromMs, toMs]. */
export function failedLeaseWrites(world: ApiWorld, fromMs: number, toMs = Number.POSITIVE_INFINITY): RecordedRequest[] {
  return leaseRequests(world).filter(
    (r) => r.method !== 'GET' && r.atMs >= fromMs && r.atMs <= toMs && !(r.status !== undefined && r.status >= 200 && r.status < 300),
  );
}

/** Resolves with the first successful lease write that arrived after `afterMs`, polling up to timeoutMs. */
export async function firstRenewalAfter(world: ApiWorld, afterMs: number, timeoutMs: number): Promise<RecordedRequest> {
  const started = clock.monotonicMs();
  for (;;) {
    const hit = leaseRenewals(world).find((r) => r.atMs > afterMs);
    if (hit !== undefined) return hit;
    if (!world.agent.running) assert.fail(`the agent exited while waiting for a renewal:\n${world.agent.stderrTail()}`);
    if (clock.monotonicMs() - started > timeoutMs) {
      const recent = leaseRequests(world).slice(-10).map((r) => `${r.method} ${r.status ?? 'no answer'} +${(r.atMs - afterMs).toFixed(0)}ms`);
      assert.fail(`no lease renewal within ${timeoutMs} ms after the mark; last lease requests: ${recent.join(', ')}`);
    }
    await clock.sleep(50);
  }
}

/**
 * The delay in force after the last failed write of a run of `failures` failed writes, with a
 * Retry-After of retryAfterMs on the last one (if any), at a renew interval of renewIntervalMs:
 * what the lease loop waits before it asks again (src/lease/backoff.ts, the function the agent
 * uses).
 */
export function stepInForce(failures: number, retryAfterMs?: number, renewIntervalMs = RENEW_INTERVAL_MS): number {
  return retryDelayMs(failures, retryAfterMs, renewIntervalMs);
}

/** Sleeps on real time (bounded waits for a real process; timing semantics are unit-tested on a ManualClock). */
export function sleep(ms: number): Promise<void> {
  return clock.sleep(ms);
}

/** Asserts the agent is up, under the same pid, and still answering /livez with 200. */
export async function assertAgentAlive(world: ApiWorld, pid: number): Promise<void> {
  assert.equal(world.agent.running, true, `the agent must not exit:\n${world.agent.stderrTail()}`);
  assert.equal(world.agent.pid, pid, 'the agent must not have been restarted');
  const livez = await world.agent.get('/livez');
  assert.equal(livez.status, 200, `/livez: ${livez.body}`);
}

/** The log lines with msg === message, after log mark `after`. */
export function logsWith(world: ApiWorld, message: string, after = 0): Array<Readonly<Record<string, unknown>>> {
  return world.agent.keptLogs().filter((k) => k.seq > after && k.line['msg'] === message).map((k) => k.line);
}

/** A one-line record of a measurement, as a test diagnostic, so the run's numbers can be read off the test output. */
export function report(t: TestContext, what: string, numbers: Readonly<Record<string, number | string>>): void {
  const parts = Object.entries(numbers).map(([k, v]) => `${k}=${typeof v === 'number' ? Math.round(v) : v}`);
  t.diagnostic(`measured ${what}: ${parts.join(' ')}`);
}
