// A fleet of agents renewing their Leases, as many agents send them: each simulated agent is the
// agent's own write path, a LeaseWriter (src/lease/lease-writer.ts) over a KubeClient of its own
// with the lean in-cluster credentials (src/kube/auth/lean-auth.ts: its own bound token, its own
// keep-alive connection), so each renewal is the agent's exact request (a merge PATCH of spec.renewTime,
// holderIdentity and leaseDurationSeconds, no GET), on the agent's schedule: every lease
// duration × 0.25 = 10 s plus 0–4 % jitter (node-lease.ts), the first one at a random moment in
// the first interval after the agent starts, as a fleet's agents start at unrelated times. The
// first renewal of each agent reads its Node once, as the agent's first renewal does.
//
// Beside it, optionally, the kubelets' periodic Node status report (kubelet-node.ts): each Node's
// conditions' lastHeartbeatTime patched every 5 minutes, spread evenly, which every watcher of
// Nodes receives in a real cluster.
//
// What it does not do: the agent's gate, relists and condition writes; a failed renewal is
// counted and the next one comes at the next interval (the agent would retry sooner, with
// backoff), so failures show in the counts instead of turning into extra load.
import type { Clock, Timer } from '../../src/clock/clock.ts';
import { KubeApiError } from '../../src/kube/kube-api-error.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { leanAuth } from '../../src/kube/auth/lean-auth.ts';
import { LeaseWriter } from '../../src/lease/lease-writer.ts';
import { DEFAULT_LEASE_DURATION_SECONDS, RENEW_FRACTION, RENEW_JITTER } from '../../src/lease/node-lease.ts';
import { jittered } from '../../src/loop/run-loop.ts';
import type { AdminApi } from './admin-api.ts';
import { statusHeartbeatPatch } from './kubelet-node.ts';

export const RENEW_INTERVAL_MS = DEFAULT_LEASE_DURATION_SECONDS * 1000 * RENEW_FRACTION;
/** The kubelet's nodeStatusReportFrequency. */
export const NODE_STATUS_REPORT_MS = 5 * 60_000;

export interface FleetCounts {
  /** Agents started, and those that have renewed at least once. */
  readonly agents: number;
  readonly renewedOnce: number;
  readonly renewals: number;
  readonly failures: Readonly<Record<string, number>>;
  /** Renewal latency, ms: sum and max since the last reset, for a mean over a window. */
  readonly latencySumMs: number;
  readonly latencyMaxMs: number;
  readonly statusReports: number;
  readonly statusFailures: number;
}

export class AgentFleet {
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #timers = new Set<Timer>();
  readonly #clients: KubeClient[] = [];
  /** Stops the timers; each agent has a controller of its own for its requests. */
  readonly #abort = new AbortController();
  readonly #agentAborts: AbortController[] = [];
  readonly #renewed = new Set<string>();
  #renewals = 0;
  #failures: Record<string, number> = {};
  #latencySumMs = 0;
  #latencyMaxMs = 0;
  #statusReports = 0;
  #statusFailures = 0;

  constructor(clock: Clock, random: () => number = Math.random) {
    this.#clock = clock;
    this.#random = random;
  }

  /**
   * Starts one agent per token, renewing as the header says. Agents start `startsPerSecond` at a
   * time, as a DaemonSet rollout brings them up over minutes: thousands of first connections in
   * one renew interval would measure a stampede no fleet makes.
   */
  startAgents(server: string, caPem: string, tokens: readonly { node: string; token: string }[], namespace: string, startsPerSecond: number): void {
    tokens.forEach(({ node, token }, i) => {
      const client = new KubeClient({ auth: leanAuth({ server, ca: caPem, token, source: `agent ${node}`, clock: this.#clock }), clock: this.#clock });
      this.#clients.push(client);
      const writer = new LeaseWriter({ client, clock: this.#clock, namespace, nodeName: node, leaseDurationSeconds: DEFAULT_LEASE_DURATION_SECONDS });
      // One signal per agent, as each agent process has its own: thousands of listeners on one
      // shared signal would cost this process O(n) per request (EventTarget checks for duplicates).
      const abort = new AbortController();
      this.#agentAborts.push(abort);
      const renew = async (): Promise<void> => {
        const started = this.#clock.monotonicMs();
        try {
          await writer.renew({ signal: abort.signal, check: () => abort.signal.throwIfAborted() });
          this.#renewals++;
          this.#renewed.add(node);
          const ms = this.#clock.monotonicMs() - started;
          this.#latencySumMs += ms;
          this.#latencyMaxMs = Math.max(this.#latencyMaxMs, ms);
        } catch (err) {
          if (this.#abort.signal.aborted) return;
          const code = err instanceof KubeApiError ? `${err.code}${err.status === 0 ? '' : ` ${err.status}`}` : 'other';
          this.#failures[code] = (this.#failures[code] ?? 0) + 1;
        }
        this.#schedule(jittered(RENEW_INTERVAL_MS, RENEW_JITTER, this.#random), renew);
      };
      this.#schedule((i / startsPerSecond) * 1000 + this.#random() * RENEW_INTERVAL_MS, renew);
    });
  }

  /** Patches each node's status every NODE_STATUS_REPORT_MS, spread evenly, through `api`. */
  startStatusReports(api: AdminApi, nodes: readonly string[]): void {
    nodes.forEach((node, i) => {
      const report = async (): Promise<void> => {
        try {
          const a = await api.request('PATCH', `/api/v1/nodes/${node}/status`, statusHeartbeatPatch(Math.floor(this.#clock.wallMicros() / 1000)), 'application/strategic-merge-patch+json');
          if (a.status === 200) this.#statusReports++;
          else this.#statusFailures++;
        } catch {
          if (this.#abort.signal.aborted) return;
          this.#statusFailures++;
        }
        this.#schedule(NODE_STATUS_REPORT_MS, report);
      };
      this.#schedule((i / nodes.length) * NODE_STATUS_REPORT_MS, report);
    });
  }

  counts(): FleetCounts {
    return {
      agents: this.#clients.length,
      renewedOnce: this.#renewed.size,
      renewals: this.#renewals,
      failures: { ...this.#failures },
      latencySumMs: this.#latencySumMs,
      latencyMaxMs: this.#latencyMaxMs,
      statusReports: this.#statusReports,
      statusFailures: this.#statusFailures,
    };
  }

  /** Zeroes the latency max (the sums and counts keep growing; a window takes differences). */
  resetMax(): void {
    this.#latencyMaxMs = 0;
  }

  stop(): void {
    this.#abort.abort(new Error('fleet stopped'));
    for (const a of this.#agentAborts) a.abort(new Error('fleet stopped'));
    for (const t of this.#timers) t.cancel();
    this.#timers.clear();
    for (const c of this.#clients) c.close();
  }

  #schedule(ms: number, fn: () => Promise<void>): void {
    if (this.#abort.signal.aborted) return;
    const timer = this.#clock.after(ms, () => {
      this.#timers.delete(timer);
      void fn();
    });
    this.#timers.add(timer);
  }
}
