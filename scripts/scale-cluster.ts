// `npm run scale:cluster -- COMMAND`: nodepulse's readers and its fleet at scale, on a real
// Kubernetes v1.34.4 API server of their own (test/scale/).
//
//   up                      the private control plane on 127.0.88.1 (test/scale/scale-control-plane.ts)
//   load [--nodes N]        nodepulse's objects, N kubelet-shaped Nodes with their agent Leases,
//                           and a bound token per agent (test/scale/fleet-load.ts); default 5,000
//   readers [--renewing N] [--minutes M] [--fleet-runs R]
//                           with N agents renewing (default 1,000: about what this machine's API
//                           server sustains beside the rest, see below) and every Node's 5-minute
//                           status report: the controller as in its pod (time to judge all, RSS,
//                           M minutes of steady state, default 3) and `nodepulse fleet -o json` R
//                           times (default 3)
//   cost [--agents N] [--window S]
//                           the API server's and etcd's cost of N agents' renewals against N
//                           kubelets' (default 1,000; windows of S seconds, default 60)
//   all                     up, load, readers, cost, down; the report at the end
//   down                    everything up made, gone
//
// Options for every measuring command: --json FILE writes the figures as JSON; --cli FILE measures
// another build of the CLI (its dist/src/cli/main.js), to measure one change alone. The report goes to
// stdout, progress to stderr. Needs root (cgroups, a private mount namespace for the controller),
// openssl, Go (the kubelet simulator) and the test cluster's binaries (built on first use).
//
// On the project's shared 2-core machine the API server saturates near 130 lease writes a second
// (measured with a pool of keep-alive connections), so 5,000 agents at one write per 10 s each
// (500 a second) cannot all renew here; the readers are measured with --renewing agents moving
// and the other Leases standing still (Stale to the readers, which changes what they print, not
// what they hold).
//
// Exit codes: 0 done; 1 a step failed (the control plane is left up for a look; `down` clears
// it, except under `all`, which always takes it down); 2 a wrong command or option.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SystemClock } from '../src/clock/clock.ts';
import { buildBinaries } from '../test/cluster/build-binaries.ts';
import { adminApi, type AdminApi } from '../test/scale/admin-api.ts';
import type { FleetCounts } from '../test/scale/agent-fleet.ts';
import { buildKubeletLeases } from '../test/scale/build-kubelet-leases.ts';
import { agentTokens, installNodepulse, writeFleet } from '../test/scale/fleet-load.ts';
import { measureCost, per1000, type CostReport, type WindowCost } from '../test/scale/measure-cost.ts';
import { measureController, measureFleet, type ControllerRun, type FleetRun } from '../test/scale/measure-readers.ts';
import { readScaleState, scaleDown, scaleUp, type ScaleState } from '../test/scale/scale-control-plane.ts';
import { NODE_24 } from '../test/support/agent-process.ts';

const USAGE = 'usage: npm run scale:cluster -- up | load [--nodes N] | readers [--renewing N] [--minutes M] [--fleet-runs R] | cost [--agents N] [--window S] | all | down  [--json FILE] [--cli FILE]';
const clock = new SystemClock();
const t0 = clock.monotonicMs();
const log = (line: string): void => {
  process.stderr.write(`[${((clock.monotonicMs() - t0) / 1000).toFixed(1).padStart(7)}s] ${line}\n`);
};
/** How long the agents have to all renew once before the readers are measured. */
const FLEET_READY_MS = 300_000;

interface Options {
  readonly nodes: number;
  readonly renewing: number;
  readonly agents: number;
  readonly minutes: number;
  readonly fleetRuns: number;
  readonly windowS: number;
  readonly json: string | undefined;
  readonly cli: string | undefined;
}

function stateOrThrow(): ScaleState {
  const state = readScaleState();
  if (state === undefined) throw new Error('scale control plane: none is up (npm run scale:cluster -- up)');
  return state;
}

function apiOf(state: ScaleState, maxSockets = 32): AdminApi {
  return adminApi({ server: state.server, caPem: state.caPem, cert: state.admin.cert, key: state.admin.key, maxSockets });
}

const tokensFile = (state: ScaleState): string => join(state.dir, 'agent-tokens.json');
const loadFile = (state: ScaleState): string => join(state.dir, 'load.json');

async function up(): Promise<ScaleState> {
  const built = await buildBinaries({ clock, log: (line: string) => log(line) });
  const state = await scaleUp({ binDir: built.dir, clock, log });
  log(`up: Kubernetes ${built.versions.kubernetes} at ${state.server}; KUBECONFIG=${state.kubeconfig}`);
  return state;
}

async function load(nodes: number): Promise<void> {
  const state = stateOrThrow();
  const api = apiOf(state);
  try {
    log('installing nodepulse (without its DaemonSet and the controller Deployment)');
    const args = installNodepulse(join(state.binDir, 'kubectl'), state.kubeconfig);
    const started = clock.monotonicMs();
    await writeFleet(api, { count: nodes, concurrency: 32, wallMs: () => Math.floor(clock.wallMicros() / 1000), log });
    log(`${nodes} Nodes and agent Leases in ${((clock.monotonicMs() - started) / 1000).toFixed(1)} s`);
    const t = clock.monotonicMs();
    await agentTokens(api, { count: nodes, concurrency: 32, cacheFile: tokensFile(state), log });
    log(`${nodes} agent Pods and bound tokens in ${((clock.monotonicMs() - t) / 1000).toFixed(1)} s`);
    writeFileSync(loadFile(state), JSON.stringify({ nodes, controllerArgs: args }));
  } finally {
    api.close();
  }
}

function loaded(state: ScaleState): { nodes: number; controllerArgs: string[] } {
  return JSON.parse(readFileSync(loadFile(state), 'utf8')) as { nodes: number; controllerArgs: string[] };
}

/** Every agent renewing, and the kubelets' status reports, in a process of their own. */
async function startFleet(state: ScaleState, agents: number, statusNodes: number): Promise<{ child: ChildProcess; counts: () => FleetCounts | undefined }> {
  const child = spawn(NODE_24, [
    join(import.meta.dirname, '..', 'test', 'scale', 'agent-fleet-main.ts'),
    '--server', state.server, '--ca', join(state.pkiDir, 'ca.crt'), '--tokens', tokensFile(state), '--agents', String(agents),
    '--status-nodes', String(statusNodes), '--admin-cert', state.admin.cert, '--admin-key', state.admin.key,
  ], { stdio: ['ignore', 'pipe', 'inherit'] });
  let latest: FleetCounts | undefined;
  let buffered = '';
  child.stdout?.on('data', (d: Buffer) => {
    buffered += d.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line !== '') latest = JSON.parse(line) as FleetCounts;
  });
  const started = clock.monotonicMs();
  while ((latest?.renewedOnce ?? 0) < agents) {
    if (child.exitCode !== null) throw new Error(`agent fleet exited ${child.exitCode}`);
    if (clock.monotonicMs() - started > FLEET_READY_MS) throw new Error(`agents: ${latest?.renewedOnce ?? 0} of ${agents} renewed within ${FLEET_READY_MS} ms (failures ${JSON.stringify(latest?.failures)})`);
    await clock.sleep(500);
  }
  log(`${agents} agents renewing (failures so far ${JSON.stringify(latest?.failures ?? {})}), ${statusNodes} Nodes reporting status every 5 min`);
  return { child, counts: () => latest };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  const until = clock.monotonicMs() + 15_000;
  while (child.exitCode === null && clock.monotonicMs() < until) await clock.sleep(100);
  if (child.exitCode === null) child.kill('SIGKILL');
}

interface ReadersReport {
  readonly controller: ControllerRun;
  readonly fleet: FleetRun[];
  readonly fleetCounts: FleetCounts | undefined;
}

async function readers(o: Options): Promise<ReadersReport> {
  const state = stateOrThrow();
  const { nodes, controllerArgs } = loaded(state);
  const fleet = await startFleet(state, Math.min(o.renewing, nodes), nodes);
  const api = apiOf(state, 4);
  try {
    const main = o.cli === undefined ? {} : { main: o.cli };
    const controller = await measureController({ state, api, shippedArgs: controllerArgs, nodes, steadyMs: o.minutes * 60_000, clock, log, ...main });
    const runs: FleetRun[] = [];
    for (let i = 0; i < o.fleetRuns; i++) {
      const run = await measureFleet({ kubeconfig: state.kubeconfig, clock, ...main });
      log(`nodepulse fleet -o json: exit ${run.exitCode} after ${run.wallMs.toFixed(0)} ms, peak RSS ${run.peakRssMiB.toFixed(1)} MiB, ${run.fresh}/${run.judged} fresh${run.error === undefined ? '' : `: ${run.error}`}`);
      runs.push(run);
    }
    return { controller, fleet: runs, fleetCounts: fleet.counts() };
  } finally {
    api.close();
    await stopChild(fleet.child);
  }
}

async function cost(o: Options): Promise<CostReport> {
  const state = stateOrThrow();
  const binary = buildKubeletLeases(log);
  const api = apiOf(state, 4);
  try {
    return await measureCost({ state, api, clients: o.agents, windowMs: o.windowS * 1000, tokensFile: tokensFile(state), kubeletLeasesBinary: binary, clock, log });
  } finally {
    api.close();
  }
}

const f1 = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(1));
const f2 = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? 'n/a' : n.toFixed(2));
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : ((s[Math.floor((s.length - 1) / 2)] ?? 0) + (s[Math.ceil((s.length - 1) / 2)] ?? 0)) / 2;
};

function readersMarkdown(r: ReadersReport): string {
  const c = r.controller;
  const lines = [
    `### The readers at ${c.nodes} Nodes (${r.fleetCounts?.agents ?? 0} agents renewing: ${r.fleetCounts?.renewals ?? 0} renewals, failures ${JSON.stringify(r.fleetCounts?.failures ?? {})}; ${r.fleetCounts?.statusReports ?? 0} Node status reports)`,
    '',
    '| reader | time | RSS |',
    '|---|---|---|',
    `| controller, as in its pod | judged all ${(c.syncMs / 1000).toFixed(1)} s after spawn | ${f1(c.rssAtSyncMiB)} MiB then; steady over ${(c.steadySeconds / 60).toFixed(1)} min: median ${f1(median(c.steadyRssMiB))}, max ${f1(Math.max(...c.steadyRssMiB))}, last ${f1(c.steadyRssMiB.at(-1))} MiB; CPU ${f2(c.steadyCpuPercent)} % of a core |`,
    ...r.fleet.map((f, i) => `| \`nodepulse fleet -o json\`, run ${i + 1} | ${f.wallMs.toFixed(0)} ms, spawn to exit ${f.exitCode} ${f.error === undefined ? `(${f.fresh} of ${f.judged} judged Fresh)` : `(${f.error})`} | peak ${f1(f.peakRssMiB)} MiB |`),
    '',
  ];
  return lines.join('\n');
}

function costRow(what: string, w: WindowCost): string {
  return `| ${what} | ${f1(w.requestsPerSecond)} | ${f1(w.leaseWritesPerSecond)} | ${f1(w.bytesUpPerSecond / 1024)} / ${f1(w.bytesDownPerSecond / 1024)} | ${f1(w.apiserverCpuPercent)} | ${f1(w.etcdCpuPercent)} | ${f1(w.etcdPutsPerSecond)} / ${f1(w.etcdProposalsPerSecond)} | ${w.seatLevel ?? '–'}: ${f2(w.seatMs)} ms, wait ${f2(w.queueWaitMs)} ms |`;
}

function costMarkdown(r: CostReport): string {
  return [
    `### The API server's cost per 1,000 clients (measured with ${r.clients} of each, idle subtracted)`,
    '',
    '| clients | requests/s | lease writes/s | KiB/s up / down (TLS, on the wire) | kube-apiserver CPU % | etcd CPU % | etcd puts/s / proposals/s | seat time per request |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    costRow('nodepulse agents (merge PATCH, HTTP/1.1 JSON)', per1000(r.agents, r.idle, r.clients)),
    costRow('kubelets (PUT with resourceVersion, HTTP/2 protobuf)', per1000(r.kubelets, r.idle, r.clients)),
    costRow(`idle control plane (as measured, not scaled)`, r.idle),
    '',
    `Agents: ${r.agents.renewals} renewals in the ${r.agents.seconds.toFixed(0)} s window, mean ${f1(r.agents.meanRenewalMs)} ms each as the client saw it; failures ${JSON.stringify(r.agents.failures)}.`,
    '',
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        nodes: { type: 'string', default: '5000' },
        renewing: { type: 'string', default: '1000' },
        agents: { type: 'string', default: '1000' },
        minutes: { type: 'string', default: '3' },
        'fleet-runs': { type: 'string', default: '3' },
        window: { type: 'string', default: '60' },
        json: { type: 'string' },
        cli: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, ...rest] = parsed.positionals;
  const num = (key: 'nodes' | 'renewing' | 'agents' | 'minutes' | 'fleet-runs' | 'window'): number | string => {
    const text = parsed.values[key];
    return /^\d+(\.\d+)?$/.test(text) && Number(text) > 0 ? Number(text) : `${key}: ${text} must be a number more than 0`;
  };
  const values = { nodes: num('nodes'), renewing: num('renewing'), agents: num('agents'), minutes: num('minutes'), fleetRuns: num('fleet-runs'), windowS: num('window') };
  const bad = Object.values(values).filter((v): v is string => typeof v === 'string');
  if (command === undefined || rest.length > 0 || bad.length > 0) {
    process.stderr.write(`${[...bad, USAGE].join('\n')}\n`);
    return 2;
  }
  const o: Options = { ...(values as { nodes: number; renewing: number; agents: number; minutes: number; fleetRuns: number; windowS: number }), json: parsed.values.json, cli: parsed.values.cli };
  const report: Record<string, unknown> = {};
  const finish = (markdown: string): void => {
    process.stdout.write(markdown);
    if (o.json !== undefined) writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
  };
  switch (command) {
    case 'up':
      process.stdout.write(`KUBECONFIG=${(await up()).kubeconfig}\n`);
      return 0;
    case 'down': {
      const left = await scaleDown({ clock, log });
      if (left.length > 0) process.stderr.write(`down left behind:\n${left.join('\n')}\n`);
      return left.length > 0 ? 1 : 0;
    }
    case 'load':
      await load(o.nodes);
      return 0;
    case 'readers': {
      const r = await readers(o);
      report['readers'] = r;
      finish(readersMarkdown(r));
      return 0;
    }
    case 'cost': {
      const r = await cost(o);
      report['cost'] = r;
      finish(costMarkdown(r));
      return 0;
    }
    case 'all': {
      try {
        await up();
        await load(o.nodes);
        const r = await readers(o);
        report['readers'] = r;
        const c = await cost(o);
        report['cost'] = c;
        finish(`${readersMarkdown(r)}\n${costMarkdown(c)}`);
      } finally {
        const left = await scaleDown({ clock, log });
        if (left.length > 0) process.stderr.write(`down left behind:\n${left.join('\n')}\n`);
      }
      return 0;
    }
    default:
      process.stderr.write(`command: ${command} must be up, load, readers, cost, all or down\n${USAGE}\n`);
      return 2;
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
}
