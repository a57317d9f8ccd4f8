// `nodepulse controller`: the leader-elected reader that marks Nodes whose agent went silent.
//
// Every replica runs the election (election/leader-elector.ts); only the leader runs the
// FleetController, once per term, with a fenced term. /metrics and /healthz are served by
// every replica on --http-address (controller/controller-server.ts), on the agent's bounded
// server; /healthz fails when the election loop stalls (election/election-health.ts). A signal stops it cleanly: belief ends, the leader task is
// aborted, the lease is released so a standby takes over at its next retry. SIGKILL leaves the
// lease to expire.
//
// Exit codes: 0 after a clean stop, 1 when it cannot start (kubeconfig, port), 2 bad flags.
//
// Flags: the grammar of every command (config/flag-grammar.ts); the reader flags are the ones
// `fleet` takes (cli/reader-flags.ts). The election's timing rules are the elector's own list
// (ELECTION_TIMING_RULES), checked here with the flags' names before the elector is built.
import { hostname } from 'node:os';
import type { Clock } from '../clock/clock.ts';
import { Registry } from 'prom-client';
import { z } from 'zod/v3';
import { flagsHelp, flagsOrExit, GRAMMAR_HELP, parseCommandFlags, type CommandDefinition, type CommandFlags } from '../config/command-flags.ts';
import type { Env } from '../config/parse-settings.ts';
import { checkCrossFieldRules, shorter, type CrossFieldRule } from '../config/cross-field-rules.ts';
import { formatDuration } from '../clock/duration.ts';
import { booleanFlag, valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { formatHostPort, type HostPort } from '../config/host-port.ts';
import { address, dnsLabel, dnsSubdomain, duration, fail, goBool, logLevel, text } from '../config/value-schemas.ts';
import { electionLeaseApi } from '../election/election-lease-api.ts';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  ELECTION_LEASE_NAME,
  LeaderElector,
  ELECTION_TIMING_RULES,
} from '../election/leader-elector.ts';
import { electionHealthCheck } from '../election/election-health.ts';
import { AGENT_LEASE_SELECTOR, DEFAULT_LEASE_NAMESPACE } from '../fleet/fleet-view.ts';
import type { LabelSelector } from '../fleet/label-selector.ts';
import { READER_FLAG_SPECS, readerClientOrExit, readerFlagShape, readerFlags } from './reader-flags.ts';
import { createLogger, type Logger, type LogLevel } from '../log/logger.ts';
import { daemonSetsPath, leasesPath, nodesPath } from '../kube/api-paths.ts';
import { NODE_PROTOBUF } from '../kube/kube-protobuf.ts';
import { KubeClient } from '../kube/kube-client.ts';
import type { Lease, Node } from '../kube/kube-types.ts';
import { kubeListWatch } from '../kube/list-watch.ts';
import type { DaemonSetObject } from '../controller/agent-rollout.ts';
import { createControllerMetrics, type ControllerMetrics } from '../controller/controller-metrics.ts';
import { createControllerServer } from '../controller/controller-server.ts';
import { DEFAULT_MONITOR_PERIOD_MS, FleetController } from '../controller/fleet-controller.ts';
import { markerApi, NodeMarker, SILENT_TAINT_KEY } from '../controller/node-marker.ts';
import { TokenBucket } from '../controller/token-bucket.ts';
import type { CommandIo } from './command-io.ts';

/** The agent DaemonSet's default name: what deploy/base and the chart's default release install. */
const DEFAULT_AGENT_DAEMONSET = 'nodepulse';

const CONTROLLER_SPECS: readonly FlagSpec[] = [
  ...READER_FLAG_SPECS,
  valueFlag('--namespace', 'NAMESPACE', DEFAULT_LEASE_NAMESPACE, 'namespace of the election lease', { env: ['POD_NAMESPACE'] }),
  valueFlag('--identity', 'ID', undefined, "this replica's name in the election; the host name when unset", { env: ['POD_NAME'] }),
  valueFlag('--monitor-period', 'DURATION', formatDuration(DEFAULT_MONITOR_PERIOD_MS), 'how often the whole fleet is judged'),
  valueFlag('--leader-elect-lease-duration', 'DURATION', formatDuration(DEFAULT_LEASE_DURATION_MS), "the election lease's duration (whole seconds)"),
  valueFlag('--leader-elect-renew-deadline', 'DURATION', formatDuration(DEFAULT_RENEW_DEADLINE_MS), 'how long the leader keeps trying to renew before it stops leading'),
  valueFlag('--leader-elect-retry-period', 'DURATION', formatDuration(DEFAULT_RETRY_PERIOD_MS), 'time between attempts to acquire or renew'),
  valueFlag(
    '--agent-daemonset',
    'NAMESPACE/NAME',
    undefined,
    `pause marking while this DaemonSet rolls out; "" never pauses (default <namespace>/${DEFAULT_AGENT_DAEMONSET})`,
  ),
  booleanFlag('--taint', `also add/remove the ${SILENT_TAINT_KEY}:NoSchedule taint`),
  valueFlag('--max-writes-per-second', 'N', '10', 'rate limit of all writes to Nodes and Events'),
  valueFlag('--http-address', 'HOST:PORT', ':9357', '/metrics and /healthz'),
  valueFlag('--log-level', 'LEVEL', 'info', 'pino level: fatal, error, warn, info, debug, trace or silent'),
];

const USAGE = `Usage: nodepulse controller [flags]

Marks RuntimeRelistUnhealthy=Unknown/AgentLeaseStale on Nodes whose agent lease stopped moving,
and False/RelistHealthy when it moves again. Runs leader-elected; run two replicas.

Flags:
${flagsHelp(CONTROLLER_SPECS)}
${GRAMMAR_HELP}
`;

interface ControllerFlags {
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  readonly namespace: string;
  readonly identity: string;
  readonly leaseNamespace: string;
  readonly graceMs: number;
  readonly selector: LabelSelector;
  readonly monitorPeriodMs: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly taint: boolean;
  /** The agent DaemonSet whose rollout pauses marking; undefined: none. */
  readonly agentDaemonSet: { readonly namespace: string; readonly name: string } | undefined;
  readonly maxWritesPerSecond: number;
  readonly http: HostPort;
  readonly logLevel: LogLevel;
}

/** `NAMESPACE/NAME`, or "" (null: never pause). */
const agentDaemonSetRef = text().transform((written, ctx) => {
  if (written === '') return null;
  const [namespace = '', name = '', ...rest] = written.split('/');
  if (rest.length > 0 || !dnsLabel.safeParse(namespace).success || !dnsSubdomain.safeParse(name).success) {
    return fail(ctx, 'NAMESPACE/NAME, such as nodepulse/nodepulse, or "" for none');
  }
  return { namespace, name };
});

const MORE_THAN_ZERO = 'a number more than 0';
const rate = text()
  .regex(/^\d+(\.\d+)?$/, MORE_THAN_ZERO)
  .transform(Number)
  .pipe(z.number().positive(MORE_THAN_ZERO));

const controllerFields = z.object({
  ...readerFlagShape,
  namespace: dnsLabel,
  identity: text().min(1, 'non-empty').optional(),
  monitorPeriod: duration(),
  leaderElectLeaseDuration: duration({ wholeSeconds: true }),
  leaderElectRenewDeadline: duration(),
  leaderElectRetryPeriod: duration(),
  taint: goBool,
  agentDaemonset: agentDaemonSetRef.optional(),
  maxWritesPerSecond: rate,
  httpAddress: address(':9357 or 127.0.0.1:0'),
  logLevel,
});
type ControllerFields = z.output<typeof controllerFields>;

/** The monitor's rule against the grace, and the election's own (election/leader-elector.ts). */
const CONTROLLER_RULES: readonly CrossFieldRule<ControllerFields>[] = [shorter('monitorPeriod', 'grace'), ...ELECTION_TIMING_RULES];

function toControllerFlags(f: ControllerFields): ControllerFlags {
  const reader = readerFlags(f);
  return {
    kubeconfig: reader.kubeconfig,
    context: reader.context,
    namespace: f.namespace,
    identity: f.identity ?? hostname(),
    leaseNamespace: reader.leaseNamespace,
    graceMs: reader.grace.ms,
    selector: reader.selector,
    monitorPeriodMs: f.monitorPeriod.ms,
    leaseDurationMs: f.leaderElectLeaseDuration.ms,
    renewDeadlineMs: f.leaderElectRenewDeadline.ms,
    retryPeriodMs: f.leaderElectRetryPeriod.ms,
    taint: f.taint,
    agentDaemonSet: f.agentDaemonset === undefined ? { namespace: f.namespace, name: DEFAULT_AGENT_DAEMONSET } : (f.agentDaemonset ?? undefined),
    maxWritesPerSecond: f.maxWritesPerSecond,
    http: { host: f.httpAddress.host, port: f.httpAddress.port },
    logLevel: f.logLevel,
  };
}

const CONTROLLER_COMMAND: CommandDefinition<ControllerFlags> = {
  name: 'nodepulse controller',
  usage: USAGE,
  specs: CONTROLLER_SPECS,
  schema: controllerFields.pipe(z.custom<ControllerFields>().superRefine(checkCrossFieldRules(CONTROLLER_RULES)).transform(toControllerFlags)),
};

/** The controller's flags (with POD_NAMESPACE and POD_NAME): the help, the flags, or a ConfigError. */
export function parseControllerFlags(argv: readonly string[], env: Env): CommandFlags<ControllerFlags> {
  return parseCommandFlags(argv, env, CONTROLLER_COMMAND);
}

/** The FleetController of this replica: the agents' Leases, the Nodes and the agent DaemonSet, watched; marks through a rate-limited marker. */
function fleetController(flags: ControllerFlags, client: KubeClient, clock: Clock, metrics: ControllerMetrics, logger: Logger): FleetController {
  return new FleetController({
    clock,
    leases: kubeListWatch<Lease>({
      client,
      path: leasesPath(flags.leaseNamespace),
      labelSelector: AGENT_LEASE_SELECTOR,
    }),
    nodes: kubeListWatch<Node>({ client, path: nodesPath(), protobuf: NODE_PROTOBUF }),
    marker: new NodeMarker({
      api: markerApi(client),
      clock,
      bucket: new TokenBucket(clock, flags.maxWritesPerSecond),
      identity: flags.identity,
      leaseNamespace: flags.leaseNamespace,
      taint: flags.taint,
      metrics,
      logger,
    }),
    metrics,
    logger,
    agentDaemonSet:
      flags.agentDaemonSet === undefined
        ? undefined
        : kubeListWatch<DaemonSetObject>({
            client,
            path: daemonSetsPath(flags.agentDaemonSet.namespace),
            fieldSelector: `metadata.name=${flags.agentDaemonSet.name}`,
          }),
    graceMs: flags.graceMs,
    selector: flags.selector,
    monitorPeriodMs: flags.monitorPeriodMs,
  });
}

/** The election, whose terms run the FleetController. */
function leaderElector(flags: ControllerFlags, client: KubeClient, clock: Clock, metrics: ControllerMetrics, logger: Logger, controller: FleetController): LeaderElector {
  return new LeaderElector({
    api: electionLeaseApi(client),
    clock,
    identity: flags.identity,
    namespace: flags.namespace,
    name: ELECTION_LEASE_NAME,
    leaseDurationMs: flags.leaseDurationMs,
    renewDeadlineMs: flags.renewDeadlineMs,
    retryPeriodMs: flags.retryPeriodMs,
    logger,
    onStartedLeading: async (term) => {
      metrics.leading.set(1);
      await controller.runTerm(term);
    },
    onStoppedLeading: () => metrics.leading.set(0),
    onNewLeader: (holder) => logger.info({ holder }, 'Observed leader'),
  });
}

export async function runController(argv: string[], io: CommandIo, signal: AbortSignal): Promise<number> {
  const parsed = flagsOrExit(argv, io, CONTROLLER_COMMAND);
  if ('exit' in parsed) return parsed.exit;
  const flags = parsed.flags;
  const { clock } = io;
  const logger = createLogger({ level: flags.logLevel, destination: { write: (s: string) => io.stdout.write(s) } });
  // Exit 1 when it cannot start (see the header), not the readers' 3.
  const made = await readerClientOrExit('nodepulse controller', flags, io, 1);
  if ('exit' in made) return made.exit;
  const client = made.client;
  const registry = new Registry();
  const metrics = createControllerMetrics(registry);
  const controller = fleetController(flags, client, clock, metrics, logger);
  const elector = leaderElector(flags, client, clock, metrics, logger, controller);
  // The gauge is read at scrape time on this replica's clock, so a starved leader reads 0 at once.
  metrics.leading.reset();
  const collect = (): void => metrics.leading.set(elector.isLeader() ? 1 : 0);

  const server = createControllerServer({
    checks: () => [electionHealthCheck(elector.heartbeat.snapshot(), clock.monotonicMs(), elector.retryPeriodMs, elector.isLeader())],
    collect,
    registry,
    onError: (err, path) => logger.error({ err, path }, 'HTTP handler failed'),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(flags.http.port, flags.http.host, () => resolve());
    });
  } catch (err) {
    io.stderr.write(`nodepulse controller: httpAddress: cannot listen: ${(err as Error).message}\n`);
    client.close();
    return 1;
  }
  const address = server.address();
  logger.info(
    {
      identity: flags.identity,
      electionLease: `${flags.namespace}/${ELECTION_LEASE_NAME}`,
      leaseNamespace: flags.leaseNamespace,
      agentDaemonSet: flags.agentDaemonSet === undefined ? '' : `${flags.agentDaemonSet.namespace}/${flags.agentDaemonSet.name}`,
      http: typeof address === 'object' && address !== null ? formatHostPort(address.address, address.port) : String(address),
      source: client.source,
    },
    'Controller started',
  );
  elector.start();
  if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  logger.info({ reason: String(signal.reason) }, 'Controller stopping');
  await elector.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  client.close();
  logger.info({}, 'Controller stopped');
  logger.flush();
  return 0;
}
