// The agent's identity on the test cluster, without a kubelet: the install's objects applied as
// a user applies them, Node objects to stand for nodes, and real service-account tokens from the
// API server's TokenRequest API.
//
// A token with the node claim, as the kubelet gets one for the agent's pod: a Pod of the agent's
// service account bound to a node (spec.nodeName set, so the scheduler is not involved), then a
// TokenRequest bound to that Pod. Since Kubernetes 1.30 (ServiceAccountTokenPodNodeInfo, GA in
// 1.32) the API server puts the Pod's node into the token (`kubernetes.io.node`) and into the
// authenticated user's extra (`authentication.kubernetes.io/node-name`). A TokenRequest bound to
// nothing gives a token of the same account without the claim.
//
// Node objects made here carry no `kubernetes.io/os` label, so the DaemonSet (node selector
// kubernetes.io/os=linux) never places a pod on them. Every object is removed by the returned
// cleanup, forcibly where no kubelet would ever confirm a Pod's deletion.
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { parseManifests, type K8sObject } from '../deploy/render.ts';
import type { SharedCluster } from './shared-cluster.ts';

export interface AgentAccount {
  readonly namespace: string;
  readonly name: string;
  /** `system:serviceaccount:<namespace>:<name>` */
  readonly username: string;
}

/** The overlay the cluster tests install (kustomize, as a user runs it), rendered by the built kubectl. */
export const OVERLAY = 'test/cluster/overlay';

export async function renderOverlay(cluster: SharedCluster, dir = OVERLAY): Promise<K8sObject[]> {
  return parseManifests((await cluster.kubectl(['kustomize', dir])).stdout);
}

/** The one object of a kind in a render (asserted as a precondition). */
export function theOne(objects: readonly K8sObject[], kind: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind);
  assert.equal(found.length, 1, `precondition: the render must hold exactly one ${kind} (found ${found.map((o) => o.metadata.name).join(', ') || 'none'})`);
  return found[0] as K8sObject;
}

/** The agent's ServiceAccount: the one the DaemonSet's pods run as. */
export function agentAccount(objects: readonly K8sObject[]): AgentAccount {
  const ds = theOne(objects, 'DaemonSet') as K8sObject & { spec: { template: { spec: { serviceAccountName?: string } } } };
  const name = ds.spec.template.spec.serviceAccountName ?? 'default';
  const namespace = ds.metadata.namespace ?? 'default';
  return { namespace, name, username: `system:serviceaccount:${namespace}:${name}` };
}

/** Applies objects with the built kubectl (server-side validation, as `kubectl apply -f`). */
export async function apply(cluster: SharedCluster, objects: readonly K8sObject[]): Promise<void> {
  await cluster.kubectl(['apply', '-f', '-'], { input: objects.map((o) => stringify(o)).join('---\n') });
}

/** Deletes objects (waiting for each to be gone) and ignores those already gone. */
export async function remove(cluster: SharedCluster, objects: readonly K8sObject[]): Promise<void> {
  await cluster.kubectl(['delete', '--ignore-not-found', '--wait=true', '--timeout=120s', '-f', '-'], { input: objects.map((o) => stringify(o)).join('---\n') });
}

/** Creates a Node object (no kubelet behind it); returns its uid. */
export async function createNode(cluster: SharedCluster, name: string): Promise<string> {
  const a = await cluster.request('/api/v1/nodes', { method: 'POST', body: { apiVersion: 'v1', kind: 'Node', metadata: { name } } });
  assert.equal(a.status, 201, `precondition: creating Node ${name} must succeed: ${a.body}`);
  return (a.json as { metadata: { uid: string } }).metadata.uid;
}

export async function deleteNode(cluster: SharedCluster, name: string): Promise<void> {
  const a = await cluster.request(`/api/v1/nodes/${name}`, { method: 'DELETE' });
  assert.ok(a.status === 200 || a.status === 404, `deleting Node ${name}: ${a.status} ${a.body}`);
}

export interface BoundToken {
  readonly token: string;
  readonly podName: string;
  /** Deletes the Pod (forcibly: no kubelet will confirm it). */
  cleanup(): Promise<void>;
}

/** A token of `account` bound to a Pod on `node`, as the header says. */
export async function tokenBoundToPodOn(cluster: SharedCluster, account: AgentAccount, node: string, image: string): Promise<BoundToken> {
  const podName = `identity-${node}`;
  const created = await cluster.request(`/api/v1/namespaces/${account.namespace}/pods`, {
    method: 'POST',
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, namespace: account.namespace, labels: { 'nodepulse.io/test': 'identity' } },
      spec: {
        nodeName: node,
        serviceAccountName: account.name,
        automountServiceAccountToken: false,
        containers: [{ name: 'identity', image, imagePullPolicy: 'Never' }],
      },
    },
  });
  assert.equal(created.status, 201, `precondition: a Pod of ${account.username} bound to ${node} must be created: ${created.body}`);
  const uid = (created.json as { metadata: { uid: string } }).metadata.uid;
  const cleanup = async (): Promise<void> => {
    await cluster.request(`/api/v1/namespaces/${account.namespace}/pods/${podName}?gracePeriodSeconds=0`, { method: 'DELETE' });
  };
  try {
    const token = await tokenRequest(cluster, account, { kind: 'Pod', apiVersion: 'v1', name: podName, uid });
    return { token, podName, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * A token of `account` bound to a running Pod of it (an agent's pod the kubelet runs): the same
 * node claim the kubelet's projected token carries.
 */
export function tokenBoundToPod(cluster: SharedCluster, account: AgentAccount, pod: { readonly name: string; readonly uid: string }): Promise<string> {
  return tokenRequest(cluster, account, { kind: 'Pod', apiVersion: 'v1', name: pod.name, uid: pod.uid });
}

/** A token of `account` bound to nothing: it carries no node claim. */
export function unboundToken(cluster: SharedCluster, account: AgentAccount): Promise<string> {
  return tokenRequest(cluster, account, undefined);
}

async function tokenRequest(cluster: SharedCluster, account: AgentAccount, boundObjectRef: Record<string, string> | undefined): Promise<string> {
  const a = await cluster.request(`/api/v1/namespaces/${account.namespace}/serviceaccounts/${account.name}/token`, {
    method: 'POST',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600, ...(boundObjectRef === undefined ? {} : { boundObjectRef }) } },
  });
  assert.equal(a.status, 201, `precondition: TokenRequest for ${account.username} must succeed: ${a.body}`);
  return (a.json as { status: { token: string } }).status.token;
}

/** The claims of a JWT (not verified: the API server does that). */
export function tokenClaims(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  assert.ok(payload !== undefined, 'precondition: a service-account token is a JWT');
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}
