// The one picker of credentials (pick-kube-auth.ts): the table of its header, row by row, and
// the lean in-cluster row end to end against a served folder, for a reader and for the agent.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../clock/manual-clock.ts';
import { chooseCredentials, pickKubeAuth, type Credentials } from './pick-kube-auth.ts';

const SA = '/sa';
const POD = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };

// | who | kubeconfig | KUBECONFIG | ~/.kube/config | in a pod | credentials |
const TABLE: ReadonlyArray<readonly [string, { who?: 'agent'; kubeconfig?: string; env: Record<string, string>; home?: string; files: string[] }, Credentials]> = [
  ['agent, no setting, in a pod', { who: 'agent', env: POD, files: ['/sa/token'] }, 'in-cluster'],
  ['agent, no setting, KUBECONFIG and ~/.kube/config exist, not a pod (in-cluster\'s own error)', { who: 'agent', env: { KUBECONFIG: '/a' }, home: '/h', files: ['/a', '/h/.kube/config'] }, 'in-cluster'],
  ['agent, empty setting, the pod environment but no token (a request error later)', { who: 'agent', kubeconfig: '', env: POD, files: [] }, 'in-cluster'],
  ['agent, one path, in a pod', { who: 'agent', kubeconfig: '/k', env: POD, files: ['/k', '/sa/token'] }, 'kubeconfig'],
  ['agent, a \':\' list of missing files', { who: 'agent', kubeconfig: '/a:/b', env: {}, files: [] }, 'kubeconfig'],
  ['--kubeconfig given, in a pod', { kubeconfig: '/k', env: POD, files: ['/sa/token'] }, 'kubeconfig'],
  ['--kubeconfig given, even a missing file (its own error)', { kubeconfig: '/missing', env: {}, files: [] }, 'kubeconfig'],
  ['KUBECONFIG names a file that exists, in a pod', { env: { ...POD, KUBECONFIG: '/a:/b' }, files: ['/b', '/sa/token'] }, 'kubeconfig'],
  ['KUBECONFIG names no existing file, in a pod', { env: { ...POD, KUBECONFIG: '/a:/b' }, home: '/h', files: ['/h/.kube/config', '/sa/token'] }, 'in-cluster'],
  ['KUBECONFIG unset, ~/.kube/config exists, in a pod', { env: POD, home: '/h', files: ['/h/.kube/config', '/sa/token'] }, 'kubeconfig'],
  ['KUBECONFIG empty, ~/.kube/config exists', { env: { KUBECONFIG: '' }, home: '/h', files: ['/h/.kube/config'] }, 'kubeconfig'],
  ['KUBECONFIG unset, ~/.kube/config missing, in a pod', { env: POD, home: '/h', files: ['/sa/token'] }, 'in-cluster'],
  ['no HOME, in a pod', { env: POD, files: ['/sa/token'] }, 'in-cluster'],
  ['no file, the pod environment but no token', { env: POD, home: '/h', files: [] }, 'kubeconfig'],
  ['no file, a token but no KUBERNETES_SERVICE_PORT', { env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, files: ['/sa/token'] }, 'kubeconfig'],
  ['no file and not a pod (kubeconfig\'s "none found" error)', { env: {}, home: '/h', files: [] }, 'kubeconfig'],
];

for (const [name, row, expected] of TABLE) {
  test(`credentials: ${row.who === 'agent' ? '' : 'reader, '}${name} → ${expected}`, () => {
    const files = new Set(row.files);
    const chosen = chooseCredentials({ who: row.who ?? 'reader', kubeconfig: row.kubeconfig, env: row.env, homeDir: row.home, serviceAccountDir: SA, exists: (p) => files.has(p) });
    assert.equal(chosen, expected);
  });
}

test('in a pod with no kubeconfig, the reader authenticates with the service account token, the lean way', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-reader-auth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.crt'), 'not a PEM: the agent is built lazily');
  writeFileSync(join(dir, 'token'), 'sa-token\n');
  const auth = await pickKubeAuth({ who: 'reader', kubeconfig: undefined, context: undefined, env: { ...POD, KUBECONFIG: join(dir, 'missing') }, homeDir: dir, clock: new ManualClock(), serviceAccountDir: dir });
  t.after(() => auth.close());
  assert.equal(auth.source, 'in-cluster');
  assert.equal(auth.server, 'https://10.0.0.1:443');
  const prepared = await auth.prepare();
  assert.deepEqual(prepared.headers, { authorization: 'Bearer sa-token' });
});

test('the agent with no kubeconfig setting takes the service account the lean way, even beside an existing KUBECONFIG file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-agent-auth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.crt'), 'not a PEM: the agent is built lazily');
  writeFileSync(join(dir, 'token'), 'sa-token\n');
  writeFileSync(join(dir, 'kubeconfig'), 'not read');
  const auth = await pickKubeAuth({ who: 'agent', kubeconfig: undefined, context: undefined, env: { ...POD, KUBECONFIG: join(dir, 'kubeconfig') }, homeDir: dir, clock: new ManualClock(), serviceAccountDir: dir });
  t.after(() => auth.close());
  assert.equal(auth.source, 'in-cluster');
  assert.equal(auth.server, 'https://10.0.0.1:443');
  assert.deepEqual((await auth.prepare()).headers, { authorization: 'Bearer sa-token' });
});
