// `nodepulse fleet` (and `kubectl nodepulse fleet`): which nodes' agent leases are fresh.
//
// | flags                | how it judges                                                  |
// |----------------------|----------------------------------------------------------------|
// | none                 | one listing, by wall-clock age of renewTime, and says so       |
// | --observe D (D ≥ grace) | watches for D, then judges on this reader's clock           |
// | --watch              | watches until interrupted, reprinting when a verdict changes   |
//
// The kubeconfig is read as kubectl reads it (load-kubeconfig.ts: --kubeconfig, KUBECONFIG,
// ~/.kube/config, in-cluster; --context), and every request authenticates through client-node's
// KubeConfig (exec plugins, client certificates, token files).
//
// Exit codes, so that a script can tell a verdict from a failure to get one:
// | code | meaning                                                                             |
// |------|-------------------------------------------------------------------------------------|
// | 0    | every judged node is Fresh                                                          |
// | 1    | some judged node is Stale or Missing                                                |
// | 2    | a flag or the kubeconfig is wrong (one line per problem, `key: value must be rule`) |
// | 3    | could not ask the API: unreachable, timed out, credentials refused or not to be had,|
// |      | an error answer; or --observe/--watch never completed a listing                     |
import { parseArgs } from 'node:util';
import type { Clock } from '../clock/clock.ts';
import { SystemClock } from '../clock/clock.ts';
import { formatDuration, parseDuration } from '../config/duration.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { KubeConfigError } from '../kube/kube-config.ts';
import { kubeConfigAuth } from '../kube/kubeconfig-auth.ts';
import { loadKubeconfig } from '../kube/load-kubeconfig.ts';
import type { Lease, Node } from '../kube/kube-types.ts';
import { Informer, kubeListWatch, listAll, type ListWatchSource } from '../kube/list-watch.ts';
import { parseLabelSelector, SelectorError, type LabelSelector } from './label-selector.ts';
import { renderJson, renderTable, type ReportContext } from './fleet-report.ts';
import {
  AGENT_LEASE_SELECTOR,
  DEFAULT_GRACE_MS,
  DEFAULT_LEASE_NAMESPACE,
  DEFAULT_NODE_SELECTOR,
  FleetView,
  leaseRenewMicros,
  nodeRecord,
} from './fleet-view.ts';
import type { NodeReadiness } from './readiness.ts';
import { summarizeFleet } from './readiness.ts';
import type { CommandIo } from '../cli/command-io.ts';

/** The CLI's CommandIo, with the clock optional (the system clock when omitted). */
export type FleetIo = Omit<CommandIo, 'clock'> & { readonly clock?: Clock };

const USAGE = `Usage: nodepulse fleet [flags]      (also: kubectl nodepulse fleet [flags])

Reads every node's agent Lease (label ${AGENT_LEASE_SELECTOR}) and says which nodes are Fresh.

Flags:
  -o, --output table|json     output format (default table)
      --watch                 keep watching; reprint when a verdict changes
      --observe DURATION      watch for DURATION (at least --grace), then judge and exit
      --grace DURATION        how long a lease may stand still and stay Fresh (default 50s)
      --lease-namespace NS    namespace of the agent leases (default ${DEFAULT_LEASE_NAMESPACE})
      --node-selector SEL     only judge nodes matching SEL (default ${DEFAULT_NODE_SELECTOR})
      --kubeconfig PATH       kubeconfig file (default $KUBECONFIG, else ~/.kube/config, else in-cluster)
      --context NAME          kubeconfig context to use (default its current-context)

Exit codes:
  0  every judged node is Fresh
  1  some judged node is Stale or Missing
  2  a flag or the kubeconfig is wrong
  3  could not ask the API (unreachable, timed out, credentials refused, an error answer)
`;

/** See the exit-code table in the header. */
export const EXIT_ALL_FRESH = 0;
export const EXIT_NOT_FRESH = 1;
export const EXIT_BAD_INPUT = 2;
export const EXIT_API_FAILED = 3;

/** How often --watch looks for verdicts changed by time alone. */
const WATCH_RECHECK_MS = 1_000;

interface FleetFlags {
  readonly output: 'table' | 'json';
  readonly watch: boolean;
  readonly observeMs: number | undefined;
  readonly graceMs: number;
  readonly leaseNamespace: string;
  readonly selector: LabelSelector;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
}

/** Parses flags; returns the flags or the problems, one `key: value must be rule` line each. */
export function parseFleetFlags(argv: readonly string[]): { flags: FleetFlags } | { problems: string[] } | { help: true } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        output: { type: 'string', short: 'o', default: 'table' },
        watch: { type: 'boolean', default: false },
        observe: { type: 'string' },
        grace: { type: 'string', default: formatDuration(DEFAULT_GRACE_MS) },
        'lease-namespace': { type: 'string', default: DEFAULT_LEASE_NAMESPACE },
        'node-selector': { type: 'string', default: DEFAULT_NODE_SELECTOR },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
      strict: true,
    }));
  } catch (err) {
    return { problems: [`flags: ${(err as Error).message}`] };
  }
  if (values.help) return { help: true };
  const problems: string[] = [];
  const output = values.output;
  if (output !== 'table' && output !== 'json') problems.push(`output: ${JSON.stringify(output)} must be table or json`);
  const graceMs = parseDuration(values.grace);
  if (graceMs === undefined || !(graceMs > 0)) problems.push(`grace: ${JSON.stringify(values.grace)} must be a positive duration such as 50s`);
  let observeMs: number | undefined;
  if (values.observe !== undefined) {
    observeMs = parseDuration(values.observe);
    if (observeMs === undefined) problems.push(`observe: ${JSON.stringify(values.observe)} must be a duration such as 1m`);
    else if (graceMs !== undefined && observeMs < graceMs) {
      problems.push(`observe: ${values.observe} must be at least the grace period (${formatDuration(graceMs)}): a shorter watch cannot tell a silent lease from a live one`);
    }
  }
  if (values.watch && values.observe !== undefined) problems.push('watch: --watch and --observe must not be given together');
  let selector: LabelSelector | undefined;
  try {
    selector = parseLabelSelector(values['node-selector']);
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    problems.push(err.message);
  }
  if (values['lease-namespace'] === '') problems.push('leaseNamespace: "" must be a namespace name');
  if (problems.length > 0 || selector === undefined || graceMs === undefined) return { problems };
  return {
    flags: {
      output: output === 'json' ? 'json' : 'table',
      watch: values.watch,
      observeMs,
      graceMs,
      leaseNamespace: values['lease-namespace'],
      selector,
      kubeconfig: values.kubeconfig,
      context: values.context,
    },
  };
}

export async function runFleet(argv: string[], io: FleetIo, signal?: AbortSignal): Promise<number> {
  const parsed = parseFleetFlags(argv);
  if ('help' in parsed) {
    io.stdout.write(USAGE);
    return 0;
  }
  if ('problems' in parsed) {
    for (const p of parsed.problems) io.stderr.write(`nodepulse fleet: ${p}\n`);
    return EXIT_BAD_INPUT;
  }
  const flags = parsed.flags;
  const clock = io.clock ?? new SystemClock();
  let client: KubeClient;
  let leases: ListWatchSource<Lease>;
  let nodes: ListWatchSource<Node>;
  try {
    const loaded = loadKubeconfig({ kubeconfig: flags.kubeconfig, context: flags.context, env: io.env, homeDir: io.env['HOME'] });
    client = new KubeClient({ auth: kubeConfigAuth(loaded), clock, maxResponseBytes: 64 * 1024 * 1024 });
    leases = kubeListWatch<Lease>({
      client,
      path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(flags.leaseNamespace)}/leases`,
      labelSelector: AGENT_LEASE_SELECTOR,
    });
    nodes = kubeListWatch<Node>({ client, path: '/api/v1/nodes' });
  } catch (err) {
    io.stderr.write(`nodepulse fleet: ${(err as Error).message}\n`);
    return err instanceof KubeConfigError ? EXIT_BAD_INPUT : EXIT_API_FAILED;
  }
  const abort = new AbortController();
  const onAbort = (): void => abort.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const view = new FleetView(clock);
    const ctx: ReportContext = {
      basis: flags.watch || flags.observeMs !== undefined ? 'reader-clock' : 'wall-clock',
      graceMs: flags.graceMs,
      observedMs: flags.observeMs,
      leaseNamespace: flags.leaseNamespace,
      nodeSelector: flags.selector.text,
    };
    const options = { graceMs: flags.graceMs, selector: flags.selector, basis: ctx.basis };
    const print = (readings: NodeReadiness[]): void => {
      io.stdout.write(flags.output === 'json' ? renderJson(readings, ctx) : renderTable(readings, ctx));
    };
    const result = async (readings: NodeReadiness[]): Promise<number> => {
      print(readings);
      await drained(io.stdout, clock);
      return summarizeFleet(readings).allFresh ? EXIT_ALL_FRESH : EXIT_NOT_FRESH;
    };

    if (ctx.basis === 'wall-clock') {
      const [leaseItems, nodeItems] = await Promise.all([listAll(leases, abort.signal), listAll(nodes, abort.signal)]);
      for (const n of nodeItems) view.nodeEvent({ type: 'upsert', key: n.metadata.name ?? '', value: nodeRecord(n), previous: undefined });
      for (const l of leaseItems) view.leaseEvent({ type: 'upsert', key: l.metadata.name ?? '', value: leaseRenewMicros(l), previous: undefined });
      return await result(view.readings(options));
    }

    const leaseInformer = new Informer<Lease, number | undefined>({
      source: leases,
      clock,
      project: leaseRenewMicros,
      onEvent: (e) => view.leaseEvent(e),
    });
    const nodeInformer = new Informer<Node, ReturnType<typeof nodeRecord>>({
      source: nodes,
      clock,
      project: nodeRecord,
      onEvent: (e) => view.nodeEvent(e),
    });
    const running = Promise.all([leaseInformer.run(abort.signal), nodeInformer.run(abort.signal)]);
    let exit = EXIT_API_FAILED; // until a listing completes
    try {
      if (flags.observeMs !== undefined) {
        await clock.sleep(flags.observeMs, abort.signal);
        if (!leaseInformer.synced || !nodeInformer.synced) {
          io.stderr.write(`nodepulse fleet: could not list the leases and nodes within ${formatDuration(flags.observeMs)}\n`);
          return EXIT_API_FAILED;
        }
        return await result(view.readings(options));
      }
      // --watch: print once synced, then whenever a verdict changes (by event or by time).
      let last = '';
      for (;;) {
        if (leaseInformer.synced && nodeInformer.synced) {
          const readings = view.readings(options);
          const key = readings.map((r) => `${r.node}:${r.verdict}:${r.judged}:${r.condition?.status ?? ''}:${r.condition?.reason ?? ''}`).join('|');
          exit = summarizeFleet(readings).allFresh ? EXIT_ALL_FRESH : EXIT_NOT_FRESH;
          if (key !== last) {
            last = key;
            print(readings);
          }
        }
        await clock.sleep(WATCH_RECHECK_MS, abort.signal);
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
      return exit; // interrupted: the last verdict decides
    } finally {
      abort.abort(new Error('done'));
      await running;
    }
  } catch (err) {
    io.stderr.write(`nodepulse fleet: ${(err as Error).message}\n`);
    return EXIT_API_FAILED;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    client.close();
  }
}

/** How long a finished listing waits for a slow reader of stdout before it gives up. */
const DRAIN_TIMEOUT_MS = 30_000;

/**
 * Waits until a stream's buffered output has been handed to the OS, so that the caller may exit
 * without cutting a large document short (stdout to a pipe is asynchronous in Node). Streams
 * without a buffer (test sinks) return at once; a reader that never reads is waited for at most
 * DRAIN_TIMEOUT_MS.
 */
async function drained(stream: object, clock: Clock): Promise<void> {
  const s = stream as { writableLength?: number; once?: (event: 'drain', fn: () => void) => unknown };
  if (typeof s.writableLength !== 'number' || s.writableLength === 0 || typeof s.once !== 'function') return;
  const abort = new AbortController();
  await Promise.race([
    new Promise<void>((resolve) => s.once?.('drain', () => resolve())),
    clock.sleep(DRAIN_TIMEOUT_MS, abort.signal).catch(() => undefined),
  ]);
  abort.abort();
}
