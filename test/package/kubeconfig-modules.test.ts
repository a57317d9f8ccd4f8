// KubeConfig without the generated API (src/kube/auth/client-node-narrow.ts), checked on the BUILT CLI:
//
//   - `nodepulse fleet --kubeconfig FILE` against the API stand-in, over TLS with a client
//     certificate's worth of kubeconfig (a CA and a bearer token), under the module-load hook
//     (test/support/module-load-hook.ts): it loads client-node's KubeConfig (dist/config.js) and
//     gives its verdict, and loads no module of the generated API's models, API classes or
//     promise and observable wrappers;
//   - in one process, after the narrowing, client-node's own index still exports the whole
//     generated API, and its KubeConfig is the very class the narrowed config.js defined;
//   - which imports the hook answers, as a table.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { isConfigImportOfGenIndex } from '../../src/kube/auth/client-node-narrow.ts';
import { startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { createTestPki } from '../../src/stand-ins/api-server/test-pki.ts';
import { AGENT_MAIN, NODE_24, REPO_ROOT } from '../support/agent-process.ts';

const HOOK = join(REPO_ROOT, 'test', 'support', 'module-load-hook.ts');
const CLIENT_NODE = '/node_modules/@kubernetes/client-node/dist/';
/** What only the generated API's full index brings in. */
const GENERATED = ['gen/models/', 'gen/apis/', 'gen/types/'];

function run(file: string, args: readonly string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number((err as { code?: number }).code ?? 1), stdout, stderr });
    });
  });
}

test('the built fleet reads a kubeconfig through client-node\'s KubeConfig without loading the generated API', { timeout: 90_000 }, async (t) => {
  assert.ok(existsSync(AGENT_MAIN), `precondition: ${AGENT_MAIN} must be built (npm run build) before the tests`);
  const pki = createTestPki();
  const server = await startApiServer({ clock: new SystemClock(), tls: pki.server, tokens: { 'reader-token': 'reader' } });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-kubeconfig-modules-'));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: server.url, ca: pki.ca, token: 'reader-token' });
  const log = join(dir, 'modules.log');
  const r = await run(NODE_24, ['--import', HOOK, AGENT_MAIN, 'fleet', '--kubeconfig', kubeconfig, '-o', 'json'], { MODULE_LOAD_LOG: log });
  assert.equal(r.code, 0, `a verdict, every (no) judged node Fresh: ${r.stderr}`);
  assert.deepEqual([...new Set(server.requests.all().map((r) => r.user))], ['reader'], 'KubeConfig authenticated every request with the kubeconfig\'s token');
  const loaded = readFileSync(log, 'utf8').split('\n').filter((u) => u.includes(CLIENT_NODE));
  assert.ok(loaded.some((u) => u.endsWith(`${CLIENT_NODE}config.js`)), `precondition: client-node's KubeConfig was loaded (${loaded.length} client-node modules)`);
  assert.deepEqual(loaded.filter((u) => GENERATED.some((g) => u.includes(`${CLIENT_NODE}${g}`)) || u.endsWith(`${CLIENT_NODE}gen/index.js`)), [], 'no module of the generated API');
});

test('after the narrowing, client-node\'s own index still exports the whole generated API, and the same KubeConfig', { timeout: 60_000 }, async () => {
  const script = [
    `const { narrowClientNode } = await import(${JSON.stringify(join(REPO_ROOT, 'dist', 'src', 'kube', 'auth', 'client-node-narrow.js'))});`,
    'narrowClientNode();',
    "const narrow = await import('@kubernetes/client-node/dist/config.js');",
    "const full = await import('@kubernetes/client-node');",
    "console.log(JSON.stringify([typeof full.CoreV1Api, typeof full.V1Node, full.KubeConfig === narrow.KubeConfig, typeof full.createConfiguration]));",
  ].join('\n');
  const r = await run(NODE_24, ['--input-type=module', '-e', script], {});
  assert.equal(r.stderr, '');
  assert.deepEqual(JSON.parse(r.stdout), ['function', 'function', true, 'function']);
});

// | parent module                              | resolved                         | answered with gen-narrow |
const TABLE: ReadonlyArray<readonly [string | undefined, string, boolean]> = [
  [`file:///x${CLIENT_NODE}config.js`, `file:///x${CLIENT_NODE}gen/index.js`, true],
  [`file:///x${CLIENT_NODE}index.js`, `file:///x${CLIENT_NODE}gen/index.js`, false],
  [`file:///x${CLIENT_NODE}config.js`, `file:///x${CLIENT_NODE}config_types.js`, false],
  [`file:///x/dist/src/kube/auth/load-kubeconfig.js`, `file:///x${CLIENT_NODE}gen/index.js`, false],
  [undefined, `file:///x${CLIENT_NODE}gen/index.js`, false],
];
for (const [parent, resolved, expected] of TABLE) {
  test(`narrowing: ${parent ?? '(an entry point)'} importing ${resolved.slice(resolved.indexOf(CLIENT_NODE) + CLIENT_NODE.length)} → ${expected ? 'the two names' : 'as resolved'}`, () => {
    assert.equal(isConfigImportOfGenIndex(parent, resolved), expected);
  });
}
