// The CRI socket is root-equivalent: whoever can call CreateContainer or ExecSync on it owns the
// node. This test enumerates every CRI method the agent's client can call, three ways, and
// checks each list is the six read-only calls:
//   1. proto/: the only service definition shipped, parsed for its rpcs;
//   2. the built code (dist/src, what the package runs): every gRPC method path it names;
//   3. a run: the built agent against the strict simulated runtime, which counts every call it
//      receives, including calls to the ~35 other runtime.v1 methods (answered UNIMPLEMENTED
//      and counted as unexpected).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { criProtoPath } from '../../src/cri/cri-proto.ts';
import { RUNTIME_CLIENT_CALLS } from '../../src/cri/runtime-client.ts';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { REFUSED_CRI_METHODS } from '../../src/stand-ins/cri-runtime/sim-methods.ts';
import { REPO_ROOT, startAgentProcess, startStandIn } from '../support/agent-process.ts';
import { firstRenewalAfter, sleep } from '../faults/api-world.ts';

const READ_ONLY = ['ContainerStatus', 'ListContainers', 'ListPodSandbox', 'PodSandboxStatus', 'Status', 'Version'];
/** The client's calls, by the RPC each one makes (relist = ListPodSandbox ∥ ListContainers). */
const CLIENT_CALL_RPCS: Readonly<Record<string, readonly string[]>> = {
  version: ['Version'],
  status: ['Status'],
  relist: ['ListPodSandbox', 'ListContainers'],
  listPodSandbox: ['ListPodSandbox'],
  listContainers: ['ListContainers'],
  podSandboxStatus: ['PodSandboxStatus'],
  containerStatus: ['ContainerStatus'],
};
const EVERY_UPSTREAM_METHOD = Object.values(REFUSED_CRI_METHODS).flat().map((m) => m.name);

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => join(e.parentPath, e.name));
}

describe('the CRI methods the agent can call are the six read-only ones', () => {
  test('proto/ declares exactly the six, and the client maps to nothing else', () => {
    const text = readFileSync(criProtoPath(), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
    const rpcs = [...text.matchAll(/\brpc\s+(\w+)\s*\(/g)].map((m) => m[1]).sort();
    assert.deepEqual(rpcs, READ_ONLY);
    assert.deepEqual([...RUNTIME_CLIENT_CALLS].sort(), Object.keys(CLIENT_CALL_RPCS).sort(), 'every client call is in the table above');
    assert.deepEqual([...new Set(Object.values(CLIENT_CALL_RPCS).flat())].sort(), READ_ONLY);
  });

  test('the built code names no mutating CRI method and no other CRI service', () => {
    const agentCode = jsFiles(join(REPO_ROOT, 'dist', 'src')).filter((f) => !f.includes('/stand-ins/cri-runtime/') && !f.endsWith('.test.js'));
    assert.ok(agentCode.length > 20, `precondition: dist/src is built (${agentCode.length} files)`);
    const found: string[] = [];
    for (const file of agentCode) {
      const code = readFileSync(file, 'utf8');
      for (const name of EVERY_UPSTREAM_METHOD) {
        // A method path, or the bare name as a string literal (the client builds its paths from names).
        if (code.includes(`/${name}`) || code.includes(`'${name}'`) || code.includes(`"${name}"`)) found.push(`${file.slice(REPO_ROOT.length)}: ${name}`);
      }
      if (/runtime\.v1\.ImageService/.test(code)) found.push(`${file.slice(REPO_ROOT.length)}: runtime.v1.ImageService`);
    }
    // The simulated runtime (dist/src/stand-ins/cri-runtime) names them on purpose, to refuse them, and the
    // compiled unit tests name them to test the proto parser; neither is the agent.
    assert.deepEqual(found, []);
  });

  test('a run of the built agent calls only read-only methods of the runtime', { timeout: 30_000 }, async (t) => {
    const standIn = await startStandIn(t, { nodeName: 'node-cri-calls' });
    const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 5, containersPerPod: 2, churnPerSecond: 2 });
    t.after(() => sim.close());
    const agent = await startAgentProcess(t, {
      args: ['--node-name', 'node-cri-calls', '--cri-endpoint', sim.endpoint, '--kubeconfig', standIn.kubeconfig, '--relist-period', '100ms', '--status-period', '1s', '--lease-duration', '4s', '--api-timeout', '1s'],
    });
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${standIn.leaseNamespace}/leases/node-cri-calls`;
    await firstRenewalAfter({ standIn, sim, agent, leasePath }, 0, 10_000);
    await sleep(2_000);
    const calls = sim.calls();
    assert.equal(calls.unexpected, 0, 'no call outside the six');
    const methods = Object.keys(calls.received).sort();
    for (const m of methods) assert.ok(READ_ONLY.includes(m), `${m} is read-only`);
    assert.ok((calls.received['ListPodSandbox'] ?? 0) >= 10 && (calls.received['ListContainers'] ?? 0) >= 10, 'precondition: the agent relisted');
    assert.ok((calls.received['Status'] ?? 0) >= 1, 'precondition: the agent polled Status');
    await agent.stop();
  });
});
