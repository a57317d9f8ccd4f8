// `nodepulse cleanup`: what an uninstall runs once the agents are gone. It removes the condition
// RuntimeRelistUnhealthy from every Node's status and the taint nodepulse.io/agent-silent from
// every Node's spec, and nothing else: a stale `True` left behind would keep remediation acting
// on a node after nodepulse is gone. Then it deletes the Leases nodepulse wrote (the agents' and
// the controller's election Lease), which no installer deletes: the agents create them, so Helm
// and kubectl never knew them.
//
//   1. Wait until no pod matches --agent-selector in --agent-namespace (listed every 2 s): an
//      agent still running, or still in its grace period, would write its condition back, and a
//      controller its condition and taint. The pod cleanup itself runs in is not counted
//      (POD_NAME and POD_NAMESPACE, as a pod sets them), so a selector that matches it cannot
//      make it wait for itself.
//   2. List every Node and send, for each that carries something of ours, the patches of
//      node-leftovers.ts (the condition by its type with `$patch: delete`; the taint by a JSON
//      patch whose `test` guards its position). Four Nodes at a time; each Node has at most
//      five attempts, a conflict or a refused test reading the Node again first, a throttled or
//      failed request backing off (200 ms doubling to 5 s).
//   3. List every Node again to verify; what still carries ours gets a second pass, and a third
//      listing decides.
//   4. List the Leases labelled nodepulse.io/role in (node-lease, leader-election) in the agent
//      namespace (the controller's election Lease) and in --lease-namespace (the agents' Leases;
//      the same namespace unless an install moved them), delete each (one already gone is fine),
//      and list again to verify. Selected by label, never by namespace alone, so no other Lease
//      there is touched.
//
// --timeout bounds the whole run (default 5m), waiting included: a hook that runs it must give
// its Job at least that long. --dry-run lists the pods it would wait for and what it would
// remove from which Node, and changes nothing.
//
// The kubeconfig is read as kubectl reads it (--kubeconfig, KUBECONFIG, ~/.kube/config, else the
// pod's service account; --context), as fleet reads it (kube/auth/pick-kube-auth.ts).
//
// Exit codes (0, 2 and 3 as fleet's):
// | code | meaning                                                                              |
// |------|--------------------------------------------------------------------------------------|
// | 0    | verified: no Node carries the condition or the taint, and no Lease of ours is left   |
// |      | (a dry run: listed, nothing done)                                                    |
// | 1    | not done: pods still matched when --timeout ran out (named), or Nodes still carry     |
// |      | ours, or Leases of ours remain, after the bounded attempts (named)                    |
// | 2    | a flag or the kubeconfig is wrong (one line per problem, `key: value must be rule`)  |
// | 3    | could not ask the API: unreachable, timed out, credentials refused, an error answer  |
//
// Permissions: list pods in the agent namespace; list and get nodes; patch nodes/status; patch
// nodes; list and delete leases in the agent and the lease namespaces (docs/install.md, "Uninstalling").
import { z } from 'zod/v3';
import { EXIT_API_FAILED, type CommandIo } from './command-io.ts';
import type { Clock } from '../clock/clock.ts';
import { flagsHelp, flagsOrExit, GRAMMAR_HELP, type CommandDefinition } from '../config/command-flags.ts';
import { formatDuration } from '../clock/duration.ts';
import { booleanFlag, valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { dnsLabel, duration, fail, goBool, text } from '../config/value-schemas.ts';
import { SILENT_TAINT_KEY } from '../controller/node-marker.ts';
import { ELECTION_LABELS } from '../election/leader-elector.ts';
import { LEASE_LABELS } from '../lease/lease-writer.ts';
import { CONDITION_TYPE } from '../fleet/fleet-view.ts';
import { parseLabelSelector, SelectorError } from '../fleet/label-selector.ts';
import { READER_FLAG_SPECS, readerClientOrExit, readerFlagShape } from './reader-flags.ts';
import { leasesPath, nodesPath, podsPath } from '../kube/api-paths.ts';
import { isConflict, isInvalid, isNotFound, isTooManyRequests, isUnavailable, KubeApiError } from '../kube/kube-api-error.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import type { Node, ObjectMeta } from '../kube/kube-types.ts';
import { kubeListWatch, listAll } from '../kube/list-watch.ts';
import { exponentialBackoff } from '../loop/retry-policy.ts';
import { CONDITION_DELETE_PATCH, describeLeftovers, hasLeftovers, nodeLeftovers, taintRemovalPatch, type NodeLeftovers } from '../cleanup/node-leftovers.ts';

export const EXIT_CLEAN = 0;
export const EXIT_NOT_DONE = 1;

/** How often the agent pods are listed while cleanup waits for them to go. */
export const POD_POLL_MS = 2_000;
/** The default --timeout: the whole run. */
export const DEFAULT_TIMEOUT_MS = 5 * 60_000;
/** Nodes patched at once. */
export const CONCURRENCY = 4;
/** Attempts per Node in one pass, and per listing. */
export const MAX_ATTEMPTS = 5;
/** Listings of every Node: the first, one after each removal pass; the last only verifies. */
export const MAX_LISTINGS = 3;
/** Names printed in one line at most; the rest are counted. */
const MAX_NAMES_SHOWN = 20;
const RETRY = exponentialBackoff({ initialMs: 200, maxMs: 5_000, jitter: 0.2 });
/** The Leases nodepulse writes: every agent's node Lease, and the controller's election Lease. */
export const OUR_LEASES_SELECTOR = `nodepulse.io/role in (${LEASE_LABELS['nodepulse.io/role']},${ELECTION_LABELS['nodepulse.io/role']})`;

const SPECS: readonly FlagSpec[] = [
  valueFlag('--agent-namespace', 'NAMESPACE', undefined, 'namespace of the agent pods (required)'),
  valueFlag('--agent-selector', 'SELECTOR', undefined, 'label selector of the pods to wait for: the agents, and the controller if it runs (required)'),
  valueFlag('--lease-namespace', 'NAMESPACE', undefined, "namespace of the agents' Leases, deleted last with the controller's (default: the agent namespace)"),
  valueFlag('--timeout', 'DURATION', formatDuration(DEFAULT_TIMEOUT_MS), 'the longest the whole run may take, waiting included'),
  booleanFlag('--dry-run', 'list the pods it would wait for and what it would remove, and change nothing'),
  ...READER_FLAG_SPECS.filter((s) => s.flag === '--kubeconfig' || s.flag === '--context'),
];

const USAGE = `Usage: nodepulse cleanup --agent-namespace NAMESPACE --agent-selector SELECTOR [flags]

Waits until no pod matches the selector in the namespace, then removes the Node condition
${CONDITION_TYPE} and the taint ${SILENT_TAINT_KEY} from every Node, and nothing else,
and lists the Nodes again to verify. Last, it deletes nodepulse's Leases (${OUR_LEASES_SELECTOR})
in the agent and the lease namespaces, and lists them again to verify.

Flags:
${flagsHelp(SPECS)}
${GRAMMAR_HELP}

Exit codes:
  0  no Node carries the condition or the taint, and no Lease of ours is left (verified by fresh listings)
  1  not done: pods still matched when the timeout ran out, or Nodes still carry them, or Leases remain (named)
  2  a flag or the kubeconfig is wrong
  3  could not ask the API (unreachable, timed out, credentials refused, an error answer)
`;

interface CleanupFlags {
  readonly agentNamespace: string;
  readonly agentSelector: string;
  readonly leaseNamespace: string;
  readonly timeoutMs: number;
  readonly dryRun: boolean;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
}

const selector = text('set (--agent-selector)').transform((written, ctx): string => {
  if (written.trim() === '') return fail(ctx, 'a label selector that is not empty (an empty one matches every pod of the namespace)');
  try {
    parseLabelSelector(written);
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    return fail(ctx, err.rule);
  }
  return written;
});

const CLEANUP_COMMAND: CommandDefinition<CleanupFlags> = {
  name: 'nodepulse cleanup',
  usage: USAGE,
  specs: SPECS,
  schema: z
    .object({
      agentNamespace: text('set (--agent-namespace)').pipe(dnsLabel),
      agentSelector: selector,
      leaseNamespace: dnsLabel.optional(),
      timeout: duration(),
      dryRun: goBool,
      kubeconfig: readerFlagShape.kubeconfig,
      context: readerFlagShape.context,
    })
    .transform((f): CleanupFlags => ({
      agentNamespace: f.agentNamespace,
      agentSelector: f.agentSelector,
      leaseNamespace: f.leaseNamespace ?? f.agentNamespace,
      timeoutMs: f.timeout.ms,
      dryRun: f.dryRun,
      kubeconfig: f.kubeconfig,
      context: f.context,
    })),
};

interface Pod {
  readonly metadata: ObjectMeta & { readonly deletionTimestamp?: string };
}

interface Lease {
  readonly metadata: ObjectMeta;
}

/** Why the run stopped short: the deadline or a signal. */
class Stopped extends Error {}

export async function runCleanup(argv: string[], io: CommandIo, signal?: AbortSignal): Promise<number> {
  const parsed = flagsOrExit(argv, io, CLEANUP_COMMAND);
  if ('exit' in parsed) return parsed.exit;
  const flags = parsed.flags;
  const made = await readerClientOrExit('nodepulse cleanup', flags, io);
  if ('exit' in made) return made.exit;
  const client = made.client;
  const run = new AbortController();
  const timer = io.clock.after(flags.timeoutMs, () => run.abort(new Stopped(`--timeout ${formatDuration(flags.timeoutMs)} ran out`)));
  const onAbort = (): void => run.abort(new Stopped(`interrupted (${String(signal?.reason)})`));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const cleanup = new Cleanup(client, io, flags, run.signal);
    return flags.dryRun ? await cleanup.dryRun() : await cleanup.run();
  } finally {
    timer.cancel();
    signal?.removeEventListener('abort', onAbort);
    client.close();
  }
}

class Cleanup {
  readonly #client: KubeClient;
  readonly #io: CommandIo;
  readonly #clock: Clock;
  readonly #flags: CleanupFlags;
  readonly #signal: AbortSignal;
  /** The pods last seen matching while waiting, for the line that says why the run stopped. */
  #waitingFor = '';

  constructor(client: KubeClient, io: CommandIo, flags: CleanupFlags, signal: AbortSignal) {
    this.#client = client;
    this.#io = io;
    this.#clock = io.clock;
    this.#flags = flags;
    this.#signal = signal;
  }

  async dryRun(): Promise<number> {
    try {
      const pods = await this.#listPods();
      this.#say(
        pods.length === 0
          ? `no pod matches ${this.#matching()}`
          : `${pods.length} pods match ${this.#matching()}; a run would wait for them to go: ${names(pods)}`,
      );
      const nodes = await this.#listNodes();
      const left = nodes.map(nodeLeftovers).filter(hasLeftovers);
      for (const l of left) this.#io.stdout.write(`${l.node}: would remove ${describeLeftovers(l)}\n`);
      const leases = await this.#listLeases();
      for (const l of leases) this.#io.stdout.write(`lease ${l.metadata.namespace ?? ''}/${l.metadata.name ?? ''}: would delete\n`);
      this.#say(`dry run: ${left.length} of ${nodes.length} Nodes carry ${this.#what()}, and ${leases.length} Leases of ours are in ${this.#leaseNamespaces()}; nothing was changed`);
      return EXIT_CLEAN;
    } catch (err) {
      return this.#failed(err, []);
    }
  }

  async run(): Promise<number> {
    let left: NodeLeftovers[] = [];
    try {
      await this.#waitForPods();
      for (let listing = 1; ; listing++) {
        const nodes = await this.#listNodes();
        left = nodes.map(nodeLeftovers).filter(hasLeftovers);
        if (left.length === 0) {
          this.#say(`no Node carries ${this.#what()} (${nodes.length} Nodes listed)`);
          return await this.#removeLeases();
        }
        if (listing === MAX_LISTINGS) break;
        await this.#removeAll(left);
      }
      this.#io.stderr.write(`nodepulse cleanup: ${left.length} Nodes still carry ${this.#what()}: ${names(left.map((l) => ({ metadata: { name: l.node } })))}\n`);
      return EXIT_NOT_DONE;
    } catch (err) {
      return this.#failed(err, left);
    }
  }

  /** Deletes the Leases of ours, then lists them again: EXIT_CLEAN when none is left. */
  async #removeLeases(): Promise<number> {
    const leases = await this.#listLeases();
    for (const lease of leases) await this.#deleteLease(lease.metadata.namespace ?? '', lease.metadata.name ?? '');
    const left = await this.#listLeases();
    if (left.length > 0) {
      this.#io.stderr.write(`nodepulse cleanup: ${left.length} Leases of ours remain in ${this.#leaseNamespaces()}: ${names(left)}\n`);
      return EXIT_NOT_DONE;
    }
    this.#say(`done: no Node carries ${this.#what()}, and no Lease of ours is left in ${this.#leaseNamespaces()} (${leases.length} deleted)`);
    return EXIT_CLEAN;
  }

  /** One Lease, at most MAX_ATTEMPTS times; one already gone counts as deleted. A failure is reported and left to the verifying listing. */
  async #deleteLease(namespace: string, name: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#client.deleteLease(namespace, name, { signal: this.#signal });
        this.#io.stdout.write(`lease ${namespace}/${name}: deleted\n`);
        return;
      } catch (err) {
        this.#stopIfStopped();
        if (isNotFound(err)) return;
        if (!(isTooManyRequests(err) || isUnavailable(err)) || attempt >= MAX_ATTEMPTS) {
          this.#io.stderr.write(`nodepulse cleanup: lease ${namespace}/${name}: ${(err as Error).message}\n`);
          return;
        }
        const retryAfter = err instanceof KubeApiError ? err.retryAfterMs : undefined;
        await this.#sleep(Math.max(RETRY(attempt, Math.random), retryAfter ?? 0));
      }
    }
  }

  /** Our Leases in the agent namespace and the lease namespace, each namespace listed once. */
  async #listLeases(): Promise<Lease[]> {
    const found: Lease[] = [];
    for (const namespace of new Set([this.#flags.agentNamespace, this.#flags.leaseNamespace])) {
      const source = kubeListWatch<Lease>({
        client: this.#client,
        path: leasesPath(namespace),
        labelSelector: OUR_LEASES_SELECTOR,
      });
      const leases = await this.#retrying(() => listAll(source, this.#signal));
      // A listing's items may omit the namespace the path named; the deletes need it.
      found.push(...leases.map((l) => ({ metadata: { ...l.metadata, namespace } })));
    }
    return found;
  }

  #leaseNamespaces(): string {
    const { agentNamespace, leaseNamespace } = this.#flags;
    return agentNamespace === leaseNamespace ? `namespace ${agentNamespace}` : `namespaces ${agentNamespace} and ${leaseNamespace}`;
  }

  async #waitForPods(): Promise<void> {
    let shown = '';
    for (;;) {
      const pods = await this.#listPods();
      this.#waitingFor = names(pods);
      if (pods.length === 0) {
        this.#say(`no pod matches ${this.#matching()}`);
        return;
      }
      const now = this.#waitingFor;
      if (now !== shown) {
        this.#say(`waiting for ${pods.length} pods matching ${this.#matching()} to go: ${now}`);
        shown = now;
      }
      await this.#sleep(POD_POLL_MS);
    }
  }

  async #removeAll(left: readonly NodeLeftovers[]): Promise<void> {
    const queue = [...left];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await this.#removeFrom(next);
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  }

  /** Removes what one Node carries; a failure after the bounded attempts is reported and left for the next listing. */
  async #removeFrom(first: NodeLeftovers): Promise<void> {
    let l = first;
    for (let attempt = 1; ; attempt++) {
      try {
        if (l.condition !== undefined) {
          await this.#client.patchNodeStatus(l.node, CONDITION_DELETE_PATCH, { signal: this.#signal });
        }
        if (l.taints.length > 0) {
          await this.#client.jsonPatchNode(l.node, taintRemovalPatch(l), { signal: this.#signal });
        }
        this.#io.stdout.write(`${l.node}: removed ${describeLeftovers(l)}\n`);
        return;
      } catch (err) {
        this.#stopIfStopped();
        if (isNotFound(err)) return; // the Node is gone, and what it carried with it
        const retryable = isConflict(err) || isInvalid(err) || isTooManyRequests(err) || isUnavailable(err);
        if (!retryable || attempt >= MAX_ATTEMPTS) {
          this.#io.stderr.write(`nodepulse cleanup: ${l.node}: ${(err as Error).message}\n`);
          return;
        }
        const retryAfter = err instanceof KubeApiError ? err.retryAfterMs : undefined;
        await this.#sleep(Math.max(RETRY(attempt, Math.random), retryAfter ?? 0));
        if (isConflict(err) || isInvalid(err)) {
          // The list moved under the taint patch's test: read the Node again and patch what it holds now.
          try {
            l = nodeLeftovers(await this.#client.getNode(l.node, { signal: this.#signal }));
          } catch (readErr) {
            this.#stopIfStopped();
            if (isNotFound(readErr)) return;
          }
          if (!hasLeftovers(l)) return;
        }
      }
    }
  }

  async #listPods(): Promise<Pod[]> {
    const source = kubeListWatch<Pod>({
      client: this.#client,
      path: podsPath(this.#flags.agentNamespace),
      labelSelector: this.#flags.agentSelector,
    });
    const self = this.#io.env['POD_NAME'];
    const selfNamespace = this.#io.env['POD_NAMESPACE'];
    const pods = await this.#retrying(() => listAll(source, this.#signal));
    return pods.filter((p) => !(self !== undefined && p.metadata.name === self && (selfNamespace === undefined || selfNamespace === this.#flags.agentNamespace)));
  }

  #listNodes(): Promise<Node[]> {
    const source = kubeListWatch<Node>({ client: this.#client, path: nodesPath() });
    return this.#retrying(() => listAll(source, this.#signal));
  }

  /** A listing, retried on a throttled, failed or unanswered request, at most MAX_ATTEMPTS times. */
  async #retrying<T>(list: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await list();
      } catch (err) {
        this.#stopIfStopped();
        const retryable = isTooManyRequests(err) || isUnavailable(err);
        if (!retryable || attempt >= MAX_ATTEMPTS) throw err;
        const retryAfter = err instanceof KubeApiError ? err.retryAfterMs : undefined;
        await this.#sleep(Math.max(RETRY(attempt, Math.random), retryAfter ?? 0));
      }
    }
  }

  async #sleep(ms: number): Promise<void> {
    try {
      await this.#clock.sleep(ms, this.#signal);
    } catch {
      this.#stopIfStopped();
    }
  }

  #stopIfStopped(): void {
    if (this.#signal.aborted) throw this.#signal.reason instanceof Stopped ? this.#signal.reason : new Stopped(String(this.#signal.reason));
  }

  /** The exit for a run that ended in an error: 1 when it was stopped (naming what is left), 3 when the API could not be asked. */
  #failed(err: unknown, left: readonly NodeLeftovers[]): number {
    if (err instanceof Stopped || this.#signal.aborted) {
      const why = err instanceof Stopped ? err.message : String(this.#signal.reason);
      const what = this.#waitingFor !== ''
        ? `; pods still matched ${this.#matching()}, so nothing was removed: ${this.#waitingFor}`
        : left.length > 0
          ? `; ${left.length} Nodes still carried ${this.#what()} when it stopped: ${names(left.map((l) => ({ metadata: { name: l.node } })))}`
          : '';
      this.#io.stderr.write(`nodepulse cleanup: not done: ${why}${what}\n`);
      return EXIT_NOT_DONE;
    }
    this.#io.stderr.write(`nodepulse cleanup: ${(err as Error).message}\n`);
    return EXIT_API_FAILED;
  }

  #say(line: string): void {
    this.#io.stdout.write(`nodepulse cleanup: ${line}\n`);
  }

  #matching(): string {
    return `${JSON.stringify(this.#flags.agentSelector)} in namespace ${this.#flags.agentNamespace}`;
  }

  #what(): string {
    return `the condition ${CONDITION_TYPE} or the taint ${SILENT_TAINT_KEY}`;
  }
}

/** `a, b, c` for at most MAX_NAMES_SHOWN objects, then `and N more`. */
function names(objects: ReadonlyArray<{ readonly metadata: { readonly name?: string | undefined } }>): string {
  const shown = objects.slice(0, MAX_NAMES_SHOWN).map((o) => o.metadata.name ?? '');
  const more = objects.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}
