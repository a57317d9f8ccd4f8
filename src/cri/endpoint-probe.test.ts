import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SystemClock } from '../clock/clock.ts';
import { ManualClock } from '../clock/manual-clock.ts';
import { startSimRuntime } from '../stand-ins/cri-runtime/sim-runtime.ts';
import { CriError } from './cri-error.ts';
import { chooseCriEndpoint, PROBE_VERSION_DEADLINE_MS, probeCriEndpoints, type ProbeResult } from './endpoint-probe.ts';
import { createRuntimeClient } from './runtime-client.ts';
import { ScriptedRuntimeClient } from '../stand-ins/doubles/scripted-runtime-client.ts';
import type { RuntimeVersion } from './types.ts';

const CONTAINERD = 'unix:///run/containerd/containerd.sock';
const CRIO = 'unix:///run/crio/crio.sock';
const K3S = 'unix:///run/k3s/containerd/containerd.sock';

const answered = (endpoint: string, name: string, version: string): ProbeResult => ({ endpoint, state: 'answered', runtime: { name, version } });
const refused = (endpoint: string): ProbeResult => ({ endpoint, state: 'refused', fault: { code: 'unimplemented', message: 'unknown service runtime.v1.RuntimeService' } });
const absent = (endpoint: string): ProbeResult => ({ endpoint, state: 'absent' });

describe('chooseCriEndpoint', () => {
  const table: Array<{ name: string; results: ProbeResult[]; node: string | undefined; want: string | undefined; rule?: string; reason: RegExp }> = [
    {
      name: 'no socket answered: none, saying what each did',
      results: [refused(CONTAINERD), absent(CRIO)],
      node: 'containerd://1.7.13',
      want: undefined,
      reason: /^no socket answered CRI Version \(unix:\/\/\/run\/containerd\/containerd\.sock: refused: unimplemented: unknown service runtime\.v1\.RuntimeService; unix:\/\/\/run\/crio\/crio\.sock: no socket\)$/,
    },
    {
      name: 'a socket that refuses CRI loses to a later one that answers',
      results: [refused(CONTAINERD), answered(CRIO, 'cri-o', '1.30.4')],
      node: undefined,
      want: CRIO,
      rule: 'probe-order',
      reason: /^the first socket in probe order whose CRI Version answered \(cri-o 1\.30\.4\); without the Node's/,
    },
    {
      name: 'without the Node, probe order decides between two that answer',
      results: [answered(CONTAINERD, 'containerd', '1.7.13'), answered(CRIO, 'cri-o', '1.30.4')],
      node: undefined,
      want: CONTAINERD,
      rule: 'probe-order',
      reason: /also answered: unix:\/\/\/run\/crio\/crio\.sock: cri-o 1\.30\.4/,
    },
    {
      name: 'an unparseable Node runtime counts as unknown',
      results: [answered(CONTAINERD, 'containerd', '1.7.13'), answered(CRIO, 'cri-o', '1.30.4')],
      node: 'cri-o 1.30.4',
      want: CONTAINERD,
      rule: 'probe-order',
      reason: /probe order decides/,
    },
    {
      name: 'the Node names cri-o: the CRI-O socket wins over an earlier containerd that answers',
      results: [answered(CONTAINERD, 'containerd', '1.7.13'), answered(CRIO, 'cri-o', '1.30.4')],
      node: 'cri-o://1.30.4',
      want: CRIO,
      rule: 'node-runtime',
      reason: /^its CRI Version \(cri-o 1\.30\.4\) matches the Node's containerRuntimeVersion cri-o:\/\/1\.30\.4$/,
    },
    {
      name: 'two containerds: the version breaks the tie (k3s beside a system containerd)',
      results: [answered(CONTAINERD, 'containerd', '1.7.20'), absent(CRIO), answered(K3S, 'containerd', 'v1.7.11-k3s2')],
      node: 'containerd://1.7.11-k3s2',
      want: K3S,
      rule: 'node-runtime',
      reason: /containerd v1\.7\.11-k3s2\) matches/,
    },
    {
      name: 'two containerds, no version match: the first with the name',
      results: [answered(CONTAINERD, 'containerd', '1.7.20'), answered(K3S, 'containerd', '1.7.11-k3s2')],
      node: 'containerd://1.6.0',
      want: CONTAINERD,
      rule: 'node-runtime',
      reason: /matches the Node's containerRuntimeVersion containerd:\/\/1\.6\.0/,
    },
    {
      name: 'the Node names a runtime no socket answered as: none, naming both',
      results: [answered(CONTAINERD, 'containerd', '1.7.13'), absent(CRIO)],
      node: 'docker://24.0.7',
      want: undefined,
      reason: /^the Node's containerRuntimeVersion is docker:\/\/24\.0\.7, but no socket answered as docker \(unix:\/\/\/run\/containerd\/containerd\.sock: containerd 1\.7\.13\)$/,
    },
  ];
  for (const row of table) {
    test(row.name, () => {
      const got = chooseCriEndpoint(row.results, row.node);
      assert.equal(got.chosen ? got.endpoint : undefined, row.want);
      if (got.chosen) assert.equal(got.rule, row.rule);
      assert.match(got.reason, row.reason);
    });
  }
});

/** Strict doubles by endpoint, each answering Version as scripted; records what was created. */
function doubles(script: Record<string, RuntimeVersion | CriError | 'hang'>) {
  const created = new Map<string, ScriptedRuntimeClient>();
  const create = (endpoint: string): ScriptedRuntimeClient => {
    const answer = script[endpoint];
    assert.ok(answer !== undefined, `a client for ${endpoint} must not be created: it was not scripted`);
    const client = new ScriptedRuntimeClient(endpoint);
    client.versionAnswer = answer;
    created.set(endpoint, client);
    return client;
  };
  return { created, create };
}

const version = (runtimeName: string, runtimeVersion: string): RuntimeVersion => ({ version: '0.1.0', runtimeName, runtimeVersion, runtimeApiVersion: 'v1' });
const paths = (...endpoints: string[]) => (path: string): boolean => endpoints.includes(`unix://${path}`);

describe('probeCriEndpoints', () => {
  test('a hung socket costs one deadline on the clock, then counts as refused; the next socket wins', async () => {
    const clock = new ManualClock();
    const { created, create } = doubles({ [CONTAINERD]: 'hang', [CRIO]: version('cri-o', '1.30.4') });
    let done = false;
    const probing = probeCriEndpoints({ candidates: [CONTAINERD, CRIO, K3S], create, clock, exists: paths(CONTAINERD, CRIO) }).finally(() => {
      done = true;
    });
    await clock.advance(PROBE_VERSION_DEADLINE_MS - 1);
    assert.equal(done, false, 'the probe waits for the hung socket until its deadline');
    await clock.advance(1);
    const outcome = await probing;
    assert.deepEqual(outcome.results, [
      { endpoint: CONTAINERD, state: 'refused', fault: { code: 'deadline_exceeded', message: `CRI Version did not answer within ${PROBE_VERSION_DEADLINE_MS}ms` } },
      { endpoint: CRIO, state: 'answered', runtime: { name: 'cri-o', version: '1.30.4' } },
      { endpoint: K3S, state: 'absent' },
    ]);
    assert.equal(outcome.choice.chosen && outcome.choice.endpoint, CRIO);
    assert.equal(outcome.client, created.get(CRIO));
    assert.deepEqual([...created.keys()], [CONTAINERD, CRIO], 'no client for a socket that does not exist');
    assert.equal(created.get(CONTAINERD)?.closed, true, 'the socket not chosen is closed');
    assert.equal(created.get(CRIO)?.closed, false, 'the chosen one is handed over open');
  });

  test('the Node is read once some socket answered, and decides', async () => {
    const { create } = doubles({ [CONTAINERD]: version('containerd', '1.7.13'), [CRIO]: version('cri-o', '1.30.4') });
    let reads = 0;
    const outcome = await probeCriEndpoints({
      candidates: [CONTAINERD, CRIO],
      create,
      clock: new ManualClock(),
      exists: () => true,
      nodeRuntime: async () => {
        reads++;
        return 'cri-o://1.30.4';
      },
    });
    assert.equal(reads, 1);
    assert.equal(outcome.nodeRuntime, 'cri-o://1.30.4');
    assert.equal(outcome.choice.chosen && outcome.choice.rule, 'node-runtime');
    assert.equal(outcome.client?.endpoint, CRIO);
  });

  test('the Node is not read when no socket answered', async () => {
    const { create } = doubles({ [CONTAINERD]: new CriError('unimplemented', 'unknown service runtime.v1.RuntimeService') });
    let reads = 0;
    const outcome = await probeCriEndpoints({
      candidates: [CONTAINERD, CRIO],
      create,
      clock: new ManualClock(),
      exists: paths(CONTAINERD),
      nodeRuntime: async () => {
        reads++;
        return 'containerd://1.7.13';
      },
    });
    assert.equal(reads, 0, 'a node with no runtime costs the API server nothing');
    assert.equal(outcome.choice.chosen, false);
    assert.equal(outcome.client, undefined);
  });

  test('a Node that cannot be read leaves probe order to decide, and the error is kept', async () => {
    const { create } = doubles({ [CONTAINERD]: version('containerd', '1.7.13'), [CRIO]: version('cri-o', '1.30.4') });
    const outcome = await probeCriEndpoints({
      candidates: [CONTAINERD, CRIO],
      create,
      clock: new ManualClock(),
      exists: () => true,
      nodeRuntime: () => Promise.reject(new Error('GET nodes n1: 503 Service Unavailable')),
    });
    assert.equal(outcome.nodeRuntimeError, 'GET nodes n1: 503 Service Unavailable');
    assert.equal(outcome.nodeRuntime, undefined);
    assert.equal(outcome.choice.chosen && outcome.choice.endpoint, CONTAINERD);
    assert.equal(outcome.choice.chosen && outcome.choice.rule, 'probe-order');
  });
});

test('on real sockets: a gRPC server without CRI (as Docker\'s containerd) is refused, the simulated runtime after it is chosen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'np-probe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const noCri = new grpc.Server();
  const noCriPath = join(dir, 'containerd.sock');
  await new Promise<void>((resolve, reject) => {
    noCri.bindAsync(`unix://${noCriPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err === null ? resolve() : reject(err)));
  });
  t.after(() => noCri.forceShutdown());
  const real = new SystemClock();
  const sim = await startSimRuntime({ socketPath: join(dir, 'crio.sock'), clock: real });
  t.after(() => sim.close());

  const outcome = await probeCriEndpoints({
    candidates: [`unix://${noCriPath}`, sim.endpoint, `unix://${join(dir, 'absent.sock')}`],
    create: (endpoint) => createRuntimeClient({ endpoint, clock: real }),
    clock: real,
  });
  t.after(() => outcome.client?.close());
  const [first, second, third] = outcome.results;
  assert.equal(first?.state, 'refused');
  assert.equal(first?.fault?.code, 'unimplemented', `Docker's containerd answers UNIMPLEMENTED: ${JSON.stringify(first)}`);
  assert.deepEqual(second, { endpoint: sim.endpoint, state: 'answered', runtime: { name: 'nodepulse-sim', version: '1.0.0' } });
  assert.deepEqual(third, { endpoint: `unix://${join(dir, 'absent.sock')}`, state: 'absent' });
  assert.equal(outcome.choice.chosen && outcome.choice.endpoint, sim.endpoint);
  const listing = await outcome.client?.relist({ deadlineMs: 5_000 });
  assert.ok(listing !== undefined, 'the chosen client is connected and relists');
});
