// What the controller sends in steady state, counted on the API stand-in: the leader keeps three
// watches open (the agents' leases, the Nodes, and the agent DaemonSet by name; two with
// `--agent-daemonset ""`), and between them sends nothing but its election renewals; a standby
// sends nothing but its reads of the election lease. The number
// docs/install.md gives ("only its three watches") is read from the page and held to the count.
//
// Real time passes (a real process runs); the steady window is an observation of what is sent,
// not a timing rule, and every wait is a bounded poll.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { REPO_ROOT } from '../support/agent-process.ts';
import { ELECTION_LEASE, startControllerProcess, waitFor, type ControllerTimings } from './controller-harness.ts';
import { realisticNode } from './fleet-fixtures.ts';

const real = new SystemClock();
const NS = 'nodepulse';
const TIMINGS: ControllerTimings = { graceMs: 50_000, monitorPeriodMs: 250, leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };
/** Long enough for several renewals and monitor periods, short enough for CI. */
const STEADY_WINDOW_MS = 2_000;
const WORDS: Readonly<Record<string, number>> = { one: 1, two: 2, three: 3, four: 4, five: 5 };

interface Steady {
  /** Every watch the leader opened, as path?selector. */
  readonly watches: string[];
  /** The leader's other requests in the steady window. */
  readonly others: string[];
  /** The standby's requests in the steady window. */
  readonly standby: string[];
}

async function steadyRequests(t: TestContext, args: readonly string[]): Promise<Steady> {
  const server = await startApiServer({ clock: real, tokens: { 'token-1': 'c-1', 'token-2': 'c-2' } });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-watches-'));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  server.store.put(realisticNode('node-1', 1, { createdMicros: real.wallMicros() - 86_400_000_000 }) as Parameters<typeof server.store.put>[0]);
  const kubeconfig = (n: number): string => {
    const path = join(dir, `c-${n}.kubeconfig`);
    writeKubeconfig(path, { server: server.url, token: `token-${n}` });
    return path;
  };
  const leader = await startControllerProcess(t, { kubeconfig: kubeconfig(1), identity: 'c-1', namespace: NS, timings: TIMINGS, args });
  const expected = args.includes('--agent-daemonset=') ? 2 : 3;
  const open = (): number => server.requests.filter({ verb: 'watch' }).length;
  await waitFor(`${expected} watches open`, () => open() >= expected, 15_000);
  const standby = await startControllerProcess(t, { kubeconfig: kubeconfig(2), identity: 'c-2', namespace: NS, timings: TIMINGS, args });
  await waitFor('the standby read the election lease', () => server.requests.filter({}).some((r) => r.user === 'c-2'), 15_000);
  const mark = server.requests.lastSeq();
  await real.sleep(STEADY_WINDOW_MS);
  const watches = server.requests.filter({ verb: 'watch' }).map((r) => `${r.user ?? ''} ${r.path}?${['labelSelector', 'fieldSelector'].filter((k) => r.query[k] !== undefined).map((k) => `${k}=${r.query[k]}`).join('&')}`);
  const window = server.requests.since(mark);
  assert.ok(leader.running && standby.running, 'precondition: both replicas still run');
  return {
    watches: watches.sort(),
    others: window.filter((r) => r.user === 'c-1' && r.verb !== 'watch').map((r) => `${r.method} ${r.path}`),
    standby: window.filter((r) => r.user === 'c-2').map((r) => `${r.method} ${r.path}`),
  };
}

test('the leader keeps three watches open, and in steady state sends nothing else but its election renewals; docs/install.md says three', { timeout: 60_000 }, async (t) => {
  const { watches, others, standby } = await steadyRequests(t, []);
  assert.deepEqual(watches, [
    `c-1 /api/v1/nodes?`,
    `c-1 /apis/apps/v1/namespaces/${NS}/daemonsets?fieldSelector=metadata.name=nodepulse`,
    `c-1 /apis/coordination.k8s.io/v1/namespaces/${NS}/leases?labelSelector=nodepulse.io/role=node-lease`,
  ], 'the leader\'s watches, and none of the standby\'s');
  const election = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${ELECTION_LEASE}`;
  assert.ok(others.length >= 2, `precondition: the leader renewed during the window (${others.length} requests)`);
  assert.deepEqual([...new Set(others)], [`PUT ${election}`], 'the leader: nothing but election renewals');
  assert.ok(standby.length >= 2, `precondition: the standby looked during the window (${standby.length} requests)`);
  assert.deepEqual([...new Set(standby)], [`GET ${election}`], 'the standby: nothing but reads of the election lease');

  const install = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8').replace(/\n\s*/g, ' ');
  const said = /In steady state the leader sends only its (\w+) watches/.exec(install);
  assert.ok(said, 'precondition: docs/install.md says how many watches the leader keeps');
  assert.equal(WORDS[said[1] ?? ''], watches.length, `docs/install.md says "${said[1]}"`);
});

test('with --agent-daemonset "" the leader keeps two watches: the leases and the Nodes', { timeout: 60_000 }, async (t) => {
  const { watches } = await steadyRequests(t, ['--agent-daemonset=']);
  assert.deepEqual(watches, [`c-1 /api/v1/nodes?`, `c-1 /apis/coordination.k8s.io/v1/namespaces/${NS}/leases?labelSelector=nodepulse.io/role=node-lease`]);
});
