// One kubeconfig with three contexts, over the API stand-in speaking TLS with a test CA:
//
// | context | user                                                   | cluster                    |
// |---------|--------------------------------------------------------|----------------------------|
// | exec    | an exec plugin (a script printing an ExecCredential    | the stand-in, CA from a    |
// |         | with the stand-in's token), named by a relative path   | file                       |
// | cert    | a client certificate and key, from files               | the stand-in               |
// | down    | a bearer token                                         | a port nobody listens on,  |
// |         |                                                        | CA as data                 |
//
// The file lives at $HOME/.kube/config, so the same runs show the fallback: with no --kubeconfig
// and no KUBECONFIG, `nodepulse fleet` reads it. The built CLI runs as a process, as users run
// it; real kubectl, given the same file and context, reads the same leases, and runs the CLI as
// its plugin. The stand-in's request record says which user each request authenticated as.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { startApiServer, type ApiServerHandle } from '../../src/stand-ins/api-server/api-server.ts';
import { createTestPki } from '../../src/stand-ins/api-server/test-pki.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { runController } from '../../src/cli/controller-command.ts';
import { EXIT_API_FAILED } from '../../src/cli/command-io.ts';
import { EXIT_ALL_FRESH } from '../../src/cli/fleet-command.ts';
import { freePort } from '../support/free-port.ts';
import { k8sTools } from '../support/k8s-tools.ts';
import { agentLease, LEASE_NAMESPACE, realisticNode } from './fleet-fixtures.ts';
import { AGENT_MAIN as MAIN, NODE_24 } from '../support/agent-process.ts';

const TOKEN = 'exec-plugin-token-0123456789';
const NODES = ['node-a', 'node-b', 'node-c'];
const real = new SystemClock();

let server: ApiServerHandle;
let home: string;
let kubeconfig: string;
let kubectl: string;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      done({ code: err === null ? 0 : Number((err as { code?: number }).code ?? -1), stdout, stderr });
    });
  });
}

/** `nodepulse fleet ARGS` as a process, with only HOME (and PATH) in its environment unless env says more. */
const fleet = (args: readonly string[], env: Record<string, string> = {}): Promise<Run> => run(NODE_24, [MAIN, 'fleet', '--lease-namespace', LEASE_NAMESPACE, ...args], { HOME: home, ...env });

/** The users the stand-in authenticated since `seq`. */
const usersSince = (seq: number): string[] => [...new Set(server.requests.since(seq).map((r) => r.user ?? '(none)'))];

interface FleetJson {
  readonly summary: { readonly judged: number; readonly fresh: number };
  readonly nodes: ReadonlyArray<{ readonly node: string; readonly verdict: string; readonly renewTime: string | null }>;
}

before(async () => {
  if (!existsSync(MAIN)) throw new Error(`precondition: ${MAIN} must be built (npm run build) before the tests`);
  kubectl = k8sTools().kubectl;
  const pki = createTestPki();
  server = await startApiServer({ clock: real, tls: { ...pki.server, clientCa: pki.ca }, tokens: { [TOKEN]: 'exec-user' } });
  const now = real.wallMicros();
  for (const [i, name] of NODES.entries()) {
    server.store.put(realisticNode(name, i, { createdMicros: now - 86_400_000_000, condition: { status: 'False', reason: 'RelistHealthy' } }) as Parameters<ApiServerHandle['store']['put']>[0]);
    server.store.put(agentLease(name, now - (i + 1) * 1_000_000) as Parameters<ApiServerHandle['store']['put']>[0]);
  }

  home = mkdtempSync(join(tmpdir(), 'nodepulse-contexts-'));
  const kube = join(home, '.kube');
  mkdirSync(join(kube, 'bin'), { recursive: true });
  writeFileSync(join(kube, 'ca.crt'), pki.ca);
  const alice = pki.clientCertificate('alice', ['nodepulse-readers']);
  writeFileSync(join(kube, 'alice.crt'), alice.cert);
  writeFileSync(join(kube, 'alice.key'), alice.key, { mode: 0o600 });
  const plugin = join(kube, 'bin', 'token-plugin');
  writeFileSync(plugin, `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$PLUGIN_TOKEN"\n`);
  chmodSync(plugin, 0o755);
  kubeconfig = join(kube, 'config');
  writeFileSync(kubeconfig, stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'stand-in', cluster: { server: server.url, 'certificate-authority': 'ca.crt' } },
      { name: 'unreachable', cluster: { server: `https://127.0.0.1:${await freePort()}`, 'certificate-authority-data': Buffer.from(pki.ca).toString('base64') } },
    ],
    users: [
      { name: 'exec', user: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: './bin/token-plugin', interactiveMode: 'Never', env: [{ name: 'PLUGIN_TOKEN', value: TOKEN }] } } },
      { name: 'cert', user: { 'client-certificate': 'alice.crt', 'client-key': 'alice.key' } },
      { name: 'token', user: { token: TOKEN } },
    ],
    contexts: [
      { name: 'exec', context: { cluster: 'stand-in', user: 'exec' } },
      { name: 'cert', context: { cluster: 'stand-in', user: 'cert' } },
      { name: 'down', context: { cluster: 'unreachable', user: 'token' } },
    ],
    'current-context': 'exec',
  }), { mode: 0o600 });
});

after(async () => {
  await server?.close();
  if (home !== undefined) rmSync(home, { recursive: true, force: true });
});

describe('nodepulse fleet with one kubeconfig of three contexts, over TLS', { timeout: 120_000 }, () => {
  it('--context exec: the exec plugin supplies the token, every node is Fresh, exit 0', async () => {
    const seq = server.requests.lastSeq();
    const r = await fleet(['--context', 'exec', '-o', 'json'], { KUBECONFIG: kubeconfig });
    assert.equal(r.code, EXIT_ALL_FRESH, r.stderr);
    const doc = JSON.parse(r.stdout) as FleetJson;
    assert.deepEqual([doc.summary.judged, doc.summary.fresh], [3, 3]);
    assert.deepEqual(usersSince(seq), ['exec-user']);
  });

  it('--context cert: the client certificate authenticates as its CN, exit 0', async () => {
    const seq = server.requests.lastSeq();
    const r = await fleet(['--context', 'cert', '-o', 'json'], { KUBECONFIG: kubeconfig });
    assert.equal(r.code, EXIT_ALL_FRESH, r.stderr);
    assert.equal((JSON.parse(r.stdout) as FleetJson).summary.fresh, 3);
    assert.deepEqual(usersSince(seq), ['alice']);
  });

  it('--context down: the API could not be asked, exit 3 with the reason, nothing on stdout', async () => {
    const r = await fleet(['--context', 'down', '-o', 'json'], { KUBECONFIG: kubeconfig });
    assert.equal(r.code, EXIT_API_FAILED);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^nodepulse fleet: LIST \/\S+: ECONNREFUSED/, 'the streaming list, then the pages it falls back to, refused');
  });

  it('with no --kubeconfig and no KUBECONFIG, $HOME/.kube/config is read (its current-context, exec)', async () => {
    const seq = server.requests.lastSeq();
    const r = await fleet(['-o', 'json']);
    assert.equal(r.code, EXIT_ALL_FRESH, r.stderr);
    assert.deepEqual(usersSince(seq), ['exec-user']);
  });

  for (const context of ['exec', 'cert']) {
    it(`real kubectl with the same file and --context ${context} reads the same leases`, async () => {
      const k = await run(kubectl, ['--context', context, 'get', 'leases', '-n', LEASE_NAMESPACE, '-l', 'nodepulse.io/role=node-lease', '-o', 'json'], {
        KUBECONFIG: kubeconfig, HOME: home, KUBECACHEDIR: join(home, 'cache'),
      });
      assert.equal(k.stderr, '');
      assert.equal(k.code, 0);
      const leases = (JSON.parse(k.stdout) as { items: Array<{ metadata: { name: string }; spec: { renewTime: string } }> }).items
        .map((l) => [l.metadata.name, l.spec.renewTime]);
      const f = await fleet(['--context', context, '-o', 'json'], { KUBECONFIG: kubeconfig });
      const nodes = (JSON.parse(f.stdout) as FleetJson).nodes.map((n) => [n.node, n.renewTime]);
      assert.equal(leases.length, NODES.length, 'precondition: kubectl sees every lease');
      assert.deepEqual(nodes, leases);
    });
  }

  it('as a kubectl plugin, the contexts behave the same: exit 0 with cert, exit 3 when the cluster is down', async () => {
    const bin = join(home, 'plugin-bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, 'kubectl-nodepulse'), `#!/bin/sh\nexec ${NODE_24} ${MAIN} "$@"\n`);
    chmodSync(join(bin, 'kubectl-nodepulse'), 0o755);
    const env = { PATH: `${bin}:${process.env['PATH'] ?? ''}`, KUBECONFIG: kubeconfig, HOME: home };
    const cert = await run(kubectl, ['nodepulse', 'fleet', '--context', 'cert', '--lease-namespace', LEASE_NAMESPACE], env);
    assert.equal(cert.code, EXIT_ALL_FRESH, cert.stderr);
    assert.match(cert.stdout, /^3 judged: 3 Fresh, 0 Stale, 0 Missing/m);
    const down = await run(kubectl, ['nodepulse', 'fleet', '--context', 'down'], env);
    assert.equal(down.code, EXIT_API_FAILED, down.stderr);
  });
});

describe('nodepulse controller --context', { timeout: 60_000 }, () => {
  it('leads with the client-certificate context: its election lease is written as alice', async () => {
    const seq = server.requests.lastSeq();
    const abort = new AbortController();
    const out: string[] = [];
    const io = { stdout: { write: (s: string) => void out.push(s) }, stderr: { write: (s: string) => void out.push(s) }, env: { KUBECONFIG: kubeconfig, HOME: home }, clock: real };
    const running = runController(['--context', 'cert', '--namespace', 'nodepulse-system', '--identity', 'ctl-cert', '--http-address', '127.0.0.1:0'], io, abort.signal);
    const election = (): Record<string, unknown> | undefined => server.store.get('leases', 'nodepulse-system', 'nodepulse-controller');
    for (let i = 0; i < 200 && election() === undefined; i++) await real.sleep(50);
    abort.abort(new Error('test done'));
    assert.equal(await running, 0, out.join(''));
    assert.equal((election()?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity !== undefined, true, 'the election lease was created');
    assert.match(out.join(''), /"source":"kubeconfig [^"]*\.kube\/config \(context cert\)"/);
    assert.deepEqual(usersSince(seq), ['alice']);
  });
});
