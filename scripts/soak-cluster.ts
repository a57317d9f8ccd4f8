// `npm run soak:cluster [-- --minutes M] [--pods N]`: nodepulse at the shipped defaults on the
// test cluster's real nodes for M minutes (default 60) under churn, watched for a false verdict.
// Not part of CI.
//
// | what                          | how                                                              |
// |-------------------------------|------------------------------------------------------------------|
// | the install                   | the shipped overlay (test/cluster/overlay: kustomize, as root),  |
// |                               | no flags: every setting at its default                           |
// | pod churn                     | N pods per node (default 10, the pause image: busybox's sleep),  |
// |                               | the oldest deleted and a new one created on each node every      |
// |                               | CHURN_EVERY_MS, through the API server, so each node's kubelet   |
// |                               | makes and removes sandboxes and containers on its containerd     |
// | image activity                | on each node, a fresh noise image (test/support/noise-image.ts)  |
// |                               | imported into its containerd every IMAGE_EVERY_MS and the one    |
// |                               | before removed (nothing can be pulled: an import stands in for a |
// |                               | pull, a removal for image GC)                                     |
// | what is watched               | every node's condition and its agent Lease's renewTime, every    |
// |                               | POLL_MS; each agent's nodepulse_runtime_observable, every        |
// |                               | SCRAPE_MS, through the API server's pod proxy                    |
// | beside it, not judged         | each node's kubelet Lease (kube-node-lease), polled alike, so a  |
// |                               | gap in ours shows whether the kubelet's renewals stopped too     |
// |                               | (the API server or etcd stalled, not the agent); each agent's    |
// |                               | nodepulse_lease_renewals_total at the last scrape, by result     |
// | the verdict                   | scripts/cluster-soak-verdict.ts: no True, no cannot-observe, no  |
// |                               | lease gap longer than the renew interval + 1 s                   |
//
// Uses the test cluster that is up; with none up it brings one up as the tests' shared cluster
// (SHARED_CLUSTER_ARGS in test/cluster/layout.ts) and takes it down at the end. Prints the
// figures per node; --json FILE writes the run and the verdict. Exit codes: 0 passed; 1 a false
// verdict, a lease gap, or a step failed; 2 a wrong option.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parseArgs, promisify } from 'node:util';
import { SystemClock, wallMs } from '../src/clock/clock.ts';
import { loadAgentConfig } from '../src/config/load-agent-config.ts';
import { agentImage } from '../test/fixtures/agent-image.ts';
import { apply, remove, renderOverlay } from '../test/cluster/agent-identity.ts';
import { importAgentImage, listPods, podGet, waitPodsReady } from '../test/cluster/agent-on-cluster.ts';
import { readState } from '../test/cluster/cluster.ts';
import { SANDBOX_IMAGE } from '../test/cluster/node.ts';
import { SHARED_CLUSTER_ARGS } from '../test/cluster/layout.ts';
import { sharedCluster, type SharedCluster } from '../test/cluster/shared-cluster.ts';
import { noiseImage } from '../test/support/noise-image.ts';
import { judgeClusterSoak, type NodeSoakRecord } from './cluster-soak-verdict.ts';

const execFileAsync = promisify(execFile);
const REPO_ROOT = join(import.meta.dirname, '..');
const clock = new SystemClock();
const NAMESPACE = 'nodepulse';
const CHURN_NAMESPACE = 'np-soak-churn';
const AGENT_SELECTOR = 'app.kubernetes.io/component=agent';
const POLL_MS = 1_000;
const SCRAPE_MS = 10_000;
const CHURN_EVERY_MS = 5_000;
const IMAGE_EVERY_MS = 15_000;
const NOISE_BYTES = 4 * 1024 * 1024;

const log = (line: string): void => {
  process.stderr.write(`soak:cluster: ${line}\n`);
};

function cli(args: readonly string[]): void {
  execFileSync(process.execPath, [join(REPO_ROOT, 'test', 'cluster', 'cli.ts'), ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
}

interface Recording {
  conditions: Array<{ atMs: number; status: string; reason: string }>;
  renewalsMs: number[];
  observable: Array<{ atMs: number; value: number | undefined }>;
  kubeletRenewalsMs: number[];
  /** The agent's nodepulse_lease_renewals_total lines at the last scrape. */
  leaseRenewals: string[];
}

/** A Lease's renewTime as ms since the run's start, added to `into` when it moved. */
function noteRenewal(renewTime: string | undefined, startWall: number, into: number[]): void {
  const at = renewTime === undefined ? NaN : Date.parse(renewTime) - startWall;
  if (Number.isFinite(at) && at >= 0 && into[into.length - 1] !== at) into.push(at);
}

/** Keeps `perNode` pods on each node, replacing the oldest every CHURN_EVERY_MS. */
async function churnPods(cluster: SharedCluster, perNode: number, until: () => boolean, errors: Map<string, string>): Promise<number> {
  let made = 0;
  const live = new Map<string, string[]>(cluster.state.nodes.map((n) => [n.name, []]));
  const create = async (node: string): Promise<void> => {
    const name = `churn-${node}-${made++}`;
    const a = await cluster.request(`/api/v1/namespaces/${CHURN_NAMESPACE}/pods`, {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'np-soak-churn' } }, spec: { nodeName: node, terminationGracePeriodSeconds: 0, containers: [{ name: 'sleep', image: SANDBOX_IMAGE, imagePullPolicy: 'IfNotPresent' }] } },
    });
    if (a.status !== 201) errors.set('create pod', `${a.status} ${a.body.slice(0, 200)}`);
    else live.get(node)?.push(name);
  };
  for (const n of cluster.state.nodes) for (let i = 0; i < perNode; i++) await create(n.name);
  while (!until()) {
    await clock.sleep(CHURN_EVERY_MS);
    for (const n of cluster.state.nodes) {
      const oldest = live.get(n.name)?.shift();
      if (oldest !== undefined) {
        const d = await cluster.request(`/api/v1/namespaces/${CHURN_NAMESPACE}/pods/${oldest}?gracePeriodSeconds=0`, { method: 'DELETE' });
        if (d.status !== 200) errors.set('delete pod', `${d.status} ${d.body.slice(0, 200)}`);
      }
      await create(n.name);
    }
  }
  return made;
}

/** On each node: import a fresh noise image, remove the previous one, every IMAGE_EVERY_MS. */
async function churnImages(cluster: SharedCluster, until: () => boolean, errors: Map<string, string>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'np-soak-cluster-'));
  let steps = 0;
  const previous = new Map<string, string>();
  try {
    while (!until()) {
      const ref = `localhost/np-soak-noise:${steps}`;
      const image = noiseImage(dir, ref, NOISE_BYTES);
      for (const n of cluster.state.nodes) {
        const ctr = (args: readonly string[]): Promise<unknown> => execFileAsync('ctr', ['-a', n.hostSocket, '-n', 'k8s.io', ...args], { timeout: 60_000 });
        try {
          await ctr(['images', 'import', image.path]);
          const old = previous.get(n.name);
          if (old !== undefined) await ctr(['images', 'rm', old]);
          previous.set(n.name, ref);
        } catch (err) {
          errors.set('image', err instanceof Error ? err.message.slice(0, 200) : String(err));
        }
      }
      rmSync(image.path, { force: true });
      steps++;
      await clock.sleep(IMAGE_EVERY_MS);
    }
    for (const n of cluster.state.nodes) {
      const old = previous.get(n.name);
      if (old !== undefined) await execFileAsync('ctr', ['-a', n.hostSocket, '-n', 'k8s.io', 'images', 'rm', old], { timeout: 60_000 }).catch(() => undefined);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return steps;
}

/** Reads until the run's time is up; resolves with when it stopped reading (ms since the start). */
async function watch(cluster: SharedCluster, startWall: number, startMono: number, until: () => boolean, rec: Map<string, Recording>): Promise<number> {
  let nextScrape = 0;
  while (!until()) {
    const atMs = clock.monotonicMs() - startMono;
    for (const n of cluster.state.nodes) {
      const r = rec.get(n.name) as Recording;
      try {
        const node = (await cluster.request(`/api/v1/nodes/${n.name}`)).json as { status: { conditions?: Array<{ type: string; status: string; reason?: string }> } };
        const c = node.status.conditions?.find((x) => x.type === 'RuntimeRelistUnhealthy');
        if (c !== undefined) {
          const last = r.conditions[r.conditions.length - 1];
          if (last === undefined || last.status !== c.status || last.reason !== (c.reason ?? '') || c.status !== 'False') r.conditions.push({ atMs, status: c.status, reason: c.reason ?? '' });
        }
        const lease = (await cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/${n.name}`)).json as { spec?: { renewTime?: string } };
        noteRenewal(lease.spec?.renewTime, startWall, r.renewalsMs);
        const kubelet = (await cluster.request(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${n.name}`)).json as { spec?: { renewTime?: string } };
        noteRenewal(kubelet.spec?.renewTime, startWall, r.kubeletRenewalsMs);
      } catch (err) {
        log(`watch ${n.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (atMs >= nextScrape) {
      nextScrape = atMs + SCRAPE_MS;
      const pods = await listPods(cluster, NAMESPACE, AGENT_SELECTOR).catch(() => []);
      for (const p of pods) {
        const r = rec.get(p.spec.nodeName ?? '');
        if (r === undefined) continue;
        const m = await podGet(cluster, p, 9356, '/metrics').catch(() => undefined);
        const lines = m?.body.split('\n') ?? [];
        const line = lines.find((l) => l.startsWith('nodepulse_runtime_observable'));
        r.observable.push({ atMs, value: line === undefined ? undefined : Number(line.split(' ').pop()) });
        const renewals = lines.filter((l) => l.startsWith('nodepulse_lease_renewals_total'));
        if (renewals.length > 0) r.leaseRenewals = renewals;
      }
    }
    await clock.sleep(POLL_MS);
  }
  return clock.monotonicMs() - startMono;
}

async function main(): Promise<number> {
  let values: { minutes?: string; pods?: string; json?: string };
  try {
    ({ values } = parseArgs({ args: process.argv.slice(2), options: { minutes: { type: 'string', default: '60' }, pods: { type: 'string', default: '10' }, json: { type: 'string' } } }));
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    return 2;
  }
  const minutes = Number(values.minutes);
  const perNode = Number(values.pods);
  if (!(minutes > 0)) {
    log(`--minutes: ${values.minutes} must be a number above 0`);
    return 2;
  }
  if (!Number.isInteger(perNode) || perNode < 1 || perNode > 100) {
    log(`--pods: ${values.pods} must be a whole number from 1 to 100`);
    return 2;
  }
  const loaded = loadAgentConfig({ argv: ['--node-name', 'soak'], env: {}, readFile: (p) => { throw new Error(`no config file: ${p}`); } });
  if (!loaded.ok) throw new Error(loaded.error.lines.join('; '));
  const renewIntervalMs = loaded.config.renewIntervalMs;
  const ours = readState() === undefined;
  if (ours) cli(['up', ...SHARED_CLUSTER_ARGS]);
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const cluster = await sharedCluster({ skip: (why?: string) => { throw new Error(`the test cluster must be up: ${why ?? ''}`); } } as unknown as TestContext);
    if (cluster === undefined) return 1;
    const objects = await renderOverlay(cluster);
    await agentImage();
    await importAgentImage(cluster);
    cleanups.push(() => remove(cluster, objects));
    await apply(cluster, objects);
    await waitPodsReady(cluster, NAMESPACE, AGENT_SELECTOR);
    await cluster.kubectl(['create', 'namespace', CHURN_NAMESPACE], { allowFailure: true });
    cleanups.push(() => cluster.kubectl(['delete', 'namespace', CHURN_NAMESPACE, '--wait=true', '--timeout=180s'], { allowFailure: true }));
    log(`installed at the shipped defaults (renew interval ${renewIntervalMs} ms); soaking ${minutes} min with ${perNode} churning pods per node and an image every ${IMAGE_EVERY_MS / 1000} s`);

    const askedMs = minutes * 60_000;
    const startMono = clock.monotonicMs();
    const startWall = wallMs(clock);
    const until = (): boolean => clock.monotonicMs() - startMono >= askedMs;
    const errors = new Map<string, string>();
    const rec = new Map<string, Recording>(cluster.state.nodes.map((n) => [n.name, { conditions: [], renewalsMs: [], observable: [], kubeletRenewalsMs: [], leaseRenewals: [] }]));
    // The run lasts as long as the watch; the churn workers finish their step after it.
    const [pods, images, ranMs] = await Promise.all([churnPods(cluster, perNode, until, errors), churnImages(cluster, until, errors), watch(cluster, startWall, startMono, until, rec)]);
    const nodes: NodeSoakRecord[] = [...rec].map(([node, r]) => ({ node, ...r }));
    const verdict = judgeClusterSoak({ askedMs, ranMs, renewIntervalMs, nodes });
    const s = (ms: number | undefined): string => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`);
    process.stdout.write([
      `soak:cluster: ${(ranMs / 60_000).toFixed(1)} min at the shipped defaults; ${pods} pods created, ${images} image import/removal rounds per node${errors.size === 0 ? '' : `; churn errors: ${[...errors].map(([k, v]) => `${k}: ${v}`).join('; ')}`}`,
      '| node | renewals | longest lease gap | allowed | the kubelet Lease\'s longest gap (during ours) | True seen | cannot-observe seen | scrapes |',
      '|---|---|---|---|---|---|---|---|',
      ...verdict.nodes.map((n) => `| ${n.node} | ${n.renewals} | ${s(n.longestGap?.lengthMs)} from ${s(n.longestGap?.fromMs)} | ${s(verdict.allowedGapMs)} | ${s(n.kubeletLongestGap?.lengthMs)} (${s(n.kubeletGapAtOurs?.lengthMs)}) | ${n.trueSeen} | ${n.cannotObserveSeen} | ${n.scrapes} |`),
      ...[...rec].map(([node, r]) => `${node}: ${r.leaseRenewals.join(', ')}`),
      verdict.ok ? 'passed' : `failed:\n${verdict.problems.join('\n')}`,
      '',
    ].join('\n'));
    if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ askedMs, ranMs, renewIntervalMs, nodes, verdict, pods, images }, null, 2)}\n`);
    return verdict.ok ? 0 : 1;
  } catch (err) {
    log(err instanceof Error ? err.stack ?? err.message : String(err));
    return 1;
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch((err: unknown) => log(`cleanup: ${String(err)}`));
    if (ours) cli(['down']);
  }
}

if (import.meta.main) process.exitCode = await main();
