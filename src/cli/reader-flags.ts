// The flags every reader of the agents' leases takes, written once: `nodepulse fleet` and
// `nodepulse controller` both list the leases and nodes of one cluster and judge them with the
// same rule, so they find the cluster, the leases and the nodes to judge the same way.
//
// | flag               | what it picks                                                       |
// |--------------------|---------------------------------------------------------------------|
// | --kubeconfig FILE  | the kubeconfig (else $KUBECONFIG, else ~/.kube/config, else         |
// |                    | in-cluster; read as kubectl reads it: kube/auth/load-kubeconfig.ts) |
// | --context NAME     | the kubeconfig's context (else its current-context)                 |
// | --lease-namespace  | where the agents' leases are                                        |
// | --node-selector    | which nodes are judged (a label selector; the others are reported)  |
// | --grace DURATION   | how long a lease may stand still and stay Fresh                     |
//
// A command spreads READER_FLAG_SPECS into its specs and readerFlagShape into its zod object,
// reads the result with readerFlags(), and gets its API client from readerClient().
//
// Failure modes: readerClient() rejects with the KubeConfigError of a kubeconfig that cannot work
// (the command exits 2 on it); anything else it rejects with is a failure to start (exit 1).
import { EXIT_API_FAILED, EXIT_BAD_INPUT, type CommandIo } from './command-io.ts';
import { formatDuration } from '../clock/duration.ts';
import { valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { dnsLabel, duration, fail, filePath, text, type Timed } from '../config/value-schemas.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { KubeConfigError } from '../kube/auth/kube-config-error.ts';
import { pickKubeAuth } from '../kube/auth/pick-kube-auth.ts';
import { DEFAULT_GRACE_MS, DEFAULT_LEASE_NAMESPACE, DEFAULT_NODE_SELECTOR } from '../fleet/fleet-view.ts';
import { parseLabelSelector, SelectorError, type LabelSelector } from '../fleet/label-selector.ts';

export interface ReaderFlags {
  /** --kubeconfig; undefined: $KUBECONFIG, else ~/.kube/config, else in-cluster. */
  readonly kubeconfig: string | undefined;
  /** --context; undefined: the kubeconfig's current-context. */
  readonly context: string | undefined;
  readonly leaseNamespace: string;
  readonly selector: LabelSelector;
  readonly grace: Timed;
}

export const READER_FLAG_SPECS: readonly FlagSpec[] = [
  valueFlag('--kubeconfig', 'FILE', undefined, 'kubeconfig file (default $KUBECONFIG, else ~/.kube/config, else in-cluster)'),
  valueFlag('--context', 'NAME', undefined, "the kubeconfig context to use (default the kubeconfig's current-context)"),
  valueFlag('--lease-namespace', 'NAMESPACE', DEFAULT_LEASE_NAMESPACE, 'namespace of the agent leases'),
  valueFlag('--node-selector', 'SELECTOR', DEFAULT_NODE_SELECTOR, 'only judge nodes matching this label selector'),
  valueFlag('--grace', 'DURATION', formatDuration(DEFAULT_GRACE_MS), 'how long a lease may stand still and stay Fresh'),
];

/** A label selector flag's value, parsed (label-selector.ts); a bad one is `key: value must be rule`. */
export const labelSelector = text().transform((written, ctx): LabelSelector => {
  try {
    return parseLabelSelector(written);
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    return fail(ctx, err.rule);
  }
});

/** The zod shape of the reader flags, for a command's z.object. */
export const readerFlagShape = {
  kubeconfig: filePath.optional(),
  context: text().min(1, 'a context name').optional(),
  leaseNamespace: dnsLabel,
  nodeSelector: labelSelector,
  grace: duration(),
};

/** The reader flags out of a command's parsed flags. */
export function readerFlags(parsed: {
  readonly kubeconfig?: string | undefined;
  readonly context?: string | undefined;
  readonly leaseNamespace: string;
  readonly nodeSelector: LabelSelector;
  readonly grace: Timed;
}): ReaderFlags {
  return {
    kubeconfig: parsed.kubeconfig,
    context: parsed.context,
    leaseNamespace: parsed.leaseNamespace,
    selector: parsed.nodeSelector,
    grace: parsed.grace,
  };
}

/** The largest answer a reader reads: a node list page is 500 Nodes, a few MiB of realistic Nodes. */
export const READER_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * The reader's API client: the kubeconfig and context its flags pick, read as kubectl reads them,
 * or the pod's service account the lean way where no kubeconfig file exists (kube/auth/pick-kube-auth.ts).
 */
export async function readerClient(flags: Pick<ReaderFlags, 'kubeconfig' | 'context'>, io: Pick<CommandIo, 'env' | 'clock'>): Promise<KubeClient> {
  const auth = await pickKubeAuth({ who: 'reader', kubeconfig: flags.kubeconfig, context: flags.context, env: io.env, homeDir: io.env['HOME'], clock: io.clock });
  return new KubeClient({ auth, clock: io.clock, maxResponseBytes: READER_MAX_RESPONSE_BYTES });
}

/**
 * The reader's client, or the exit code once `<command>: <why>` is on stderr: EXIT_BAD_INPUT for
 * a kubeconfig that cannot be used (KubeConfigError), `apiFailed` for anything else. What a reader
 * command does right after flagsOrExit (config/command-flags.ts), in the same shape.
 */
export async function readerClientOrExit(
  command: string,
  flags: Pick<ReaderFlags, 'kubeconfig' | 'context'>,
  io: Pick<CommandIo, 'env' | 'clock' | 'stderr'>,
  apiFailed: number = EXIT_API_FAILED,
): Promise<{ readonly client: KubeClient } | { readonly exit: number }> {
  try {
    return { client: await readerClient(flags, io) };
  } catch (err) {
    io.stderr.write(`${command}: ${(err as Error).message}\n`);
    return { exit: err instanceof KubeConfigError ? EXIT_BAD_INPUT : apiFailed };
  }
}
