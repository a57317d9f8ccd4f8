// The shipped image, built from the repository's Dockerfile (scripts/build-image.ts), imported
// into a real containerd and run as a pod through CRI with the rendered DaemonSet's settings:
// its socket's folder read-only, a read-only root filesystem, every capability dropped, no
// privilege escalation, RuntimeDefault seccomp, the manifest's env and mounts, and the host's
// network to reach the API stand-in (the one departure; see test/fixtures/pod-from-manifest.ts).
//
// Two ways to run it, each on its own containerd:
//   - as the kustomize DaemonSet renders it (root, for a root:root socket);
//   - non-root, as `helm template --set nonRoot.enabled=true,nonRoot.socketGid=N` renders it,
//     against a containerd with `[grpc] gid = N`; and, as the control, the same pod without the
//     socket's gid in its groups, which must be refused by the socket.
//
// What the containerized agent must do, each time: answer /readyz and /livez; relist its own
// runtime and count its own pod and container (the only ones there); create and renew its Lease; stop within
// 5 s of StopContainer (with the manifest's grace period, so a SIGKILL would take 10 s and exit
// 137) with exit code 0, leaving the Lease unreleased: no write after StopContainer, the holder
// and renewTime as the last renewal left them.
//
// Figures (diagnostics, not assertions): the image's size and layers, the time from
// StartContainer to the first lease write, and the containerized agent's RSS beside a bare
// agent process's, read from both /metrics at the same moment.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { IMAGE_ARCHITECTURES } from '../../scripts/build-image.ts';
import { agentImage, requireImageBuild } from '../fixtures/agent-image.ts';
import { startAgentPod, type AgentPod } from '../fixtures/agent-pod.ts';
import { startContainerd, type ContainerdFixture } from '../fixtures/containerd.ts';
import { helmRunner, only, renderKustomize, type K8sObject } from '../deploy/render.ts';
import { kubeletLabels } from '../../src/stand-ins/api-server/register-node.ts';
import { metricValue, pollUntil, startAgentProcess, startStandIn, type AgentStatus, type StandIn } from '../support/agent-process.ts';

const execFileAsync = promisify(execFile);
const NODE = 'image-node';
/** The socket's group in the non-root test: any gid no process of the machine runs with. */
const SOCKET_GID = 64_321;
/** The agent answers /readyz ~0.5 s after start here; an image's first start on a loaded machine is slower. */
const READY_BOUND_MS = 30_000;
/** Default lease settings: renewals every 10 s (40 s × 0.25, +4 % jitter), so the second write lands by ~11 s. */
const RENEWED_BOUND_MS = 30_000;
/** The issue's bound on a graceful stop. */
const STOP_BOUND_MS = 5_000;
const MiB = 1024 * 1024;

interface PodRun {
  readonly firstLeaseWriteMs: number;
  readonly rssBytes: number;
  readonly stopMs: number;
}

/** Everything the containerized agent must do, from start to stop (see the header). */
async function exercise(t: TestContext, pod: AgentPod, world: StandIn, cd: ContainerdFixture, whileRunning?: () => Promise<void>): Promise<PodRun> {
  const log = (): string => `\nagent log:\n${pod.logTail()}`;
  await pollUntil('/readyz answers 200', async () => (await pod.get('/readyz')).status === 200, { timeoutMs: READY_BOUND_MS }).catch((err: Error) => assert.fail(`${err.message}${log()}`));
  await pollUntil('the lease is created and renewed', () => world.leaseWrites().length >= 2, { timeoutMs: RENEWED_BOUND_MS }).catch((err: Error) => assert.fail(`${err.message}${log()}`));
  assert.equal((await pod.get('/livez')).status, 200, `/livez${log()}`);
  const writes = world.leaseWrites();
  assert.equal(writes[0]?.method, 'POST', 'the first lease write creates it');
  assert.equal(world.lease()?.spec.holderIdentity, NODE);

  // Its own container is the only one on this runtime, so a count of one running container is
  // the agent counting itself.
  const status = await pod.status();
  const listed = await cd.cri.listContainers();
  assert.equal(status.runtime.state, 'Healthy', `runtime judgement${log()}`);
  assert.deepEqual(listed.map((c) => [c.id, c.state]), [[pod.containerId, 'CONTAINER_RUNNING']], 'precondition: the runtime lists the agent\'s container alone, running');
  const counts = status.counts as AgentStatus['counts'] & { containersByState: Record<string, number> };
  assert.deepEqual([counts.pods, counts.containers, counts.containersByState], [1, 1, { CONTAINER_CREATED: 0, CONTAINER_RUNNING: 1, CONTAINER_EXITED: 0, CONTAINER_UNKNOWN: 0 }], 'the agent counts its own pod and container');
  const rssBytes = metricValue(await (await pod.get('/metrics')).body, 'process_resident_memory_bytes') ?? Number.NaN;
  await whileRunning?.();

  const stop = await pod.stop();
  assert.equal(stop.state, 'CONTAINER_EXITED');
  assert.equal(stop.exitCode, 0, `the agent exits 0 on SIGTERM (137 would be the runtime's SIGKILL)${log()}`);
  assert.ok(stop.elapsedMs <= STOP_BOUND_MS, `the agent stops within 5 s of StopContainer (took ${Math.round(stop.elapsedMs)} ms)`);
  const last = world.leaseWrites().at(-1);
  assert.deepEqual(world.leaseRequests().filter((r) => r.atMs >= stop.calledAtMs && r.method !== 'GET'), [], 'no write or delete of the lease after StopContainer: it is not released');
  assert.equal(world.lease()?.spec.holderIdentity, NODE, 'the lease keeps its holder');
  assert.equal(world.lease()?.spec.renewTime, last?.renewTime, 'the lease keeps its last renewTime');
  const run = { firstLeaseWriteMs: (writes[0]?.atMs ?? Number.NaN) - pod.startCalledAtMs, rssBytes, stopMs: stop.elapsedMs };
  t.diagnostic(`StartContainer to first lease write ${Math.round(run.firstLeaseWriteMs)} ms; RSS ${(rssBytes / MiB).toFixed(1)} MiB; stopped ${Math.round(stop.elapsedMs)} ms after StopContainer`);
  return run;
}

/** The pid of a running container's task, from `ctr tasks ls`. */
async function taskPid(cd: ContainerdFixture, containerId: string): Promise<number> {
  const { stdout } = await execFileAsync('ctr', ['-a', cd.socketPath, '-n', 'k8s.io', 'tasks', 'ls'], { timeout: 10_000 });
  const row = stdout.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === containerId);
  assert.ok(row?.[1], `precondition: ctr tasks ls lists ${containerId}:\n${stdout}`);
  return Number(row[1]);
}

/** What the kernel says the container's process runs with. */
function processFacts(pid: number): { uid: string; gid: string; groups: string; capEff: string; noNewPrivs: string; seccomp: string; rootMountOptions: string } {
  const status = new Map(readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').map((l) => [l.split(':')[0] ?? '', l.slice(l.indexOf(':') + 1).trim()]));
  const root = readFileSync(`/proc/${pid}/mountinfo`, 'utf8').split('\n').find((l) => l.split(' ')[4] === '/');
  return {
    uid: (status.get('Uid') ?? '').split(/\s+/)[0] ?? '',
    gid: (status.get('Gid') ?? '').split(/\s+/)[0] ?? '',
    groups: status.get('Groups') ?? '',
    capEff: status.get('CapEff') ?? '',
    noNewPrivs: status.get('NoNewPrivs') ?? '',
    seccomp: status.get('Seccomp') ?? '',
    rootMountOptions: root?.split(' ')[5] ?? '',
  };
}

async function setUp(t: TestContext, socketGid?: number): Promise<{ image: Awaited<ReturnType<typeof agentImage>>; world: StandIn; cd: ContainerdFixture }> {
  const image = await agentImage();
  t.diagnostic(`image ${image.tag} ${image.os}/${image.architecture}: ${(image.sizeBytes / MiB).toFixed(1)} MiB in ${image.layers.length} layers${image.cached ? ' (cached)' : `, built in ${image.buildSeconds} s`}`);
  assert.ok(IMAGE_ARCHITECTURES.includes(image.architecture), `the image's architecture ${image.architecture} must be one the manifests allow (${IMAGE_ARCHITECTURES.join(', ')})`);
  // In-cluster, as the DaemonSet's pod runs: HTTPS, the service-account token and CA.
  const world = await startStandIn(t, { nodeName: NODE, inCluster: true });
  const cd = await startContainerd(socketGid === undefined ? {} : { socketGid });
  t.after(() => cd.close());
  await cd.importImage(image.archive);
  return { image, world, cd };
}

test('the image carries its OCI source and revision labels', async (t) => {
  if (!requireImageBuild(t)) return;
  const image = await agentImage();
  assert.equal(image.labels['org.opencontainers.image.source'], 'https://github.com/nodepulse/nodepulse');
  assert.equal(image.labels['org.opencontainers.image.revision'], image.revision);
  assert.match(image.revision, /^[0-9a-f]{40}(-dirty)?$/, 'the revision is the git commit');
});

test('as the kustomize DaemonSet runs it (root, no capabilities): relists its own containerd, keeps its Lease, answers probes, stops within 5 s leaving the Lease', async (t) => {
  if (!requireImageBuild(t)) return;
  const { image, world, cd } = await setUp(t);
  const ds = only(renderKustomize('deploy'), 'DaemonSet');
  const pod = await startAgentPod(t, { cd, world, daemonSet: ds, image: image.tag, name: 'agent-root' });

  // The bare process beside it, for the RSS figure: same build, same runtime, its own Node.
  world.api.store.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'bare-node', labels: kubeletLabels('bare-node') } });
  assert.ok(world.serviceAccount, 'precondition: the stand-in serves in-cluster credentials');
  const bare = await startAgentProcess(t, { args: ['--node-name=bare-node', `--cri-endpoint=${cd.endpoint}`], inCluster: world.serviceAccount });
  let bareRss = Number.NaN;
  const run = await exercise(t, pod, world, cd, async () => {
    const facts = processFacts(await taskPid(cd, pod.containerId));
    assert.deepEqual([facts.uid, facts.gid], ['0', '0'], 'root, as the manifest says');
    assert.deepEqual([facts.capEff, facts.noNewPrivs, facts.seccomp], ['0000000000000000', '1', '2'], 'no capability, no privilege escalation, seccomp filtering');
    assert.match(facts.rootMountOptions, /^ro\b/, 'the root filesystem is read-only');
    bareRss = metricValue(await bare.metrics(), 'process_resident_memory_bytes') ?? Number.NaN;
  });
  await bare.stop();
  t.diagnostic(`RSS: containerized ${(run.rssBytes / MiB).toFixed(1)} MiB, bare process ${(bareRss / MiB).toFixed(1)} MiB (both after the pod's first renewal)`);
});

test('non-root with the socket\'s gid (helm nonRoot.*) against containerd [grpc] gid: runs, relists, keeps its Lease, stops; without the gid the socket refuses it', async (t) => {
  if (!requireImageBuild(t)) return;
  const { image, world, cd } = await setUp(t, SOCKET_GID);
  const socket = statSync(cd.socketPath);
  assert.deepEqual([socket.uid, socket.gid, socket.mode & 0o777], [0, SOCKET_GID, 0o660], 'precondition: containerd made its socket root:<gid> 0660');
  const helm = helmRunner();
  t.after(() => helm.close());
  const ds = only(helm.template(['nonRoot.enabled=true', `nonRoot.socketGid=${SOCKET_GID}`]), 'DaemonSet') as K8sObject & { spec: { template: { spec: { securityContext: Record<string, unknown> } } } };
  const pod = await startAgentPod(t, { cd, world, daemonSet: ds, image: image.tag, name: 'agent-nonroot' });
  await exercise(t, pod, world, cd, async () => {
    const facts = processFacts(await taskPid(cd, pod.containerId));
    assert.notEqual(facts.uid, '0', 'the agent runs as a non-root uid');
    assert.equal(facts.uid, facts.gid);
    assert.ok(facts.groups.split(/\s+/).includes(String(SOCKET_GID)), `the socket's gid is among the agent's groups: ${facts.groups}`);
    assert.deepEqual([facts.capEff, facts.noNewPrivs, facts.seccomp], ['0000000000000000', '1', '2'], 'no capability, no privilege escalation, seccomp filtering');
    assert.match(facts.rootMountOptions, /^ro\b/, 'the root filesystem is read-only');
  });

  // The control: the same pod without the socket's gid. The socket must refuse it, so that the
  // gid, not anything else, is what let the agent above in.
  const withoutGroup = structuredClone(ds);
  delete withoutGroup.spec.template.spec.securityContext['supplementalGroups'];
  const control = await startAgentPod(t, { cd, world, daemonSet: withoutGroup, image: image.tag, name: 'agent-nogroup' });
  const { value: refused } = await pollUntil('the control agent reports its relist fault', async () => {
    const s = await control.status();
    return s.runtime.lastFault === null ? undefined : s;
  }, { timeoutMs: READY_BOUND_MS });
  assert.equal(refused.runtime.state, 'CannotObserve', `without the gid the agent cannot observe the runtime, and does not blame it${control.logTail()}`);
  assert.equal(refused.runtime.why, 'permission-denied');
  assert.match(refused.runtime.lastFault?.message ?? '', /EACCES|permission denied/i, 'the socket refuses the connection');
  assert.equal((await control.get('/readyz')).status, 503, 'not ready: a rollout of this pod would stop here');
  assert.equal((await control.get('/livez')).status, 200);
  await control.stop();
});
