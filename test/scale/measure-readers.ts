// The two readers of the fleet, measured on the scale control plane as users run them:
//
// | reader                 | run as                                          | measured                               |
// |------------------------|-------------------------------------------------|----------------------------------------|
// | `nodepulse controller` | the built CLI as in its pod: a private mount    | spawn → every node judged (the sum of  |
// |                        | namespace with its service account's token and  | nodepulse_controller_nodes = N); RSS   |
// |                        | CA at the pod's path, KUBERNETES_SERVICE_HOST/  | then; RSS every few seconds over the   |
// |                        | PORT, the shipped Deployment's args (its        | steady window and its CPU over it      |
// |                        | --http-address moved to a free loopback port),  |                                        |
// |                        | the image's ENV (MALLOC_ARENA_MAX=1)            |                                        |
// | `nodepulse fleet -o json` | the built CLI with the admin's kubeconfig, as | spawn → exit (wall), peak RSS (VmHWM,  |
// |                        | a person runs it from a laptop                  | by /usr/bin/time), the exit code (0 or |
// |                        |                                                 | 1: both are verdicts)                  |
//
// Both read a fleet the load wrote (fleet-load.ts) while the agents renew (agent-fleet.ts), so
// the controller's watches carry the fleet's renewals throughout.
//
// Failure modes: a controller that exits, never starts or never judges the whole fleet within its
// bound throws with its log's tail; a fleet run that gives no verdict is returned with its exit
// code and stderr, as a figure of the run.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import { AGENT_ENV } from '../../src/cli/agent-node-flags.ts';
import { AGENT_MAIN, NODE_24 } from '../support/agent-process.ts';
import { inPodCommand, writeServiceAccount } from '../support/in-cluster.ts';
import type { AdminApi } from './admin-api.ts';
import { AGENT_NAMESPACE, controllerToken } from './fleet-load.ts';
import { SCALE_ADDRESS } from './layout.ts';
import { cpuSeconds, rssMiB } from './proc-stats.ts';
import { parseProm, sumOf } from './prom-text.ts';
import type { ScaleState } from './scale-control-plane.ts';

const START_MS = 60_000;
const SYNC_MS = 600_000;
const POLL_MS = 250;
const SAMPLE_MS = 5_000;
const STOP_MS = 20_000;

export interface ControllerRun {
  readonly nodes: number;
  /** Spawn → the first full pass over every node. */
  readonly syncMs: number;
  readonly rssAtSyncMiB: number;
  /** Every reading of the steady window, MiB. */
  readonly steadyRssMiB: readonly number[];
  readonly steadySeconds: number;
  /** CPU over the steady window, % of one core. */
  readonly steadyCpuPercent: number;
}

/** Runs the controller as the header says, for `steadyMs` after it judged all `nodes`. */
export async function measureController(options: {
  readonly state: ScaleState;
  readonly api: AdminApi;
  readonly shippedArgs: readonly string[];
  readonly nodes: number;
  readonly steadyMs: number;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** Extra environment for the controller process (e.g. NODE_OPTIONS for an experiment). */
  readonly env?: Readonly<Record<string, string>>;
  /** The built CLI to run; this checkout's dist/ by default (another build, to measure a change alone). */
  readonly main?: string;
}): Promise<ControllerRun> {
  const { state, api, clock, log } = options;
  // A fresh election: a lease left by an earlier run would make this one wait for it to expire.
  await api.request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${AGENT_NAMESPACE}/leases/nodepulse-controller`);
  const saDir = join(state.dir, 'controller-sa');
  rmSync(saDir, { recursive: true, force: true });
  mkdirSync(saDir, { recursive: true });
  const account = writeServiceAccount(saDir, { server: state.server, ca: state.caPem, token: await controllerToken(api), namespace: AGENT_NAMESPACE });
  const args = [...options.shippedArgs.filter((a) => !a.startsWith('--http-address')), `--http-address=${SCALE_ADDRESS}:0`];
  const command = inPodCommand(account, NODE_24, [options.main ?? AGENT_MAIN, 'controller', ...args]);
  const started = clock.monotonicMs();
  const child = spawn(command.file, command.args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...AGENT_ENV, ...account.env, POD_NAMESPACE: AGENT_NAMESPACE, POD_NAME: 'nodepulse-controller-scale', ...options.env },
  });
  let logs = '';
  child.stdout.on('data', (d: Buffer) => {
    logs = (logs + d.toString('utf8')).slice(-200_000);
  });
  child.stderr.on('data', (d: Buffer) => {
    logs = (logs + d.toString('utf8')).slice(-200_000);
  });
  const pid = child.pid ?? 0;
  const fail = (what: string): Error => new Error(`controller: ${what}; its log ends:\n${logs.slice(-3000)}`);
  try {
    let port: number | undefined;
    while (port === undefined) {
      if (child.exitCode !== null) throw fail(`exited ${child.exitCode}`);
      if (clock.monotonicMs() - started > START_MS) throw fail(`no "Controller started" within ${START_MS} ms`);
      const m = /"msg":"Controller started".*?"http":"[^"]*:(\d+)"/.exec(logs) ?? /"http":"[^"]*:(\d+)".*?"msg":"Controller started"/.exec(logs);
      if (m !== null) port = Number(m[1]);
      else await clock.sleep(POLL_MS);
    }
    const judged = async (): Promise<number> => {
      try {
        const text = await (await fetch(`http://${SCALE_ADDRESS}:${port}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
        return sumOf(parseProm(text), 'nodepulse_controller_nodes');
      } catch {
        return 0;
      }
    };
    while ((await judged()) < options.nodes) {
      if (child.exitCode !== null) throw fail(`exited ${child.exitCode}`);
      if (clock.monotonicMs() - started > SYNC_MS) throw fail(`did not judge ${options.nodes} nodes within ${SYNC_MS} ms`);
      await clock.sleep(POLL_MS);
    }
    const syncMs = clock.monotonicMs() - started;
    const rssAtSyncMiB = rssMiB(pid) ?? Number.NaN;
    log(`controller judged ${options.nodes} nodes ${(syncMs / 1000).toFixed(1)} s after spawn, RSS ${rssAtSyncMiB.toFixed(1)} MiB`);
    const steadyRssMiB: number[] = [];
    const cpu0 = cpuSeconds(pid) ?? 0;
    const t0 = clock.monotonicMs();
    while (clock.monotonicMs() - t0 < options.steadyMs) {
      await clock.sleep(SAMPLE_MS);
      if (child.exitCode !== null) throw fail(`exited ${child.exitCode} during the steady window`);
      steadyRssMiB.push(rssMiB(pid) ?? Number.NaN);
    }
    const steadySeconds = (clock.monotonicMs() - t0) / 1000;
    const steadyCpuPercent = (((cpuSeconds(pid) ?? cpu0) - cpu0) / steadySeconds) * 100;
    return { nodes: options.nodes, syncMs, rssAtSyncMiB, steadyRssMiB, steadySeconds, steadyCpuPercent };
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      const until = clock.monotonicMs() + STOP_MS;
      while (child.exitCode === null && clock.monotonicMs() < until) await clock.sleep(POLL_MS);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(saDir, { recursive: true, force: true });
  }
}

export interface FleetRun {
  readonly wallMs: number;
  /** 0 (all judged Fresh) or 1 (some Stale or Missing) are verdicts; 3 is a failure to ask the API. */
  readonly exitCode: number;
  /** fleet's stderr when it gave no verdict. */
  readonly error?: string;
  readonly peakRssMiB: number;
  readonly judged: number;
  readonly fresh: number;
}

/** One `nodepulse fleet -o json` with the admin's kubeconfig, as the header says. */
export async function measureFleet(options: { readonly kubeconfig: string; readonly clock: Clock; readonly env?: Readonly<Record<string, string>>; readonly main?: string }): Promise<FleetRun> {
  const { clock } = options;
  const started = clock.monotonicMs();
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('/usr/bin/time', ['-f', 'peakKiB=%M', NODE_24, options.main ?? AGENT_MAIN, 'fleet', '--kubeconfig', options.kubeconfig, '-o', 'json'], {
      maxBuffer: 256 * 1024 * 1024,
      timeout: 300_000,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...options.env },
    }, (err, stdout, stderr) => resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), stdout, stderr }));
  });
  const wallMs = clock.monotonicMs() - started;
  const peak = /peakKiB=(\d+)/.exec(result.stderr);
  if (peak === null) throw new Error(`nodepulse fleet: /usr/bin/time printed no peak (exit ${result.code}): ${result.stderr.slice(-2000)}`);
  if (result.code !== 0 && result.code !== 1) {
    return { wallMs, exitCode: result.code, error: result.stderr.replace(/\n?peakKiB=\d+\s*$/, '').trim(), peakRssMiB: Number(peak[1]) / 1024, judged: 0, fresh: 0 };
  }
  const doc = JSON.parse(result.stdout) as { summary: { judged: number; fresh: number } };
  return { wallMs, exitCode: result.code, peakRssMiB: Number(peak[1]) / 1024, judged: doc.summary.judged, fresh: doc.summary.fresh };
}
