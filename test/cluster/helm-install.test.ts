// The chart on the real cluster, as docs/install.md tells a user to install it, after the
// kustomize install is deleted: the namespace made and labelled first, then `helm install` with
// the controller on (the admission policy, the priority level and its FlowSchema, the uninstall
// hook and `helm test` are on by default); helm from the npm package, the cluster's own kubectl
// v1.34.4 for everything else. One install serves every row: it is a renamed one (release
// `fleet-health`, nameOverride `pulse`, namespace `node-health`), so that each row also shows
// that nothing depends on the default names (the kustomize tests cover those).
//
// | step                         | must hold                                                               |
// |------------------------------|-------------------------------------------------------------------------|
// | before                       | nothing of ours on the cluster (the kustomize install is gone)          |
// | the agents                   | install-checks.ts's table, on what `helm get manifest` says was applied |
// | helm test                    | the chart's own check (`nodepulse verify`) passes                       |
// | admission policy, renamed    | a token of the renamed account bound to the agent's pod on node 0:      |
// |                              | node 0's status admitted, node 1's refused with the policy's message    |
// | FlowSchema, renamed          | that token's lease requests (GET, dry-run PATCH) carry the installed    |
// |                              | FlowSchema's and priority level's uids in the APF response headers      |
// | the controller               | two replicas Ready; the Lease nodepulse-controller held by one of them; |
// |                              | its pod deleted, the Lease passes to another pod (leaseTransitions + 1) |
// | kubectl nodepulse fleet      | the plugin installed as the README says (npm install -g): exit 0,       |
// |                              | every node Fresh, after watching a renewal                              |
// | kubectl get leases -n <ns>   | every node's agent lease, held by its node, and the controller's        |
// | helm uninstall               | the hook has removed our condition from every Node (no taint either)    |
// |                              | and deleted every Lease in the namespace; no object labelled as ours is |
// |                              | left, in any namespace or cluster-wide                                  |
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { parseManifests, type K8sObject } from '../deploy/render.ts';
import { requireImageBuild } from '../fixtures/agent-image.ts';
import { NODE_24 } from '../support/agent-process.ts';
import { k8sTools } from '../support/k8s-tools.ts';
import type { ApiAnswer, Credentials } from './api-request.ts';
import { agentAccount, OVERLAY, theOne, tokenBoundToPod, tokenClaims } from './agent-identity.ts';
import { AGENT_IMAGE, getLease, importAgentImage, listPods, nodeConditions, PODS_READY_MS } from './agent-on-cluster.ts';
import { checkInstall, readyConditions } from './install-checks.ts';
import { sharedCluster, type SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const NAMESPACE = 'node-health';
const RELEASE = 'fleet-health';
const NAME = 'pulse';
const CHART = 'deploy/helm/nodepulse';
const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const CONTROLLER_SELECTOR = `app.kubernetes.io/name=${NAME},app.kubernetes.io/component=controller`;
const ELECTION_LEASE = 'nodepulse-controller';
const CONDITION = 'RuntimeRelistUnhealthy';
const TAINT = 'nodepulse.io/agent-silent';
/** A graceful stop releases the lease; the standby retries every 2 s. Without a release: 15 s lease + 2 s. */
const HANDOVER_MS = 60_000;
const HELM_TIMEOUT_MS = 300_000;
const clock = new SystemClock();

interface NodeView {
  readonly spec: { readonly taints?: ReadonlyArray<{ key: string }> };
  readonly status: { readonly conditions?: ReadonlyArray<{ type: string }> };
}

test('helm install (renamed) with the controller after the kustomize install is deleted: agents, the policy and FlowSchema on the real account, a real leader election, the plugin, and a clean uninstall', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined || !requireImageBuild(t)) return;
  const [image, tag] = AGENT_IMAGE.split(':') as [string, string];
  const helmHome = mkdtempSync(join(tmpdir(), 'nodepulse-cluster-helm-'));
  const helm = (args: readonly string[], allowFailure = false) => run(k8sTools().helm, [...args, '--namespace', NAMESPACE, '--kubeconfig', cluster.kubeconfig], {
    HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_DATA_HOME: join(helmHome, 'data'),
  }, allowFailure);
  t.after(async () => {
    await helm(['uninstall', RELEASE, '--wait', '--timeout', '180s', '--ignore-not-found'], true);
    await cluster.kubectl(['delete', 'namespace', NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=180s']);
    rmSync(helmHome, { recursive: true, force: true });
  });

  // A user moving from the kustomize install deletes it first (a no-op when nothing is left).
  await cluster.kubectl(['delete', '-k', OVERLAY, '--ignore-not-found', '--wait=true', '--timeout=180s']);
  assert.deepEqual(await ours(cluster), [], 'precondition: nothing of ours is on the cluster before the chart');
  const readyBefore = await readyConditions(cluster);
  await importAgentImage(cluster);

  await cluster.kubectl(['create', 'namespace', NAMESPACE]);
  await cluster.kubectl(['label', 'namespace', NAMESPACE, 'pod-security.kubernetes.io/enforce=privileged']);
  // The admission policy, the priority level with its FlowSchema, the uninstall hook and the test
  // hook are on by default; the controller is not.
  await helm(['install', RELEASE, CHART, '--set', `nameOverride=${NAME}`, '--set', `image.repository=${image}`, '--set', `image.tag=${tag}`, '--set', 'controller.enabled=true']);
  const objects = parseManifests((await helm(['get', 'manifest', RELEASE])).stdout);
  const account = agentAccount(objects);
  assert.deepEqual([account.namespace, account.name], [NAMESPACE, `${RELEASE}-${NAME}`], 'precondition: the install is renamed, in its own namespace');
  const pods = await checkInstall(t, cluster, { account, objects, readyBefore, expect: { uid: '0', groups: [] } });

  await t.test('helm test: the chart\'s own check passes against the real cluster', async () => {
    const tested = await helm(['test', RELEASE, '--timeout', '180s'], true);
    assert.equal(tested.code, 0, `helm test: exit ${tested.code}\n${tested.stderr}${tested.stdout}`);
    assert.match(tested.stdout, /Phase:\s+Succeeded/);
  });

  // A token of the renamed account bound to the agent's own pod on node 0: the claim the kubelet's
  // projected token carries. Writes are dry runs (admission runs, nothing is stored), so the
  // agents' own condition and leases stay as they are.
  const [own, other] = cluster.state.nodes.map((n) => n.name) as [string, string];
  const agentPod = pods.get(own);
  assert.ok(agentPod !== undefined && other !== undefined, 'precondition: an agent pod on node 0, and a node 1');
  const token = await tokenBoundToPod(cluster, account, { name: agentPod.metadata.name, uid: agentPod.metadata.uid });
  assert.equal((tokenClaims(token) as { 'kubernetes.io'?: { node?: { name?: string } } })['kubernetes.io']?.node?.name, own, 'precondition: the token carries node 0');
  const agent: Credentials = { kind: 'token', token };

  await t.test('the admission policy follows the renamed account: its own node admitted, another refused with the policy\'s message', async () => {
    const policy = theOne(objects, 'ValidatingAdmissionPolicy');
    const binding = theOne(objects, 'ValidatingAdmissionPolicyBinding');
    const patchStatus = (node: string): Promise<ApiAnswer> => cluster.request(`/api/v1/nodes/${node}/status?dryRun=All`, {
      method: 'PATCH', contentType: 'application/strategic-merge-patch+json', credentials: agent,
      body: { status: { conditions: [{ type: CONDITION, status: 'False', reason: 'RelistHealthy', message: 'a dry run', lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' }] } },
    });
    const admitted = await patchStatus(own);
    assert.equal(admitted.status, 200, `${own}/status: ${admitted.body}`);
    const refused = await patchStatus(other);
    const status = refused.json as { code?: number; reason?: string; message?: string };
    assert.deepEqual([refused.status, status.code, status.reason, status.message], [403, 403, 'Forbidden',
      `nodes "${other}" is forbidden: ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}' denied request: nodepulse on node ${own} may not write nodes/${other}`]);
  });

  await t.test('the FlowSchema follows the renamed account: the agent\'s lease requests carry its uid and its priority level\'s', async () => {
    const schema = theOne(objects, 'FlowSchema') as K8sObject & { spec: { priorityLevelConfiguration: { name: string } } };
    const uid = async (path: string): Promise<string> => {
      const a = await cluster.request(path);
      assert.equal(a.status, 200, a.body);
      return (a.json as { metadata: { uid: string } }).metadata.uid;
    };
    const expected = {
      schema: await uid(`/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/${schema.metadata.name}`),
      level: await uid(`/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/${schema.spec.priorityLevelConfiguration.name}`),
    };
    const classified = (a: ApiAnswer): { schema: unknown; level: unknown } => ({ schema: a.headers['x-kubernetes-pf-flowschema-uid'], level: a.headers['x-kubernetes-pf-prioritylevel-uid'] });
    const lease = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${own}`;
    const got = await cluster.request(lease, { credentials: agent });
    assert.equal(got.status, 200, got.body);
    assert.deepEqual(classified(got), expected, 'GET of its lease');
    const renewed = await cluster.request(`${lease}?dryRun=All`, {
      method: 'PATCH', contentType: 'application/merge-patch+json', credentials: agent, body: { spec: { renewTime: '2026-01-01T00:00:00.000000Z' } },
    });
    assert.equal(renewed.status, 200, renewed.body);
    assert.deepEqual(classified(renewed), expected, 'a dry-run renewal of its lease');
  });

  await t.test('the controller leads through a real Lease, and hands over when its pod is deleted', async () => {
    await waitPodsReadyCount(cluster, CONTROLLER_SELECTOR, 2);
    const names = async (): Promise<string[]> => (await listPods(cluster, NAMESPACE, CONTROLLER_SELECTOR)).map((p) => p.metadata.name);
    let first = await getLease(cluster, NAMESPACE, ELECTION_LEASE);
    await waitFor('a controller replica holds the election lease', async () => {
      first = await getLease(cluster, NAMESPACE, ELECTION_LEASE);
      return (await names()).includes(first?.spec.holderIdentity ?? '') ? true : `holder ${first?.spec.holderIdentity}`;
    }, { clock, timeoutMs: HANDOVER_MS });
    const leader = first?.spec.holderIdentity ?? '';
    const transitions = (first?.spec as { leaseTransitions?: number } | undefined)?.leaseTransitions ?? 0;
    const deleted = await cluster.request(`/api/v1/namespaces/${NAMESPACE}/pods/${leader}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, deleted.body);
    let next = first;
    await waitFor('another replica takes the lease over', async () => {
      next = await getLease(cluster, NAMESPACE, ELECTION_LEASE);
      const holder = next?.spec.holderIdentity ?? '';
      return holder !== '' && holder !== leader && (await names()).includes(holder) ? true : `holder ${holder}`;
    }, { clock, timeoutMs: HANDOVER_MS });
    assert.equal((next?.spec as { leaseTransitions?: number } | undefined)?.leaseTransitions, transitions + 1, 'one transition');
  });

  await t.test('kubectl nodepulse fleet (the plugin as installed) and kubectl get leases -n, against the cluster', async () => {
    // The README's install: `npm install -g nodepulse`, here from this checkout into a prefix of
    // its own; the bin's `#!/usr/bin/env node` finds Node 24 first on PATH.
    const prefix = mkdtempSync(join(tmpdir(), 'nodepulse-cluster-plugin-'));
    t.after(() => rmSync(prefix, { recursive: true, force: true }));
    const path = `${join(prefix, 'bin')}:${dirname(NODE_24)}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
    const installed = await run('npm', ['install', '-g', '--prefix', prefix, REPO_ROOT, '--offline', '--no-audit', '--no-fund'], { PATH: path }, true);
    assert.equal(installed.code, 0, `precondition: npm install -g of this checkout: ${installed.stderr}`);
    const plugins = await run(cluster.kubectlPath, ['plugin', 'list'], { PATH: path, KUBECONFIG: cluster.kubeconfig }, true);
    assert.match(plugins.stdout, new RegExp(`${join(prefix, 'bin', 'kubectl-nodepulse')}$`, 'm'), 'precondition: kubectl finds the installed plugin');
    // --observe: judged on the reader's own clock, from leases seen to advance. A lease renews every
    // ~10 s, so a 20 s grace sees each advance at least once.
    const fleet = await run(cluster.kubectlPath, ['nodepulse', 'fleet', '--lease-namespace', NAMESPACE, '--grace', '20s', '--observe', '20s', '-o', 'json'], { PATH: path, KUBECONFIG: cluster.kubeconfig }, true);
    assert.equal(fleet.code, 0, `kubectl nodepulse fleet: exit ${fleet.code}\n${fleet.stderr}${fleet.stdout}`);
    const report = JSON.parse(fleet.stdout) as { summary: { judged: number; fresh: number }; nodes: Array<{ node: string; verdict: string }> };
    assert.deepEqual(report.nodes.map((n) => [n.node, n.verdict]), cluster.state.nodes.map((n) => [n.name, 'Fresh']));
    assert.deepEqual([report.summary.judged, report.summary.fresh], [cluster.state.nodes.length, cluster.state.nodes.length]);

    const leases = await cluster.kubectl(['get', 'leases', '-n', NAMESPACE, '-o', 'custom-columns=NAME:.metadata.name,HOLDER:.spec.holderIdentity', '--no-headers']);
    const rows = leases.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/));
    for (const node of cluster.state.nodes) assert.ok(rows.some(([name, holder]) => name === node.name && holder === node.name), `${node.name}'s lease, held by its node: ${leases.stdout}`);
    const controllers = (await listPods(cluster, NAMESPACE, CONTROLLER_SELECTOR)).map((p) => p.metadata.name);
    assert.ok(rows.some(([name, holder]) => name === ELECTION_LEASE && controllers.includes(holder ?? '')), `the controller's lease, held by a replica: ${leases.stdout}`);
  });

  await t.test('helm uninstall: the hook removes our condition and the Leases; nothing of ours is left', async () => {
    for (const node of cluster.state.nodes) {
      assert.ok((await nodeConditions(cluster, node.name)).some((c) => c.type === CONDITION), `precondition: ${node.name} carries ${CONDITION} before the uninstall`);
    }
    assert.ok((await leaseNames(cluster)).length > cluster.state.nodes.length, 'precondition: the agents\' and the controller\'s Leases exist before the uninstall');
    // Helm runs the post-delete hook and waits for its Job; the hook waits for the agents to go.
    await helm(['uninstall', RELEASE, '--wait', '--timeout', '180s']);
    // The hook returns once the agents and the controller are gone; the wait is bounded for the
    // case where it did not run.
    await waitFor('no pod of ours (agents, controller, hook) is left', async () => {
      const left = await listPods(cluster, NAMESPACE, `app.kubernetes.io/name=${NAME}`);
      return left.length === 0 ? true : `pods: ${left.map((p) => p.metadata.name).join(', ')}`;
    }, { clock, timeoutMs: PODS_READY_MS });
    for (const node of cluster.state.nodes) {
      const view = (await cluster.request(`/api/v1/nodes/${node.name}`)).json as NodeView;
      assert.deepEqual(
        [view.status.conditions?.filter((c) => c.type === CONDITION) ?? [], view.spec.taints?.filter((x) => x.key === TAINT) ?? []],
        [[], []],
        `${node.name}: our condition and taint are gone`,
      );
    }
    assert.deepEqual(await leaseNames(cluster), [], `no Lease left in ${NAMESPACE}`);
    assert.deepEqual(await ours(cluster), [], 'objects of ours after helm uninstall');
  });
});

async function leaseNames(cluster: SharedCluster): Promise<string[]> {
  const a = await cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`);
  assert.equal(a.status, 200, a.body);
  return (a.json as { items: Array<{ metadata: { name: string } }> }).items.map((l) => l.metadata.name).sort();
}

/**
 * Every object on the cluster that says it is ours (label app.kubernetes.io/name=nodepulse, or
 * the renamed install's name, or app.kubernetes.io/part-of=nodepulse, or a nodepulse.io/role label), of every kind that can be
 * listed, namespaced or not; as `kind namespace/name` lines. Events are records, not installed
 * state, and expire: they are left out.
 */
async function ours(cluster: SharedCluster): Promise<string[]> {
  const kinds = (await cluster.kubectl(['api-resources', '--verbs=list', '-o', 'name'])).stdout.trim().split('\n').filter((k) => k !== '' && !k.startsWith('events'));
  const found = new Set<string>();
  for (const selector of ['app.kubernetes.io/name=nodepulse', `app.kubernetes.io/name=${NAME}`, 'app.kubernetes.io/part-of=nodepulse', 'nodepulse.io/role']) {
    const out = await cluster.kubectl(['get', kinds.join(','), '-A', '-l', selector, '-o', 'custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name', '--no-headers', '--ignore-not-found']);
    for (const line of out.stdout.trim().split('\n')) if (line.trim() !== '') found.add(line.trim().split(/\s+/).join(' '));
  }
  return [...found].sort();
}

async function waitPodsReadyCount(cluster: SharedCluster, selector: string, count: number): Promise<void> {
  await waitFor(`${count} Ready pods of ${selector}`, async () => {
    const ready = (await listPods(cluster, NAMESPACE, selector)).filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === count ? true : `${ready.length} Ready`;
  }, { clock, timeoutMs: PODS_READY_MS });
}

function run(file: string, args: readonly string[], env: Record<string, string>, allowFailure = false): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', ...env }, timeout: HELM_TIMEOUT_MS, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && !allowFailure) reject(new Error(`${file} ${args.join(' ')}: exit ${code}\n${stderr}${stdout}`));
      else resolve({ code, stdout, stderr });
    });
  });
}
