// A real kubectl (v1.31) against the stand-in: get, patch, and get -w, each with nothing on
// stderr. The stand-in runs without authentication here because client-go loads a
// kubeconfig's credentials only for a TLS server (clientcmd: IsConfigTransportTLS), and the
// stand-in speaks plain HTTP; token handling is covered by the Status and client-node tests.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../../src/stand-ins/api-server/kubeconfig.ts';
import { k8sTools } from '../../support/k8s-tools.ts';
import { runTool, type ToolRun } from '../../support/run-tool.ts';
import { SystemClock } from '../../../src/clock/clock.ts';

const NS = 'nodepulse';
let server: ApiServerHandle;
let dir: string;
let kubectl: string;

function env(): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
}

function run(args: readonly string[]): Promise<ToolRun> {
  return runTool(kubectl, args, env());
}

before(async () => {
  kubectl = k8sTools().kubectl;
  dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubectl-'));
  server = await startApiServer({ clock: new SystemClock() });
  writeKubeconfig(join(dir, 'kubeconfig'), { server: server.url, namespace: NS });
  server.store.put({
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name: 'node-a', namespace: NS, labels: { 'nodepulse.io/role': 'node-lease' } },
    spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40, renewTime: '2026-01-02T03:04:05.000001Z' },
  });
  server.store.put({
    apiVersion: 'v1', kind: 'Node',
    metadata: { name: 'node-a', labels: { 'kubernetes.io/os': 'linux' } },
    status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }] },
  });
});

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a real kubectl against the stand-in', () => {
  it('gets leases as JSON', async () => {
    const r = await run(['get', 'leases', '-n', NS, '-o', 'json']);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const list = JSON.parse(r.stdout) as { items: { metadata: { name: string }; spec: { renewTime: string } }[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.spec.renewTime]), [['node-a', '2026-01-02T03:04:05.000001Z']]);
  });

  it('gets nodes', async () => {
    const r = await run(['get', 'nodes']);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^NAME\s+AGE\nnode-a\s+\S+\n$/);
  });

  it('merge-patches a lease', async () => {
    const r = await run(['patch', 'lease', 'node-a', '-n', NS, '--type', 'merge', '-p', '{"spec":{"renewTime":"2026-01-02T03:04:06.000000Z"}}']);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'lease.coordination.k8s.io/node-a patched\n');
    assert.equal((server.store.get('leases', NS, 'node-a')?.['spec'] as { renewTime: string }).renewTime, '2026-01-02T03:04:06.000000Z');
  });

  it('strategic-merge-patches a node status, keeping the other conditions', async () => {
    const patch = '{"status":{"conditions":[{"type":"RuntimeRelistUnhealthy","status":"False","reason":"RelistHealthy"}]}}';
    const r = await run(['patch', 'node', 'node-a', '--subresource', 'status', '--type', 'strategic', '-p', patch]);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'node/node-a patched\n');
    const node = server.store.get('nodes', undefined, 'node-a') as { status: { conditions: { type: string }[] } };
    // A condition new to the list comes first, as the real server orders a strategic merge (the conformance table, test/cluster/).
    assert.deepEqual(node.status.conditions.map((c) => c.type), ['RuntimeRelistUnhealthy', 'Ready']);
  });

  it('watches leases and sees a change made during the watch', async () => {
    const child = spawn(kubectl, ['get', 'leases', '-n', NS, '-w', '-o', 'custom-columns=NAME:.metadata.name,HOLDER:.spec.holderIdentity', '--request-timeout=15s'], { env: env() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    try {
      // Bounded poll: wait until kubectl's watch request has reached the server.
      for (let i = 0; i < 200 && server.requests.count({ verb: 'watch' }) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(server.requests.count({ verb: 'watch' }), 1, 'precondition: kubectl is watching');
      server.store.put({
        apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
        metadata: { name: 'node-a', namespace: NS, labels: { 'nodepulse.io/role': 'node-lease' } },
        spec: { holderIdentity: 'changed-during-watch', leaseDurationSeconds: 40 },
      });
      for (let i = 0; i < 200 && !stdout.includes('changed-during-watch'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(stdout, /node-a\s+node-a\n[\s\S]*node-a\s+changed-during-watch\n/);
      assert.equal(stderr, '');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
