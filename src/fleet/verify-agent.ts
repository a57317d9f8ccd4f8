// The check `nodepulse verify` makes, and the Helm chart's `helm test` pod with it: one agent of
// the install answers /readyz and renews its node's Lease. A check from outside the agent, over
// the same paths its users take: the pod network to its port, the API server to its Lease.
//
// | step     | passes when                                                  | on failure              |
// |----------|--------------------------------------------------------------|-------------------------|
// | pick     | the agent pods listed by the selector hold a usable one      | listed again each poll  |
// |          | (agent-pod.ts)                                               |                         |
// | /readyz  | GET http://<pod IP>:<port metrics>/readyz answers 200        | asked again each poll   |
// | renewal  | the node's Lease's renewTime differs from the first one read | read again each poll    |
//
// - One deadline (--timeout) covers the three steps, and each call is bounded by the time left:
//   the whole check ends by then, whatever the API server or the pod do. Steps run in order, so
//   a renewal is looked for only once the agent said it is ready.
// - Outcomes: `passed`; `failed` (a step did not pass in time: its last reason is given);
//   `api-failed` (it did not pass because the API server could not be asked: a listing or a
//   Lease read failed otherwise than with 404).
// - /readyz means "started and serving" (it never depends on the runtime's health), so a sick
//   runtime does not fail the first steps; the renewal step does fail then, since the agent
//   withholds its Lease: this check says the install works end to end on that node.
// - Never throws for a failed step. An aborted signal rejects (the command was interrupted).
import type { Clock } from '../clock/clock.ts';
import { formatDuration } from '../clock/duration.ts';
import { isAborted, isNotFound } from '../kube/kube-api-error.ts';
import type { CallOptions } from '../kube/kube-client.ts';
import type { Lease } from '../kube/kube-types.ts';
import { hostPort, pickAgentPod, renewTimeOf, type AgentPod, type AgentTarget } from './agent-pod.ts';

/** The two API calls the check makes. */
export interface VerifyApi {
  listPods(namespace: string, labelSelector: string, options: CallOptions): Promise<readonly AgentPod[]>;
  getLease(namespace: string, name: string, options: CallOptions): Promise<Lease>;
}

/** GET /readyz at host:port; rejects when it cannot be asked within timeoutMs. */
export type ReadyzGet = (hostPort: string, options: { readonly signal: AbortSignal; readonly timeoutMs: number }) => Promise<{ readonly status: number; readonly body: string }>;

export interface VerifyOptions {
  readonly agentNamespace: string;
  readonly agentSelector: string;
  readonly leaseNamespace: string;
  readonly timeoutMs: number;
  /** How long to wait between two tries of a step. Default 1 s. */
  readonly pollMs?: number;
}

export type VerifyOutcome = 'passed' | 'failed' | 'api-failed';

export interface VerifyResult {
  readonly outcome: VerifyOutcome;
  /** What passed, one line per step, for people. */
  readonly lines: readonly string[];
  /** Why it did not pass: the failing step's last reason. */
  readonly reason?: string;
}

/** The default pause between two tries of a step. */
export const DEFAULT_POLL_MS = 1_000;
/** No single call waits longer than this, however much of the deadline is left. */
export const MAX_CALL_MS = 10_000;

interface Miss {
  readonly reason: string;
  readonly api: boolean;
}

function message(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}

function oneLine(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

export async function verifyAgent(
  deps: { readonly api: VerifyApi; readonly readyz: ReadyzGet; readonly clock: Clock },
  options: VerifyOptions,
  signal: AbortSignal,
): Promise<VerifyResult> {
  const { api, readyz, clock } = deps;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const deadline = clock.monotonicMs() + options.timeoutMs;
  const left = (): number => deadline - clock.monotonicMs();
  const call = (): CallOptions & { signal: AbortSignal; timeoutMs: number } => ({ signal, timeoutMs: Math.max(1, Math.min(MAX_CALL_MS, left())) });
  /** Waits for the next try; false once the deadline has come. */
  const nextTry = async (): Promise<boolean> => {
    const wait = Math.min(pollMs, left());
    if (wait <= 0) return false;
    await clock.sleep(wait, signal);
    return left() > 0;
  };
  const lines: string[] = [];
  const fail = (miss: Miss): VerifyResult => ({ outcome: miss.api ? 'api-failed' : 'failed', lines, reason: miss.reason });
  const rethrowAbort = (err: unknown): void => {
    if (isAborted(err) || signal.aborted) throw err;
  };

  // Pick an agent pod.
  let target: AgentTarget | undefined;
  let miss: Miss = { reason: 'no try was made', api: false };
  while (target === undefined) {
    try {
      const choice = pickAgentPod(await api.listPods(options.agentNamespace, options.agentSelector, call()));
      if ('picked' in choice) {
        target = choice.picked;
        lines.push(`agent pod ${target.pod} on node ${target.node} at ${hostPort(target)} (${target.ready ? 'Ready' : 'not Ready'}; ${choice.usable} usable of the listed agent pods)`);
        break;
      }
      miss = { reason: `${choice.none} in namespace ${options.agentNamespace} (selector ${options.agentSelector})`, api: false };
    } catch (err) {
      rethrowAbort(err);
      miss = { reason: `could not list the agent pods: ${message(err)}`, api: true };
    }
    if (!(await nextTry())) return fail(miss);
  }

  // Its /readyz.
  const where = `/readyz of pod ${target.pod} (${hostPort(target)})`;
  for (;;) {
    try {
      const answer = await readyz(hostPort(target), call());
      if (answer.status === 200) {
        lines.push(`${where} answered 200: ${oneLine(answer.body)}`);
        break;
      }
      miss = { reason: `${where} answered ${answer.status}: ${oneLine(answer.body)}`, api: false };
    } catch (err) {
      rethrowAbort(err);
      miss = { reason: `${where} could not be asked: ${message(err)}`, api: false };
    }
    if (!(await nextTry())) return fail(miss);
  }

  // Its node's Lease moves.
  const lease = `${options.leaseNamespace}/${target.node}`;
  let first: { renewTime: string; atMs: number } | undefined;
  for (;;) {
    try {
      const renewTime = renewTimeOf(await api.getLease(options.leaseNamespace, target.node, call())) ?? '';
      if (first === undefined) {
        first = { renewTime, atMs: clock.monotonicMs() };
      } else if (renewTime !== first.renewTime) {
        const after = formatDuration(Math.round(clock.monotonicMs() - first.atMs));
        lines.push(`lease ${lease} renewed: renewTime ${first.renewTime || '(none)'}, then ${renewTime} ${after} later`);
        return { outcome: 'passed', lines };
      }
      const since = formatDuration(Math.round(clock.monotonicMs() - first.atMs));
      miss = { reason: `lease ${lease} was not renewed: renewTime stayed ${first.renewTime || '(none)'} for ${since}`, api: false };
    } catch (err) {
      rethrowAbort(err);
      miss = isNotFound(err) ? { reason: `lease ${lease} does not exist`, api: false } : { reason: `could not read lease ${lease}: ${message(err)}`, api: true };
    }
    if (!(await nextTry())) return fail(miss);
  }
}
