// The request core with a kubeconfig's credentials (client-node's KubeConfig), against a
// loopback server that accepts one token at a time: an exec plugin's token is cached, refreshed
// after a 401 (once for concurrent 401s), and a failing plugin is an `unauthorized` error that
// names it.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { stringify } from 'yaml';
import { ManualClock } from '../../clock/manual-clock.ts';
import { KubeClient } from '../kube-client.ts';
import { kubeConfigAuth } from './kubeconfig-auth.ts';
import { loadKubeconfig } from './load-kubeconfig.ts';

interface Fixture {
  readonly dir: string;
  readonly seen: Array<string | undefined>;
  accept: string;
  client(user: Record<string, unknown>): KubeClient;
}

async function fixture(t: TestContext): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubeconfig-auth-'));
  const seen: Array<string | undefined> = [];
  const f = {
    dir,
    seen,
    accept: '',
    client(user: Record<string, unknown>): KubeClient {
      const path = join(dir, 'kubeconfig');
      writeFileSync(path, stringify({
        clusters: [{ name: 'c', cluster: { server: url } }],
        users: [{ name: 'u', user }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }));
      const c = new KubeClient({ auth: kubeConfigAuth(loadKubeconfig({ kubeconfig: path, env: {}, homeDir: undefined })), clock: new ManualClock() });
      t.after(() => c.close());
      return c;
    },
  };
  const server: Server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    const ok = req.headers.authorization === `Bearer ${f.accept}`;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { metadata: { name: 'n' } } : { kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });
  return f;
}

/** An exec plugin that prints tok-N on its Nth run, counting runs in a file. */
function plugin(dir: string): Record<string, unknown> {
  const script = join(dir, 'plugin.sh');
  writeFileSync(script, [
    '#!/bin/sh',
    'n=$(cat "$COUNT" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$COUNT"',
    'printf \'{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s"}}\' "$n"',
    '',
  ].join('\n'));
  chmodSync(script, 0o755);
  return { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: script, interactiveMode: 'Never', env: [{ name: 'COUNT', value: join(dir, 'count') }] } };
}

const runs = (dir: string): number => Number(readFileSync(join(dir, 'count'), 'utf8'));

test("an exec plugin's token is cached; after a 401 the plugin runs again and the retry carries its new token", async (t) => {
  const f = await fixture(t);
  const c = f.client(plugin(f.dir));
  f.accept = 'tok-1';
  await c.getNode('n');
  await c.getNode('n');
  assert.equal(runs(f.dir), 1, 'a token without an expiry is kept until a 401');
  f.accept = 'tok-2';
  await assert.rejects(c.getNode('n'), { name: 'KubeApiError', code: 'unauthorized', status: 401 });
  await c.getNode('n');
  assert.deepEqual(f.seen, ['Bearer tok-1', 'Bearer tok-1', 'Bearer tok-1', 'Bearer tok-2']);
  assert.equal(runs(f.dir), 2);
});

test('requests that meet the same expired token together run the plugin again once', async (t) => {
  const f = await fixture(t);
  const c = f.client(plugin(f.dir));
  f.accept = 'tok-1';
  await c.getNode('n');
  f.accept = 'tok-2';
  const refused = { name: 'KubeApiError', status: 401 };
  await Promise.all([assert.rejects(c.getNode('n'), refused), assert.rejects(c.getNode('n'), refused), assert.rejects(c.getNode('n'), refused)]);
  await Promise.all([c.getNode('n'), c.getNode('n')]);
  assert.equal(runs(f.dir), 2);
});

test('a plugin that fails is an unauthorized error naming the plugin and what it said; nothing is sent', async (t) => {
  const f = await fixture(t);
  const script = join(f.dir, 'failing.sh');
  writeFileSync(script, '#!/bin/sh\necho "no session: run login first" >&2\nexit 1\n');
  chmodSync(script, 0o755);
  const c = f.client({ exec: { apiVersion: 'client.authentication.k8s.io/v1', command: script, interactiveMode: 'Never' } });
  await assert.rejects(c.getNode('n'), {
    name: 'KubeApiError',
    code: 'unauthorized',
    status: 0,
    message: `GET nodes n: getting credentials: exec plugin ${script}: no session: run login first`,
  });
  assert.deepEqual(f.seen, []);
});

test('a token file ending in a newline is sent without it, as client-go trims it', async (t) => {
  const f = await fixture(t);
  writeFileSync(join(f.dir, 'token'), 'file-token\n');
  const c = f.client({ tokenFile: join(f.dir, 'token') });
  f.accept = 'file-token';
  await c.getNode('n');
  assert.deepEqual(f.seen, ['Bearer file-token']);
});
