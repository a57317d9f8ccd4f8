// `nodepulse fleet` (and `kubectl nodepulse fleet`): which nodes' agent leases are fresh.
//
// | flags                | how it judges                                                  |
// |----------------------|----------------------------------------------------------------|
// | none                 | one listing, by wall-clock age of renewTime, and says so (a    |
// |                      | streaming list where the server serves one, else pages: each   |
// |                      | object trimmed to what is judged as it arrives, kube/list-watch)|
// | --observe D (D ≥ grace) | watches for D, then judges on this reader's clock           |
// | --watch              | watches until interrupted, reprinting when a verdict changes   |
//
// The kubeconfig is read as kubectl reads it (load-kubeconfig.ts: --kubeconfig, KUBECONFIG,
// ~/.kube/config, in-cluster; --context), and every request authenticates through client-node's
// KubeConfig (exec plugins, client certificates, token files); in a pod with no kubeconfig, with
// the service account's token the lean way (kube/auth/pick-kube-auth.ts).
//
// Exit codes, so that a script can tell a verdict from a failure to get one:
// | code | meaning                                                                             |
// |------|-------------------------------------------------------------------------------------|
// | 0    | every judged node is Fresh                                                          |
// | 1    | some judged node is Stale or Missing                                                |
// | 2    | a flag or the kubeconfig is wrong (one line per problem, `key: value must be rule`) |
// | 3    | could not ask the API: unreachable, timed out, credentials refused or not to be had,|
// |      | an error answer; or --observe/--watch never completed a listing                     |
//
// Flags: the grammar of every command (config/flag-grammar.ts); the reader flags it shares with
// the controller (--kubeconfig, --context, --lease-namespace, --node-selector, --grace) are
// reader-flags.ts's, validated by the same zod shape.
import { z } from 'zod/v3';
import type { Clock } from '../clock/clock.ts';
import { flagsHelp, GRAMMAR_HELP, flagsOrExit, type CommandDefinition } from '../config/command-flags.ts';
import { checkCrossFieldRules, type CrossFieldRule } from '../config/cross-field-rules.ts';
import { formatDuration } from '../clock/duration.ts';
import { booleanFlag, valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { duration, goBool, oneOf } from '../config/value-schemas.ts';
import { leasesPath, nodesPath } from '../kube/api-paths.ts';
import { NODE_PROTOBUF } from '../kube/kube-protobuf.ts';
import type { Lease, Node } from '../kube/kube-types.ts';
import { Informer, kubeListWatch, readAll } from '../kube/list-watch.ts';
import type { LabelSelector } from '../fleet/label-selector.ts';
import { READER_FLAG_SPECS, readerClientOrExit, readerFlagShape, readerFlags } from './reader-flags.ts';
import { renderJson, renderTable, type ReportContext } from '../fleet/fleet-report.ts';
import {
  AGENT_LEASE_SELECTOR,
  FleetView,
  leaseRenewMicros,
  nodeRecord,
} from '../fleet/fleet-view.ts';
import type { NodeReadiness } from '../fleet/readiness.ts';
import { summarizeFleet } from '../fleet/readiness.ts';
import { EXIT_API_FAILED, type CommandIo } from './command-io.ts';

const FLEET_SPECS: readonly FlagSpec[] = [
  valueFlag('--output', 'table|json', 'table', 'output format', { short: 'o' }),
  booleanFlag('--watch', 'keep watching; reprint when a verdict changes'),
  valueFlag('--observe', 'DURATION', undefined, 'watch for DURATION (at least --grace), then judge and exit'),
  ...READER_FLAG_SPECS,
];

const USAGE = `Usage: nodepulse fleet [flags]      (also: kubectl nodepulse fleet [flags])

Reads every node's agent Lease (label ${AGENT_LEASE_SELECTOR}) and says which nodes are Fresh.

Flags:
${flagsHelp(FLEET_SPECS)}
${GRAMMAR_HELP}

Exit codes:
  0  every judged node is Fresh
  1  some judged node is Stale or Missing
  2  a flag or the kubeconfig is wrong
  3  could not ask the API (unreachable, timed out, credentials refused, an error answer)
`;

/** See the exit-code table in the header. */
export const EXIT_ALL_FRESH = 0;
export const EXIT_NOT_FRESH = 1;

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

const fleetFields = z.object({ output: oneOf(['table', 'json']), watch: goBool, observe: duration().optional(), ...readerFlagShape });
type FleetFields = z.output<typeof fleetFields>;

/** Rules between flags; each line shows --observe's value. */
const FLEET_RULES: readonly CrossFieldRule<FleetFields>[] = [
  {
    key: 'observe',
    holds: (f) => f.observe === undefined || !f.watch,
    rule: () => 'unset when --watch is given (--watch runs until interrupted, --observe ends after its window)',
    shown: (f) => f.observe?.text ?? '',
  },
  {
    key: 'observe',
    holds: (f) => f.observe === undefined || f.observe.ms >= f.grace.ms,
    rule: (f) => `at least grace (${f.grace.text}): a shorter watch cannot tell a silent lease from a live one`,
    shown: (f) => f.observe?.text ?? '',
  },
];

function toFleetFlags(f: FleetFields): FleetFlags {
  const reader = readerFlags(f);
  return { ...reader, output: f.output, watch: f.watch, observeMs: f.observe?.ms, graceMs: reader.grace.ms };
}

const FLEET_COMMAND: CommandDefinition<FleetFlags> = {
  name: 'nodepulse fleet',
  usage: USAGE,
  specs: FLEET_SPECS,
  schema: fleetFields.pipe(z.custom<FleetFields>().superRefine(checkCrossFieldRules(FLEET_RULES)).transform(toFleetFlags)),
};

export async function runFleet(argv: string[], io: CommandIo, signal?: AbortSignal): Promise<number> {
  const parsed = flagsOrExit(argv, io, FLEET_COMMAND);
  if ('exit' in parsed) return parsed.exit;
  const flags = parsed.flags;
  const { clock } = io;
  const made = await readerClientOrExit('nodepulse fleet', flags, io);
  if ('exit' in made) return made.exit;
  const client = made.client;
  const leases = kubeListWatch<Lease>({ client, path: leasesPath(flags.leaseNamespace), labelSelector: AGENT_LEASE_SELECTOR });
  const nodes = kubeListWatch<Node>({ client, path: nodesPath(), protobuf: NODE_PROTOBUF });
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
      // Each object is trimmed to what the judgement reads as it arrives, and dropped.
      await Promise.all([
        readAll(leases, abort.signal, (l) => view.leaseEvent({ type: 'upsert', key: l.metadata.name ?? '', value: leaseRenewMicros(l), previous: undefined }),
          (name) => view.leaseEvent({ type: 'delete', key: name, previous: undefined })),
        readAll(nodes, abort.signal, (n) => view.nodeEvent({ type: 'upsert', key: n.metadata.name ?? '', value: nodeRecord(n), previous: undefined }),
          (name) => { const previous = view.nodes.get(name); if (previous !== undefined) view.nodeEvent({ type: 'delete', key: name, previous }); }),
      ]);
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
