// `nodepulse check [--cri-endpoint URL] [-o text|json] [--deadline 10s] [--max-message-size 16Mi]`
//
// One relist plus Status and Version against the node's runtime, printed for a person (text)
// or a script (json). Exit 0 when the relist answered; 1 when it did not, or when no runtime was
// found (naming the path given, or what every probed socket did); 2 for bad flags (the grammar of
// every command, config/flag-grammar.ts; each value checked by the zod schema below, one line per
// problem).
//
// Without --cri-endpoint or CONTAINER_RUNTIME_ENDPOINT it probes the known sockets as the agent
// does (endpoint-probe.ts), by probe order alone: check reads no Node. The report says which
// socket was used and why, and what each probed socket answered.
import { existsSync } from 'node:fs';
import { z } from 'zod/v3';
import { flagsHelp, GRAMMAR_HELP, flagsOrExit, type CommandDefinition } from '../config/command-flags.ts';
import { valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { byteSize, duration, oneOf, text, type Timed } from '../config/value-schemas.ts';
import { toFault, type CriFault } from '../cri/cri-error.ts';
import { blameOf } from '../cri/fault-cause.ts';
import { PROBE_VERSION_DEADLINE_MS, probeCriEndpoints, probeResultText, type ProbeResult, type ProbeRule } from '../cri/endpoint-probe.ts';
import { configuredCriEndpoint, DEFAULT_CRI_ENDPOINTS, NoCriEndpointError, parseCriEndpoint, type ConfiguredCriEndpoint } from '../cri/endpoint.ts';
import { createRuntimeClient } from '../cri/runtime-client.ts';
import type { RuntimeClient, RuntimeCondition, RuntimeVersion } from '../cri/types.ts';
import { countListing, type RelistCounts } from '../relist/relister.ts';
import type { CommandIo } from './command-io.ts';

export interface CheckReport {
  readonly endpoint: string;
  /** `configured` (given by flag or env), or the probe rule that chose the socket. */
  readonly endpointRule: 'configured' | ProbeRule;
  /** Why this socket. */
  readonly endpointReason: string;
  /** What each probed socket did, in probe order (empty when the endpoint was given). */
  readonly probed: readonly ProbeResult[];
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
    "the runtime's socket, unix:///path or /path (default $CONTAINER_RUNTIME_ENDPOINT, else the first known socket whose CRI Version answers: containerd's, CRI-O's, k3s's containerd, cri-dockerd's)",
  ),
  valueFlag('--output', 'text|json', 'text', 'output format', { short: 'o' }),
  valueFlag('--deadline', 'DURATION', '10s', 'one deadline for the relist, Status and Version'),
  valueFlag('--max-message-size', 'BYTES', '16Mi', 'largest CRI answer accepted'),
];

const USAGE = `Usage: nodepulse check [flags]

Relists the node's runtime once, with its Status and Version, and prints what it holds.
Exit codes: 0 the relist answered, 1 it did not (or no runtime was found), 2 bad flags.

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

  let configured: ConfiguredCriEndpoint | undefined;
  try {
    configured = configuredCriEndpoint({ flag: parsed.flags.criEndpoint, env: io.env });
  } catch (err) {
    io.stderr.write(`nodepulse check: ${(err as Error).message}\n`);
    return 2;
  }
  const create = (endpoint: string): RuntimeClient => createRuntimeClient({ endpoint, maxMessageBytes, clock: io.clock });
  let client: RuntimeClient;
  let chosen: Pick<CheckReport, 'endpoint' | 'endpointRule' | 'endpointReason' | 'probed'>;
  if (configured !== undefined) {
    if (!existsSync(configured.path)) {
      io.stderr.write(`nodepulse check: no runtime socket at ${configured.path} (from ${configured.source})\n`);
      return 1;
    }
    client = create(configured.endpoint);
    chosen = { endpoint: configured.endpoint, endpointRule: 'configured', endpointReason: `given by ${configured.source}`, probed: [] };
  } else {
    const outcome = await probeCriEndpoints({
      candidates: DEFAULT_CRI_ENDPOINTS,
      create,
      clock: io.clock,
      deadlineMs: Math.min(deadlineMs, PROBE_VERSION_DEADLINE_MS),
    });
    if (!outcome.choice.chosen || outcome.client === undefined) {
      io.stderr.write(`nodepulse check: ${new NoCriEndpointError(DEFAULT_CRI_ENDPOINTS, outcome.choice.reason).message}\n`);
      return 1;
    }
    client = outcome.client;
    chosen = { endpoint: outcome.choice.endpoint, endpointRule: outcome.choice.rule, endpointReason: outcome.choice.reason, probed: outcome.results };
  }

  try {
    const report = await checkRuntime(client, chosen, deadlineMs, io);
    io.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatText(report));
    return report.ok ? 0 : 1;
  } finally {
    client.close();
  }
}

async function checkRuntime(
  client: RuntimeClient,
  chosen: Pick<CheckReport, 'endpoint' | 'endpointRule' | 'endpointReason' | 'probed'>,
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
    ...chosen,
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
  const lines = [`endpoint:   ${r.endpoint}`, `chosen:     ${r.endpointRule}: ${r.endpointReason}`];
  for (const p of r.probed) lines.push(`probed:     ${p.endpoint}: ${probeResultText(p)}`);
  lines.push(`runtime:    ${r.runtime === null ? 'unknown (Version did not answer)' : `${r.runtime.name} ${r.runtime.version} (CRI ${r.runtime.apiVersion})`}`);
  for (const c of r.conditions) lines.push(`condition:  ${c.type}=${c.status}${c.reason === '' ? '' : ` (${c.reason}${c.message === '' ? '' : `: ${c.message}`})`}`);
  if (r.statusFault !== null) lines.push(`status:     failed: ${r.statusFault.code}: ${r.statusFault.message}`);
  if (r.ok) {
    lines.push(`relist:     answered in ${r.relistMs}ms`);
    lines.push(`pods:       ${r.pods} (${r.podsReady} ready)`);
    const states = Object.entries(r.containers.byState).map(([k, n]) => `${n} ${k.replace(/^CONTAINER_/, '').toLowerCase()}`);
    lines.push(`containers: ${r.containers.total} (${states.join(', ')})`);
  } else if (r.fault !== null) {
    lines.push(`relist:     FAILED: ${r.fault.code} (${r.fault.cause}, ${blameOf(r.fault.cause) === 'agent' ? 'the agent cannot observe the runtime' : 'the runtime\'s fault'}): ${r.fault.message}`);
  }
  return `${lines.join('\n')}\n`;
}

