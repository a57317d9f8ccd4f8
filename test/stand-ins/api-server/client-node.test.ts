// @kubernetes/client-node (v2) against the stand-in, with a bearer token over plain HTTP:
// create, merge-patch and get a Lease, and strategic-merge-patch a Node's status.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../../../src/clock/clock.ts';

const NS = 'nodepulse';
const TOKEN = 'client-node-token';
let server: ApiServerHandle;
let dir: string;
let kc: KubeConfig;

before(async () => {
  server = await startApiServer({ clock: new SystemClock(), tokens: { [TOKEN]: 'system:serviceaccount:nodepulse:nodepulse' } });
  dir = mkdtempSync(join(tmpdir(), 'nodepulse-client-node-'));
  writeKubeconfig(join(dir, 'kubeconfig'), { server: server.url, token: TOKEN, namespace: NS });
  kc = new KubeConfig();
  kc.loadFromFile(join(dir, 'kubeconfig'));
  server.store.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
});

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('@kubernetes/client-node against the stand-in', () => {
  it('creates, merge-patches and reads a Lease with its bearer token', async () => {
    const api = kc.makeApiClient(CoordinationV1Api);
    const created = await api.createNamespacedLease({
      namespace: NS,
      body: { metadata: { name: 'node-a', labels: { 'nodepulse.io/role': 'node-lease' } }, spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40 } },
    });
    assert.equal(created.metadata?.name, 'node-a');
    const renewTime = '2026-01-02T03:04:05.123456Z';
    await api.patchNamespacedLease(
      { name: 'node-a', namespace: NS, body: { spec: { renewTime } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const read = await api.readNamespacedLease({ name: 'node-a', namespace: NS });
    assert.equal(read.spec?.holderIdentity, 'node-a');
    assert.equal(server.requests.filter({ method: 'PATCH' })[0]?.user, 'system:serviceaccount:nodepulse:nodepulse');
    assert.equal((server.store.get('leases', NS, 'node-a')?.['spec'] as { renewTime: string }).renewTime, renewTime);
  });

  it('strategic-merge-patches a Node status, merging conditions by type', async () => {
    const api = kc.makeApiClient(CoreV1Api);
    const node = await api.patchNodeStatus(
      { name: 'node-a', body: { status: { conditions: [{ type: 'RuntimeRelistUnhealthy', status: 'False', reason: 'RelistHealthy' }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    // A condition new to the list comes first, as the real server orders a strategic merge (the conformance table, test/cluster/).
    assert.deepEqual(node.status?.conditions?.map((c) => [c.type, c.status]), [['RuntimeRelistUnhealthy', 'False'], ['Ready', 'True']]);
  });

  it('a 404 reaches the client with the real Status body', async () => {
    const api = kc.makeApiClient(CoordinationV1Api);
    await assert.rejects(api.readNamespacedLease({ name: 'missing', namespace: NS }), (e: unknown) => {
      const err = e as { code?: number; body?: string };
      assert.equal(err.code, 404);
      assert.match(String(err.body), /leases\.coordination\.k8s\.io \\?"missing\\?" not found/);
      return true;
    });
  });
});
