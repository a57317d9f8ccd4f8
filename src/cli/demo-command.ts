// `nodepulse demo [--forever] [--http-address 127.0.0.1:9356] [--cri-endpoint URL] [--speed N]`
//
// The whole idea on one machine, with nothing to install: an in-process Kubernetes API stand-in
// holding one Node, a simulated CRI runtime with a few pods that churn, and the real agent with
// short timings between them. Then a scenario plays, and a timeline prints what an operator
// would see:
//
//   healthy → the runtime hangs → the relists age out → the lease is withheld and the Node
//   condition turns True/RelistStale → the runtime recovers → the lease moves again and the
//   condition turns False/RelistHealthy.
//
// With --cri-endpoint it observes a real runtime instead of the simulated one: it never hangs
// it, never calls anything but the agent's read-only CRI calls, and only watches.
// It ends by itself after the scenario (about a minute), or runs on with --forever.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { z } from 'zod/v3';
import { Agent } from '../agent/agent.ts';
import { startApiServer, type ApiServerHandle } from '../stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../stand-ins/api-server/kubeconfig.ts';
import { registerNode } from '../stand-ins/api-server/register-node.ts';
import type { Clock } from '../clock/clock.ts';
import { flagsHelp, GRAMMAR_HELP, flagsOrExit, type CommandDefinition } from '../config/command-flags.ts';
import { booleanFlag, valueFlag, type FlagSpec } from '../config/flag-grammar.ts';
import { loadAgentConfig } from '../config/load-agent-config.ts';
import { address, goBool, logLevel, unixSocketUrl, type Address } from '../config/value-schemas.ts';
import { createRuntimeClient } from '../cri/runtime-client.ts';
import { startSimRuntime, type SimRuntime } from '../stand-ins/cri-runtime/sim-runtime.ts';
import { runFleet } from './fleet-command.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { leanAuth } from '../kube/auth/lean-auth.ts';
import { createLogger, type LogLevel } from '../log/logger.ts';
import type { CommandIo } from './command-io.ts';
import { DemoTimeline } from '../demo/demo-timeline.ts';

export const DEMO_NODE = 'demo-node';

/** The scenario, in seconds from start (at --speed 1). */
const HANG_AT_S = 12;
const FLEET_DURING_HANG_AT_S = 32;
const RECOVER_AT_S = 34;
const FLEET_AT_END_S = 46;
const END_AT_S = 48;
/** The fleet reader's grace in the demo: the demo's lease duration. */
const DEMO_FLEET_GRACE = '8s';

/** Short timings so the story fits in a minute; the defaults are 1m / 20s / 40s / 10s. */
const DEMO_TIMINGS = [
  '--relist-threshold=10s',
  '--relist-deadline=3s',
  '--lease-duration=8s',
  '--renew-interval=2s',
  '--status-period=2s',
  '--status-deadline=2s',
  '--idle-window=20s',
  '--stuck-window=15s',
  '--api-timeout=2s',
];

const DEMO_SPECS: readonly FlagSpec[] = [
  booleanFlag('--forever', 'run on after the scenario, until interrupted'),
  valueFlag('--http-address', 'HOST:PORT', '127.0.0.1:9356', "the agent's /status and /metrics"),
  valueFlag('--cri-endpoint', 'URL', undefined, 'observe this real runtime (a unix:// URL) instead of the simulated one; it is never hung, only watched'),
  valueFlag('--log-level', 'LEVEL', 'silent', "the agent's log level (its JSON lines go to stderr)"),
];

const USAGE = `Usage: nodepulse demo [flags]

Runs the whole idea on this machine: an API stand-in, a simulated runtime that hangs and
recovers, and the real agent between them, with a timeline of what an operator would see.

Flags:
${flagsHelp(DEMO_SPECS)}
${GRAMMAR_HELP}
`;

const DEMO_COMMAND: CommandDefinition<{ forever: boolean; httpAddress: Address; criEndpoint?: string | undefined; logLevel: LogLevel }> = {
  name: 'nodepulse demo',
  usage: USAGE,
  specs: DEMO_SPECS,
  schema: z.object({ forever: goBool, httpAddress: address('127.0.0.1:9356'), criEndpoint: unixSocketUrl.optional(), logLevel }),
};

export async function runDemo(argv: string[], io: CommandIo, signal: AbortSignal): Promise<number> {
  const parsed = flagsOrExit(argv, io, DEMO_COMMAND);
  if ('exit' in parsed) return parsed.exit;
  const flags = parsed.flags;
  const observeOnly = flags.criEndpoint !== undefined;
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-demo-'));
  const clock = io.clock;
  const timeline = new DemoTimeline(io.stdout, clock);
  let sim: SimRuntime | undefined;
  let api: ApiServerHandle | undefined;
  let agent: Agent | undefined;
  let kube: KubeClient | undefined;
  try {
    api = await startApiServer({ clock });
    await registerNode(api.url, DEMO_NODE);
    const endpoint = flags.criEndpoint !== undefined
      ? flags.criEndpoint
      : (sim = await startSimRuntime({ socketPath: join(dir, 'cri.sock'), pods: 4, containersPerPod: 2, churnPerSecond: 1, clock })).endpoint;

    const loaded = loadAgentConfig({
      argv: [
        `--node-name=${DEMO_NODE}`,
        `--cri-endpoint=${endpoint}`,
        `--http-address=${flags.httpAddress.text}`,
        `--log-level=${flags.logLevel}`,
        '--kubeconfig=unused',
        ...DEMO_TIMINGS,
      ],
      env: {},
      readFile: () => {
        throw new Error('no config file in the demo');
      },
    });
    if (!loaded.ok) throw new Error(`demo config: ${loaded.error.lines.join('; ')}`);
    const config = loaded.config;
    kube = new KubeClient({ auth: leanAuth({ server: api.url, source: 'in-process API stand-in', clock }), clock, timeoutMs: config.apiTimeoutMs });
    const logger = createLogger({ level: config.logLevel, destination: { write: (line: string) => io.stderr.write(line) } });
    agent = new Agent({
      config,
      clock,
      logger,
      registry: new Registry(),
      runtime: createRuntimeClient({ endpoint, maxMessageBytes: config.maxMessageSizeBytes, clock }),
      kube,
    });
    const address = await agent.start();
    const base = `http://${address.address}:${address.port}`;
    timeline.say(`API stand-in     ${api.url} (Node ${DEMO_NODE})`);
    timeline.say(`CRI runtime      ${endpoint}${sim === undefined ? ' (real: observed only)' : ' (simulated: 4 pods × 2 containers, churning)'}`);
    timeline.say(`agent /status    ${base}/status`);
    timeline.say(`agent /metrics   ${base}/metrics`);
    timeline.say(`timings          threshold 10s, relist deadline 3s, lease 8s renewed every 2s`);

    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, { server: api.url });
    timeline.say(`kubeconfig       ${kubeconfig} (try: nodepulse fleet --kubeconfig ${kubeconfig} --grace ${DEMO_FLEET_GRACE})`);

    const watch = timeline.watch(agent, api, DEMO_NODE, signal);
    const fleet = async (): Promise<void> => {
      let text = '';
      const sink = { write: (chunk: string) => (text += chunk) };
      const code = await runFleet(['--kubeconfig', kubeconfig, '--grace', DEMO_FLEET_GRACE], { stdout: sink, stderr: sink, env: {}, clock }, signal);
      timeline.say(`$ nodepulse fleet --grace ${DEMO_FLEET_GRACE}   (exit ${code})`);
      for (const line of text.trimEnd().split('\n')) if (line.trim() !== '') timeline.say(`    ${line}`);
    };
    const runningSim = sim;
    const steps: Array<[number, string, () => Promise<void> | void]> = runningSim === undefined
      ? [[FLEET_AT_END_S, 'a reader looks at the fleet', fleet]]
      : [
          [HANG_AT_S, 'SCENARIO: the runtime hangs (every CRI call is accepted and never answered)', () => runningSim.addFault({ method: '*', hang: true })],
          [FLEET_DURING_HANG_AT_S, 'a reader looks at the fleet while the lease is withheld', fleet],
          [RECOVER_AT_S, 'SCENARIO: the runtime recovers (calls are answered again)', () => runningSim.clearFaults()],
          [FLEET_AT_END_S, 'a reader looks at the fleet again', fleet],
        ];
    const started = clock.monotonicMs();
    for (const [atS, text, act] of steps) {
      if (!(await sleepUntil(clock, started + atS * 1000, signal))) break;
      timeline.say(text);
      await act();
    }
    if (flags.forever) {
      timeline.say('running on (--forever); Ctrl-C to stop');
      await sleepUntil(clock, Number.POSITIVE_INFINITY, signal);
    } else if (await sleepUntil(clock, started + END_AT_S * 1000, signal)) {
      timeline.summary();
    }
    await watch.stop();
    return timeline.complete() || observeOnly ? 0 : 1;
  } catch (err) {
    io.stderr.write(`nodepulse demo: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    await agent?.close();
    kube?.close();
    await sim?.close();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function sleepUntil(clock: Clock, atMs: number, signal: AbortSignal): Promise<boolean> {
  const wait = atMs - clock.monotonicMs();
  try {
    await clock.sleep(Number.isFinite(wait) ? Math.max(0, wait) : 2 ** 31 - 1, signal);
    return true;
  } catch {
    return false;
  }
}
