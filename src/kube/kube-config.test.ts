import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { loadInCluster } from './kube-config.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubeconfig-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('in a pod, the service account gives the server, CA, token file and namespace', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'ca.crt'), 'CA');
  writeFileSync(join(dir, 'namespace'), 'nodepulse\n');
  const target = loadInCluster({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir });
  assert.equal(target.server, 'https://[fd00::1]:443');
  assert.equal(target.tokenFile, join(dir, 'token'));
  assert.equal(target.ca?.toString(), 'CA');
  assert.equal(target.namespace, 'nodepulse');
  assert.equal(target.source, 'in-cluster');
});

test('no pod environment is an error that says what to set', () => {
  assert.throws(() => loadInCluster({ env: {} }), /^KubeConfigError: kubeconfig: none found; set --kubeconfig or KUBECONFIG, or run in a pod/);
});

test('in a pod without its CA file, the error names the file', (t) => {
  const dir = tempDir(t);
  assert.throws(
    () => loadInCluster({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir }),
    new RegExp(`^KubeConfigError: in-cluster: ${dir}/ca.crt must be readable`),
  );
  assert.throws(() => loadInCluster({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: 'https' } }), /KUBERNETES_SERVICE_PORT: "https" must be a port number/);
});
