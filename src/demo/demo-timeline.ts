// The demo's live timeline: it samples what an operator would look at (the agent's /status
// view, the Lease and the Node condition in the API) four times a second, and prints one line
// per change, stamped with the seconds since the demo began. At the end it says which steps
// of the story it saw, so the demo (and its test) can tell a complete run from a broken one.
import type { Agent } from '../agent/agent.ts';
import type { ApiServerHandle } from '../stand-ins/api-server/api-server.ts';
import { findResource } from '../stand-ins/api-server/resources.ts';
import type { Clock } from '../clock/clock.ts';

const SAMPLE_MS = 250;

/** The steps of the story, in the order they should happen. */
export const DEMO_STEPS = [
  'runtime Healthy',
  'lease renewed',
  'condition False/RelistHealthy',
  'runtime Unhealthy',
  'lease withheld',
  'condition True/RelistStale',
  'runtime Healthy again',
  'lease renewed again',
  'condition False/RelistHealthy again',
] as const;

export class DemoTimeline {
  readonly #out: { write(chunk: string): unknown };
  readonly #clock: Clock;
  readonly #startMs: number;
  readonly #seen = new Set<string>();
  #lastRuntime: string | undefined;
  #lastLease: string | undefined;
  #lastCondition: string | undefined;
  #renewals = 0;

  constructor(out: { write(chunk: string): unknown }, clock: Clock) {
    this.#out = out;
    this.#clock = clock;
    this.#startMs = clock.monotonicMs();
  }

  say(text: string): void {
    const s = ((this.#clock.monotonicMs() - this.#startMs) / 1000).toFixed(1).padStart(5);
    this.#out.write(`[${s}s] ${text}\n`);
  }

  /** Samples until stop() is called or the signal aborts. */
  watch(agent: Agent, api: ApiServerHandle, node: string, signal: AbortSignal): { stop(): Promise<void> } {
    const controller = new AbortController();
    const stopAll = (): void => controller.abort();
    signal.addEventListener('abort', stopAll, { once: true });
    const done = (async () => {
      while (!controller.signal.aborted) {
        this.#sample(agent, api, node);
        try {
          await this.#clock.sleep(SAMPLE_MS, controller.signal);
        } catch {
          break;
        }
      }
    })();
    return {
      stop: async () => {
        stopAll();
        await done;
        signal.removeEventListener('abort', stopAll);
      },
    };
  }

  #sample(agent: Agent, api: ApiServerHandle, node: string): void {
    const status = agent.status();
    const runtime = status.runtime.state;
    if (runtime !== this.#lastRuntime) {
      this.say(`runtime judgement: ${runtime} — ${status.runtime.message}`);
      if (runtime === 'Healthy') this.#step(this.#seen.has('runtime Unhealthy') ? 'runtime Healthy again' : 'runtime Healthy');
      if (runtime === 'Unhealthy') this.#step('runtime Unhealthy');
      this.#lastRuntime = runtime;
    }

    const lease = api.store.entry(findResource('coordination.k8s.io', 'v1', 'leases')!, status.lease.namespace, status.lease.name)?.obj;
    const renewTime = (lease?.['spec'] as { renewTime?: string } | undefined)?.renewTime;
    if (renewTime !== undefined && renewTime !== this.#lastLease) {
      this.#renewals++;
      if (this.#lastLease === undefined || this.#seen.has('lease withheld') && !this.#seen.has('lease renewed again')) {
        this.say(`lease ${status.lease.namespace}/${status.lease.name} renewed: renewTime ${renewTime}`);
        this.#step(this.#seen.has('lease withheld') ? 'lease renewed again' : 'lease renewed');
      }
      this.#lastLease = renewTime;
    }
    if (!status.lease.renewing && this.#seen.has('runtime Unhealthy') && !this.#seen.has('lease withheld')) {
      this.say(`lease withheld: renewTime stays at ${this.#lastLease ?? '(none)'}; readers will see it go stale`);
      this.#step('lease withheld');
    }

    const nodeObj = api.store.entry(findResource('', 'v1', 'nodes')!, '', node)?.obj;
    const conditions = (nodeObj?.['status'] as { conditions?: Array<Record<string, string>> } | undefined)?.conditions ?? [];
    const c = conditions.find((x) => x['type'] === 'RuntimeRelistUnhealthy');
    const state = c === undefined ? undefined : `${c['status']}/${c['reason']}`;
    if (state !== undefined && state !== this.#lastCondition) {
      this.say(`Node condition RuntimeRelistUnhealthy=${state}: ${c?.['message'] ?? ''}`);
      if (state === 'True/RelistStale') this.#step('condition True/RelistStale');
      if (state === 'False/RelistHealthy') {
        this.#step(this.#seen.has('condition True/RelistStale') ? 'condition False/RelistHealthy again' : 'condition False/RelistHealthy');
      }
      this.#lastCondition = state;
    }
  }

  #step(name: (typeof DEMO_STEPS)[number]): void {
    this.#seen.add(name);
  }

  /** True when every step of the story was seen. */
  complete(): boolean {
    return DEMO_STEPS.every((s) => this.#seen.has(s));
  }

  summary(): void {
    const missing = DEMO_STEPS.filter((s) => !this.#seen.has(s));
    this.say(`lease renewals seen: ${this.#renewals}`);
    this.say(missing.length === 0 ? 'demo complete: every step of the scenario was seen' : `demo incomplete: not seen: ${missing.join(', ')}`);
  }
}
