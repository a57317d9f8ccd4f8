// `nodepulse check [--cri-endpoint URL] [-o text|json] [--deadline 10s] [--max-message-size 16Mi]`
//
// One relist plus Status and Version against the node's runtime, printed for a person (text)
// or a script (json). Exit 0 when the relist answered; 1 when it did not, or when no socket
// exists (naming the path, or every path tried); 2 for bad flags (the grammar of every command,
// config/flag-grammar.ts; each value checked by the zod schema below, one line per problem).
import { existsSync } from 'node:fs';
import { z } from 'zod/v3';
import { flagsHelp, GRAMMAR_HELP, flagsOrExit, type CommandDefinition } from '../config/command-flags.ts';
import { valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { byteSize, duration, oneOf, text, type Timed } from '../config/value-schemas.ts';
import { toFault, type CriFault } from '../cri/cri-error.ts';
import { NoCriEndpointError, parseCriEndpoint, resolveCriEndpoint, type ResolvedCriEndpoint } from '../cri/endpoint.ts';
import { createRuntimeClient } from '../cri/runtime-client.ts';
import type { RuntimeCondition, RuntimeVersion } from '../cri/types.ts';
import { countListing, type RelistCounts } from '../relist/relister.ts';
import type { CommandIo } from './command-io.ts';

export interface CheckReport {
  readonly endpoint: string;
  readonly ok: boolean;
  readonly runtime: { readonly name: string; readonly version: string; readonly apiVersion: string } | null;
  readonly conditions: readonly RuntimeCondition[];
  readonly pods: number;
  readonly podsReady: number;
  readonly podsByState: Readonly<Record<string, number>>;
  readonly containers: { readonly total: number; readonly byState: Readonly<Record<string, number>> };
  readonly relistMs: number | null;
  readonly fault: CriFault | null;
  readonly statusFault: CriFault | null;
}

const CHECK_SPECS: readonly FlagSpec[] = [
  valueFlag(
    '--cri-endpoint',
    'URL',
    undefined,
    "the runtime's socket, unix:///path or /path (default $CONTAINER_RUNTIME_ENDPOINT, else the first of containerd's, CRI-O's and cri-dockerd's that exists)",
  ),
  valueFlag('--output', 'text|json', 'text', 'output format', { short: 'o' }),
  valueFlag('--deadline', 'DURATION', '10s', 'one deadline for the relist, Status and Version'),
  valueFlag('--max-message-size', 'BYTES', '16Mi', 'largest CRI answer accepted'),
];

const USAGE = `Usage: nodepulse check [flags]

Relists the node's runtime once, with its Status and Version, and prints what it holds.
Exit codes: 0 the relist answered, 1 it did not (or no runtime socket exists), 2 bad flags.

Flags:
${flagsHelp(CHECK_SPECS)}
${GRAMMAR_HELP}
`;

/** Both forms resolveCriEndpoint takes: crictl's URL, or the bare path. */
const criEndpoint = text().refine((written) => {
  try {
    parseCriEndpoint(written);
    return true;
  } catch {
    return false;
  }
}, 'unix:///absolute/path or an absolute path');

const CHECK_COMMAND: CommandDefinition<{ criEndpoint?: string | undefined; output: 'text' | 'json'; deadline: Timed; maxMessageSize: number }> = {
  name: 'nodepulse check',
  usage: USAGE,
  specs: CHECK_SPECS,
  schema: z.object({
    criEndpoint: criEndpoint.optional(),
    output: oneOf(['text', 'json']),
    deadline: duration(),
    maxMessageSize: byteSize(1024, 2 ** 31 - 1, '(gRPC takes a 32-bit limit)'),
  }),
};

export async function runCheck(argv: readonly string[], io: CommandIo): Promise<number> {
  const parsed = flagsOrExit(argv, io, CHECK_COMMAND);
  if ('exit' in parsed) return parsed.exit;
  const { output, deadline, maxMessageSize: maxMessageBytes } = parsed.flags;
  const deadlineMs = deadline.ms;

  let resolved: ResolvedCriEndpoint;
  try {
    resolved = resolveCriEndpoint({ flag: parsed.flags.criEndpoint, env: io.env });
  } catch (err) {
    io.stderr.write(`nodepulse check: ${(err as Error).message}\n`);
    return err instanceof NoCriEndpointError ? 1 : 2;
  }
  if (!existsSync(resolved.path)) {
    io.stderr.write(`nodepulse check: no runtime socket at ${resolved.path} (from ${resolved.source === 'flag' ? '--cri-endpoint' : 'CONTAINER_RUNTIME_ENDPOINT'})\n`);
    return 1;
  }

  const client = createRuntimeClient({ endpoint: resolved.endpoint, maxMessageBytes });
  try {
    const report = await checkRuntime(client, resolved.endpoint, deadlineMs, io);
    io.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatText(report));
    return report.ok ? 0 : 1;
  } finally {
    client.close();
  }
}

async function checkRuntime(
  client: ReturnType<typeof createRuntimeClient>,
  endpoint: string,
  deadlineMs: number,
  io: CommandIo,
): Promise<CheckReport> {
  const started = io.clock.monotonicMs();
  const [relist, version, status] = await Promise.allSettled([
    client.relist({ deadlineMs }),
    client.version({ deadlineMs }),
    client.status({ deadlineMs }),
  ]);
  const relistMs = io.clock.monotonicMs() - started;
  const counts: RelistCounts | undefined =
    relist.status === 'fulfilled' ? countListing(relist.value.sandboxes, relist.value.containers) : undefined;
  const v: RuntimeVersion | undefined = version.status === 'fulfilled' ? version.value : undefined;
  return {
    endpoint,
    ok: relist.status === 'fulfilled',
    runtime: v === undefined ? null : { name: v.runtimeName, version: v.runtimeVersion, apiVersion: v.runtimeApiVersion },
    conditions: status.status === 'fulfilled' ? status.value.conditions : [],
    pods: counts?.pods ?? 0,
    podsReady: counts?.podsReady ?? 0,
    podsByState: counts?.podsByState ?? {},
    containers: { total: counts?.containers ?? 0, byState: counts?.containersByState ?? {} },
    relistMs: relist.status === 'fulfilled' ? Math.round(relistMs * 10) / 10 : null,
    fault: relist.status === 'rejected' ? toFault(relist.reason) : null,
    statusFault: status.status === 'rejected' ? toFault(status.reason) : null,
  };
}

function formatText(r: CheckReport): string {
  const lines = [`endpoint:   ${r.endpoint}`];
  lines.push(`runtime:    ${r.runtime === null ? 'unknown (Version did not answer)' : `${r.runtime.name} ${r.runtime.version} (CRI ${r.runtime.apiVersion})`}`);
  for (const c of r.conditions) lines.push(`condition:  ${c.type}=${c.status}${c.reason === '' ? '' : ` (${c.reason}${c.message === '' ? '' : `: ${c.message}`})`}`);
  if (r.statusFault !== null) lines.push(`status:     failed: ${r.statusFault.code}: ${r.statusFault.message}`);
  if (r.ok) {
    lines.push(`relist:     answered in ${r.relistMs}ms`);
    lines.push(`pods:       ${r.pods} (${r.podsReady} ready)`);
    const states = Object.entries(r.containers.byState).map(([k, n]) => `${n} ${k.replace(/^CONTAINER_/, '').toLowerCase()}`);
    lines.push(`containers: ${r.containers.total} (${states.join(', ')})`);
  } else if (r.fault !== null) {
    lines.push(`relist:     FAILED: ${r.fault.code}: ${r.fault.message}`);
  }
  return `${lines.join('\n')}\n`;
}
