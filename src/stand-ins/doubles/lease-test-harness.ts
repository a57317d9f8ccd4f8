// Test support for the lease and condition tests: a real Relister over a ScriptedRuntimeClient,
// a real Heartbeat judged by liveness(), the KubeClient talking over real HTTP to the API
// stand-in, all on one ManualClock (the stand-in records each request's arrival on it too).
//
// Not used by the agent. It lives with the other doubles, outside the product (src/README.md).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startApiServer, type ApiServerHandle, type ApiServerOptions } from '../api-server/api-server.ts';
import type { RecordedRequest } from '../api-server/request-log.ts';
import type { Clock } from '../../clock/clock.ts';
import { flushMicrotasks, ManualClock } from '../../clock/manual-clock.ts';
import { ScriptedRuntimeClient } from './scripted-runtime-client.ts';
import { KubeClient } from '../../kube/kube-client.ts';
import { leanAuth } from '../../kube/auth/lean-auth.ts';
import type { Lease } from '../../kube/kube-types.ts';
import { Heartbeat } from '../../liveness/heartbeat.ts';
import { liveness, type Liveness } from '../../liveness/liveness.ts';
import { createLogger, memorySink } from '../../log/logger.ts';
import type { Logger } from '../../log/logger.ts';
import { runLoop } from '../../loop/run-loop.ts';
import { Relister } from '../../relist/relister.ts';
import type { RuntimeHealth } from '../../relist/relist-ledger.ts';
import type { NodeLeaseOptions } from '../../lease/node-lease.ts';

export const NODE = 'node-1';
export const NAMESPACE = 'nodepulse';
export const THRESHOLD_MS = 180_000;
export const DEADLINE_MS = 60_000;
export const WINDOWS = { idleWindowMs: 30_000, stuckWindowMs: DEADLINE_MS + 30_000 };
/** The reader grace of docs/design.md (upstream node-monitor-grace-period). */
export const READER_GRACE_MS = 50_000;
export const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${NODE}`;
export const LEASES_PATH = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`;
export const NODE_PATH = `/api/v1/nodes/${NODE}`;

export interface Harness {
  readonly clock: ManualClock;
  readonly api: ApiServerHandle;
  readonly client: KubeClient;
  readonly runtime: ScriptedRuntimeClient;
  readonly relister: Relister;
  readonly relisterBeat: Heartbeat;
  readonly logger: Logger;
  readonly logs: Array<Record<string, unknown>>;
  /** A signal that aborts when the test ends. */
  readonly signal: AbortSignal;
  relisterLiveness(): Liveness;
  runtimeHealth(): RuntimeHealth;
  /** One relist by hand, with its heartbeat: begin, then answer or fail it, then end. */
  relist(how: 'answer' | 'fail'): Promise<void>;
  /** Begins a relist by hand and leaves it in flight; resolve it later with the returned functions. */
  beginRelist(): { answer(): Promise<void>; fail(): Promise<void> };
  /** Starts the relister on the real scheduler; each relist waits in runtime.pending. */
  startRelisterLoop(): { stop(): Promise<void> };
  /** The Lease as stored, or undefined. */
  storedLease(): Lease | undefined;
  /** Requests to this node's Lease and to the leases collection. */
  leaseRequests(): RecordedRequest[];
  /** Every request but the test's own seeding (the test seeds through the store, not HTTP). */
  requests(): RecordedRequest[];
  /** Log lines with this msg. */
  lines(msg: string): Array<Record<string, unknown>>;
}

export interface HarnessOptions {
  /** Seed the Node (default true). */
  readonly node?: boolean;
  readonly api?: Omit<ApiServerOptions, 'clock'>;
  /** Authenticate with a token file holding this token (the agent's in-cluster way: re-read on the clock). */
  readonly tokenFile?: { readonly token: string; readonly dir?: string };
}

export async function harness(t: TestContext, options: HarnessOptions = {}): Promise<Harness> {
  const clock = new ManualClock();
  const api = await startApiServer({ clock, ...options.api });
  t.after(() => api.close());
  const controller = new AbortController();
  t.after(() => controller.abort());
  let tokenFile: string | undefined;
  if (options.tokenFile !== undefined) {
    const dir = options.tokenFile.dir ?? mkdtempSync(join(tmpdir(), 'nodepulse-lease-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'token'), `${options.tokenFile.token}\n`);
    tokenFile = join(dir, 'token');
  }
  const client = new KubeClient({ auth: leanAuth({ server: api.url, tokenFile, clock }), clock });
  t.after(() => client.close());
  if (options.node !== false) seedNode(api);
  const runtime = new ScriptedRuntimeClient();
  const relister = new Relister({ client: runtime, clock, deadlineMs: DEADLINE_MS, thresholdMs: THRESHOLD_MS });
  const relisterBeat = new Heartbeat('relister');
  const sink = memorySink();
  const logger = createLogger({ level: 'debug', destination: sink, time: () => '' });

  const beginRelist = (): { answer(): Promise<void>; fail(): Promise<void> } => {
    relisterBeat.begin(clock.monotonicMs());
    const done = relister.tick(controller.signal);
    const pending = runtime.next();
    const finish = async (): Promise<void> => {
      await done;
      relisterBeat.end(clock.monotonicMs());
    };
    return {
      answer: async () => {
        pending.answer();
        await finish();
      },
      fail: async () => {
        pending.fail('unavailable', 'connection refused');
        await finish();
      },
    };
  };

  return {
    clock,
    api,
    client,
    runtime,
    relister,
    relisterBeat,
    logger,
    logs: sink.lines,
    signal: controller.signal,
    relisterLiveness: () => liveness(relisterBeat.snapshot(), clock.monotonicMs(), WINDOWS),
    runtimeHealth: () => relister.ledger.health(clock.monotonicMs()),
    relist: async (how) => {
      const r = beginRelist();
      await (how === 'answer' ? r.answer() : r.fail());
    },
    beginRelist,
    startRelisterLoop: () => {
      const stop = new AbortController();
      const onEnd = (): void => stop.abort();
      controller.signal.addEventListener('abort', onEnd, { once: true });
      const done = runLoop(async (signal) => { await relister.tick(signal); }, { clock, heartbeat: relisterBeat, periodMs: 1_000, signal: stop.signal });
      return {
        stop: async () => {
          stop.abort();
          await done;
          await flushMicrotasks();
        },
      };
    },
    storedLease: () => api.store.get('leases', NAMESPACE, NODE) as Lease | undefined,
    leaseRequests: () => api.requests.filter({ path: new RegExp(`^${LEASES_PATH}(/${NODE})?$`) }),
    requests: () => api.requests.all(),
    lines: (msg) => sink.lines.filter((l) => l['msg'] === msg),
  };
}

/** The options every lease test gives a NodeLease on this harness (no jitter: random is 0). */
export function nodeLeaseOptions(h: Harness): NodeLeaseOptions {
  return {
    client: h.client,
    clock: h.clock,
    nodeName: NODE,
    namespace: NAMESPACE,
    random: () => 0,
    relisterLiveness: () => h.relisterLiveness(),
    runtimeHealth: () => h.runtimeHealth(),
    logger: h.logger,
  };
}

export function seedNode(api: ApiServerHandle, conditions: readonly object[] = []): string {
  const stored = api.store.put({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: NODE, labels: { 'kubernetes.io/os': 'linux' } },
    status: { conditions: conditions as never },
  });
  const uid = (stored['metadata'] as { uid?: string }).uid;
  if (uid === undefined) throw new Error('precondition: the stand-in gives a seeded Node a uid');
  return uid;
}

/**
 * A reader of the Lease with the rule of docs/design.md ("A reader's view of a lease"): fresh while
 * its renewTime has advanced within the grace, timed on the reader's own clock. The fleet
 * projection is built elsewhere; this is the rule in six lines, for the tests' "stale to a reader".
 */
export class LeaseReader {
  #renewTime: string | undefined;
  #advancedAtMs: number | undefined;
  readonly #graceMs: number;

  constructor(graceMs = READER_GRACE_MS) {
    this.#graceMs = graceMs;
  }

  observe(lease: Lease | undefined, nowMs: number): 'fresh' | 'stale' | 'missing' {
    const renewTime = lease?.spec?.renewTime;
    if (renewTime === undefined) return 'missing';
    if (this.#renewTime === undefined || renewTime > this.#renewTime) {
      this.#renewTime = renewTime;
      this.#advancedAtMs = nowMs;
    }
    return nowMs - (this.#advancedAtMs ?? nowMs) <= this.#graceMs ? 'fresh' : 'stale';
  }
}

/**
 * Waits, bounded, on `real` (the test's system clock) until cond holds: for HTTP in flight while
 * the manual clock stands still.
 */
export async function until(real: Clock, cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  for (let waited = 0; !cond(); waited += 5) {
    if (waited >= timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await real.sleep(5);
  }
}
