// `nodepulse verify`: does one agent of an install answer /readyz and renew its node's Lease? The
// check itself is verify-agent.ts; this is its flags, its API client and its HTTP GET. The Helm
// chart's `helm test` pod runs it with the release's names (its service account may list pods
// in the agents' namespace and get leases in the lease namespace: nothing more is read).
//
// Exit codes, as fleet's:
// | code | meaning                                                                              |
// |------|--------------------------------------------------------------------------------------|
// | 0    | the agent answered /readyz with 200 and its Lease's renewTime moved                  |
// | 1    | a step did not pass within --timeout (stderr says which, and its last answer)        |
// | 2    | a flag or the kubeconfig is wrong (one line per problem, `key: value must be rule`)  |
// | 3    | could not ask the API: the pods or the Lease could not be read                       |
//
// The agent pods are read from the first page (500) of the listing: one usable pod is enough,
// and a page bounds what a fleet of any size costs the API server.
import { z } from 'zod/v3';
import type { Clock } from '../clock/clock.ts';
import { EXIT_API_FAILED, type CommandIo } from './command-io.ts';
import { flagsHelp, flagsOrExit, GRAMMAR_HELP, parseCommandFlags, type CommandDefinition } from '../config/command-flags.ts';
import { formatDuration } from '../clock/duration.ts';
import { valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { dnsLabel, duration, filePath, text } from '../config/value-schemas.ts';
import type { KubeClient } from '../kube/kube-client.ts';
import { http } from '../node-http.ts';
import type { AgentPod } from '../fleet/agent-pod.ts';
import { labelSelector, readerClientOrExit } from './reader-flags.ts';
import { verifyAgent, type ReadyzGet, type VerifyApi } from '../fleet/verify-agent.ts';

export const EXIT_PASSED = 0;
export const EXIT_FAILED = 1;

/** The agent DaemonSet's pod selector, as both install paths render it. */
export const DEFAULT_AGENT_SELECTOR = 'app.kubernetes.io/name=nodepulse,app.kubernetes.io/component=agent';
/** One page of the pod listing. */
export const POD_PAGE = 500;
/** /readyz answers a few hundred bytes; more is cut. */
const MAX_READYZ_BYTES = 4096;

const SPECS: readonly FlagSpec[] = [
  valueFlag('--agent-namespace', 'NAMESPACE', 'nodepulse', 'namespace of the agent pods'),
  valueFlag('--agent-selector', 'SELECTOR', DEFAULT_AGENT_SELECTOR, 'label selector of the agent pods'),
  valueFlag('--lease-namespace', 'NAMESPACE', undefined, 'namespace of the agent leases (default --agent-namespace, as the agent does)'),
  valueFlag('--timeout', 'DURATION', '1m', 'how long the whole check may take'),
  valueFlag('--kubeconfig', 'FILE', undefined, 'kubeconfig file (default $KUBECONFIG, else ~/.kube/config, else in-cluster)'),
  valueFlag('--context', 'NAME', undefined, "the kubeconfig context to use (default the kubeconfig's current-context)"),
];

const USAGE = `Usage: nodepulse verify [flags]      (also: kubectl nodepulse verify [flags])

Checks that one agent answers /readyz and renews its node's Lease: it lists the agent pods,
picks one that runs (a ready one first), GETs /readyz on its port named metrics, then reads
its node's Lease until renewTime moves. The Helm chart's \`helm test\` runs it.

Flags:
${flagsHelp(SPECS)}
${GRAMMAR_HELP}

Exit codes:
  0  the agent answered /readyz with 200 and renewed its Lease
  1  a step did not pass within --timeout
  2  a flag or the kubeconfig is wrong
  3  could not ask the API (unreachable, timed out, credentials refused, an error answer)
`;

export interface VerifyFlags {
  readonly agentNamespace: string;
  readonly agentSelector: string;
  readonly leaseNamespace: string;
  readonly timeoutMs: number;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
}

const fields = z.object({
  agentNamespace: dnsLabel,
  agentSelector: labelSelector,
  leaseNamespace: dnsLabel.optional(),
  timeout: duration(),
  kubeconfig: filePath.optional(),
  context: text().min(1, 'a context name').optional(),
});

const COMMAND: CommandDefinition<VerifyFlags> = {
  name: 'nodepulse verify',
  usage: USAGE,
  specs: SPECS,
  schema: fields.transform((f): VerifyFlags => ({
    agentNamespace: f.agentNamespace,
    agentSelector: f.agentSelector.text,
    leaseNamespace: f.leaseNamespace ?? f.agentNamespace,
    timeoutMs: f.timeout.ms,
    kubeconfig: f.kubeconfig,
    context: f.context,
  })),
};

/** The flags of an argv, or the problem lines (`key: value must be rule`); the chart's test holds its pod's args to these. */
export function parseVerifyFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): VerifyFlags | { readonly errors: readonly string[] } {
  const parsed = parseCommandFlags(argv, env, COMMAND);
  if ('flags' in parsed) return parsed.flags;
  return { errors: 'error' in parsed ? parsed.error.lines : ['--help is not a check'] };
}

/** The two calls of VerifyApi through the reader's API client. */
export function kubeVerifyApi(client: KubeClient): VerifyApi {
  return {
    async listPods(namespace, selector, options) {
      const list = await client.listPods<AgentPod>(namespace, { labelSelector: selector, limit: String(POD_PAGE) }, options);
      return list.items ?? [];
    },
    getLease: (namespace, name, options) => client.getLease(namespace, name, options),
  };
}

/** GET http://host:port/readyz, ended by the clock's timer at timeoutMs; the body is cut at 4 KiB. */
export function httpReadyz(clock: Clock): ReadyzGet {
  return (hostPort, { signal, timeoutMs }) =>
    new Promise((resolve, reject) => {
      const request = http.get(`http://${hostPort}/readyz`, { signal }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (body.length < MAX_READYZ_BYTES) body += chunk.slice(0, MAX_READYZ_BYTES - body.length);
        });
        response.on('end', () => {
          timer.cancel();
          resolve({ status: response.statusCode ?? 0, body });
        });
        response.on('error', (err) => {
          timer.cancel();
          reject(err);
        });
      });
      const timer = clock.after(timeoutMs, () => request.destroy(new Error(`no answer within ${formatDuration(timeoutMs)}`)));
      request.on('error', (err) => {
        timer.cancel();
        reject(err);
      });
    });
}

export async function runVerify(argv: string[], io: CommandIo, signal?: AbortSignal): Promise<number> {
  const parsed = flagsOrExit(argv, io, COMMAND);
  if ('exit' in parsed) return parsed.exit;
  const flags = parsed.flags;
  const made = await readerClientOrExit('nodepulse verify', flags, io);
  if ('exit' in made) return made.exit;
  const client = made.client;
  try {
    const result = await verifyAgent(
      { api: kubeVerifyApi(client), readyz: httpReadyz(io.clock), clock: io.clock },
      { agentNamespace: flags.agentNamespace, agentSelector: flags.agentSelector, leaseNamespace: flags.leaseNamespace, timeoutMs: flags.timeoutMs },
      signal ?? new AbortController().signal,
    );
    for (const line of result.lines) io.stdout.write(`${line}\n`);
    if (result.outcome === 'passed') {
      io.stdout.write('verify passed\n');
      return EXIT_PASSED;
    }
    io.stderr.write(`nodepulse verify: ${result.reason ?? 'failed'} (checked for ${formatDuration(flags.timeoutMs)})\n`);
    return result.outcome === 'api-failed' ? EXIT_API_FAILED : EXIT_FAILED;
  } catch (err) {
    io.stderr.write(`nodepulse verify: ${(err as Error).message}\n`);
    return EXIT_FAILED;
  } finally {
    client.close();
  }
}
