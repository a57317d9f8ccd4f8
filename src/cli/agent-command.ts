// `nodepulse agent`: load and validate the config (exit 2 with one line per problem), then run
// the agent until the signal aborts (exit 0).
//
// Start-up never waits for the runtime or the API server: a node that boots its runtime after
// the agent, or an API server that is down, is exactly what the agent must report, so both are
// faults the loops see and recover from, not reasons to exit.
import { readFileSync, statSync } from 'node:fs';
import { Registry } from '../metrics/prom-client.ts';
import { Agent } from '../agent/agent.ts';
import { DebugHookError, installDebugHooks } from '../agent/debug-hooks.ts';
import { ResolvingRuntimeClient } from '../cri/resolving-runtime-client.ts';
import type { RelistLedgerReader } from '../relist/relist-ledger.ts';
import { agentUsage } from '../config/agent-usage.ts';
import { wantsHelp } from '../config/flag-grammar.ts';
import { loadAgentConfig, MAX_CONFIG_FILE_BYTES } from '../config/load-agent-config.ts';
import { printableConfig } from '../config/printable-config.ts';
import { parseCriEndpoint } from '../cri/endpoint.ts';
import { createRuntimeClient } from '../cri/runtime-client.ts';
import { KubeClient } from '../kube/kube-client.ts';
import { pickKubeAuth } from '../kube/auth/pick-kube-auth.ts';
import { createLogger } from '../log/logger.ts';
import type { CommandIo } from './command-io.ts';

export async function runAgentCommand(argv: string[], io: CommandIo, signal: AbortSignal): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout.write(agentUsage());
    return 0;
  }
  const loaded = loadAgentConfig({ argv, env: io.env, readFile: readConfigFile });
  if (!loaded.ok) {
    for (const line of loaded.error.lines) io.stderr.write(`${line}\n`);
    return 2;
  }
  const { config } = loaded;
  if (loaded.printConfig) {
    io.stdout.write(`${JSON.stringify(printableConfig(config), null, 2)}\n`);
    return 0;
  }

  let auth;
  try {
    auth = await pickKubeAuth({ who: 'agent', kubeconfig: config.kubeconfig, context: undefined, env: io.env, homeDir: undefined, clock: io.clock });
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }

  const logger = createLogger({ level: config.logLevel });
  // Fault-suite hooks (SIGUSR1/SIGUSR2), installed only when their env variable is set.
  let uninstallHooks: () => void;
  try {
    uninstallHooks = installDebugHooks({ env: io.env, clock: io.clock, logger, signals: process });
  } catch (err) {
    if (!(err instanceof DebugHookError)) throw err;
    io.stderr.write(`${err.message}\n`);
    return 2;
  }
  const kube = new KubeClient({ auth, clock: io.clock, timeoutMs: config.apiTimeoutMs });
  // An endpoint given by flag, env or file is used as given (the runtime may still be starting);
  // without one, the known sockets are probed until one answers CRI Version and a relist on it
  // succeeds, preferring the runtime the Node's containerRuntimeVersion names.
  // The socket in use is held once a relist succeeds on it, as the agent's ledger says.
  const relists: { ledger?: RelistLedgerReader } = {};
  const runtime = new ResolvingRuntimeClient({
    configured: config.criEndpoint === undefined ? undefined : { ...parseCriEndpoint(config.criEndpoint), source: loaded.sources.criEndpoint },
    clock: io.clock,
    create: (endpoint) => createRuntimeClient({ endpoint, maxMessageBytes: config.maxMessageSizeBytes, clock: io.clock }),
    nodeRuntime: async (signal) => (await kube.getNode(config.nodeName, { signal })).status?.nodeInfo?.containerRuntimeVersion,
    relistSucceeded: () => relists.ledger?.record().lastSuccess !== undefined,
    logger,
  });
  const agent = new Agent({ config, clock: io.clock, logger, registry: new Registry(), runtime, kube, criEndpoint: () => runtime.view() });
  relists.ledger = agent.relister.ledger;
  logger.info({ apiServer: auth.source, leaseNamespace: config.leaseNamespace }, 'Kubernetes API target');
  try {
    await agent.start();
  } catch (err) {
    logger.error({ err, httpAddress: config.httpAddress }, 'HTTP server failed to listen');
    await agent.close();
    kube.close();
    uninstallHooks();
    return 1;
  }
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  logger.info({ reason: String((signal.reason as Error | undefined)?.message ?? 'aborted') }, 'Agent stopping');
  await agent.close();
  kube.close();
  uninstallHooks();
  logger.flush();
  return 0;
}

function readConfigFile(path: string): string {
  const size = statSync(path).size;
  if (size > MAX_CONFIG_FILE_BYTES) throw new Error(`${size} bytes is larger than ${MAX_CONFIG_FILE_BYTES}`);
  return readFileSync(path, 'utf8');
}
