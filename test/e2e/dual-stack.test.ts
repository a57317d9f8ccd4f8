// The agent's and the controller's default listening address (`:9356`, `:9357`) serves a pod's
// IPv4 and IPv6 addresses alike, and still starts where the pod has no IPv6.
//
// The world, in network namespaces this test makes (test/support/net-namespace.ts), none of it
// in the host's own namespace:
//
//   namespace "node" ── veth ── namespace "dual":  198.18.200.2/30 and fd53:7572:6661:1::2/64
//                    └─ veth ── namespace "v4":    198.18.200.6/30, with net.ipv6.conf.all and
//                                                  .default.disable_ipv6 = 1 before anything starts
//
// In each pod namespace the built agent runs with its default --http-address, on the simulated
// runtime's socket (a file: every namespace sees it) and the API stand-in, run as a process in
// the same namespace on its loopback, as a pod reaches its API server. The probes come from
// "node", as the kubelet's do: /readyz over each address of the pod, and /status, whose
// `lease.renewing` shows the agent doing its work there and not only listening. The controller
// runs in "dual" with its default --http-address, and /healthz is probed on both families.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { AGENT_MAIN, NODE_24, REPO_ROOT } from '../support/agent-process.ts';
import { netNamespaces, requireNetNamespaces, type NetNamespaces, type ProbeAnswer } from '../support/net-namespace.ts';

const clock = new SystemClock();
const STAND_IN_MAIN = join(REPO_ROOT, 'dist', 'src', 'stand-ins', 'api-server', 'main.js');
/** The agent's first renewal lands within about 2 s of its start; 20 s covers a loaded machine. */
const RENEW_WITHIN_MS = 20_000;

const DUAL = { v4: '198.18.200.2', v6: 'fd53:7572:6661:1::2' } as const;
const V4_ONLY = { v4: '198.18.200.6' } as const;

function url(host: string, port: number, path: string): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
}

function summary(answers: readonly ProbeAnswer[]): string[] {
  return answers.map((a) => `${a.url} → ${a.status === 0 ? `failed: ${a.error ?? ''}` : `${a.status} ${a.body.trim().split('\n')[0] ?? ''}`}`);
}

/** Starts the API stand-in in `ns` and writes a kubeconfig for it; returns the kubeconfig path. */
async function standInIn(nets: NetNamespaces, ns: string, dir: string): Promise<string> {
  const api = await nets.spawnIn(ns, [NODE_24, STAND_IN_MAIN, '--port', '0'], (line) => line.startsWith('{"url"'));
  const first = api.lines().find((line) => line.startsWith('{"url"')) ?? '';
  const server = (JSON.parse(first) as { url: string }).url;
  assert.match(server, /^http:\/\/127\.0\.0\.1:\d+$/, 'precondition: the stand-in listens on the namespace\'s loopback');
  const path = join(dir, `${ns}.kubeconfig`);
  writeKubeconfig(path, { server });
  return path;
}

/** Polls /status from `from` until the lease is renewing; returns the last answers. */
async function renewing(nets: NetNamespaces, from: string, statusUrl: string): Promise<boolean> {
  const deadline = clock.monotonicMs() + RENEW_WITHIN_MS;
  while (clock.monotonicMs() < deadline) {
    const [answer] = await nets.probeFrom(from, [statusUrl]);
    if (answer?.status === 200 && (JSON.parse(answer.body) as { lease: { renewing: boolean } }).lease.renewing) return true;
    await clock.sleep(250);
  }
  return false;
}

test('dual-stack by default: the agent answers on a pod\'s IPv4 and IPv6 addresses, and starts and answers on IPv4 where IPv6 is disabled', { timeout: 120_000 }, async (t) => {
  const ip = requireNetNamespaces(t);
  if (ip === undefined) return;
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-surface-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const sim = await startSimRuntime({ clock, socketPath: join(dir, 'cri.sock'), pods: 2, containersPerPod: 1 });
  t.after(() => sim.close());

  const nets = netNamespaces(t, ip, 'np-surface');
  const node = await nets.add('node');
  const dual = await nets.add('dual');
  const v4 = await nets.add('v4', { 'net.ipv6.conf.all.disable_ipv6': '1', 'net.ipv6.conf.default.disable_ipv6': '1' });
  await nets.link(node, 'to-dual', ['198.18.200.1/30', 'fd53:7572:6661:1::1/64'], dual, 'eth0', [`${DUAL.v4}/30`, `${DUAL.v6}/64`]);
  await nets.link(node, 'to-v4', ['198.18.200.5/30'], v4, 'eth0', [`${V4_ONLY.v4}/30`]);

  // Preconditions: the pod namespaces have exactly the families the cases are about.
  const dualAddrs = await nets.ip(dual, ['-o', 'address', 'show', 'dev', 'eth0']);
  assert.match(dualAddrs, new RegExp(`inet6 ${DUAL.v6}/64`), 'precondition: "dual" has its IPv6 unique-local address');
  const v4All = await nets.ip(v4, ['-o', 'address', 'show']);
  assert.doesNotMatch(v4All, /inet6/, `precondition: "v4" has no IPv6 address at all (::1 included):\n${v4All}`);
  assert.equal((await nets.exec(v4, ['sysctl', '-n', 'net.ipv6.conf.all.disable_ipv6'])).trim(), '1', 'precondition: IPv6 is disabled in "v4"');

  const agentArgs = (kubeconfig: string, nodeName: string): string[] =>
    [NODE_24, AGENT_MAIN, 'agent', '--node-name', nodeName, '--cri-endpoint', sim.endpoint, '--kubeconfig', kubeconfig, '--node-condition=false'];
  const started = (line: string): boolean => line.includes('"msg":"Agent started"');

  // The pod with both families.
  const dualKube = await standInIn(nets, dual, dir);
  const dualAgent = await nets.spawnIn(dual, agentArgs(dualKube, 'node-dual'), started);
  const dualStart = JSON.parse(dualAgent.lines().find(started) ?? '{}') as { http?: string };
  assert.equal(dualStart.http, '[::]:9356', 'the agent says it listens on every IPv6 address, dual-stack, port 9356');
  const dualAnswers = await nets.probeFrom(node, [url(DUAL.v4, 9356, '/readyz'), url(DUAL.v6, 9356, '/readyz')]);
  assert.deepEqual(summary(dualAnswers), [
    `${url(DUAL.v4, 9356, '/readyz')} → 200 ok`,
    `${url(DUAL.v6, 9356, '/readyz')} → 200 ok`,
  ], dualAgent.output());
  assert.ok(await renewing(nets, node, url(DUAL.v6, 9356, '/status')), `the agent in "dual" renews its lease\n${dualAgent.output()}`);

  const controller = await nets.spawnIn(dual, [NODE_24, AGENT_MAIN, 'controller', '--kubeconfig', dualKube, '--identity', 'c-dual'], (line) => line.includes('"msg":"Controller started"'));
  const controllerStart = JSON.parse(controller.lines().find((l) => l.includes('"msg":"Controller started"')) ?? '{}') as { http?: string };
  assert.equal(controllerStart.http, '[::]:9357', 'the controller listens on every IPv6 address, dual-stack, port 9357');
  const controllerAnswers = await nets.probeFrom(node, [url(DUAL.v4, 9357, '/healthz'), url(DUAL.v6, 9357, '/healthz')]);
  assert.deepEqual(controllerAnswers.map((a) => a.status), [200, 200], summary(controllerAnswers).join('\n'));

  // The pod without IPv6.
  const v4Kube = await standInIn(nets, v4, dir);
  const v4Agent = await nets.spawnIn(v4, agentArgs(v4Kube, 'node-v4'), started);
  const v4Answers = await nets.probeFrom(node, [url(V4_ONLY.v4, 9356, '/readyz')]);
  assert.deepEqual(summary(v4Answers), [`${url(V4_ONLY.v4, 9356, '/readyz')} → 200 ok`], v4Agent.output());
  assert.ok(await renewing(nets, node, url(V4_ONLY.v4, 9356, '/status')), `the agent in "v4" renews its lease\n${v4Agent.output()}`);
  assert.ok(dualAgent.running && v4Agent.running && controller.running, 'every process is still running');
});
