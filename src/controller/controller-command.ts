// `nodepulse controller`: the leader-elected reader that marks Nodes whose agent went silent.
//
// Every replica runs the election (election/leader-elector.ts); only the leader runs the
// FleetController, once per term, with a fenced term. /metrics and /healthz are served by
// every replica on --http-address. A signal stops it cleanly: belief ends, the leader task is
// aborted, the lease is released so a standby takes over at its next retry. SIGKILL leaves the
// lease to expire.
//
// Exit codes: 0 after a clean stop, 1 when it cannot start (kubeconfig, port), 2 bad flags.
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import type { Clock } from '../clock/clock.ts';
import { SystemClock } from '../clock/clock.ts';
import { formatDuration, parseDuration } from '../config/duration.ts';
import { parseHostPort, type HostPort } from '../config/host-port.ts';
import { electionLeaseApi } from '../election/election-lease-api.ts';
import {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  ELECTION_LEASE_NAME,
  LeaderElector,
  validateElectionTimings,
} from '../election/leader-elector.ts';
import { AGENT_LEASE_SELECTOR, DEFAULT_GRACE_MS, DEFAULT_LEASE_NAMESPACE, DEFAULT_NODE_SELECTOR } from '../fleet/fleet-view.ts';
import { parseLabelSelector, SelectorError, type LabelSelector } from '../fleet/label-selector.ts';
import { createLogger, LOG_LEVELS, type LogLevel } from '../log/logger.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { kubeConfigAuth } from '../kube/kubeconfig-auth.ts';
import { loadKubeconfig } from '../kube/load-kubeconfig.ts';
import type { Lease, Node } from '../kube/kube-types.ts';
import { kubeListWatch } from '../kube/list-watch.ts';
import { http } from '../node-http.ts';
import { createControllerMetrics } from './controller-metrics.ts';
import { DEFAULT_MONITOR_PERIOD_MS, FleetController } from './fleet-controller.ts';
import { markerApi, NodeMarker } from './node-marker.ts';
import { TokenBucket } from './token-bucket.ts';
import type { CommandIo } from '../cli/command-io.ts';

/** The CLI's CommandIo, with the clock optional (the system clock when omitted). */
export type ControllerIo = Omit<CommandIo, 'clock'> & { readonly clock?: Clock };

const USAGE = `Usage: nodepulse controller [flags]

Marks RuntimeRelistUnhealthy=Unknown/AgentLeaseStale on Nodes whose agent lease stopped moving,
and False/RelistHealthy when it moves again. Runs leader-elected; run two replicas.

Flags:
  --kubeconfig PATH                     kubeconfig (default $KUBECONFIG, else ~/.kube/config, else in-cluster)
  --context NAME                        kubeconfig context to use (default its current-context)
  --namespace NS                        namespace of the election lease (default $POD_NAMESPACE, else ${DEFAULT_LEASE_NAMESPACE})
  --identity ID                         this replica's name in the election (default $POD_NAME, else host name)
  --lease-namespace NS                  namespace of the agent leases (default ${DEFAULT_LEASE_NAMESPACE})
  --grace DURATION                      how long a lease may stand still and stay Fresh (default 50s)
  --node-selector SEL                   only judge nodes matching SEL (default ${DEFAULT_NODE_SELECTOR})
  --monitor-period DURATION             how often the whole fleet is judged (default 5s)
  --leader-elect-lease-duration D       default 15s
  --leader-elect-renew-deadline D       default 10s
  --leader-elect-retry-period D         default 2s
  --taint                               also add/remove the ${'nodepulse.io/agent-silent'}:NoSchedule taint
  --max-writes-per-second N             rate limit of all writes to Nodes and Events (default 10)
  --http-address HOST:PORT              /metrics and /healthz (default :9357)
  --log-level LEVEL                     default info
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
  readonly maxWritesPerSecond: number;
  readonly http: HostPort;
  readonly logLevel: LogLevel;
}

export function parseControllerFlags(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { flags: ControllerFlags } | { problems: string[] } | { help: true } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        namespace: { type: 'string' },
        identity: { type: 'string' },
        'lease-namespace': { type: 'string', default: DEFAULT_LEASE_NAMESPACE },
        grace: { type: 'string', default: formatDuration(DEFAULT_GRACE_MS) },
        'node-selector': { type: 'string', default: DEFAULT_NODE_SELECTOR },
        'monitor-period': { type: 'string', default: formatDuration(DEFAULT_MONITOR_PERIOD_MS) },
        'leader-elect-lease-duration': { type: 'string', default: formatDuration(DEFAULT_LEASE_DURATION_MS) },
        'leader-elect-renew-deadline': { type: 'string', default: formatDuration(DEFAULT_RENEW_DEADLINE_MS) },
        'leader-elect-retry-period': { type: 'string', default: formatDuration(DEFAULT_RETRY_PERIOD_MS) },
        taint: { type: 'boolean', default: false },
        'max-writes-per-second': { type: 'string', default: '10' },
        'http-address': { type: 'string', default: ':9357' },
        'log-level': { type: 'string', default: 'info' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { problems: [`flags: ${(err as Error).message}`] };
  }
  if (values.help) return { help: true };
  const problems: string[] = [];
  const duration = (key: string, text: string): number => {
    const ms = parseDuration(text);
    if (ms === undefined || !(ms > 0)) {
      problems.push(`${key}: ${JSON.stringify(text)} must be a positive duration such as 5s`);
      return 1;
    }
    return ms;
  };
  const graceMs = duration('grace', values.grace);
  const monitorPeriodMs = duration('monitorPeriod', values['monitor-period']);
  const leaseDurationMs = duration('leaderElectLeaseDuration', values['leader-elect-lease-duration']);
  const renewDeadlineMs = duration('leaderElectRenewDeadline', values['leader-elect-renew-deadline']);
  const retryPeriodMs = duration('leaderElectRetryPeriod', values['leader-elect-retry-period']);
  if (problems.length === 0) problems.push(...validateElectionTimings(leaseDurationMs, renewDeadlineMs, retryPeriodMs));
  if (problems.length === 0 && !(monitorPeriodMs < graceMs)) problems.push(`monitorPeriod: ${values['monitor-period']} must be shorter than grace (${values.grace})`);
  const rate = Number(values['max-writes-per-second']);
  if (!(rate > 0) || !Number.isFinite(rate)) problems.push(`maxWritesPerSecond: ${JSON.stringify(values['max-writes-per-second'])} must be a number more than 0`);
  const http = parseHostPort(values['http-address']);
  if (http === undefined) problems.push(`httpAddress: ${JSON.stringify(values['http-address'])} must be host:port, such as :9357 or 127.0.0.1:0`);
  const level = values['log-level'];
  const logLevel = LOG_LEVELS.find((l) => l === level);
  if (logLevel === undefined) problems.push(`logLevel: ${JSON.stringify(level)} must be one of ${LOG_LEVELS.join(', ')}`);
  let selector: LabelSelector | undefined;
  try {
    selector = parseLabelSelector(values['node-selector']);
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    problems.push(err.message);
  }
  const identity = values.identity ?? env['POD_NAME'] ?? hostname();
  if (identity === '') problems.push('identity: "" must be non-empty');
  if (problems.length > 0 || selector === undefined || http === undefined || logLevel === undefined) return { problems };
  return {
    flags: {
      kubeconfig: values.kubeconfig,
      context: values.context,
      namespace: values.namespace ?? env['POD_NAMESPACE'] ?? DEFAULT_LEASE_NAMESPACE,
      identity,
      leaseNamespace: values['lease-namespace'],
      graceMs,
      selector,
      monitorPeriodMs,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
      taint: values.taint,
      maxWritesPerSecond: rate,
      http,
      logLevel,
    },
  };
}

export async function runController(argv: string[], io: ControllerIo, signal: AbortSignal): Promise<number> {
  const parsed = parseControllerFlags(argv, io.env);
  if ('help' in parsed) {
    io.stdout.write(USAGE);
    return 0;
  }
  if ('problems' in parsed) {
    for (const p of parsed.problems) io.stderr.write(`nodepulse controller: ${p}\n`);
    return 2;
  }
  const flags = parsed.flags;
  const clock = io.clock ?? new SystemClock();
  const logger = createLogger({ level: flags.logLevel, destination: { write: (s: string) => io.stdout.write(s) } });
  let client: KubeClient;
  try {
    const loaded = loadKubeconfig({ kubeconfig: flags.kubeconfig, context: flags.context, env: io.env, homeDir: io.env['HOME'] });
    // A node list page is 500 Nodes: a few MiB of realistic Nodes, under this cap.
    client = new KubeClient({ auth: kubeConfigAuth(loaded), clock, maxResponseBytes: 64 * 1024 * 1024 });
  } catch (err) {
    io.stderr.write(`nodepulse controller: ${(err as Error).message}\n`);
    return 1;
  }
  const registry = new Registry();
  const metrics = createControllerMetrics(registry);
  const controller = new FleetController({
    clock,
    leases: kubeListWatch<Lease>({
      client,
      path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(flags.leaseNamespace)}/leases`,
      labelSelector: AGENT_LEASE_SELECTOR,
    }),
    nodes: kubeListWatch<Node>({ client, path: '/api/v1/nodes' }),
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
    graceMs: flags.graceMs,
    selector: flags.selector,
    monitorPeriodMs: flags.monitorPeriodMs,
  });
  const elector = new LeaderElector({
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
  // The gauge is read at scrape time on this replica's clock, so a starved leader reads 0 at once.
  metrics.leading.reset();
  const collect = (): void => metrics.leading.set(elector.isLeader() ? 1 : 0);

  const server: Server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      collect();
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
      );
      return;
    }
    if (path === '/healthz') {
      const beat = elector.heartbeat.snapshot();
      const ok = beat.ended === undefined;
      res
        .writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ok ? `ok: ${elector.isLeader() ? 'leading' : 'standby'}\n` : `election loop ended: ${beat.ended}\n`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
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
      http: typeof address === 'object' && address !== null ? `${address.address}:${address.port}` : String(address),
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
