import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { KubeConfigError, loadKubeConfig } from './kube-config.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubeconfig-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = { server: 'https://10.0.0.1:6443/' }): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'main',
    contexts: [{ name: 'main', context: { cluster: 'c', user: 'u', namespace: 'team' } }],
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
  });
}

test('a kubeconfig with a token file gives the file, not its content, so the client can re-read it', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'token'), 'secret-1\n');
  writeFileSync(join(dir, 'config'), kubeconfig({ tokenFile: 'token' }));
  const target = loadKubeConfig({ kubeconfig: join(dir, 'config'), env: {} });
  assert.equal(target.server, 'https://10.0.0.1:6443');
  assert.equal(target.tokenFile, join(dir, 'token'), 'a relative token file is resolved against the kubeconfig folder');
  assert.equal(target.token, undefined);
  assert.equal(target.namespace, 'team');
  assert.equal(target.source, `kubeconfig ${join(dir, 'config')} (context main)`);
});

test('a kubeconfig in YAML with inline token, CA data and client certificate data is read', (t) => {
  const dir = tempDir(t);
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'current-context: main',
    'contexts:',
    '- name: main',
    '  context: {cluster: c, user: u}',
    'clusters:',
    '- name: c',
    '  cluster:',
    '    server: https://api.example:6443',
    `    certificate-authority-data: ${Buffer.from('CA PEM').toString('base64')}`,
    '    tls-server-name: kubernetes',
    'users:',
    '- name: u',
    '  user:',
    '    token: abc',
    `    client-certificate-data: ${Buffer.from('CERT PEM').toString('base64')}`,
    `    client-key-data: ${Buffer.from('KEY PEM').toString('base64')}`,
  ].join('\n');
  writeFileSync(join(dir, 'config'), yaml);
  const target = loadKubeConfig({ kubeconfig: join(dir, 'config'), env: {} });
  assert.equal(target.token, 'abc');
  assert.equal(target.ca?.toString(), 'CA PEM');
  assert.equal(target.cert?.toString(), 'CERT PEM');
  assert.equal(target.key?.toString(), 'KEY PEM');
  assert.equal(target.tlsServerName, 'kubernetes');
  assert.equal(target.skipTLSVerify, false);
});

test('a KUBECONFIG list skips a missing file and takes the first file that names each entry', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'a'), kubeconfig({ token: 'first' }));
  writeFileSync(join(dir, 'b'), kubeconfig({ token: 'second' }, { server: 'http://127.0.0.1:1' }));
  const target = loadKubeConfig({ kubeconfig: [join(dir, 'missing'), join(dir, 'a'), join(dir, 'b')].join(':'), env: {} });
  assert.equal(target.token, 'first');
  assert.equal(target.server, 'https://10.0.0.1:6443');
});

test('in a pod, the service account gives the server, CA, token file and namespace', (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'ca.crt'), 'CA');
  writeFileSync(join(dir, 'namespace'), 'nodepulse\n');
  const target = loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, serviceAccountDir: dir });
  assert.equal(target.server, 'https://[fd00::1]:443');
  assert.equal(target.tokenFile, join(dir, 'token'));
  assert.equal(target.ca?.toString(), 'CA');
  assert.equal(target.namespace, 'nodepulse');
  assert.equal(target.source, 'in-cluster');
});

const BAD: ReadonlyArray<[string, Record<string, unknown>, RegExp]> = [
  ['an exec plugin', { exec: { command: 'aws' } }, /^kubeconfig: user u exec must be unset/],
  ['an auth provider', { 'auth-provider': { name: 'gcp' } }, /^kubeconfig: user u auth-provider must be unset/],
  ['basic auth', { username: 'a', password: 'b' }, /^kubeconfig: user u username\/password must be unset/],
  ['a certificate without a key', { 'client-certificate-data': 'QQ==' }, /must set both client-certificate and client-key/],
  ['a missing certificate file', { 'client-certificate': 'nope.crt', 'client-key': 'nope.key' }, /client-certificate .*nope\.crt must be readable/],
];

for (const [name, user, message] of BAD) {
  test(`a kubeconfig user with ${name} stops start-up with a line that says why`, (t) => {
    const dir = tempDir(t);
    writeFileSync(join(dir, 'config'), kubeconfig(user));
    assert.throws(() => loadKubeConfig({ kubeconfig: join(dir, 'config'), env: {} }), (err: unknown) => {
      assert.ok(err instanceof KubeConfigError);
      assert.equal(err.code, 'kubeconfig_invalid');
      assert.match(err.message, message);
      return true;
    });
  });
}

test('no kubeconfig and no pod environment is an error that says what to set', () => {
  assert.throws(() => loadKubeConfig({ env: {} }), /^KubeConfigError: kubeconfig: none found; set --kubeconfig or KUBECONFIG/);
});

test('a kubeconfig that is not there, or not a mapping, is named in the error', (t) => {
  const dir = tempDir(t);
  assert.throws(() => loadKubeConfig({ kubeconfig: join(dir, 'nope'), env: {} }), /kubeconfig: .*nope must be a readable file/);
  writeFileSync(join(dir, 'list'), '- a\n- b\n');
  assert.throws(() => loadKubeConfig({ kubeconfig: join(dir, 'list'), env: {} }), /list must hold a YAML mapping/);
  writeFileSync(join(dir, 'noctx'), kubeconfig({ token: 'x' }).replace('"current-context":"main"', '"current-context":"other"'));
  assert.throws(() => loadKubeConfig({ kubeconfig: join(dir, 'noctx'), env: {} }), /context other must be defined/);
  writeFileSync(join(dir, 'badurl'), kubeconfig({ token: 'x' }, { server: 'ftp://x' }));
  assert.throws(() => loadKubeConfig({ kubeconfig: join(dir, 'badurl'), env: {} }), /server "ftp:\/\/x" must be an http:\/\/ or https:\/\/ URL/);
});
