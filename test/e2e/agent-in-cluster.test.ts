// The built agent in a pod's shape: no kubeconfig, its service account mounted where every pod
// has it (test/support/in-cluster.ts, a private mount namespace), the API stand-in over TLS with
// a test CA. It must take its lean in-cluster path:
// - renew its Lease over HTTPS, authenticated by the service-account token and trusting ca.crt;
// - re-read the token when kubelet rotates it: one 401 at most, then the new token, no restart;
// - never load @kubernetes/client-node (why: src/kube/auth/pick-kube-auth.ts, the figure in
//   docs/bench.md); nor, without a config file, the YAML parser, nor the OpenTelemetry API or prom-client's index.
// A module-load hook (test/support/module-load-hook.ts) records every module the agent loads. The
// same agent given a kubeconfig file instead does load KubeConfig, which shows the hook sees it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { isRoot } from '../support/require.ts';
import { pollUntil, startAgentProcess, startStandIn, type StandIn } from '../support/agent-process.ts';

const HOOK = resolve(import.meta.dirname, '..', 'support', 'module-load-hook.ts');
const USER = 'system:serviceaccount:nodepulse:nodepulse';
const OLD_TOKEN = 'in-cluster-old-token-0123456789';
const NEW_TOKEN = 'in-cluster-new-token-9876543210';
/** The first renewal comes about a second after start; rotation is picked up by the next request. */
const RENEWAL_TIMEOUT_MS = 15_000;
const CLIENT_NODE = '/node_modules/@kubernetes/client-node/';
const KUBECONFIG_MODULE = `${CLIENT_NODE}dist/config.js`;
/** Modules an agent in a pod, given no config file, has no use for. */
const NOT_IN_A_POD = ['/node_modules/yaml/', '/node_modules/@opentelemetry/api/', '/node_modules/prom-client/index.js'];

function skipUnlessRoot(t: TestContext): boolean {
  if (isRoot()) return false;
  if (process.env['CI'] === 'true') throw new Error('precondition: the in-cluster test needs root (a private mount namespace), and CI runs as root');
  t.skip('needs root for a private mount namespace');
  return true;
}

async function world(t: TestContext, name: string): Promise<{ standIn: StandIn; endpoint: string; moduleLog: string }> {
  const standIn = await startStandIn(t, { nodeName: name, inCluster: true, token: OLD_TOKEN, api: { tokens: { [OLD_TOKEN]: USER } } });
  const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 2, containersPerPod: 1 });
  t.after(() => sim.close());
  const moduleLog = join(standIn.dir, 'modules.log');
  writeFileSync(moduleLog, '');
  return { standIn, endpoint: sim.endpoint, moduleLog };
}

const loaded = (moduleLog: string): string[] => readFileSync(moduleLog, 'utf8').split('\n').filter((l) => l !== '');

describe('the agent in a pod: its lean in-cluster path', { timeout: 90_000 }, () => {
  it('renews over TLS with the service-account token, re-reads it when rotated, and never loads client-node', async (t) => {
    if (skipUnlessRoot(t)) return;
    const { standIn, endpoint, moduleLog } = await world(t, 'node-in-cluster');
    const account = standIn.serviceAccount;
    assert.ok(account !== undefined, 'precondition: the stand-in wrote a service account');
    const agent = await startAgentProcess(t, {
      args: ['--node-name=node-in-cluster', `--cri-endpoint=${endpoint}`, '--renew-interval=1s', '--lease-duration=4s', '--api-timeout=2s'],
      nodeArgs: ['--import', HOOK],
      env: { MODULE_LOAD_LOG: moduleLog },
      inCluster: account,
    });
    const target = await agent.waitForLog((l) => l['msg'] === 'Kubernetes API target', 1_000);
    assert.equal(target.line['apiServer'], 'in-cluster');
    await pollUntil('the first renewal', () => standIn.lease()?.spec.renewTime, { timeoutMs: RENEWAL_TIMEOUT_MS });
    assert.match(standIn.api.url, /^https:/);
    const writers = new Set(standIn.api.requests.all().filter((r) => r.path.includes('/leases/')).map((r) => r.user));
    assert.deepEqual([...writers], [USER]);

    // kubelet rotates the projected token; the old one stops working at the same moment.
    standIn.api.auth.setTokens({ [NEW_TOKEN]: USER });
    writeFileSync(join(account.dir, 'token'), NEW_TOKEN);
    const seq = standIn.api.requests.lastSeq();
    await pollUntil('a renewal with the new token', () => standIn.api.requests.since(seq).some((r) => r.path.includes('/leases/') && r.status === 200) || undefined, { timeoutMs: RENEWAL_TIMEOUT_MS });
    const refused = standIn.api.requests.since(seq).filter((r) => r.status === 401);
    assert.ok(refused.length <= 1, `one 401 at most after the rotation (${refused.length})`);
    assert.ok(agent.running, 'no restart');

    const modules = loaded(moduleLog);
    assert.ok(modules.some((m) => m.endsWith('/dist/src/kube/auth/lean-auth.js')), 'precondition: the hook recorded the agent\'s own modules');
    assert.deepEqual(modules.filter((m) => m.includes(CLIENT_NODE)), [], 'no module of @kubernetes/client-node is loaded in-cluster');
    // Loaded once, resident for good on every node, and of no use to this run (docs/bench.md):
    assert.deepEqual(modules.filter((m) => NOT_IN_A_POD.some((path) => m.includes(path))), [], 'no YAML parser without a config file, no OpenTelemetry API, no prom-client index');
    assert.ok(modules.some((m) => m.includes('/node_modules/prom-client/lib/registry.js')), 'precondition: the hook saw prom-client\'s own modules');
    assert.equal(await agent.stop(), 0);
  });

  it('given a kubeconfig file instead, the agent loads client-node\'s KubeConfig (the hook sees it)', async (t) => {
    if (skipUnlessRoot(t)) return;
    const { standIn, endpoint, moduleLog } = await world(t, 'node-kubeconfig');
    const agent = await startAgentProcess(t, {
      args: ['--node-name=node-kubeconfig', `--cri-endpoint=${endpoint}`, `--kubeconfig=${standIn.kubeconfig}`],
      nodeArgs: ['--import', HOOK],
      env: { MODULE_LOAD_LOG: moduleLog },
    });
    await pollUntil('the first renewal', () => standIn.lease()?.spec.renewTime, { timeoutMs: RENEWAL_TIMEOUT_MS });
    assert.ok(loaded(moduleLog).some((m) => m.endsWith(KUBECONFIG_MODULE)), `${KUBECONFIG_MODULE} was loaded`);
    assert.equal(await agent.stop(), 0);
  });
});
