// The chart on the real cluster, as docs/install.md tells a user to install it, after the
// kustomize install is deleted: the namespace made and labelled first, then `helm install` with
// the controller, the admission policy and the FlowSchema on (helm from the npm package, the
// cluster's own kubectl v1.34.4 for everything else).
//
// | step                         | must hold                                                               |
// |------------------------------|-------------------------------------------------------------------------|
// | before                       | nothing of ours on the cluster (the kustomize install is gone)          |
// | the agents                   | install-checks.ts's table, on what `helm get manifest` says was applied |
// | the controller               | two replicas Ready; the Lease nodepulse-controller held by one of them; |
// |                              | its pod deleted, the Lease passes to another pod (leaseTransitions + 1) |
// | kubectl nodepulse fleet      | as a kubectl plugin: exit 0, every node Fresh, after watching a renewal |
// | kubectl get leases           | every node's agent lease, held by its node, and the controller's        |
// | helm uninstall               | nothing of ours left: no object labelled as ours, in any namespace or   |
// |                              | cluster-wide (Node conditions and taints are the operators' to remove); |
// |                              | a todo today: the Leases stay (see the subtest)                         |
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { parseManifests } from '../deploy/render.ts';
import { requireImageBuild } from '../fixtures/agent-image.ts';
import { AGENT_MAIN, NODE_24 } from '../support/agent-process.ts';
import { k8sTools } from '../support/k8s-tools.ts';
import { agentAccount, OVERLAY } from './agent-identity.ts';
import { AGENT_IMAGE, getLease, importAgentImage, listPods, PODS_READY_MS } from './agent-on-cluster.ts';
import { checkInstall, readyConditions } from './install-checks.ts';
import { sharedCluster, type SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const NAMESPACE = 'nodepulse';
const RELEASE = 'nodepulse';
const CHART = 'deploy/helm/nodepulse';
const CONTROLLER_SELECTOR = 'app.kubernetes.io/name=nodepulse,app.kubernetes.io/component=controller';
const ELECTION_LEASE = 'nodepulse-controller';
/** A graceful stop releases the lease; the standby retries every 2 s. Without a release: 15 s lease + 2 s. */
const HANDOVER_MS = 60_000;
const HELM_TIMEOUT_MS = 300_000;
const clock = new SystemClock();

test('helm install with the controller after the kustomize install is deleted: agents, a real leader election, the plugin, and a clean uninstall', async (t) => {
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
  await helm(['install', RELEASE, CHART, '--set', `image.repository=${image}`, '--set', `image.tag=${tag}`,
    '--set', 'controller.enabled=true', '--set', 'admissionPolicy.enabled=true', '--set', 'flowSchema.enabled=true']);
  const objects = parseManifests((await helm(['get', 'manifest', RELEASE])).stdout);
  await checkInstall(t, cluster, { account: agentAccount(objects), objects, readyBefore, expect: { uid: '0', groups: [] } });

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

  await t.test('kubectl nodepulse fleet and kubectl get leases, against the cluster', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'nodepulse-cluster-plugin-'));
    t.after(() => rmSync(bin, { recursive: true, force: true }));
    writeFileSync(join(bin, 'kubectl-nodepulse'), `#!/bin/sh\nexec ${NODE_24} ${AGENT_MAIN} "$@"\n`);
    chmodSync(join(bin, 'kubectl-nodepulse'), 0o755);
    const path = `${bin}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
    const plugins = await run(cluster.kubectlPath, ['plugin', 'list'], { PATH: path, KUBECONFIG: cluster.kubeconfig }, true);
    assert.match(plugins.stdout, /kubectl-nodepulse/, 'precondition: kubectl finds the plugin');
    // --observe: judged on the reader's own clock, from leases seen to advance. A lease renews every
    // ~10 s, so a 20 s grace sees each advance at least once.
    const fleet = await run(cluster.kubectlPath, ['nodepulse', 'fleet', '--grace', '20s', '--observe', '20s', '-o', 'json'], { PATH: path, KUBECONFIG: cluster.kubeconfig }, true);
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

  // Known gap: the agents' Leases and the controller's election Lease are made by the running
  // agents and controller, not by Helm, so `helm uninstall` leaves them in the namespace. The
  // chart's post-delete hook (or `nodepulse cleanup`) is where they would go; until then this
  // subtest reports the gap without failing the run.
  await t.test('helm uninstall leaves nothing of ours behind', { todo: 'helm uninstall leaves the agents\' and the controller\'s Leases behind (not Helm-managed)' }, async () => {
    await helm(['uninstall', RELEASE, '--wait', '--timeout', '180s']);
    await waitFor('the agents and the controller are gone', async () => {
      const left = [...await listPods(cluster, NAMESPACE, 'app.kubernetes.io/name=nodepulse')];
      return left.length === 0 ? true : `pods: ${left.map((p) => p.metadata.name).join(', ')}`;
    }, { clock, timeoutMs: PODS_READY_MS });
    assert.deepEqual(await ours(cluster), [], 'objects of ours after helm uninstall');
  });
});

/**
 * Every object on the cluster that says it is ours (label app.kubernetes.io/name=nodepulse or
 * app.kubernetes.io/part-of=nodepulse, or a nodepulse.io/role label), of every kind that can be
 * listed, namespaced or not; as `kind namespace/name` lines. Events are records, not installed
 * state, and expire: they are left out.
 */
async function ours(cluster: SharedCluster): Promise<string[]> {
  const kinds = (await cluster.kubectl(['api-resources', '--verbs=list', '-o', 'name'])).stdout.trim().split('\n').filter((k) => k !== '' && !k.startsWith('events'));
  const found = new Set<string>();
  for (const selector of ['app.kubernetes.io/name=nodepulse', 'app.kubernetes.io/part-of=nodepulse', 'nodepulse.io/role']) {
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
