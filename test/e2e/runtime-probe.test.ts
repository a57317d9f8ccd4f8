// The shipped DaemonSet on nodes that are not plain containerd (issue 14): the built agent,
// started with the environment `kubectl kustomize deploy` renders (no CONTAINER_RUNTIME_ENDPOINT)
// inside a private mount namespace whose /run holds only what each test puts at the runtimes'
// paths (test/support/mount-namespace.ts), against the API stand-in.
//
//   (a) a runtime at CRI-O's path and none at containerd's: the simulated runtime's CRI-O
//       profile (CRI-O cannot run here) and a Node whose containerRuntimeVersion says cri-o.
//       The agent relists it and renews its Lease.
//   (b) at containerd's path, a real containerd with CRI disabled, as Docker ships it (every CRI
//       call UNIMPLEMENTED); at CRI-O's, the CRI-O profile; the Node names no runtime, so the
//       Version rule alone decides. The agent ends up on CRI-O, and `nodepulse check` in the
//       same kind of namespace says the same.
//
// Each test checks afterwards that nothing reached the host's /run. Under CI=true a missing
// prerequisite (root, unshare, mount, containerd) fails the test instead of skipping it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { SystemClock } from '../../src/clock/clock.ts';
import type { CriEndpointView } from '../../src/cri/endpoint-probe.ts';
import { CRIO_NODE_RUNTIME_VERSION } from '../../src/stand-ins/cri-runtime/crio-profile.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { startContainerdWithoutCri } from '../fixtures/containerd-without-cri.ts';
import { AGENT_MAIN, NODE_24, linesWith, pollUntil, startAgentProcess, startStandIn, type AgentProcess, type AgentStatus } from '../support/agent-process.ts';
import { hostRunSnapshot, namespaceLauncher, requireMountNamespace, shippedAgentSettings } from '../support/mount-namespace.ts';

const execFileAsync = promisify(execFile);
const CRIO_ENDPOINT = 'unix:///run/crio/crio.sock';
const CONTAINERD_ENDPOINT = 'unix:///run/containerd/containerd.sock';
/** The first relist comes within a second of start; generous for a loaded 2-core machine. */
const FIRST_RELIST_BOUND_MS = 15_000;
/** The shipped default renew interval is 10 s (+ up to 4 % jitter): two writes within 30 s. */
const RENEWED_BOUND_MS = 30_000;
const CHECK_TIMEOUT_MS = 30_000;

type ProbeStatus = AgentStatus & { readonly criEndpoint: CriEndpointView };

/** A private folder for the test's sockets; removed after the test. */
function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'np-probe-ns-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The CRI-O-profiled runtime, its socket as crio.sock in a folder to bind at /run/crio. */
async function crioRuntime(t: TestContext, dir: string): Promise<string> {
  const crioDir = join(dir, 'crio');
  mkdirSync(crioDir);
  const sim = await startSimRuntime({ socketPath: join(crioDir, 'crio.sock'), profile: 'cri-o', pods: 2, containersPerPod: 2, clock: new SystemClock() });
  t.after(() => sim.close());
  return crioDir;
}

/** The built agent in its namespace, with the shipped manifest's env and args, plus the test's kubeconfig. */
async function agentInNamespace(t: TestContext, nodeName: string, kubeconfig: string, binds: Record<string, string>): Promise<AgentProcess> {
  const shipped = shippedAgentSettings(nodeName);
  assert.equal(shipped.env['CONTAINER_RUNTIME_ENDPOINT'], undefined, 'precondition: the shipped DaemonSet sets no endpoint');
  assert.equal(shipped.env['NODE_NAME'], nodeName, 'precondition: the manifest\'s NODE_NAME resolved');
  return startAgentProcess(t, { launcher: namespaceLauncher(binds), env: shipped.env, args: [...shipped.args, `--kubeconfig=${kubeconfig}`] });
}

/** Asserts the host's /run is as it was: no mount and no path left behind. */
function assertNothingLeaked(before: ReturnType<typeof hostRunSnapshot>): void {
  assert.deepEqual(hostRunSnapshot(), before, 'nothing of the private namespace reached the host\'s /run');
}

test('(a) a runtime at CRI-O\'s path, none at containerd\'s: the shipped DaemonSet\'s agent relists it and renews its Lease', async (t) => {
  if (!requireMountNamespace(t)) return;
  const before = hostRunSnapshot();
  const node = 'probe-crio';
  const dir = tempDir(t);
  const crioDir = await crioRuntime(t, dir);
  const world = await startStandIn(t, { nodeName: node, nodeInfo: { containerRuntimeVersion: CRIO_NODE_RUNTIME_VERSION } });
  const agent = await agentInNamespace(t, node, world.kubeconfig, { '/run/crio': crioDir });

  const { value: status } = await pollUntil('the agent relists the runtime at CRI-O\'s path', async () => {
    const s = (await agent.status()) as ProbeStatus;
    return s.runtime.state === 'Healthy' && s.criEndpoint.held ? s : undefined;
  }, { timeoutMs: FIRST_RELIST_BOUND_MS });
  assert.equal(status.counts.pods, 2, 'it counts the runtime\'s pods');
  assert.equal(status.criEndpoint.endpoint, CRIO_ENDPOINT);
  assert.equal(status.criEndpoint.rule, 'node-runtime');
  assert.equal(status.criEndpoint.nodeRuntime, CRIO_NODE_RUNTIME_VERSION);
  assert.deepEqual(status.criEndpoint.probed.map((p) => [p.endpoint, p.state]), [
    [CONTAINERD_ENDPOINT, 'absent'],
    [CRIO_ENDPOINT, 'answered'],
    ['unix:///run/k3s/containerd/containerd.sock', 'absent'],
    ['unix:///var/run/cri-dockerd.sock', 'absent'],
  ], 'containerd\'s path is empty inside the namespace');

  await pollUntil('the Lease is created and renewed', () => world.leaseWrites().length >= 2, { timeoutMs: RENEWED_BOUND_MS });
  const [created, renewed] = world.leaseWrites();
  assert.ok((renewed?.renewMicros ?? 0) > (created?.renewMicros ?? 0), 'renewTime moved');
  assert.equal(world.lease()?.spec.holderIdentity, node);
  const chosen = linesWith(agent, 'CRI endpoint chosen');
  assert.deepEqual(chosen.map((l) => [l['criEndpoint'], l['rule']]), [[CRIO_ENDPOINT, 'node-runtime']], 'the log says which socket, once');

  assert.equal(await agent.stop(), 0);
  assertNothingLeaked(before);
});

test('(b) containerd\'s path refuses CRI (Docker\'s containerd), CRI-O\'s answers: the agent ends up on CRI-O, and check says why', async (t) => {
  if (!requireMountNamespace(t, ['containerd'])) return;
  const before = hostRunSnapshot();
  const node = 'probe-docker-containerd';
  const dir = tempDir(t);
  const dockerContainerd = await startContainerdWithoutCri();
  t.after(() => dockerContainerd.close());
  const crioDir = await crioRuntime(t, dir);
  const binds = { '/run/containerd': dockerContainerd.socketDir, '/run/crio': crioDir };
  const world = await startStandIn(t, { nodeName: node });
  const agent = await agentInNamespace(t, node, world.kubeconfig, binds);

  const { value: status } = await pollUntil('the agent relists CRI-O', async () => {
    const s = (await agent.status()) as ProbeStatus;
    return s.runtime.state === 'Healthy' ? s : undefined;
  }, { timeoutMs: FIRST_RELIST_BOUND_MS });
  assert.equal(status.criEndpoint.endpoint, CRIO_ENDPOINT);
  assert.equal(status.criEndpoint.rule, 'probe-order');
  assert.equal(status.criEndpoint.nodeRuntime, null, 'precondition: the Node names no runtime, so only the Version rule decides');
  const refused = status.criEndpoint.probed[0];
  assert.equal(refused?.endpoint, CONTAINERD_ENDPOINT);
  assert.equal(refused?.state, 'refused');
  assert.equal(refused?.fault?.code, 'unimplemented', `containerd's path refused CRI: ${JSON.stringify(refused)}`);
  assert.equal(status.counts.pods, 2);
  assert.equal(await agent.stop(), 0);

  const check = await execFileAsync(namespaceLauncher(binds)[0] ?? 'unshare', [...namespaceLauncher(binds).slice(1), NODE_24, AGENT_MAIN, 'check', '-o', 'json'], {
    timeout: CHECK_TIMEOUT_MS,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });
  const report = JSON.parse(check.stdout) as { ok: boolean; endpoint: string; endpointRule: string; endpointReason: string; probed: Array<{ state: string }>; runtime: { name: string } };
  assert.equal(report.ok, true);
  assert.deepEqual([report.endpoint, report.endpointRule, report.runtime.name], [CRIO_ENDPOINT, 'probe-order', 'cri-o']);
  assert.match(report.endpointReason, /^the first socket in probe order whose CRI Version answered \(cri-o /);
  assert.deepEqual(report.probed.map((p) => p.state), ['refused', 'answered', 'absent', 'absent']);

  assertNothingLeaked(before);
});
