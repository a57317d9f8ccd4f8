import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../clock/manual-clock.ts';
import { inClusterAuth } from './in-cluster.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubeconfig-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('in a pod, the service account gives the server, the CA and the token file', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'ca.crt'), 'CA');
  writeFileSync(join(dir, 'token'), 'sa-token\n');
  const auth = inClusterAuth({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir, clock: new ManualClock() });
  t.after(() => auth.close());
  assert.equal(auth.server, 'https://[fd00::1]:443');
  assert.equal(auth.source, 'in-cluster');
  const prepared = await auth.prepare();
  assert.deepEqual(prepared.headers, { authorization: 'Bearer sa-token' }, 'the token file is read');
  assert.equal(String((prepared.agent as Agent).options.ca), 'CA');
});

test('no pod environment is an error that says what to set', () => {
  assert.throws(() => inClusterAuth({ env: {}, clock: new ManualClock() }), /^KubeConfigError: kubeconfig: none found; set --kubeconfig or KUBECONFIG, or run in a pod/);
});

test('in a pod without its CA file, the error names the file; a port that is not one is named too', (t) => {
  const dir = tempDir(t);
  const clock = new ManualClock();
  assert.throws(
    () => inClusterAuth({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir, clock }),
    new RegExp(`^KubeConfigError: in-cluster: ${dir}/ca.crt must be readable`),
  );
  assert.throws(() => inClusterAuth({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: 'https' }, clock }), /KUBERNETES_SERVICE_PORT: "https" must be a port number/);
});
