// Whom the verdict blames, seen from outside: the built agent, a real process, with a 3 s relist
// threshold, against the API stand-in, watched for at least twice the threshold from its start.
//
// | the agent at its start                                      | the Node condition it writes        | /readyz | /livez |
// |-------------------------------------------------------------|-------------------------------------|---------|--------|
// | non-root, without the socket's group, before a real         | Unknown/AgentCannotObserve          | 503     | 200    |
// |   containerd (EACCES), probing as the shipped DaemonSet     |   (permission-denied), never True   |         |        |
// | a runtime whose listings it cannot decode (the simulated    | Unknown/AgentCannotObserve          | 503     | 200    |
// |   runtime's malformed fault: field 1 as a varint)           |   (undecodable), never True         |         |        |
// | no runtime socket at any known path (a mount namespace)     | Unknown/AgentCannotObserve          | 503     | 200    |
// |                                                             |   (no-socket), never True           |         |        |
// | a real containerd SIGSTOPped (it hangs), probing            | True/RelistNeverSucceeded, never    | 200     | 200    |
// |                                                             |   AgentCannotObserve                |         |        |
// | a real containerd killed (its socket refuses), probing      | True/RelistNeverSucceeded, never    | 200     | 200    |
// |                                                             |   AgentCannotObserve                |         |        |
//
// Each is written once the agent has been up for more than the threshold (the start rule), and
// never before. The probing rows run the agent with the shipped DaemonSet's settings (no
// endpoint) in a private mount namespace whose /run holds only the test's sockets
// (test/support/mount-namespace.ts), so the agent finds the runtime as on a node. The non-root
// agent is started through `setpriv` (util-linux) inside that namespace, as uid and gid 65534
// with no supplementary group: the socket (containerd's `[grpc] gid`, root:GID 0660) refuses it.
//
// Real time is right here: these are real processes. The judgements' timing is tested on a
// manual clock by the unit tests.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { ContainerdFixture, requireContainerd } from '../fixtures/containerd.ts';
import { metricValue, startAgentProcess, startStandIn, type AgentProcess, type StandIn } from '../support/agent-process.ts';
import { namespaceLauncher, requireMountNamespace, shippedAgentSettings } from '../support/mount-namespace.ts';
import { requireExecutables } from '../support/require.ts';

const THRESHOLD_MS = 3_000;
/** Every row is watched at least this long from the agent's start: more than twice the threshold. */
const WATCH_MS = 2 * THRESHOLD_MS + 1_000;
/** The condition loop looks every second; a loaded machine adds its own delay. */
const WRITE_BOUND_MS = THRESHOLD_MS + 1_000 + 3_000;
/** /readyz and /livez are read this often while watching. */
const PROBE_EVERY_MS = 200;
/** The shortened timings (relist deadline below the threshold; the probe's own Version deadline is 2 s). */
const TIMINGS: readonly string[] = [
  `--relist-threshold=${THRESHOLD_MS / 1000}s`,
  '--relist-deadline=1s',
  '--relist-period=1s',
  '--lease-duration=4s',
  '--renew-interval=1s',
  '--lease-recheck=1s',
  '--api-timeout=2s',
];
/** The non-root agent: nobody, with no supplementary group. */
const NOBODY = 65_534;
/** The socket's group: a gid no process here runs with (not the image test's 64321). */
const SOCKET_GID = 64_322;

interface Written {
  readonly atMs: number;
  readonly status: string;
  readonly reason: string;
  readonly message: string | undefined;
}

/** Every RuntimeRelistUnhealthy the API stand-in accepted for the node, in order. */
function conditionsWritten(world: StandIn): Written[] {
  const path = `/api/v1/nodes/${world.nodeName}/status`;
  return world.api.requests
    .all()
    .filter((r) => r.method === 'PATCH' && r.path === path && r.status !== undefined && r.status < 300)
    .flatMap((r) => {
      const conditions = (r.parsed as { status?: { conditions?: Array<{ type?: string; status?: string; reason?: string; message?: string }> } }).status?.conditions ?? [];
      return conditions.filter((c) => c.type === 'RuntimeRelistUnhealthy').map((c) => ({ atMs: r.atMs, status: c.status ?? '', reason: c.reason ?? '', message: c.message }));
    });
}

interface Watched {
  readonly spawnedAtMs: number;
  readonly startedAtMs: number;
  readonly probes: ReadonlyArray<{ readonly atMs: number; readonly readyz: number; readonly livez: number }>;
  readonly written: readonly Written[];
  readonly metrics: string;
  readonly status: Awaited<ReturnType<AgentProcess['status']>>;
}

/**
 * Starts the agent, then reads /readyz and /livez until WATCH_MS after its start, and on until
 * the condition was written (at most WRITE_BOUND_MS after its start); returns what was seen.
 */
async function watchAgent(t: TestContext, world: StandIn, options: Parameters<typeof startAgentProcess>[1]): Promise<{ agent: AgentProcess; watched: Watched }> {
  const clock = new SystemClock();
  const spawnedAtMs = clock.monotonicMs();
  const agent = await startAgentProcess(t, options);
  // Both clocks are the process's monotonic clock (SystemClock), so the log line's arrival compares with spawnedAtMs.
  const startedAtMs = agent.keptLogs().find((k) => k.line['msg'] === 'Agent started')?.atMs ?? spawnedAtMs;
  const probes: Array<{ atMs: number; readyz: number; livez: number }> = [];
  const watching = (): boolean => {
    const up = clock.monotonicMs() - startedAtMs;
    return up < WATCH_MS || (conditionsWritten(world).length === 0 && up < WRITE_BOUND_MS);
  };
  while (watching()) {
    const [readyz, livez] = await Promise.all([agent.get('/readyz'), agent.get('/livez')]);
    probes.push({ atMs: clock.monotonicMs(), readyz: readyz.status, livez: livez.status });
    await clock.sleep(PROBE_EVERY_MS);
  }
  assert.ok(agent.running, `the agent never exits; stderr: ${agent.stderrTail()}`);
  return { agent, watched: { spawnedAtMs, startedAtMs, probes, written: conditionsWritten(world), metrics: await agent.metrics(), status: await agent.status() } };
}

/** What every row where the agent cannot observe must show. */
function assertCannotObserve(t: TestContext, w: Watched, why: string, words: RegExp): void {
  const states = w.written.map((c) => `${c.status}/${c.reason}`);
  assert.ok(!w.written.some((c) => c.status === 'True'), `the API never received True: ${JSON.stringify(states)}`);
  assert.deepEqual(states, ['Unknown/AgentCannotObserve'], 'it received Unknown/AgentCannotObserve, once');
  const [first] = w.written;
  assert.ok(first !== undefined);
  assert.ok(first.atMs > w.spawnedAtMs + THRESHOLD_MS, `not written within the threshold of start (written ${Math.round(first.atMs - w.spawnedAtMs)} ms after spawn)`);
  assert.ok(first.atMs <= w.startedAtMs + WRITE_BOUND_MS, `written within ${WRITE_BOUND_MS} ms of start (took ${Math.round(first.atMs - w.startedAtMs)} ms)`);
  assert.match(first.message ?? '', new RegExp(`^the agent cannot observe the runtime \\(${why}\\): `));
  assert.match(first.message ?? '', words, 'the message keeps the runtime\'s own words');
  t.diagnostic(`${why}: Unknown/AgentCannotObserve written ${Math.round(first.atMs - w.startedAtMs)} ms after the agent started`);

  assert.deepEqual([w.status.runtime.state, w.status.runtime.why], ['CannotObserve', why]);
  assert.equal(w.status.lease.renewing, false, 'the lease is withheld');
  assert.equal(metricValue(w.metrics, 'nodepulse_runtime_healthy'), undefined, 'no nodepulse_runtime_healthy sample: NodePulseRuntimeUnhealthy cannot fire');
  assert.equal(metricValue(w.metrics, 'nodepulse_runtime_observable'), 0);

  assert.ok(w.probes.every((p) => p.livez === 200), `/livez is 200 throughout: ${JSON.stringify(w.probes.filter((p) => p.livez !== 200))}`);
  const firstNotReady = w.probes.findIndex((p) => p.readyz === 503);
  assert.ok(firstNotReady >= 0, '/readyz turned 503');
  assert.ok(w.probes[firstNotReady]!.atMs - w.startedAtMs < THRESHOLD_MS, 'at once, not after the threshold');
  assert.ok(w.probes.at(-1)!.atMs - w.startedAtMs >= 2 * THRESHOLD_MS, 'precondition: watched for at least twice the threshold');
  assert.deepEqual(w.probes.slice(firstNotReady).filter((p) => p.readyz !== 503), [], '/readyz stays 503 from then on, to the end of the watch');
}

/** What every runtime-caused row must show. */
function assertRuntimeBlamed(t: TestContext, w: Watched, cause: string): void {
  const states = w.written.map((c) => `${c.status}/${c.reason}`);
  assert.ok(!states.includes('Unknown/AgentCannotObserve'), `never AgentCannotObserve: ${JSON.stringify(states)}`);
  assert.deepEqual(states, ['True/RelistNeverSucceeded'], 'True/RelistNeverSucceeded, once');
  const [first] = w.written;
  assert.ok(first !== undefined);
  assert.ok(first.atMs > w.spawnedAtMs + THRESHOLD_MS, 'not written within the threshold of start');
  assert.ok(first.atMs <= w.startedAtMs + WRITE_BOUND_MS, `written within ${WRITE_BOUND_MS} ms of start (took ${Math.round(first.atMs - w.startedAtMs)} ms)`);
  t.diagnostic(`${cause}: True/RelistNeverSucceeded written ${Math.round(first.atMs - w.startedAtMs)} ms after the agent started`);
  assert.equal(w.status.runtime.state, 'NotYetObserved');
  assert.equal(w.status.runtime.lastFault?.cause, cause, JSON.stringify(w.status.runtime.lastFault));
  assert.equal(metricValue(w.metrics, 'nodepulse_runtime_healthy'), 0, 'a runtime fault past the threshold reads 0');
  assert.equal(metricValue(w.metrics, 'nodepulse_runtime_observable'), 1);
  assert.deepEqual(w.probes.filter((p) => p.readyz !== 200 || p.livez !== 200), [], '/readyz and /livez are 200 throughout: a sick runtime never stalls a rollout');
}

/** A containerd of this file's own, started, with `[grpc] gid` when given. */
async function containerd(t: TestContext, socketGid?: number): Promise<ContainerdFixture> {
  const cd = new ContainerdFixture(mkdtempSync(join(tmpdir(), 'np-verdict-cd-')), socketGid === undefined ? {} : { socketGid });
  t.after(() => cd.close());
  cd.prepare();
  await cd.start();
  return cd;
}

/** The shipped DaemonSet's env and args for `node`, with the stand-in's kubeconfig and the short timings. */
function shipped(world: StandIn): { env: Record<string, string>; args: string[] } {
  const settings = shippedAgentSettings(world.nodeName);
  assert.equal(settings.env['CONTAINER_RUNTIME_ENDPOINT'], undefined, 'precondition: the shipped DaemonSet sets no endpoint: the agent probes');
  return { env: settings.env, args: [...settings.args, `--kubeconfig=${world.kubeconfig}`, ...TIMINGS] };
}

test('a non-root agent without the socket\'s group (EACCES) never writes True: Unknown/AgentCannotObserve, /readyz 503, /livez 200', async (t) => {
  if (!requireContainerd(t) || !requireMountNamespace(t)) return;
  const tools = requireExecutables(t, ['setpriv']);
  if (tools === undefined) return;
  const world = await startStandIn(t, { nodeName: 'verdict-eacces' });
  // The agent reads its kubeconfig as nobody.
  chmodSync(world.dir, 0o711);
  chmodSync(world.kubeconfig, 0o644);
  const cd = await containerd(t, SOCKET_GID);
  const socket = statSync(cd.socketPath);
  assert.deepEqual([socket.uid, socket.gid, socket.mode & 0o777], [0, SOCKET_GID, 0o660], 'precondition: the socket is root:<gid> 0660');
  const { env, args } = shipped(world);
  const setpriv = [tools['setpriv'] ?? 'setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
  const { agent, watched } = await watchAgent(t, world, { launcher: [...namespaceLauncher({ '/run/containerd': cd.dir }), ...setpriv], env, args });
  const probed = (watched.status as unknown as { criEndpoint: { probed: Array<{ endpoint: string; state: string; fault?: { cause: string } }> } }).criEndpoint.probed[0];
  assert.deepEqual([probed?.endpoint, probed?.state], ['unix:///run/containerd/containerd.sock', 'refused'], 'precondition: the socket is there and refuses the agent');
  assertCannotObserve(t, watched, 'permission-denied', /connect EACCES \/run\/containerd\/containerd\.sock/);
  assert.equal(probed?.fault?.cause, 'permission-denied', 'the probe saw why');
  await agent.stop();
});

test('an agent that cannot decode the runtime\'s listings never writes True: Unknown/AgentCannotObserve, /readyz 503, /livez 200', async (t) => {
  const world = await startStandIn(t, { nodeName: 'verdict-undecodable' });
  const sim = await startSimRuntime({ clock: world.clock, socketPath: join(world.dir, 'cri.sock'), pods: 2, containersPerPod: 1 });
  t.after(() => sim.close());
  sim.addFault({ method: 'ListContainers', malformed: true });
  const { agent, watched } = await watchAgent(t, world, { args: [`--node-name=${world.nodeName}`, `--cri-endpoint=${sim.endpoint}`, `--kubeconfig=${world.kubeconfig}`, ...TIMINGS] });
  assert.ok((sim.calls().answered['ListContainers'] ?? 0) >= 2, 'precondition: the runtime answered the listings, malformed');
  assertCannotObserve(t, watched, 'undecodable', /answer could not be decoded: field 1 has wire type 0, not its own/);
  await agent.stop();
});

test('an agent that finds no runtime socket at any known path never writes True: Unknown/AgentCannotObserve, /readyz 503, /livez 200', async (t) => {
  if (!requireMountNamespace(t)) return;
  const world = await startStandIn(t, { nodeName: 'verdict-no-socket' });
  const { env, args } = shipped(world);
  const { agent, watched } = await watchAgent(t, world, { launcher: namespaceLauncher({}), env, args });
  const probed = (watched.status as unknown as { criEndpoint: { probed: Array<{ state: string }> } }).criEndpoint.probed;
  assert.deepEqual(probed.map((p) => p.state), ['absent', 'absent', 'absent', 'absent'], 'precondition: nothing at any known path');
  assertCannotObserve(t, watched, 'no-socket', /no runtime chosen among unix:\/\/\/run\/containerd\/containerd\.sock/);
  await agent.stop();
});

test('for contrast, a containerd SIGSTOPped at the agent\'s start is the runtime\'s fault: True/RelistNeverSucceeded past the threshold, /readyz 200', async (t) => {
  if (!requireContainerd(t) || !requireMountNamespace(t)) return;
  const world = await startStandIn(t, { nodeName: 'verdict-sigstop' });
  const cd = await containerd(t);
  await cd.pause();
  const { env, args } = shipped(world);
  const { agent, watched } = await watchAgent(t, world, { launcher: namespaceLauncher({ '/run/containerd': cd.dir }), env, args });
  cd.resume();
  assertRuntimeBlamed(t, watched, 'hung');
  await agent.stop();
});

test('for contrast, a containerd killed before the agent\'s start (its socket refuses) is the runtime\'s fault: True/RelistNeverSucceeded, /readyz 200', async (t) => {
  if (!requireContainerd(t) || !requireMountNamespace(t)) return;
  const world = await startStandIn(t, { nodeName: 'verdict-refused' });
  const cd = await containerd(t);
  await cd.kill();
  assert.ok(statSync(cd.socketPath).isSocket(), 'precondition: the killed containerd left its socket behind');
  const { env, args } = shipped(world);
  const { agent, watched } = await watchAgent(t, world, { launcher: namespaceLauncher({ '/run/containerd': cd.dir }), env, args });
  assertRuntimeBlamed(t, watched, 'refused');
  await agent.stop();
});
