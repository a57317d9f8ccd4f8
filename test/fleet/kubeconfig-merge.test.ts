// kubectl's kubeconfig rules, checked against the real kubectl (v1.31): for each rule, the same
// files go to `kubectl config view --raw -o json` (with --minify when a context is chosen) and to
// nodepulse's loader, and both must pick the same clusters, users, contexts and current-context.
// The unit tests (src/kube/auth/load-kubeconfig.test.ts) pin each rule by itself; this pins them to
// what kubectl does. Paths are not compared: `config view` prints them as written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { loadKubeconfig, type LoadKubeconfigOptions } from '../../src/kube/auth/load-kubeconfig.ts';
import { k8sTools } from '../support/k8s-tools.ts';

let kubectl: string;
let dir: string;
let a: string;
let b: string;
let c: string;

/** What both sides are compared on, every list sorted by name. */
interface Shape {
  readonly clusters: string[][];
  readonly users: string[][];
  readonly contexts: string[][];
  readonly current: string;
}

interface ViewEntry<T> {
  readonly name: string;
  readonly [key: string]: T | string;
}

interface View {
  readonly clusters: Array<ViewEntry<{ server: string; 'tls-server-name'?: string }>> | null;
  readonly users: Array<ViewEntry<{ token?: string; 'client-certificate-data'?: string }>> | null;
  readonly contexts: Array<ViewEntry<{ cluster: string; user?: string; namespace?: string }>> | null;
  readonly 'current-context': string;
}

const sorted = (rows: string[][]): string[][] => rows.sort((x, y) => (x[0] ?? '').localeCompare(y[0] ?? ''));

function kubectlShape(args: readonly string[], env: Record<string, string>): Promise<Shape> {
  return new Promise((resolve, reject) => {
    execFile(kubectl, ['config', 'view', '--raw', '-o', 'json', ...args], { env: { PATH: process.env['PATH'] ?? '', HOME: dir, ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err !== null) {
        reject(new Error(`kubectl ${args.join(' ')} config view: ${stderr}`));
        return;
      }
      const v = JSON.parse(stdout) as View;
      resolve({
        clusters: sorted((v.clusters ?? []).map((e) => {
          const cl = e['cluster'] as { server: string; 'tls-server-name'?: string };
          return [e.name, cl.server, cl['tls-server-name'] ?? ''];
        })),
        users: sorted((v.users ?? []).map((e) => {
          const u = e['user'] as { token?: string; 'client-certificate-data'?: string };
          return [e.name, u.token ?? '', u['client-certificate-data'] ?? ''];
        })),
        contexts: sorted((v.contexts ?? []).map((e) => {
          const cx = e['context'] as { cluster: string; user?: string; namespace?: string };
          return [e.name, cx.cluster, cx.user ?? '', cx.namespace ?? ''];
        })),
        current: v['current-context'],
      });
    });
  });
}

/** The loader's view; with `minify`, only the chosen context and what it names, as --minify prints. */
function ourShape(options: LoadKubeconfigOptions, minify: boolean): Shape {
  const kc = loadKubeconfig(options).kubeConfig;
  const context = kc.getContextObject(kc.getCurrentContext());
  const clusters = kc.getClusters().filter((x) => !minify || x.name === context?.cluster);
  const users = kc.getUsers().filter((x) => !minify || x.name === context?.user);
  const contexts = kc.getContexts().filter((x) => !minify || x.name === context?.name);
  return {
    clusters: sorted(clusters.map((x) => [x.name, x.server, x.tlsServerName ?? ''])),
    users: sorted(users.map((x) => [x.name, x.token ?? '', x.certData ?? ''])),
    contexts: sorted(contexts.map((x) => [x.name, x.cluster, x.user ?? '', x.namespace ?? ''])),
    current: kc.getCurrentContext(),
  };
}

function write(name: string, doc: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, stringify({ apiVersion: 'v1', kind: 'Config', ...doc }));
  return path;
}

before(() => {
  kubectl = k8sTools().kubectl;
  dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubeconfig-merge-'));
  // a and b both define cluster c, user u and context x, each with its own current-context;
  // c sets no current-context and adds an entry of its own.
  a = write('a', {
    clusters: [{ name: 'c', cluster: { server: 'https://a.example:6443' } }],
    users: [{ name: 'u', user: { token: 'from-a' } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'ns-a' } }],
    'current-context': 'x',
  });
  b = write('b', {
    clusters: [{ name: 'c', cluster: { server: 'https://b.example:6443', 'tls-server-name': 'from-b' } }, { name: 'd', cluster: { server: 'https://d.example' } }],
    users: [{ name: 'u', user: { token: 'from-b', 'client-certificate-data': 'QkI=', 'client-key-data': 'QkI=' } }, { name: 'v', user: { token: 'v-b' } }],
    contexts: [{ name: 'x', context: { cluster: 'd', user: 'u', namespace: 'ns-b' } }, { name: 'only-b', context: { cluster: 'd', user: 'v' } }],
    'current-context': 'only-b',
  });
  c = write('c', {
    clusters: [{ name: 'e', cluster: { server: 'https://e.example' } }],
    contexts: [{ name: 'only-c', context: { cluster: 'e' } }],
  });
});

after(() => rmSync(dir, { recursive: true, force: true }));

describe('kubeconfig merging: nodepulse reads what the real kubectl reads', () => {
  it('KUBECONFIG with a missing file: skipped; the first file to name an entry wins it whole; the first current-context wins', async () => {
    const list = [join(dir, 'missing'), a, b].join(':');
    const theirs = await kubectlShape([], { KUBECONFIG: list });
    assert.equal(theirs.current, 'x', 'precondition: kubectl takes a\'s current-context');
    assert.deepEqual(ourShape({ env: { KUBECONFIG: list }, homeDir: dir }, false), theirs);
  });

  it('a file that sets no current-context is passed over for the next one that does', async () => {
    const list = [c, b, a].join(':');
    const theirs = await kubectlShape([], { KUBECONFIG: list });
    assert.equal(theirs.current, 'only-b', 'precondition');
    assert.deepEqual(ourShape({ env: { KUBECONFIG: list }, homeDir: dir }, false), theirs);
  });

  it('--context chooses the context, its cluster and its user over the current-context', async () => {
    const list = [a, b].join(':');
    const theirs = await kubectlShape(['--context', 'only-b', '--minify'], { KUBECONFIG: list });
    assert.deepEqual(ourShape({ env: { KUBECONFIG: list }, homeDir: dir, context: 'only-b' }, true), theirs);
  });

  it('--kubeconfig reads that file only, whatever KUBECONFIG says', async () => {
    const theirs = await kubectlShape(['--kubeconfig', b], { KUBECONFIG: a });
    assert.deepEqual(ourShape({ kubeconfig: b, env: { KUBECONFIG: a }, homeDir: dir }, false), theirs);
  });

  it('with neither, $HOME/.kube/config', async () => {
    mkdirSync(join(dir, '.kube'), { recursive: true });
    writeFileSync(join(dir, '.kube', 'config'), stringify({
      apiVersion: 'v1', kind: 'Config',
      clusters: [{ name: 'home', cluster: { server: 'https://home.example' } }],
      contexts: [{ name: 'home', context: { cluster: 'home' } }],
      'current-context': 'home',
    }));
    const theirs = await kubectlShape([], {});
    assert.equal(theirs.current, 'home', 'precondition');
    assert.deepEqual(ourShape({ env: {}, homeDir: dir }, false), theirs);
  });
});
