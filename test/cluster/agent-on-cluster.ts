// nodepulse running on the test cluster's nodes, seen from outside as a user (and the kernel)
// would see it: its image imported into every node, its pods, its process on a node, its Lease,
// its Node condition, and its HTTP endpoints through the API server's pod proxy.
//
// The image is the repository's, built by scripts/build-image.ts (test/fixtures/agent-image.ts:
// once per test process, cached under .tools/image), imported into each node's containerd and
// tagged there as AGENT_IMAGE, the name the cluster's overlays use. The pods never pull it:
// imagePullPolicy is IfNotPresent with a tag that is not `latest`, and the image is present;
// the kubelet's own event says so ("already present on machine"), and a pull could not reach
// any registry anyway (the block's route is unreachable).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SystemClock } from '../../src/clock/clock.ts';
import { agentImage } from '../fixtures/agent-image.ts';
import { pidsUnder } from './cgroups.ts';
import { importImage } from './cluster.ts';
import { nodeCgroup } from './layout.ts';
import type { SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

/** The name the cluster's overlays give the agent's image (containerd tag on every node). */
export const AGENT_IMAGE = 'localhost/nodepulse:cluster-test';
/** An image's first start on a loaded machine, the kubelet's first probe, then Ready. */
export const PODS_READY_MS = 180_000;
/** Renewals come every 10 s (40 s × 0.25, +4 % jitter); two of them, with margin. */
export const LEASE_MOVES_MS = 60_000;

const clock = new SystemClock();

/** Builds (or finds) the agent's image and imports it into every node as AGENT_IMAGE. */
export async function importAgentImage(cluster: SharedCluster): Promise<void> {
  const image = await agentImage();
  const names = importImage(cluster.state, image.archive, AGENT_IMAGE);
  assert.ok(names.includes(AGENT_IMAGE), `precondition: the image is on the nodes as ${AGENT_IMAGE} (${names.join(', ')})`);
}

export interface PodView {
  readonly metadata: { readonly name: string; readonly namespace: string; readonly uid: string };
  readonly spec: { readonly nodeName?: string; readonly containers: ReadonlyArray<Record<string, unknown> & { name: string }>; readonly volumes?: ReadonlyArray<Record<string, unknown> & { name: string }>; readonly securityContext?: Record<string, unknown> };
  readonly status: {
    readonly phase?: string;
    readonly podIP?: string;
    readonly conditions?: ReadonlyArray<{ type: string; status: string }>;
    readonly containerStatuses?: ReadonlyArray<{ name: string; ready: boolean; restartCount: number; started?: boolean; state?: Record<string, unknown> }>;
  };
}

/** The pods of `selector` in `namespace`. */
export async function listPods(cluster: SharedCluster, namespace: string, selector: string): Promise<PodView[]> {
  const a = await cluster.request(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`);
  assert.equal(a.status, 200, a.body);
  return (a.json as { items: PodView[] }).items;
}

/** Waits until every node runs one Ready pod of `selector`; returns them by node. */
export async function waitPodsReady(cluster: SharedCluster, namespace: string, selector: string, timeoutMs = PODS_READY_MS): Promise<Map<string, PodView>> {
  const nodes = cluster.state.nodes.map((n) => n.name);
  let ready = new Map<string, PodView>();
  await waitFor(`a Ready pod of ${selector} on each of ${nodes.join(', ')}`, async () => {
    const pods = await listPods(cluster, namespace, selector);
    ready = new Map(pods.filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).map((p) => [p.spec.nodeName ?? '', p]));
    const missing = nodes.filter((n) => !ready.has(n));
    if (missing.length === 0) return true;
    return `not Ready on ${missing.join(', ')}: ${pods.map((p) => `${p.metadata.name}@${p.spec.nodeName} ${p.status.phase} ${JSON.stringify(p.status.containerStatuses?.map((c) => c.state))}`).join('; ')}`;
  }, { clock, timeoutMs });
  return ready;
}

/** The events about an object, as `reason: message` lines. */
export async function eventsAbout(cluster: SharedCluster, namespace: string, name: string): Promise<string[]> {
  const a = await cluster.request(`/api/v1/namespaces/${namespace}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name}`)}`);
  assert.equal(a.status, 200, a.body);
  return (a.json as { items: Array<{ reason: string; message: string }> }).items.map((e) => `${e.reason}: ${e.message}`);
}

/** GET through the API server's proxy to a pod's port (the API server dials the pod's address). */
export async function podGet(cluster: SharedCluster, pod: PodView, port: number, path: string): Promise<{ status: number; body: string; json: unknown }> {
  return cluster.request(`/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}:${port}/proxy${path}`);
}

export interface ProcessView {
  readonly pid: number;
  readonly uid: string;
  readonly gid: string;
  readonly groups: string;
  readonly capEff: string;
  readonly noNewPrivs: string;
  /** 0 none, 1 strict, 2 filter. */
  readonly seccomp: string;
  readonly cmdline: string;
}

/** The agent's process on a node, as the kernel sees it (found in the node's pod cgroups by its command line). */
export function agentProcess(nodeIndex: number): ProcessView {
  const found: ProcessView[] = [];
  for (const pid of pidsUnder(`${nodeCgroup(nodeIndex)}/kubepods`)) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (!/\bmain\.js agent\b/.test(cmdline)) continue;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const field = (name: string): string => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
      found.push({ pid, uid: field('Uid'), gid: field('Gid'), groups: field('Groups'), capEff: field('CapEff'), noNewPrivs: field('NoNewPrivs'), seccomp: field('Seccomp'), cmdline });
    } catch {
      // exited meanwhile
    }
  }
  assert.equal(found.length, 1, `precondition: one agent process in ${nodeCgroup(nodeIndex)}/kubepods (found ${found.map((p) => `${p.pid}: ${p.cmdline}`).join('; ') || 'none'})`);
  return found[0] as ProcessView;
}

export interface LeaseView {
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string>; readonly ownerReferences?: ReadonlyArray<{ kind: string; name: string; uid: string }> };
  readonly spec: { readonly holderIdentity?: string; readonly leaseDurationSeconds?: number; readonly renewTime?: string };
}

export async function getLease(cluster: SharedCluster, namespace: string, name: string): Promise<LeaseView | undefined> {
  const a = await cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`);
  if (a.status === 404) return undefined;
  assert.equal(a.status, 200, a.body);
  return a.json as LeaseView;
}

/** Waits for the lease to exist, then for its renewTime to move twice; returns the three values seen. */
export async function leaseRenewals(cluster: SharedCluster, namespace: string, name: string): Promise<string[]> {
  const seen: string[] = [];
  await waitFor(`the lease ${namespace}/${name} renews twice`, async () => {
    const renewTime = (await getLease(cluster, namespace, name))?.spec.renewTime;
    if (renewTime !== undefined && renewTime !== seen[seen.length - 1]) seen.push(renewTime);
    return seen.length >= 3 ? true : `renewTimes seen: ${seen.join(', ') || 'none'}`;
  }, { clock, timeoutMs: LEASE_MOVES_MS + PODS_READY_MS, intervalMs: 500 });
  return seen;
}

export interface NodeCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
  readonly lastHeartbeatTime?: string;
}

export async function nodeConditions(cluster: SharedCluster, node: string): Promise<NodeCondition[]> {
  const a = await cluster.request(`/api/v1/nodes/${node}`);
  assert.equal(a.status, 200, a.body);
  return (a.json as { status: { conditions?: NodeCondition[] } }).status.conditions ?? [];
}
