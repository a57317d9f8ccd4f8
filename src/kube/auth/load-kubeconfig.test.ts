// kubectl's loading and merge rules (client-go clientcmd), one test each, on files in a temporary
// folder. test/fleet/kubeconfig-merge.test.ts checks the same merge against the real kubectl.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { stringify } from 'yaml';
import { KubeConfigError } from './kube-config-error.ts';
import { loadKubeconfig, mergeKubeconfigFiles } from './load-kubeconfig.ts';

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-load-kubeconfig-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Doc {
  readonly clusters?: Record<string, Record<string, unknown>>;
  readonly users?: Record<string, Record<string, unknown>>;
  readonly contexts?: Record<string, Record<string, unknown>>;
  readonly current?: string;
}

/** Writes a kubeconfig (entries in the order given) and returns its path. */
function write(path: string, doc: Doc): string {
  const list = (section: Record<string, Record<string, unknown>> | undefined, key: string): unknown[] =>
    Object.entries(section ?? {}).map(([name, fields]) => ({ name, [key]: fields }));
  writeFileSync(path, stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: list(doc.clusters, 'cluster'),
    users: list(doc.users, 'user'),
    contexts: list(doc.contexts, 'context'),
    ...(doc.current === undefined ? {} : { 'current-context': doc.current }),
  }));
  return path;
}

/** The fixture of FACTS.md: a and b both define cluster c, user u and context x, each with its own current-context. */
function twoFiles(dir: string): { a: string; b: string } {
  const a = write(join(dir, 'a'), {
    clusters: { c: { server: 'https://a.example:6443' } },
    users: { u: { token: 'from-a' } },
    contexts: { x: { cluster: 'c', user: 'u', namespace: 'ns-a' }, 'only-a': { cluster: 'c' } },
    current: 'x',
  });
  const b = write(join(dir, 'b'), {
    clusters: { c: { server: 'https://b.example:6443', 'tls-server-name': 'from-b' }, d: { server: 'https://d.example' } },
    users: { u: { token: 'from-b', 'client-certificate-data': 'QkI=', 'client-key-data': 'QkI=' } },
    contexts: { x: { cluster: 'd', user: 'u', namespace: 'ns-b' }, 'only-b': { cluster: 'd' } },
    current: 'only-b',
  });
  return { a, b };
}

async function authorization(loaded: ReturnType<typeof loadKubeconfig>): Promise<string | undefined> {
  const options: RequestOptions = {};
  await loaded.kubeConfig.applyToHTTPSOptions(options);
  return (options.headers as Record<string, string> | undefined)?.['Authorization'];
}

test('KUBECONFIG: a missing file is skipped, and a path listed twice is read once', (t) => {
  const dir = tempDir(t);
  const { a, b } = twoFiles(dir);
  assert.deepEqual(mergeKubeconfigFiles([join(dir, 'missing'), a, b]).files, [a, b]);
  const loaded = loadKubeconfig({ env: { KUBECONFIG: [join(dir, 'missing'), a, b, a].join(':') }, homeDir: undefined });
  assert.equal(loaded.source, `kubeconfig ${a}:${b} (context x)`);
});

test('the first file to define a cluster, user or context of a name wins, whole: nothing of a later entry of that name is kept', (t) => {
  const dir = tempDir(t);
  const { a, b } = twoFiles(dir);
  const merged = mergeKubeconfigFiles([a, b]);
  assert.deepEqual(merged.clusters.map((c) => [c.name, c.server, c.tlsServerName]), [
    ['c', 'https://a.example:6443', undefined],
    ['d', 'https://d.example', undefined],
  ]);
  assert.deepEqual(merged.users.map((u) => [u.name, u.token, u.certData]), [['u', 'from-a', undefined]]);
  assert.deepEqual(merged.contexts.map((c) => [c.name, c.cluster, c.namespace]), [
    ['x', 'c', 'ns-a'],
    ['only-a', 'c', undefined],
    ['only-b', 'd', undefined],
  ]);
});

test("the first file that sets a current-context wins; a file that sets none is passed over", (t) => {
  const dir = tempDir(t);
  const { a, b } = twoFiles(dir);
  const none = write(join(dir, 'none'), { clusters: { e: { server: 'https://e.example' } } });
  assert.equal(mergeKubeconfigFiles([a, b]).currentContext, 'x');
  assert.equal(mergeKubeconfigFiles([b, a]).currentContext, 'only-b');
  assert.equal(mergeKubeconfigFiles([none, b, a]).currentContext, 'only-b');
});

test('--context overrides the current-context; one that names no context is an error listing the contexts', async (t) => {
  const dir = tempDir(t);
  const { a, b } = twoFiles(dir);
  const env = { KUBECONFIG: `${a}:${b}` };
  const loaded = loadKubeconfig({ env, homeDir: undefined, context: 'only-b' });
  assert.equal(loaded.kubeConfig.getCurrentContext(), 'only-b');
  assert.equal(loaded.kubeConfig.getCurrentCluster()?.server, 'https://d.example');
  assert.equal(loadKubeconfig({ env, homeDir: undefined }).namespace, 'ns-a');
  assert.equal(await authorization(loadKubeconfig({ env, homeDir: undefined })), 'Bearer from-a');
  assert.throws(() => loadKubeconfig({ env, homeDir: undefined, context: 'nope' }), (err: unknown) => {
    assert.ok(err instanceof KubeConfigError);
    assert.equal(err.message, `context: "nope" must name a context of ${a}:${b} (x, only-a, only-b)`);
    return true;
  });
});

test('--kubeconfig reads that file only, over KUBECONFIG; a missing one is an error, not skipped', (t) => {
  const dir = tempDir(t);
  const { a, b } = twoFiles(dir);
  assert.equal(loadKubeconfig({ kubeconfig: b, env: { KUBECONFIG: a }, homeDir: dir }).source, `kubeconfig ${b} (context only-b)`);
  assert.throws(() => loadKubeconfig({ kubeconfig: join(dir, 'missing'), env: { KUBECONFIG: a }, homeDir: dir }), {
    name: 'KubeConfigError',
    message: new RegExp(`^kubeconfig: ${dir}/missing must be a readable file \\(ENOENT`),
  });
});

test('KUBECONFIG wins over ~/.kube/config; with neither given, ~/.kube/config is read', (t) => {
  const home = tempDir(t);
  mkdirSync(join(home, '.kube'));
  write(join(home, '.kube', 'config'), { clusters: { h: { server: 'https://home.example' } }, contexts: { home: { cluster: 'h' } }, current: 'home' });
  const { a } = twoFiles(home);
  assert.equal(loadKubeconfig({ env: { KUBECONFIG: a }, homeDir: home }).kubeConfig.getCurrentContext(), 'x');
  const loaded = loadKubeconfig({ env: {}, homeDir: home });
  assert.equal(loaded.source, `kubeconfig ${join(home, '.kube', 'config')} (context home)`);
  assert.equal(loaded.kubeConfig.getCurrentCluster()?.server, 'https://home.example');
});

test('nothing found: in-cluster when the pod environment and its token are there, else an error saying where it looked', async (t) => {
  const home = tempDir(t);
  const sa = tempDir(t);
  const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
  assert.throws(() => loadKubeconfig({ env, homeDir: home, serviceAccountDir: sa }), {
    message: `kubeconfig: none found: ${home}/.kube/config is missing or empty, and this is not a pod (KUBERNETES_SERVICE_HOST and the service-account token); pass --kubeconfig or set KUBECONFIG`,
  });
  writeFileSync(join(sa, 'token'), 'sa-token\n');
  writeFileSync(join(sa, 'namespace'), 'nodepulse');
  const loaded = loadKubeconfig({ env, homeDir: home, serviceAccountDir: sa });
  assert.equal(loaded.source, 'in-cluster');
  assert.equal(loaded.namespace, 'nodepulse');
  assert.deepEqual(loaded.kubeConfig.getCurrentCluster(), { name: 'in-cluster', server: 'https://10.96.0.1:443', caFile: join(sa, 'ca.crt'), skipTLSVerify: false });
  // An empty file is an empty config, as in client-go: in-cluster still applies.
  writeFileSync(join(home, 'empty'), '');
  assert.equal(loadKubeconfig({ kubeconfig: join(home, 'empty'), env, homeDir: home, serviceAccountDir: sa }).source, 'in-cluster');
});

test('relative paths resolve against the folder of the file that defined the entry', (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'one'));
  mkdirSync(join(dir, 'two'));
  const one = write(join(dir, 'one', 'config'), {
    users: {
      u: { 'client-certificate': 'u.crt', 'client-key': 'keys/u.key' },
      e: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './bin/plugin', interactiveMode: 'Never' } },
      p: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'on-path-plugin', interactiveMode: 'Never' } },
    },
    contexts: { x: { cluster: 'c', user: 'u' } },
    current: 'x',
  });
  const two = write(join(dir, 'two', 'config'), { clusters: { c: { server: 'https://c.example', 'certificate-authority': '../ca.crt' } } });
  const merged = mergeKubeconfigFiles([one, two]);
  assert.equal(merged.clusters[0]?.caFile, join(dir, 'ca.crt'));
  assert.deepEqual(merged.users.map((u) => [u.name, u.certFile, u.keyFile, (u.exec as { command?: string } | null)?.command]), [
    ['u', join(dir, 'one', 'u.crt'), join(dir, 'one', 'keys', 'u.key'), undefined],
    ['e', undefined, undefined, join(dir, 'one', 'bin', 'plugin')],
    ['p', undefined, undefined, 'on-path-plugin'],
  ]);
});

test("a user's tokenFile is read (and re-read) by client-node, and wins over an inline token, as in client-go", async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'token'), 'from-the-file\n');
  const path = write(join(dir, 'config'), {
    clusters: { c: { server: 'https://c.example' } },
    users: { u: { tokenFile: 'token', token: 'inline' } },
    contexts: { x: { cluster: 'c', user: 'u' } },
    current: 'x',
  });
  // client-node sends the file's bytes as they are: a trailing newline would be in the header.
  const header = await authorization(loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined }));
  assert.equal(header?.trim(), 'Bearer from-the-file');
});

test('an exec plugin is handed KUBERNETES_EXEC_INFO, with the cluster when provideClusterInfo is set', (t) => {
  const dir = tempDir(t);
  const path = write(join(dir, 'config'), {
    clusters: { c: { server: 'https://c.example', 'certificate-authority-data': 'Q0E=' } },
    users: { u: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'plugin', interactiveMode: 'Never', provideClusterInfo: true, env: [{ name: 'A', value: 'b' }] } } },
    contexts: { x: { cluster: 'c', user: 'u' } },
    current: 'x',
  });
  const exec = loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined }).kubeConfig.getCurrentUser()?.exec as { env: Array<{ name: string; value: string }> };
  assert.equal(exec.env[0]?.name, 'A');
  assert.equal(exec.env[1]?.name, 'KUBERNETES_EXEC_INFO');
  assert.deepEqual(JSON.parse(exec.env[1]?.value ?? ''), {
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    spec: { interactive: false, cluster: { server: 'https://c.example', 'certificate-authority-data': 'Q0E=' } },
  });
});

test('YAML 1.1, as kubectl reads it: an unquoted context name y is a boolean, and the file is refused saying so', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'config');
  writeFileSync(path, 'clusters:\n- name: c\n  cluster: {server: "https://c.example"}\ncontexts:\n- name: y\n  context: {cluster: c}\ncurrent-context: "y"\n');
  assert.throws(() => loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined }), {
    message: `kubeconfig: ${path}: contexts[0].name: true must be a string (YAML 1.1, as kubectl reads it, takes an unquoted y, n, yes, no, on or off for a boolean: quote it)`,
  });
});

test('a file that is not a kubeconfig, or names what it does not define, is an error naming the file and the entry', (t) => {
  const dir = tempDir(t);
  const bad = join(dir, 'bad');
  writeFileSync(bad, '- a\n- b\n');
  assert.throws(() => loadKubeconfig({ kubeconfig: bad, env: {}, homeDir: undefined }), { message: `kubeconfig: ${bad} must hold a YAML mapping` });
  const noServer = write(join(dir, 'no-server'), { clusters: { c: {} }, current: 'x' });
  assert.throws(() => loadKubeconfig({ kubeconfig: noServer, env: {}, homeDir: undefined }), { message: `kubeconfig: ${noServer}: clusters[0].cluster.server is missing` });
  const noCluster = write(join(dir, 'no-cluster'), { contexts: { x: { cluster: 'gone', user: 'u' } }, current: 'x' });
  assert.throws(() => loadKubeconfig({ kubeconfig: noCluster, env: {}, homeDir: undefined }), {
    message: `kubeconfig: cluster "gone" of context "x" must be defined in ${noCluster}`,
  });
  const noCurrent = write(join(dir, 'no-current'), { clusters: { c: { server: 'https://c.example' } }, contexts: { x: { cluster: 'c' } } });
  assert.throws(() => loadKubeconfig({ kubeconfig: noCurrent, env: {}, homeDir: undefined }), {
    message: `kubeconfig: ${noCurrent} must set current-context, or pass --context (contexts: x)`,
  });
});

const UNUSABLE: ReadonlyArray<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
  ['a server that is not a URL', { server: 'not a url' }, { token: 't' }, 'kubeconfig: cluster "c" server "not a url" must be an http:// or https:// URL'],
  ['an ftp server', { server: 'ftp://x' }, { token: 't' }, 'kubeconfig: cluster "c" server "ftp://x" must be an http:// or https:// URL'],
  ['a CA file that is missing', { server: 'https://c.example', 'certificate-authority': '/nonexistent/ca.crt' }, { token: 't' },
    "kubeconfig: cluster \"c\" certificate-authority /nonexistent/ca.crt must be readable (ENOENT: no such file or directory, open '/nonexistent/ca.crt')"],
  ['a client certificate without its key', { server: 'https://c.example' }, { 'client-certificate-data': 'QQ==' },
    'kubeconfig: user "u" must set client-key or client-key-data with its client certificate'],
  ['an exec plugin with no command', { server: 'https://c.example' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', interactiveMode: 'Never' } },
    'kubeconfig: user "u" exec: command must be set'],
  ['a v1 exec plugin with no interactiveMode', { server: 'https://c.example' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' } },
    'kubeconfig: user "u" exec: interactiveMode "" must be Never or IfAvailable (nodepulse has no terminal to give the plugin)'],
  ['an exec plugin that must have a terminal', { server: 'https://c.example' }, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', interactiveMode: 'Always' } },
    'kubeconfig: user "u" exec: interactiveMode "Always" must be Never or IfAvailable (nodepulse has no terminal to give the plugin)'],
];

for (const [what, cluster, user, message] of UNUSABLE) {
  test(`a chosen context that cannot work stops start-up with one line, as client-go checks it: ${what}`, (t) => {
    const dir = tempDir(t);
    const path = write(join(dir, 'config'), { clusters: { c: cluster }, users: { u: user }, contexts: { x: { cluster: 'c', user: 'u' } }, current: 'x' });
    assert.throws(() => loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined }), { name: 'KubeConfigError', message });
  });
}

test('a v1beta1 exec plugin without interactiveMode is IfAvailable, as client-go defaults it', (t) => {
  const dir = tempDir(t);
  const path = write(join(dir, 'config'), {
    clusters: { c: { server: 'https://c.example' } },
    users: { u: { exec: { apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws' } } },
    contexts: { x: { cluster: 'c', user: 'u' } },
    current: 'x',
  });
  assert.equal(loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined }).source, `kubeconfig ${path} (context x)`);
});

test('inline data wins over a file of the same thing, as in client-go (client-node would read the file)', (t) => {
  const dir = tempDir(t);
  const path = write(join(dir, 'config'), {
    clusters: { c: { server: 'https://c.example', 'certificate-authority': 'gone.crt', 'certificate-authority-data': 'Q0E=' } },
    users: { u: { 'client-certificate': 'gone.crt', 'client-certificate-data': 'Q0VSVA==', 'client-key': 'gone.key', 'client-key-data': 'S0VZ' } },
    contexts: { x: { cluster: 'c', user: 'u' } },
    current: 'x',
  });
  const kc = loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined }).kubeConfig;
  assert.deepEqual([kc.getCurrentCluster()?.caFile, kc.getCurrentCluster()?.caData], [undefined, 'Q0E=']);
  assert.deepEqual([kc.getCurrentUser()?.certFile, kc.getCurrentUser()?.keyFile, kc.getCurrentUser()?.certData], [undefined, undefined, 'Q0VSVA==']);
});
