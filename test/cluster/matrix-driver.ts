// The fault matrix run on the test cluster: nodepulse installed with a run's settings
// (test/matrix/matrix-settings.ts), its controller and `nodepulse fleet --watch` beside it, and
// every row of test/matrix/matrix-rows.ts made real on one node, watched, judged
// (test/matrix/row-judge.ts) and restored before the next. The CI test (fault-matrix.test.ts) and
// `npm run matrix:cluster` (scripts/matrix-cluster.ts) both drive it.
//
// How each fault is made on the faulted node (np-node-1 unless told):
//
// | row                  | onset                                         | end                          |
// |----------------------|-----------------------------------------------|------------------------------|
// | runtime-hangs        | SIGSTOP containerd                            | SIGCONT                      |
// | runtime-refuses      | SIGKILL containerd (its socket file stays and | containerd started again     |
// |                      | refuses)                                      |                              |
// | lists-hang           | the CRI fault proxy holds ListPodSandbox and  | the fault cleared            |
// |                      | ListContainers, for every caller              |                              |
// | lists-slow           | the proxy delays the two lists by the row's   | the fault cleared            |
// |                      | delay                                         |                              |
// | answer-undecodable   | the proxy garbles the lists' answers for the  | the fault cleared            |
// |                      | agent's user-agent alone                      |                              |
// | start-while-hung     | the agent's pod scheduled again (the node's   | SIGCONT the proxy, faults    |
// |                      | label back) while the proxy holds the agent's | cleared                      |
// |                      | calls; once one is held, the proxy SIGSTOPped |                              |
// |                      | (every caller hangs, as with containerd)      |                              |
// | start-while-refused  | the same; once a call is held, the proxy      | a new proxy at the same path |
// |                      | SIGKILLed (its socket refuses every caller)   |                              |
// | socket-eacces        | the socket chmod 000 (the agent runs without  | chmod 0660                   |
// |                      | capabilities, so uid 0 alone does not open    |                              |
// |                      | it; the kubelet keeps its own), then the      |                              |
// |                      | agent's pod scheduled again                   |                              |
// | no-socket            | the socket renamed (the kubelet's connection  | renamed back                 |
// |                      | lives on), then the agent's pod scheduled     |                              |
// | agent-wedged         | SIGSTOP the agent                             | none: the liveness probe     |
// |                      |                                               | kills it                     |
// | kubelet-stopped      | SIGSTOP the kubelet                           | SIGCONT                      |
// | api-unreachable      | DROP to the API server's addresses in the     | the rule deleted             |
// |                      | agent's pod network namespace (the kubelet's  |                              |
// |                      | own path is the node's, untouched)            |                              |
//
// "Scheduled again": the DaemonSet here selects nodes by the label MATRIX_LABEL; taking it off the
// node removes the agent's pod (waited for until its process is gone), the fault is made, and
// putting it back makes a new pod, so the new agent starts inside the fault. The onset is the
// label's return; the rows' windows allow the pod's start (agentStartMs).
//
// The proxy rows run together: containerd is moved to UPSTREAM_SOCKET once (node-control.ts), the
// proxy listens at the default path for the kubelet and the agent alike, and containerd is moved
// back after them.
//
// The controller runs on this machine with the run's flags and `--agent-daemonset=""`: a row that
// takes the agent's pod off the node and puts it back changes the DaemonSet's desired count, which
// the controller reads as a rollout whose tail lasts minReadySeconds (90 s), pausing the very
// marking the later rows watch. The pause itself is the rollout test's (rollout.test.ts).
//
// What is read, all the time, from the install to the end: the Node (Ready and the condition) and
// the agent's Lease, polled every POLL_MS, and every line of `fleet --watch -o json`. A row's
// readings are turned into signals (test/matrix/sightings.ts) relative to its onset: a renewal
// at its renewTime (the writer's clock is this machine's), everything else when it was read.
//
// Before each row the node must be healthy (HEALTHY_MS at most): the agent's pod Ready, the
// condition False/RelistHealthy, the lease renewed within one renew interval and a second, the
// kubelet's Ready True, fleet Fresh. A row that fails to restore fails with the row's name.
//
// Failure modes: every wait is bounded; every fault is undone in the row's own finally (SIGCONT,
// chmod, rename, rule deleted, containerd started), and the install, the proxy and the readers
// in the run's cleanup, whatever failed.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SystemClock, wallMs } from '../../src/clock/clock.ts';
import { matrixRows, type MatrixRow, type RowId } from '../matrix/matrix-rows.ts';
import type { MatrixSettings } from '../matrix/matrix-settings.ts';
import { judgeRow, type RowOutcome, type Sighting } from '../matrix/row-judge.ts';
import { sightings, type FleetReading, type NodeReading } from '../matrix/sightings.ts';
import { AGENT_USER_AGENT, startCriFaultProxy, type CriFaultProxy } from '../support/cri-fault-proxy.ts';
import { freePort } from '../support/free-port.ts';
import { readLines } from '../support/line-reader.ts';
import { renderOverlay, remove, apply } from './agent-identity.ts';
import { agentProcess, importAgentImage, listPods, waitPodsReady } from './agent-on-cluster.ts';
import type { K8sObject } from '../deploy/render.ts';
import { isRunning } from './daemon.ts';
import { CONTAINERD_SOCKET, daemonOf, hostPath, moveContainerdSocket, nodeOf, startNodeDaemon } from './node-control.ts';
import type { SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const clock = new SystemClock();
const REPO_ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(REPO_ROOT, 'src', 'cli', 'main.ts');

export const MATRIX_NAMESPACE = 'nodepulse';
/** The label the matrix's DaemonSet selects nodes by (see the header). */
export const MATRIX_LABEL = 'nodepulse.io/matrix-agent';
const AGENT_SELECTOR = 'app.kubernetes.io/component=agent';
/** Where containerd listens while the proxy holds the default path. */
export const UPSTREAM_SOCKET = '/run/containerd/matrix-upstream.sock';
const AWAY_SOCKET = '/run/containerd/matrix-away.sock';
/** The API server's addresses as the agent's pod reaches them: the `kubernetes` Service, and the server itself. */
const API_ADDRESSES = ['198.18.128.1', '198.18.0.1'];
const POLL_MS = 250;
/** A pod's restart, the agent's first relist and renewal, and the kubelet's next status, on a loaded machine. */
const HEALTHY_MS = 180_000;
const AGENT_GONE_MS = 60_000;
const HELD_MS = 60_000;
const PROXY_ROWS: readonly RowId[] = ['lists-hang', 'lists-slow', 'answer-undecodable', 'start-while-hung', 'start-while-refused'];

export interface RowRun {
  readonly row: MatrixRow;
  readonly outcome: RowOutcome;
  readonly timeline: Sighting[];
  readonly endMs: number | undefined;
  /** The row's wall time, setup and restore included. */
  readonly tookMs: number;
}

export interface MatrixRun {
  readonly rows: RowRun[];
  readonly node: string;
}

export interface MatrixOptions {
  readonly cluster: SharedCluster;
  readonly settings: MatrixSettings;
  /** Which rows, in matrixRows' order (default all). */
  readonly only?: readonly RowId[];
  readonly node?: string;
  readonly log: (line: string) => void;
  /** Called as each row ends (the script records as it goes). */
  readonly onRow?: (run: RowRun) => void;
  /** Cleanups, run last first (a test's t.after, or the script's own list). */
  readonly after: (fn: () => Promise<void> | void) => void;
}

interface Readings {
  nodes: Array<NodeReading & { mono: number }>;
  renewalsWall: Set<number>;
  fleet: Array<FleetReading & { mono: number }>;
  lastError: string | undefined;
}

/** The rows to run, proxy rows last (they share one move of containerd), each once. */
export function rowsToRun(settings: MatrixSettings, only?: readonly RowId[]): MatrixRow[] {
  const all = matrixRows(settings.timings);
  if (only !== undefined) {
    const unknown = only.filter((id) => !all.some((r) => r.id === id));
    if (unknown.length > 0) throw new Error(`rows: ${unknown.join(', ')} must be among ${all.map((r) => r.id).join(', ')}`);
  }
  const chosen = all.filter((r) => only === undefined || only.includes(r.id));
  return [...chosen.filter((r) => !PROXY_ROWS.includes(r.id)), ...chosen.filter((r) => PROXY_ROWS.includes(r.id))];
}

export async function runMatrix(o: MatrixOptions): Promise<MatrixRun> {
  const { cluster, settings, log } = o;
  const nodeName = o.node ?? cluster.state.nodes[0]?.name ?? 'np-node-1';
  const node = nodeOf(cluster.state, nodeName);
  const rows = rowsToRun(settings, o.only);

  // The install: the repository's overlay, with the run's flags and the matrix's node label.
  const objects = await renderOverlay(cluster);
  const ds = objects.find((x) => x.kind === 'DaemonSet') as (K8sObject & { spec: { template: { spec: { nodeSelector?: Record<string, string>; containers: Array<{ name: string; args?: string[] }> } } } }) | undefined;
  assert.ok(ds !== undefined, 'precondition: the overlay renders the agent DaemonSet');
  ds.spec.template.spec.nodeSelector = { ...ds.spec.template.spec.nodeSelector, [MATRIX_LABEL]: 'run' };
  const agent = ds.spec.template.spec.containers.find((c) => c.name === 'agent');
  assert.ok(agent !== undefined, 'precondition: the DaemonSet has the agent container');
  if (settings.agentArgs.length > 0) agent.args = [...settings.agentArgs];
  for (const n of cluster.state.nodes) await cluster.kubectl(['label', 'node', n.name, `${MATRIX_LABEL}=run`, '--overwrite']);
  o.after(async () => {
    await remove(cluster, objects).catch((err: unknown) => log(`cleanup: removing the install failed: ${String(err)}`));
    for (const n of cluster.state.nodes) await cluster.kubectl(['label', 'node', n.name, `${MATRIX_LABEL}-`], { allowFailure: true });
  });
  await importAgentImage(cluster);
  await apply(cluster, objects);
  await waitPodsReady(cluster, MATRIX_NAMESPACE, AGENT_SELECTOR);
  log(`installed: agent ${settings.agentArgs.join(' ') || '(shipped defaults)'} on ${cluster.state.nodes.map((n) => n.name).join(', ')}`);

  // The readers.
  const readings: Readings = { nodes: [], renewalsWall: new Set(), fleet: [], lastError: undefined };
  const controller = await startController(o);
  const fleet = startFleet(o, nodeName, readings);
  const stopPolling = startPolling(cluster, nodeName, readings);
  o.after(() => {
    stopPolling();
    fleet.kill('SIGTERM');
    controller.kill('SIGTERM');
  });

  const ctx: RowContext = { o, nodeName, nodeIndex: node.index, readings, proxy: undefined, controlSocket: `/tmp/np-matrix-proxy-${process.pid}.sock` };
  o.after(() => restoreProxyPhase(ctx));
  const runs: RowRun[] = [];
  for (const row of rows) {
    const started = clock.monotonicMs();
    let run: Omit<RowRun, 'tookMs'>;
    try {
      if (PROXY_ROWS.includes(row.id) && ctx.proxy === undefined) await enterProxyPhase(ctx);
      await waitHealthy(ctx, `before row ${row.id}`);
      run = await runRow(ctx, row);
    } catch (err) {
      // A row that could not run (a restore that never came): the node is in no state for the next.
      run = { row, outcome: { problems: [`could not run: ${err instanceof Error ? err.message : String(err)}`], seen: {} }, timeline: [], endMs: undefined };
    }
    runs.push({ ...run, tookMs: clock.monotonicMs() - started });
    o.onRow?.(runs[runs.length - 1] as RowRun);
    log(`row ${row.id}: ${run.outcome.problems.length === 0 ? 'as expected' : `${run.outcome.problems.length} problem(s)`} (${Math.round((clock.monotonicMs() - started) / 1000)} s)`);
    if (run.timeline.length === 0) break;
  }
  await restoreProxyPhase(ctx);
  await waitHealthy(ctx, 'after the last row');
  return { rows: runs, node: nodeName };
}

interface RowContext {
  readonly o: MatrixOptions;
  readonly nodeName: string;
  readonly nodeIndex: number;
  readonly readings: Readings;
  proxy: CriFaultProxy | undefined;
  readonly controlSocket: string;
}

interface Fault {
  /** Before the onset (the agent taken off the node, a fault staged for the new agent). */
  prepare?(): Promise<void>;
  start(): Promise<void>;
  end?(): Promise<void>;
  /** Always run: undoes whatever is left (idempotent). */
  restore(): Promise<void>;
}

async function runRow(ctx: RowContext, row: MatrixRow): Promise<Omit<RowRun, 'tookMs'>> {
  const fault = faultOf(ctx, row);
  let onsetMono = 0;
  let onsetWall = 0;
  let endMs: number | undefined;
  try {
    await fault.prepare?.();
    onsetMono = clock.monotonicMs();
    onsetWall = wallMs(clock);
    await fault.start();
    await sleepUntil(onsetMono + row.faultMs);
    if (fault.end !== undefined) {
      endMs = clock.monotonicMs() - onsetMono;
      await fault.end();
    }
    await sleepUntil(clock.monotonicMs() + row.afterEndMs);
  } finally {
    await fault.restore();
  }
  const endOfWatchMs = clock.monotonicMs() - onsetMono;
  const r = ctx.readings;
  const t = ctx.o.settings.timings;
  const timeline = sightings({
    nodes: r.nodes.filter((n) => n.mono >= onsetMono - 2 * t.graceMs).map((n) => ({ atMs: n.mono - onsetMono, ready: n.ready, condition: n.condition })),
    renewalsMs: [...r.renewalsWall].filter((w) => w >= onsetWall - 2 * t.graceMs).map((w) => w - onsetWall),
    fleet: r.fleet.filter((f) => f.mono >= onsetMono - 2 * t.graceMs).map((f) => ({ atMs: f.mono - onsetMono, verdict: f.verdict })),
    endOfWatchMs,
    leaseAllowedMs: t.renewIntervalMs * 1.04 + t.apiLatencyMs,
  });
  const outcome = judgeRow(row.expect, timeline, endMs);
  return { row, outcome, timeline, endMs };
}

function sleepUntil(monoMs: number): Promise<void> {
  return clock.sleep(Math.max(0, monoMs - clock.monotonicMs()));
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function faultOf(ctx: RowContext, row: MatrixRow): Fault {
  const { cluster } = ctx.o;
  const state = cluster.state;
  const node = nodeOf(state, ctx.nodeName);
  const containerd = `${ctx.nodeName}/containerd`;
  const kubelet = `${ctx.nodeName}/kubelet`;
  const socket = hostPath(node, CONTAINERD_SOCKET);
  const away = hostPath(node, AWAY_SOCKET);
  const agentOff = (): Promise<void> => takeAgentOff(ctx);
  const agentOn = async (): Promise<void> => {
    await cluster.kubectl(['label', 'node', ctx.nodeName, `${MATRIX_LABEL}=run`, '--overwrite']);
  };
  switch (row.id) {
    case 'runtime-hangs': {
      const pid = daemonOf(state, containerd).pid;
      return { start: async () => signal(pid, 'SIGSTOP'), end: async () => signal(pid, 'SIGCONT'), restore: async () => signal(pid, 'SIGCONT') };
    }
    case 'runtime-refuses': {
      const restart = async (): Promise<void> => {
        if (isRunning(daemonOf(state, containerd))) return;
        const started = startNodeDaemon(state, containerd);
        await waitFor(`${containerd} answers again`, () => {
          execFileSync('ctr', ['-a', socket, 'version'], { stdio: 'ignore', timeout: 5_000 });
          return true;
        }, { clock, timeoutMs: 60_000, daemon: started });
      };
      return {
        start: async () => {
          const pid = daemonOf(state, containerd).pid;
          signal(pid, 'SIGKILL');
          await waitFor(`${containerd} (pid ${pid}) gone`, () => !alive(pid) || 'still running', { clock, timeoutMs: 10_000, intervalMs: 20 });
        },
        end: restart,
        restore: restart,
      };
    }
    case 'kubelet-stopped': {
      const pid = daemonOf(state, kubelet).pid;
      return { start: async () => signal(pid, 'SIGSTOP'), end: async () => signal(pid, 'SIGCONT'), restore: async () => signal(pid, 'SIGCONT') };
    }
    case 'agent-wedged': {
      let pid = 0;
      return {
        start: async () => {
          pid = agentProcess(ctx.nodeIndex).pid;
          signal(pid, 'SIGSTOP');
        },
        restore: async () => {
          if (pid !== 0) signal(pid, 'SIGCONT');
        },
      };
    }
    case 'api-unreachable': {
      let pid = 0;
      const rule = (op: '-I' | '-D', address: string): void => {
        execFileSync('nsenter', ['-t', String(pid), '-n', 'iptables', '-w', '5', op, 'OUTPUT', '-d', `${address}/32`, '-j', 'DROP'], { stdio: 'pipe', timeout: 10_000 });
      };
      const undo = async (): Promise<void> => {
        if (pid === 0 || !alive(pid)) return;
        for (const a of API_ADDRESSES) {
          try {
            rule('-D', a);
          } catch {
            // not there (already deleted)
          }
        }
      };
      return {
        start: async () => {
          pid = agentProcess(ctx.nodeIndex).pid;
          for (const a of API_ADDRESSES) rule('-I', a);
        },
        end: undo,
        restore: undo,
      };
    }
    case 'socket-eacces':
      return {
        prepare: agentOff,
        start: async () => {
          chmodSync(socket, 0o000);
          await agentOn();
        },
        end: async () => chmodSync(socket, 0o660),
        restore: async () => {
          if (existsSync(socket)) chmodSync(socket, 0o660);
          await agentOn();
        },
      };
    case 'no-socket': {
      const back = async (): Promise<void> => {
        if (existsSync(away)) renameSync(away, socket);
      };
      return {
        prepare: agentOff,
        start: async () => {
          renameSync(socket, away);
          await agentOn();
        },
        end: back,
        restore: async () => {
          await back();
          await agentOn();
        },
      };
    }
    case 'lists-hang':
      return proxyFault(ctx, (p) => p.hang(['lists']));
    case 'lists-slow':
      return proxyFault(ctx, (p) => p.delay(['lists'], row.listDelayMs ?? 0));
    case 'answer-undecodable':
      return proxyFault(ctx, (p) => p.command({ methods: ['lists'], fault: 'garble', userAgent: AGENT_USER_AGENT }));
    case 'start-while-hung':
    case 'start-while-refused':
      return startFault(ctx, row.id, agentOff, agentOn);
  }
}

function proxyFault(ctx: RowContext, make: (p: CriFaultProxy) => Promise<unknown>): Fault {
  const proxy = (): CriFaultProxy => {
    assert.ok(ctx.proxy !== undefined, 'precondition: the CRI fault proxy is in place for this row');
    return ctx.proxy;
  };
  return {
    start: async () => {
      await make(proxy());
    },
    end: async () => {
      await proxy().clear();
    },
    restore: async () => {
      if (ctx.proxy?.running === true) await ctx.proxy.clear();
    },
  };
}

/** A new agent started inside a hang (the proxy SIGSTOPped) or a refusal (the proxy SIGKILLed). */
function startFault(ctx: RowContext, id: 'start-while-hung' | 'start-while-refused', agentOff: () => Promise<void>, agentOn: () => Promise<void>): Fault {
  let spread: Promise<void> = Promise.resolve();
  const restore = async (): Promise<void> => {
    await spread.catch(() => undefined);
    const p = ctx.proxy;
    if (p?.running === true) {
      signal(p.pid, 'SIGCONT');
      await p.clear();
    } else {
      await startProxy(ctx);
    }
  };
  return {
    prepare: async () => {
      await agentOff();
      assert.ok(ctx.proxy !== undefined, 'precondition: the CRI fault proxy is in place for this row');
      await ctx.proxy.command({ methods: ['*'], fault: 'hang', userAgent: AGENT_USER_AGENT });
    },
    start: async () => {
      await agentOn();
      const p = ctx.proxy as CriFaultProxy;
      // Once the new agent's first call is held, every caller gets the fault.
      spread = waitFor('the new agent\'s first CRI call held by the proxy', async () => {
        const held = (await p.state()).faults.reduce((n, f) => n + f.held, 0);
        return held > 0 || `held ${held}`;
      }, { clock, timeoutMs: HELD_MS, intervalMs: 50 }).then(() => {
        signal(p.pid, id === 'start-while-hung' ? 'SIGSTOP' : 'SIGKILL');
        ctx.o.log(`row ${id}: the new agent's first call is held; the proxy ${id === 'start-while-hung' ? 'stopped' : 'killed'}`);
      });
      spread.catch(() => undefined);
    },
    end: restore,
    restore,
  };
}

/** Takes the agent's pod off the node and waits until its process is gone. */
async function takeAgentOff(ctx: RowContext): Promise<void> {
  const { cluster } = ctx.o;
  await cluster.kubectl(['label', 'node', ctx.nodeName, `${MATRIX_LABEL}-`]);
  await waitFor(`the agent's pod gone from ${ctx.nodeName}`, async () => {
    const pods = (await listPods(cluster, MATRIX_NAMESPACE, AGENT_SELECTOR)).filter((p) => p.spec.nodeName === ctx.nodeName);
    if (pods.length > 0) return `still there: ${pods.map((p) => p.metadata.name).join(', ')}`;
    try {
      agentProcess(ctx.nodeIndex);
      return 'its process still runs';
    } catch {
      return true;
    }
  }, { clock, timeoutMs: AGENT_GONE_MS, intervalMs: 200 });
}

async function startProxy(ctx: RowContext): Promise<CriFaultProxy> {
  const state = ctx.o.cluster.state;
  const node = nodeOf(state, ctx.nodeName);
  const listen = hostPath(node, CONTAINERD_SOCKET);
  rmSync(listen, { force: true });
  rmSync(ctx.controlSocket, { force: true });
  ctx.proxy = await startCriFaultProxy({ after: ctx.o.after }, {
    listen,
    upstream: hostPath(node, UPSTREAM_SOCKET),
    control: ctx.controlSocket,
    ...(state.socketGid === undefined ? {} : { listenGid: state.socketGid }),
  });
  return ctx.proxy;
}

/** containerd moved off the default path, the proxy there in its place. */
async function enterProxyPhase(ctx: RowContext): Promise<void> {
  await moveContainerdSocket(ctx.o.cluster.state, ctx.nodeName, UPSTREAM_SOCKET, clock);
  await startProxy(ctx);
  ctx.o.log(`proxy: containerd of ${ctx.nodeName} at ${UPSTREAM_SOCKET}, the proxy (pid ${ctx.proxy?.pid}) at ${CONTAINERD_SOCKET}`);
}

/** The proxy gone and containerd back at the default path (nothing when it never moved). */
async function restoreProxyPhase(ctx: RowContext): Promise<void> {
  const p = ctx.proxy;
  if (p === undefined) return;
  ctx.proxy = undefined;
  if (p.running) {
    signal(p.pid, 'SIGCONT');
    await p.stop().catch(() => undefined);
  }
  await moveContainerdSocket(ctx.o.cluster.state, ctx.nodeName, CONTAINERD_SOCKET, clock);
}

async function waitHealthy(ctx: RowContext, when: string): Promise<void> {
  const { cluster, settings } = ctx.o;
  const t = settings.timings;
  await waitFor(`${when}: ${ctx.nodeName} healthy`, async () => {
    const pods = (await listPods(cluster, MATRIX_NAMESPACE, AGENT_SELECTOR)).filter((p) => p.spec.nodeName === ctx.nodeName);
    if (!pods.some((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))) return `the agent's pod is not Ready (${pods.map((p) => p.status.phase).join(', ') || 'none'})`;
    const r = ctx.readings;
    const last = r.nodes[r.nodes.length - 1];
    if (last === undefined) return `no reading of the Node yet (${r.lastError ?? ''})`;
    if (last.ready?.status !== 'True') return `kubelet Ready=${last.ready?.status}`;
    if (last.condition?.status !== 'False' || last.condition.reason !== 'RelistHealthy') return `condition ${last.condition?.status}/${last.condition?.reason}`;
    const newest = Math.max(...r.renewalsWall);
    const age = wallMs(clock) - newest;
    if (!(age <= t.renewIntervalMs * 1.04 + 1_000 + POLL_MS)) return `the lease last renewed ${age} ms ago`;
    const f = r.fleet[r.fleet.length - 1];
    if (f?.verdict !== 'Fresh') return `fleet ${f?.verdict ?? 'not read yet'}`;
    return true;
  }, { clock, timeoutMs: HEALTHY_MS, intervalMs: 500 });
}

interface NodeObject {
  status: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
}

function startPolling(cluster: SharedCluster, nodeName: string, r: Readings): () => void {
  let stopped = false;
  const loop = async (): Promise<void> => {
    while (!stopped) {
      const mono = clock.monotonicMs();
      try {
        const [n, l] = await Promise.all([
          cluster.request(`/api/v1/nodes/${nodeName}`),
          cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${MATRIX_NAMESPACE}/leases/${nodeName}`),
        ]);
        if (n.status === 200) {
          const conditions = (n.json as NodeObject).status.conditions ?? [];
          const pick = (type: string): NodeReading['ready'] => {
            const c = conditions.find((x) => x.type === type);
            return c === undefined ? undefined : { status: c.status, ...(c.reason === undefined ? {} : { reason: c.reason }), ...(c.message === undefined ? {} : { message: c.message }) };
          };
          r.nodes.push({ mono, atMs: 0, ready: pick('Ready'), condition: pick('RuntimeRelistUnhealthy') });
        }
        if (l.status === 200) {
          const renew = (l.json as { spec?: { renewTime?: string } }).spec?.renewTime;
          const at = renew === undefined ? NaN : Date.parse(renew);
          if (Number.isFinite(at)) r.renewalsWall.add(at);
        }
        r.lastError = undefined;
      } catch (err) {
        r.lastError = err instanceof Error ? err.message : String(err);
      }
      await clock.sleep(Math.max(0, POLL_MS - (clock.monotonicMs() - mono)));
    }
  };
  void loop();
  return () => {
    stopped = true;
  };
}

function startFleet(o: MatrixOptions, nodeName: string, r: Readings): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'fleet', '--watch', '-o', 'json', `--grace=${o.settings.fleetGrace}`, `--kubeconfig=${o.cluster.kubeconfig}`, `--lease-namespace=${MATRIX_NAMESPACE}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  readLines(child.stdout, (line) => {
    try {
      const doc = JSON.parse(line) as { nodes: Array<{ node: string; verdict: FleetReading['verdict'] }> };
      const mine = doc.nodes.find((x) => x.node === nodeName);
      if (mine !== undefined) r.fleet.push({ mono: clock.monotonicMs(), atMs: 0, verdict: mine.verdict });
    } catch {
      // not a JSON line
    }
  });
  child.stderr?.on('data', (d: Buffer) => o.log(`fleet: ${d.toString().trim()}`));
  return child;
}

async function startController(o: MatrixOptions): Promise<ChildProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [
    CLI, 'controller', `--kubeconfig=${o.cluster.kubeconfig}`, '--identity=matrix', `--http-address=127.0.0.1:${port}`, '--log-level=warn', '--agent-daemonset=', ...o.settings.controllerArgs,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (d: Buffer) => o.log(`controller: ${d.toString().trim()}`));
  return child;
}
