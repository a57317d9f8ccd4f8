// A real kubectl (v1.31) against the stand-in over TLS: it verifies the serving certificate
// against the test CA, and authenticates by bearer token and by client certificate. client-go
// sends a kubeconfig's credentials only to an https:// server, so this is where they are seen
// arriving; the stand-in's request record says which user each request was.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { type KubeconfigOptions, writeKubeconfig } from '../../../src/stand-ins/api-server/kubeconfig.ts';
import { createTestPki, type TestPki } from '../../../src/stand-ins/api-server/test-pki.ts';
import { k8sTools } from '../../support/k8s-tools.ts';
import { SystemClock } from '../../../src/clock/clock.ts';

const NS = 'nodepulse';
const TOKEN = 'kubectl-tls-token';
let pki: TestPki;
let server: ApiServerHandle;
let dir: string;
let kubectl: string;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function kubectlWith(name: string, options: Omit<KubeconfigOptions, 'server'>, args: readonly string[]): Promise<Run> {
  const kubeconfig = join(dir, name);
  writeKubeconfig(kubeconfig, { server: server.url, namespace: NS, ...options });
  const env = { ...process.env, KUBECONFIG: kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
  return new Promise((resolve) => {
    execFile(kubectl, [...args, '--request-timeout=15s'], { env, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), stdout, stderr });
    });
  });
}

before(async () => {
  kubectl = k8sTools().kubectl;
  pki = createTestPki();
  dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubectl-tls-'));
  server = await startApiServer({ clock: new SystemClock(), tls: { ...pki.server, clientCa: pki.ca }, tokens: { [TOKEN]: 'token-user' } });
  server.store.put({
    apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
    metadata: { name: 'node-a', namespace: NS, labels: { 'nodepulse.io/role': 'node-lease' } },
    spec: { holderIdentity: 'node-a', leaseDurationSeconds: 40, renewTime: '2026-01-02T03:04:05.000001Z' },
  });
});

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a real kubectl against the stand-in over TLS', () => {
  it('serves https:// and kubectl trusts it through the test CA, sending its bearer token', async () => {
    assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const before = server.requests.lastSeq();
    const r = await kubectlWith('token', { ca: pki.ca, token: TOKEN }, ['get', 'leases', '-o', 'jsonpath={.items[*].metadata.name}']);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(r.stdout, 'node-a');
    const users = new Set(server.requests.since(before).map((q) => q.user));
    assert.deepEqual([...users], ['token-user']);
  });

  it('authenticates a client certificate signed by the client CA as its CN', async () => {
    const before = server.requests.lastSeq();
    const r = await kubectlWith('cert', { ca: pki.ca, clientCertificate: pki.clientCertificate('alice', ['dev']) }, ['get', 'leases', '-o', 'name']);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'lease.coordination.k8s.io/node-a\n');
    const users = new Set(server.requests.since(before).map((q) => q.user));
    assert.deepEqual([...users], ['alice']);
  });

  it('a client certificate from another CA does not authenticate: 401', async () => {
    const stranger = createTestPki().clientCertificate('mallory');
    const r = await kubectlWith('stranger', { ca: pki.ca, clientCertificate: stranger }, ['get', 'leases']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Unauthorized/);
  });

  it('without the CA, kubectl refuses the serving certificate', async () => {
    const r = await kubectlWith('no-ca', { token: TOKEN }, ['get', 'leases']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /certificate signed by unknown authority/);
  });
});
