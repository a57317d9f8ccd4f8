// The fleet, written into the scale control plane as a cluster of N nodes with nodepulse installed
// holds it:
//
// | step                 | what is written                                                       |
// |----------------------|-----------------------------------------------------------------------|
// | installNodepulse     | deploy/base and deploy/controller as kustomize renders them (the      |
// |                      | namespace, both accounts, RBAC, the admission policy, the priority    |
// |                      | level and FlowSchema), without the DaemonSet, the controller's        |
// |                      | Deployment and its PodDisruptionBudget: nothing here runs a pod       |
// | writeFleet           | N Nodes shaped as a kubelet writes them (kubelet-node.ts), and for    |
// |                      | each an agent Lease as the agent creates it: its labels, an owner     |
// |                      | reference to the Node, holderIdentity, 40 s, acquireTime = renewTime  |
// | agentTokens          | for each renewing agent, a Pod of the agent's account bound to its    |
// |                      | node and a TokenRequest bound to that Pod: the token a kubelet gives  |
// |                      | the agent, carrying the node claim the admission policy reads         |
// | controllerToken      | a token of the controller's account, as its pod would get one         |
//
// Everything is created with bounded concurrency through one keep-alive pool, and is idempotent:
// an object that exists (409) is read instead, so a rerun completes a partial load.
//
// Failure modes: any answer other than the expected ones throws with the path, status and body.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { formatMicroTime } from '../../src/kube/meta-time.ts';
import { LEASE_LABELS } from '../../src/lease/lease-writer.ts';
import { DEFAULT_LEASE_DURATION_SECONDS } from '../../src/lease/node-lease.ts';
import { parseManifests, REPO_ROOT, type K8sObject } from '../deploy/render.ts';
import { pool, type AdminApi, type Answer } from './admin-api.ts';
import { kubeletNode, nodeName } from './kubelet-node.ts';

export const AGENT_NAMESPACE = 'nodepulse';
export const AGENT_ACCOUNT = 'nodepulse';
export const CONTROLLER_ACCOUNT = 'nodepulse-controller';
/** Kinds left out of the install: each would run pods, and nothing here runs one. */
const NOT_INSTALLED = new Set(['DaemonSet', 'Deployment', 'PodDisruptionBudget']);
/** Long enough for any run; the API server caps nothing below a day by default. */
const TOKEN_SECONDS = 6 * 3600;

function expect(answer: Answer, ok: readonly number[], what: string): void {
  if (!ok.includes(answer.status)) throw new Error(`${what}: ${answer.status} ${answer.body.slice(0, 400)}`);
}

/** deploy/base and deploy/controller rendered by the built kubectl's kustomize. */
export function renderInstall(kubectl: string): K8sObject[] {
  return ['base', 'controller'].flatMap((d) => parseManifests(execFileSync(kubectl, ['kustomize', join(REPO_ROOT, 'deploy', d)], { encoding: 'utf8', timeout: 60_000 })));
}

/** Applies the install (see the header); returns the controller Deployment's container args, as shipped. */
export function installNodepulse(kubectl: string, kubeconfig: string): string[] {
  const objects = renderInstall(kubectl);
  const applied = objects.filter((o) => !NOT_INSTALLED.has(o.kind));
  execFileSync(kubectl, ['--kubeconfig', kubeconfig, 'apply', '--server-side', '-f', '-'], {
    input: applied.map((o) => stringify(o)).join('---\n'),
    encoding: 'utf8',
    timeout: 120_000,
  });
  const deployment = objects.find((o) => o.kind === 'Deployment') as (K8sObject & { spec: { template: { spec: { containers: Array<{ args?: string[] }> } } } }) | undefined;
  const args = deployment?.spec.template.spec.containers[0]?.args;
  if (args === undefined) throw new Error('precondition: deploy/controller renders a Deployment with container args');
  return args;
}

/** Writes `count` Nodes and their agent Leases (see the header); returns each Node's uid. */
export async function writeFleet(api: AdminApi, options: { readonly count: number; readonly concurrency: number; readonly wallMs: () => number; readonly log: (line: string) => void }): Promise<Map<string, string>> {
  const { count, concurrency, log } = options;
  const uids = new Map<string, string>();
  const indexes = Array.from({ length: count }, (_, i) => i);
  let done = 0;
  await pool(indexes, concurrency, async (i) => {
    const name = nodeName(i);
    const created = await api.request('POST', '/api/v1/nodes?fieldManager=kubelet', kubeletNode(i, options.wallMs()));
    expect(created, [201, 409], `POST node ${name}`);
    let answer = created;
    if (created.status === 409) {
      answer = await api.request('GET', `/api/v1/nodes/${name}`);
      expect(answer, [200], `GET node ${name}`);
    }
    uids.set(name, (answer.json as { metadata: { uid: string } }).metadata.uid);
    if (++done % 1000 === 0) log(`${done} Nodes written`);
  });
  done = 0;
  await pool(indexes, concurrency, async (i) => {
    const name = nodeName(i);
    const renewTime = formatMicroTime(options.wallMs() * 1000);
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace: AGENT_NAMESPACE,
        labels: { ...LEASE_LABELS },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: uids.get(name) }],
      },
      spec: { holderIdentity: name, leaseDurationSeconds: DEFAULT_LEASE_DURATION_SECONDS, acquireTime: renewTime, renewTime },
    };
    const created = await api.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${AGENT_NAMESPACE}/leases`, lease);
    expect(created, [201, 409], `POST lease ${name}`);
    if (++done % 1000 === 0) log(`${done} agent Leases written`);
  });
  return uids;
}

export interface AgentToken {
  readonly node: string;
  readonly token: string;
}

/**
 * Tokens for the agents of nodes 0..count-1, each bound to a Pod of the agent's account on its
 * node (see the header). Kept in `cacheFile` (tokens of Pods that still exist are reused).
 */
export async function agentTokens(api: AdminApi, options: { readonly count: number; readonly concurrency: number; readonly cacheFile: string; readonly log: (line: string) => void }): Promise<AgentToken[]> {
  const cached = new Map<string, string>();
  if (existsSync(options.cacheFile)) {
    for (const t of JSON.parse(readFileSync(options.cacheFile, 'utf8')) as AgentToken[]) cached.set(t.node, t.token);
  }
  const tokens: AgentToken[] = [];
  let made = 0;
  await pool(Array.from({ length: options.count }, (_, i) => nodeName(i)), options.concurrency, async (node) => {
    const podName = `nodepulse-agent-${node}`;
    const podPath = `/api/v1/namespaces/${AGENT_NAMESPACE}/pods`;
    const old = cached.get(node);
    if (old !== undefined) {
      tokens.push({ node, token: old });
      return;
    }
    const created = await api.request('POST', podPath, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: podName, namespace: AGENT_NAMESPACE, labels: { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'agent' } },
      spec: {
        nodeName: node,
        serviceAccountName: AGENT_ACCOUNT,
        automountServiceAccountToken: false,
        containers: [{ name: 'agent', image: 'nodepulse:scale', imagePullPolicy: 'Never' }],
      },
    });
    expect(created, [201, 409], `POST pod ${podName}`);
    let pod = created;
    if (created.status === 409) {
      pod = await api.request('GET', `${podPath}/${podName}`);
      expect(pod, [200], `GET pod ${podName}`);
    }
    const uid = (pod.json as { metadata: { uid: string } }).metadata.uid;
    const token = await tokenRequest(api, AGENT_ACCOUNT, { apiVersion: 'v1', kind: 'Pod', name: podName, uid });
    tokens.push({ node, token });
    if (++made % 1000 === 0) options.log(`${made} agent tokens made`);
  });
  tokens.sort((a, b) => (a.node < b.node ? -1 : 1));
  writeFileSync(options.cacheFile, JSON.stringify(tokens), { mode: 0o600 });
  return tokens;
}

/** A token of the controller's account (unbound, as a projected token of its pod is used here). */
export function controllerToken(api: AdminApi): Promise<string> {
  return tokenRequest(api, CONTROLLER_ACCOUNT, undefined);
}

async function tokenRequest(api: AdminApi, account: string, boundObjectRef: Record<string, string> | undefined): Promise<string> {
  const a = await api.request('POST', `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts/${account}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: TOKEN_SECONDS, ...(boundObjectRef === undefined ? {} : { boundObjectRef }) },
  });
  expect(a, [201], `TokenRequest for ${account}`);
  return (a.json as { status: { token: string } }).status.token;
}
