// `nodepulse cleanup` against the API stand-in, as the user an uninstall hook runs it as: only
// the grants the command needs (list pods in the agent namespace; list and get nodes; patch
// nodes/status; patch nodes), so a request beyond them is a 403 the test sees.
//
// The Nodes carry what a real cluster's do: the kubelet's four conditions beside ours, and
// taints of other writers around ours. The agent pods go away while cleanup waits: it is run on
// a manual clock, and the test deletes the pods between its polls, so nothing is patched until
// the last one is gone. A second case runs on real time (a few hundred milliseconds) with a
// writer that inserts a taint while cleanup's JSON patch is in flight: the patch's test refuses
// it, cleanup reads the Node again, and the other writer's taint survives.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { SystemClock, type Clock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { EXIT_CLEAN, EXIT_NOT_DONE, POD_POLL_MS, runCleanup } from '../../src/cli/cleanup-command.ts';
import { EXIT_API_FAILED, EXIT_BAD_INPUT } from '../../src/cli/command-io.ts';
import type { AccessRule } from '../../src/stand-ins/api-server/auth.ts';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { realisticNode } from './fleet-fixtures.ts';

const real = new SystemClock();
const NS = 'nodepulse';
const SELECTOR = 'app.kubernetes.io/name=nodepulse';
const USER = 'system:serviceaccount:nodepulse:nodepulse-cleanup';
const TOKEN = 'cleanup-token';
/** What the command needs, and nothing more. */
const CLEANUP_RULES: readonly AccessRule[] = [
  { user: USER, verbs: ['list'], resources: ['pods'], namespaces: [NS] },
  { user: USER, verbs: ['list', 'get'], resources: ['nodes'] },
  { user: USER, verbs: ['patch'], resources: ['nodes/status', 'nodes'] },
  { user: USER, verbs: ['list', 'delete'], resources: ['leases'], namespaces: [NS] },
];

const SILENT = { key: 'nodepulse.io/agent-silent', effect: 'NoSchedule', timeAdded: '2026-01-02T03:04:05Z' };
const CORDON = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: '2026-01-02T03:00:00Z' };
const UNREACHABLE = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-01-02T03:04:06Z' };
const DEDICATED = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const KUBELET_TYPES = ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'];

type Json = Record<string, unknown>;
type Condition = { type: string; status: string; reason: string };

interface World {
  readonly server: ApiServerHandle;
  readonly kubeconfig: string;
}

async function world(t: TestContext, clock: Clock, rules: readonly AccessRule[] = CLEANUP_RULES): Promise<World> {
  const server = await startApiServer({ clock, tokens: { [TOKEN]: USER }, rules });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-cleanup-'));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: server.url, token: TOKEN });
  const created = real.wallMicros() - 86_400_000_000;
  const node = (name: string, i: number, condition: { status: string; reason: string } | undefined, taints: readonly object[]): void => {
    const n = realisticNode(name, i, { createdMicros: created, ...(condition === undefined ? {} : { condition }) });
    server.store.put({ ...n, spec: { ...(n['spec'] as Json), taints } });
  };
  node('node-1', 1, { status: 'True', reason: 'RelistStale' }, [CORDON, SILENT, UNREACHABLE]);
  node('node-2', 2, { status: 'False', reason: 'RelistHealthy' }, []);
  node('node-3', 3, undefined, [DEDICATED]);
  node('node-4', 4, { status: 'Unknown', reason: 'AgentLeaseStale' }, [SILENT]);
  for (const [name, namespace, role] of LEASES) server.store.put(lease(name, namespace, role));
  return { server, kubeconfig };
}

/** nodepulse's Leases (two agents', the controller's), and two that are not ours. */
const LEASES: ReadonlyArray<readonly [string, string, string | undefined]> = [
  ['node-1', NS, 'node-lease'],
  ['node-2', NS, 'node-lease'],
  ['nodepulse-controller', NS, 'leader-election'],
  ['someone-elses', NS, undefined],
  ['node-3', 'other-ns', 'node-lease'],
];

function lease(name: string, namespace: string, role: string | undefined): Json {
  const labels = role === undefined ? { app: 'other' } : { 'app.kubernetes.io/name': 'nodepulse', 'nodepulse.io/role': role };
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace, labels }, spec: { holderIdentity: name, leaseDurationSeconds: 40 } };
}

function leaseNames(server: ApiServerHandle): string[] {
  return LEASES.filter(([name, namespace]) => server.store.get('leases', namespace, name) !== undefined).map(([name, namespace]) => `${namespace}/${name}`);
}

function pod(name: string, namespace: string, labels: Record<string, string>): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec: { nodeName: 'node-1', containers: [{ name: 'agent', image: 'nodepulse' }] } };
}

const AGENT_LABELS = { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'agent' };

function conditions(server: ApiServerHandle, name: string): Condition[] {
  const n = server.store.get('nodes', undefined, name) as { status: { conditions: Condition[] } };
  return n.status.conditions.map(({ type, status, reason }) => ({ type, status, reason }));
}

function taints(server: ApiServerHandle, name: string): object[] {
  return ((server.store.get('nodes', undefined, name) as { spec: { taints?: object[] } }).spec.taints ?? []);
}

function capture(clock: Clock, env: Record<string, string> = {}): { out: string[]; err: string[]; io: Parameters<typeof runCleanup>[1] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: { write: (s: string) => void out.push(s) }, stderr: { write: (s: string) => void err.push(s) }, env, clock } };
}

/** Advances the manual clock by a poll period at a time, letting real HTTP in between, until `done` or `steps` run out. */
async function drive(clock: ManualClock, isDone: () => boolean, steps: number, between: (step: number) => void = () => undefined): Promise<void> {
  for (let step = 0; step < steps && !isDone(); step++) {
    await real.sleep(20);
    between(step);
    await clock.advance(POD_POLL_MS);
  }
}

test('cleanup waits for the agent pods to go, then removes our condition and taint from every Node and nothing else, and verifies', { timeout: 60_000 }, async (t) => {
  const clock = new ManualClock({ startWallMs: Math.floor(real.wallMicros() / 1000) });
  const w = await world(t, clock);
  w.server.store.put(pod('nodepulse-a1', NS, AGENT_LABELS));
  w.server.store.put(pod('nodepulse-a2', NS, AGENT_LABELS));
  w.server.store.put(pod('nodepulse-controller-x', NS, { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'controller' }));
  w.server.store.put(pod('other-app', NS, { 'app.kubernetes.io/name': 'other' }));
  w.server.store.put(pod('nodepulse-elsewhere', 'other-ns', AGENT_LABELS));
  // The pod cleanup runs in matches the selector too: it must not wait for itself.
  w.server.store.put(pod('nodepulse-cleanup-hook', NS, { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'cleanup' }));
  const c = capture(clock, { POD_NAME: 'nodepulse-cleanup-hook', POD_NAMESPACE: NS });
  let exit: number | undefined;
  const run = runCleanup(['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR], c.io).then((code) => (exit = code));
  let goneAtSeq = 0;
  await drive(clock, () => exit !== undefined, 50, (step) => {
    if (step === 2) w.server.store.delete('pods', NS, 'nodepulse-a1');
    if (step === 4) w.server.store.delete('pods', NS, 'nodepulse-controller-x');
    if (step === 6) {
      w.server.store.delete('pods', NS, 'nodepulse-a2');
      goneAtSeq = w.server.requests.lastSeq();
    }
  });
  await run;
  assert.equal(exit, EXIT_CLEAN, c.err.join(''));
  assert.equal(c.err.join(''), '');
  assert.ok(goneAtSeq > 0, 'precondition: the last agent pod was deleted while cleanup ran');

  // Nothing was written while a matching pod existed; the pods were listed with the selector.
  const patches = w.server.requests.filter({ method: 'PATCH' });
  assert.ok(patches.every((r) => r.seq > goneAtSeq), `no PATCH before the last pod went: ${patches.map((r) => r.seq).join(',')} vs ${goneAtSeq}`);
  const podLists = w.server.requests.filter({ method: 'GET', path: `/api/v1/namespaces/${NS}/pods` });
  assert.ok(podLists.length >= 4, `precondition: cleanup polled the pods while they went (${podLists.length} lists)`);
  assert.ok(podLists.every((r) => r.query['labelSelector'] === SELECTOR), 'every pod list carries the selector');

  // Exactly the patches of the header's table, each as the type chosen for it.
  assert.deepEqual(patches.map((r) => `${r.path} ${r.contentType ?? ''} ${r.status ?? ''}`).sort(), [
    '/api/v1/nodes/node-1 application/json-patch+json 200',
    '/api/v1/nodes/node-1/status application/strategic-merge-patch+json 200',
    '/api/v1/nodes/node-2/status application/strategic-merge-patch+json 200',
    '/api/v1/nodes/node-4 application/json-patch+json 200',
    '/api/v1/nodes/node-4/status application/strategic-merge-patch+json 200',
  ]);
  assert.deepEqual(w.server.requests.filter({}).filter((r) => r.status === 403).map((r) => `${r.method} ${r.path}`), [], 'every request is within the grants');

  // Our condition and taint are gone; the kubelet's conditions and the other writers' taints stay, in order.
  for (const name of ['node-1', 'node-2', 'node-3', 'node-4']) {
    assert.deepEqual(conditions(w.server, name).map((x) => x.type), KUBELET_TYPES, `${name}: the kubelet's conditions, and only those`);
  }
  assert.deepEqual(conditions(w.server, 'node-1').find((x) => x.type === 'Ready'), { type: 'Ready', status: 'True', reason: 'KubeletReady' });
  assert.deepEqual(taints(w.server, 'node-1'), [CORDON, UNREACHABLE]);
  assert.deepEqual(taints(w.server, 'node-2'), []);
  assert.deepEqual(taints(w.server, 'node-3'), [DEDICATED]);
  assert.deepEqual(taints(w.server, 'node-4'), []);

  // The last request is the listing that verified it, after every patch.
  const nodeLists = w.server.requests.filter({ method: 'GET', path: '/api/v1/nodes' });
  assert.equal(nodeLists.length, 2, 'one listing to find the leftovers, one to verify');
  assert.ok((nodeLists[1]?.seq ?? 0) > Math.max(...patches.map((r) => r.seq)), 'the verifying listing comes after every patch');

  // Then nodepulse's Leases in the namespace are deleted, by label, and listed again; the others stay.
  assert.deepEqual(leaseNames(w.server), ['nodepulse/someone-elses', 'other-ns/node-3']);
  const deletes = w.server.requests.filter({ method: 'DELETE' });
  assert.ok(deletes.every((r) => r.seq > (nodeLists[1]?.seq ?? 0)), 'Leases are deleted after the Nodes were verified');
  const leaseLists = w.server.requests.filter({ method: 'GET', path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases` });
  assert.equal(leaseLists.length, 2, 'one listing to find our Leases, one to verify');
  assert.ok(leaseLists.every((r) => r.query['labelSelector'] === 'nodepulse.io/role in (node-lease,leader-election)'), 'Leases are selected by label');

  const lines = c.out.join('').split('\n').filter((l) => l !== '');
  // Four Nodes are patched at once, so the per-Node lines come in the order the patches finish.
  const nodeLines = lines.filter((l) => l.startsWith('node-'));
  assert.deepEqual([...lines.filter((l) => !l.startsWith('node-')).slice(0, 4), ...nodeLines.sort(), ...lines.slice(-5)], [
    `nodepulse cleanup: waiting for 3 pods matching "${SELECTOR}" in namespace ${NS} to go: nodepulse-a1, nodepulse-a2, nodepulse-controller-x`,
    `nodepulse cleanup: waiting for 2 pods matching "${SELECTOR}" in namespace ${NS} to go: nodepulse-a2, nodepulse-controller-x`,
    `nodepulse cleanup: waiting for 1 pods matching "${SELECTOR}" in namespace ${NS} to go: nodepulse-a2`,
    `nodepulse cleanup: no pod matches "${SELECTOR}" in namespace ${NS}`,
    ...[
      'node-1: removed condition RuntimeRelistUnhealthy=True/RelistStale, taint nodepulse.io/agent-silent:NoSchedule',
      'node-2: removed condition RuntimeRelistUnhealthy=False/RelistHealthy',
      'node-4: removed condition RuntimeRelistUnhealthy=Unknown/AgentLeaseStale, taint nodepulse.io/agent-silent:NoSchedule',
    ],
    'nodepulse cleanup: no Node carries the condition RuntimeRelistUnhealthy or the taint nodepulse.io/agent-silent (4 Nodes listed)',
    `lease ${NS}/node-1: deleted`,
    `lease ${NS}/node-2: deleted`,
    `lease ${NS}/nodepulse-controller: deleted`,
    `nodepulse cleanup: done: no Node carries the condition RuntimeRelistUnhealthy or the taint nodepulse.io/agent-silent, and no Lease of ours is left in namespace ${NS} (3 deleted)`,
  ]);
});

test('cleanup under a concurrent writer: a taint inserted while its JSON patch is in flight makes the test refuse it; cleanup reads the Node again, and the other taint survives', { timeout: 30_000 }, async (t) => {
  const w = await world(t, real);
  // Hold cleanup's taint patch of node-1 for a moment, as a slow API server would.
  w.server.faults.delayNext(1, 'PATCH /api/v1/nodes/node-1', 500);
  const c = capture(real);
  const run = runCleanup(['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR], c.io);
  // While it is held, another writer (the node lifecycle controller, say) puts a taint first.
  const deadline = real.monotonicMs() + 10_000;
  while (w.server.requests.filter({ method: 'PATCH', path: '/api/v1/nodes/node-1' }).length === 0) {
    assert.ok(real.monotonicMs() < deadline, 'precondition: cleanup sent its taint patch of node-1');
    await real.sleep(5);
  }
  const node1 = w.server.store.get('nodes', undefined, 'node-1') as Json & { spec: Json };
  const lifecycle = { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: '2026-01-02T03:05:00Z' };
  w.server.store.put({ ...node1, spec: { ...node1.spec, taints: [lifecycle, CORDON, SILENT, UNREACHABLE] } });

  assert.equal(await run, EXIT_CLEAN, c.err.join(''));
  const taintPatches = w.server.requests.filter({ method: 'PATCH', path: '/api/v1/nodes/node-1' });
  assert.deepEqual(taintPatches.map((r) => r.status), [422, 200], 'the first patch was refused by its test, the second applied');
  assert.deepEqual((taintPatches[1]?.parsed as Json[])[0], { op: 'test', path: '/spec/taints/2', value: SILENT }, 'the second patch tests the taint at its new place');
  const reread = w.server.requests.filter({ method: 'GET', path: '/api/v1/nodes/node-1' });
  assert.equal(reread.length, 1, 'the Node was read again between the two');
  assert.deepEqual(taints(w.server, 'node-1'), [lifecycle, CORDON, UNREACHABLE], 'only our taint is gone: the other writer\'s stays');
});

test('cleanup stops at --timeout while an agent pod remains, names it, and patches nothing', { timeout: 30_000 }, async (t) => {
  const clock = new ManualClock({ startWallMs: Math.floor(real.wallMicros() / 1000) });
  const w = await world(t, clock);
  w.server.store.put(pod('nodepulse-stuck', NS, AGENT_LABELS));
  const c = capture(clock);
  let exit: number | undefined;
  const run = runCleanup(['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR, '--timeout', '10s'], c.io).then((code) => (exit = code));
  await drive(clock, () => exit !== undefined, 20);
  await run;
  assert.equal(exit, EXIT_NOT_DONE);
  assert.equal(c.err.join(''), `nodepulse cleanup: not done: --timeout 10s ran out; pods still matched "${SELECTOR}" in namespace ${NS}, so nothing was removed: nodepulse-stuck\n`);
  assert.equal(w.server.requests.count({ method: 'PATCH' }), 0, 'nothing was patched');
  assert.deepEqual(conditions(w.server, 'node-1').at(-1), { type: 'RuntimeRelistUnhealthy', status: 'True', reason: 'RelistStale' });
});

test('cleanup names the Nodes it could not clean, after its bounded passes, and exits 1', { timeout: 30_000 }, async (t) => {
  // Without `patch nodes`, the taints cannot be removed; the conditions still can.
  const w = await world(t, real, CLEANUP_RULES.map((r) => (r.verbs.includes('patch') ? { ...r, resources: ['nodes/status'] } : r)));
  const c = capture(real);
  assert.equal(await runCleanup(['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR], c.io), EXIT_NOT_DONE);
  assert.match(c.err.join(''), /nodepulse cleanup: node-1: PATCH nodes node-1: .*forbidden/i);
  assert.match(c.err.join(''), /nodepulse cleanup: 2 Nodes still carry the condition RuntimeRelistUnhealthy or the taint nodepulse\.io\/agent-silent: node-1, node-4\n$/);
  assert.deepEqual(taints(w.server, 'node-1'), [CORDON, SILENT, UNREACHABLE]);
  assert.equal(conditions(w.server, 'node-2').length, 4, 'the conditions were still removed');
  assert.equal(w.server.requests.count({ method: 'GET', path: '/api/v1/nodes' }), 3, 'three listings: the first, one after each pass');
});

test('cleanup --dry-run lists the pods it would wait for and what it would remove, and changes nothing', { timeout: 30_000 }, async (t) => {
  const w = await world(t, real);
  w.server.store.put(pod('nodepulse-a1', NS, AGENT_LABELS));
  const c = capture(real);
  assert.equal(await runCleanup(['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR, '--dry-run'], c.io), EXIT_CLEAN, c.err.join(''));
  assert.equal(w.server.requests.count({ method: 'PATCH' }), 0);
  assert.equal(w.server.requests.count({ method: 'DELETE' }), 0);
  assert.deepEqual(c.out.join('').split('\n').filter((l) => l !== ''), [
    `nodepulse cleanup: 1 pods match "${SELECTOR}" in namespace ${NS}; a run would wait for them to go: nodepulse-a1`,
    'node-1: would remove condition RuntimeRelistUnhealthy=True/RelistStale, taint nodepulse.io/agent-silent:NoSchedule',
    'node-2: would remove condition RuntimeRelistUnhealthy=False/RelistHealthy',
    'node-4: would remove condition RuntimeRelistUnhealthy=Unknown/AgentLeaseStale, taint nodepulse.io/agent-silent:NoSchedule',
    `lease ${NS}/node-1: would delete`,
    `lease ${NS}/node-2: would delete`,
    `lease ${NS}/nodepulse-controller: would delete`,
    `nodepulse cleanup: dry run: 3 of 4 Nodes carry the condition RuntimeRelistUnhealthy or the taint nodepulse.io/agent-silent, and 3 Leases of ours are in namespace ${NS}; nothing was changed`,
  ]);
});

test('cleanup: bad flags exit 2 with one line each; an API it cannot reach exits 3', async (t) => {
  const table: ReadonlyArray<[readonly string[], string]> = [
    [['--agent-selector', SELECTOR], 'agentNamespace: "" must be set (--agent-namespace)'],
    [['--agent-namespace', NS], 'agentSelector: "" must be set (--agent-selector)'],
    [['--agent-namespace', NS, '--agent-selector', ''], 'agentSelector: "" must be a label selector that is not empty (an empty one matches every pod of the namespace) (from --agent-selector)'],
    [['--agent-namespace', 'No_Such', '--agent-selector', SELECTOR], 'agentNamespace:'],
    [['--agent-namespace', NS, '--agent-selector', SELECTOR, '--timeout', '5'], 'timeout: 5 must be a duration'],
  ];
  for (const [argv, line] of table) {
    const c = capture(real);
    assert.equal(await runCleanup([...argv], c.io), EXIT_BAD_INPUT, argv.join(' '));
    assert.ok(c.err.join('').startsWith(line), `${argv.join(' ')}: ${c.err.join('')}`);
  }
  const help = capture(real);
  assert.equal(await runCleanup(['--help'], help.io), 0);
  for (const flag of ['--agent-namespace', '--agent-selector', '--timeout', '--dry-run', '--kubeconfig', '--context']) assert.match(help.out.join(''), new RegExp(`${flag}\\b`));

  // Unreachable: each listing is tried five times, backing off on the manual clock, then given up.
  const clock = new ManualClock({ startWallMs: Math.floor(real.wallMicros() / 1000) });
  const w = await world(t, clock);
  await w.server.stopListening();
  const c = capture(clock);
  let exit: number | undefined;
  const run = runCleanup(['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR], c.io).then((code) => (exit = code));
  await drive(clock, () => exit !== undefined, 20);
  await run;
  assert.equal(exit, EXIT_API_FAILED);
  assert.match(c.err.join(''), /^nodepulse cleanup: LIST \/api\/v1\/namespaces\/nodepulse\/pods: ECONNREFUSED/);
});

test('cleanup --lease-namespace: the agents\' Leases there go too, beside the controller\'s in the agent namespace; a Lease not ours stays', { timeout: 30_000 }, async (t) => {
  const rules: readonly AccessRule[] = [...CLEANUP_RULES, { user: USER, verbs: ['list', 'delete'], resources: ['leases'], namespaces: ['other-ns'] }];
  const w = await world(t, real, rules);
  const c = capture(real);
  const args = ['--kubeconfig', w.kubeconfig, '--agent-namespace', NS, '--agent-selector', SELECTOR, '--lease-namespace', 'other-ns'];
  assert.equal(await runCleanup(args, c.io), EXIT_CLEAN, c.err.join(''));
  assert.deepEqual(leaseNames(w.server), ['nodepulse/someone-elses']);
  assert.match(c.out.join(''), /no Lease of ours is left in namespaces nodepulse and other-ns \(4 deleted\)/);
});
