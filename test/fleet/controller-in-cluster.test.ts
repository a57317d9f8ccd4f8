// The built controller as its Deployment runs it: no kubeconfig anywhere (an empty HOME), its
// service account mounted where every pod has it (test/support/in-cluster.ts), the API stand-in
// over TLS with a test CA. It must find in-cluster config the lean way (src/kube/auth/
// pick-kube-auth.ts, whose header says why), trust ca.crt, authenticate with the
// service-account token, and lead, without loading any module of @kubernetes/client-node, as a
// module-load hook (test/support/module-load-hook.ts) records.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { createTestPki } from '../../src/stand-ins/api-server/test-pki.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { inPodCommand, writeServiceAccount } from '../support/in-cluster.ts';
import { isRoot } from '../support/require.ts';
import { AGENT_MAIN as MAIN, NODE_24, REPO_ROOT } from '../support/agent-process.ts';

const USER = 'system:serviceaccount:nodepulse:nodepulse-controller';
const TOKEN = 'controller-service-account-token';
/** The controller creates its election lease within a retry period (2 s) of starting; a loaded machine takes longer to start it. */
const LEAD_TIMEOUT_MS = 20_000;
const HOOK = join(REPO_ROOT, 'test', 'support', 'module-load-hook.ts');
const real = new SystemClock();

test('the controller in a pod: in-cluster config without client-node, the service-account token over TLS, and it leads', { timeout: 60_000 }, async (t) => {
  if (!isRoot()) {
    if (process.env['CI'] === 'true') throw new Error('precondition: the in-cluster test needs root (a private mount namespace), and CI runs as root');
    t.skip('needs root for a private mount namespace');
    return;
  }
  assert.ok(existsSync(MAIN), `precondition: ${MAIN} must be built (npm run build) before the tests`);
  const pki = createTestPki();
  const server = await startApiServer({ clock: real, tls: pki.server, tokens: { [TOKEN]: USER } });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-controller-pod-'));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  mkdirSync(join(dir, 'serviceaccount'));
  mkdirSync(join(dir, 'home'));
  const account = writeServiceAccount(join(dir, 'serviceaccount'), { server: server.url, ca: pki.ca, token: TOKEN, namespace: 'nodepulse' });
  const modules = join(dir, 'modules.log');
  const command = inPodCommand(account, NODE_24, ['--import', HOOK, MAIN, 'controller', '--identity', 'ctl-pod', '--http-address', '127.0.0.1:0']);
  const child = spawn(command.file, command.args, {
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: join(dir, 'home'), POD_NAMESPACE: 'nodepulse', MODULE_LOAD_LOG: modules, ...account.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  const holder = (): string | undefined =>
    (server.store.get('leases', 'nodepulse', 'nodepulse-controller')?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity;
  const started = real.monotonicMs();
  while (holder() !== 'ctl-pod' && real.monotonicMs() - started < LEAD_TIMEOUT_MS && child.exitCode === null) await real.sleep(50);
  assert.equal(holder(), 'ctl-pod', `the controller leads; its output:\n${output}`);
  assert.match(output, /"source":"in-cluster","msg":"Controller started"/);
  assert.deepEqual([...new Set(server.requests.all().map((r) => r.user))], [USER]);
  child.kill('SIGTERM');
  assert.equal(await exited, 0, output);
  const loaded = readFileSync(modules, 'utf8').split('\n').filter((u) => u !== '');
  assert.ok(loaded.includes(`file://${MAIN}`), `precondition: the hook saw the controller's main among ${loaded.length} modules`);
  assert.deepEqual(loaded.filter((u) => u.includes('/node_modules/@kubernetes/client-node/')), [], 'no module of client-node is loaded in a pod');
});
