import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SystemClock } from '../clock/clock.ts';
import { ManualClock } from '../clock/manual-clock.ts';
import { startSimRuntime } from '../stand-ins/cri-runtime/sim-runtime.ts';
import { CriError } from './cri-error.ts';
import { chooseCriEndpoint, noChoiceCause, PROBE_VERSION_DEADLINE_MS, probeCriEndpoints, type ProbeResult } from './endpoint-probe.ts';
import { toFault, type CriFault } from './cri-error.ts';
import type { FaultCause } from './fault-cause.ts';
import { createRuntimeClient } from './runtime-client.ts';
import { ScriptedRuntimeClient } from '../stand-ins/doubles/scripted-runtime-client.ts';
import type { RuntimeVersion } from './types.ts';

const CONTAINERD = 'unix:///run/containerd/containerd.sock';
const CRIO = 'unix:///run/crio/crio.sock';
const K3S = 'unix:///run/k3s/containerd/containerd.sock';

const answered = (endpoint: string, name: string, version: string): ProbeResult => ({ endpoint, state: 'answered', runtime: { name, version } });
const refused = (endpoint: string): ProbeResult => ({ endpoint, state: 'refused', fault: { code: 'unimplemented', message: 'unknown service runtime.v1.RuntimeService', cause: 'unimplemented' } });
const absent = (endpoint: string): ProbeResult => ({ endpoint, state: 'absent' });
/** A socket that is there and fails Version for this cause (its message shortened). */
const failing = (endpoint: string, cause: FaultCause): ProbeResult => {
  const faults: Record<string, CriFault> = {
    refused: { code: 'unavailable', message: 'connect ECONNREFUSED', cause: 'refused' },
    hung: { code: 'deadline_exceeded', message: 'CRI Version did not answer within 2000ms', cause: 'hung' },
    'permission-denied': { code: 'unavailable', message: 'connect EACCES', cause: 'permission-denied' },
    undecodable: { code: 'other', message: 'answer could not be decoded', cause: 'undecodable' },
    'runtime-error': { code: 'other', message: 'rpc error: code = Internal', cause: 'runtime-error' },
  };
  const fault = faults[cause];
  assert.ok(fault, `precondition: a fault is scripted for ${cause}`);
  return { endpoint, state: 'refused', fault };
};

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
    {
      name: 'nothing answered, the Node unknown: the first socket that is there but refuses is the runtime, sick',
      results: [absent(CONTAINERD), failing(CRIO, 'refused'), failing(K3S, 'hung')],
      node: undefined,
      want: CRIO,
      rule: 'sick-runtime',
      reason: /^no socket answered CRI Version; the first socket in probe order that is there does not answer \(refused: unavailable: connect ECONNREFUSED\): a runtime that is there but sick/,
    },
    {
      name: 'nothing answered: a socket whose Version hangs is the runtime, sick',
      results: [failing(CONTAINERD, 'hung'), absent(CRIO)],
      node: undefined,
      want: CONTAINERD,
      rule: 'sick-runtime',
      reason: /does not answer \(refused: deadline_exceeded: CRI Version did not answer within 2000ms\)/,
    },
    {
      name: 'a socket the runtime answers with its own error is the runtime, sick',
      results: [failing(CONTAINERD, 'runtime-error')],
      node: undefined,
      want: CONTAINERD,
      rule: 'sick-runtime',
      reason: /a runtime that is there but sick/,
    },
    {
      name: 'a socket the agent may not open is never the runtime: none',
      results: [failing(CONTAINERD, 'permission-denied'), absent(CRIO)],
      node: undefined,
      want: undefined,
      reason: /^no socket answered CRI Version \(unix:\/\/\/run\/containerd\/containerd\.sock: refused: unavailable: connect EACCES; unix:\/\/\/run\/crio\/crio\.sock: no socket\)$/,
    },
    {
      name: 'CRI-disabled containerd beside a sick CRI-O: the sick CRI-O is the runtime',
      results: [refused(CONTAINERD), failing(CRIO, 'refused')],
      node: undefined,
      want: CRIO,
      rule: 'sick-runtime',
      reason: /does not answer/,
    },
    {
      name: 'an answering runtime wins over a sick one, the Node unknown',
      results: [failing(CONTAINERD, 'hung'), answered(CRIO, 'cri-o', '1.30.4')],
      node: undefined,
      want: CRIO,
      rule: 'probe-order',
      reason: /^the first socket in probe order whose CRI Version answered \(cri-o 1\.30\.4\)/,
    },
    {
      name: 'the Node names cri-o, containerd answers, CRI-O\'s socket refuses: the sick CRI-O is the runtime',
      results: [answered(CONTAINERD, 'containerd', '1.7.13'), failing(CRIO, 'refused')],
      node: 'cri-o://1.30.4',
      want: CRIO,
      rule: 'sick-runtime',
      reason: /^no socket answered CRI Version as cri-o; the socket of the Node's runtime \(cri-o:\/\/1\.30\.4\) does not answer/,
    },
    {
      name: 'the Node names cri-o, only containerd\'s socket is there and refuses: not the Node\'s runtime, none',
      results: [failing(CONTAINERD, 'refused'), absent(CRIO)],
      node: 'cri-o://1.30.4',
      want: undefined,
      reason: /^no socket answered CRI Version \(/,
    },
    {
      name: 'the Node names containerd: k3s\'s sick containerd socket is one of its paths',
      results: [absent(CONTAINERD), absent(CRIO), failing(K3S, 'hung')],
      node: 'containerd://1.7.11-k3s2',
      want: K3S,
      rule: 'sick-runtime',
      reason: /the socket of the Node's runtime \(containerd:\/\/1\.7\.11-k3s2\)/,
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

describe('noChoiceCause', () => {
  // The second table in endpoint-probe.ts's header, row by row.
  const table: Array<{ name: string; results: ProbeResult[]; chosenBefore?: string; cause: FaultCause }> = [
    { name: 'the socket chosen before is gone: the runtime vanished', results: [absent(CONTAINERD), absent(CRIO)], chosenBefore: CONTAINERD, cause: 'vanished' },
    { name: 'a socket the agent may not open', results: [failing(CONTAINERD, 'permission-denied'), absent(CRIO)], cause: 'permission-denied' },
    { name: 'a socket without CRI runtime.v1', results: [refused(CONTAINERD), absent(CRIO)], cause: 'unimplemented' },
    { name: 'a socket whose Version cannot be decoded', results: [absent(CONTAINERD), failing(CRIO, 'undecodable')], cause: 'undecodable' },
    { name: 'the first of two agent-caused sockets, in probe order', results: [refused(CONTAINERD), failing(CRIO, 'permission-denied')], cause: 'unimplemented' },
    { name: 'a socket chosen before that is now refused to the agent', results: [failing(CONTAINERD, 'permission-denied')], chosenBefore: CONTAINERD, cause: 'permission-denied' },
    { name: 'no socket file at any known path', results: [absent(CONTAINERD), absent(CRIO), absent(K3S)], cause: 'no-socket' },
    { name: 'no candidates at all', results: [], cause: 'no-socket' },
    { name: 'sockets answered, none as the Node\'s runtime', results: [answered(CONTAINERD, 'containerd', '1.7.13'), absent(CRIO)], cause: 'no-socket' },
    { name: 'a sick socket that is not the Node\'s runtime\'s', results: [failing(CONTAINERD, 'refused'), absent(CRIO)], cause: 'no-socket' },
  ];
  for (const row of table) {
    test(`${row.name}: ${row.cause}`, () => {
      assert.equal(noChoiceCause(row.results, row.chosenBefore), row.cause);
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
      { endpoint: CONTAINERD, state: 'refused', fault: { code: 'deadline_exceeded', message: `CRI Version did not answer within ${PROBE_VERSION_DEADLINE_MS}ms`, cause: 'hung' } },
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

  test('a socket that is there and refuses is chosen when nothing answers, and the Node is read for it', async () => {
    const refusing = new CriError('unavailable', 'RuntimeService/Version: rpc error: code = Unavailable desc = connect ECONNREFUSED', {
      detail: `No connection established. Last error: Error: connect ECONNREFUSED /run/crio/crio.sock. Resolution note: `,
      grpcCode: 14,
    });
    const { created, create } = doubles({ [CRIO]: refusing });
    let reads = 0;
    const outcome = await probeCriEndpoints({
      candidates: [CONTAINERD, CRIO],
      create,
      clock: new ManualClock(),
      exists: paths(CRIO),
      nodeRuntime: async () => {
        reads++;
        return 'cri-o://1.30.4';
      },
    });
    assert.equal(reads, 1, 'the Node is read: a sick socket may be its runtime');
    assert.deepEqual(outcome.results[1], { endpoint: CRIO, state: 'refused', fault: { code: 'unavailable', message: refusing.message, cause: 'refused' } });
    assert.equal(outcome.choice.chosen && outcome.choice.rule, 'sick-runtime');
    assert.equal(outcome.client, created.get(CRIO), 'the sick runtime\'s client is handed over');
    assert.equal(created.get(CRIO)?.closed, false);
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

test('on real sockets: a socket left by a killed runtime (it refuses) is chosen as the sick runtime, and its relist fails as the runtime\'s fault', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'np-probe-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const left = join(dir, 'containerd.sock');
  // A process that listens and is killed leaves its socket file behind, refusing, as a killed runtime does.
  const child = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(left)}, () => process.kill(process.pid, 'SIGKILL'))`]);
  assert.equal(child.signal, 'SIGKILL', 'precondition: the listener was killed');
  assert.ok(statSync(left).isSocket(), 'precondition: its socket file is left behind');
  const real = new SystemClock();
  const outcome = await probeCriEndpoints({
    candidates: [`unix://${left}`, `unix://${join(dir, 'absent.sock')}`],
    create: (endpoint) => createRuntimeClient({ endpoint, clock: real }),
    clock: real,
  });
  t.after(() => outcome.client?.close());
  assert.equal(outcome.results[0]?.fault?.cause, 'refused', JSON.stringify(outcome.results[0]));
  assert.equal(outcome.choice.chosen && outcome.choice.rule, 'sick-runtime');
  await assert.rejects(outcome.client?.relist({ deadlineMs: 5_000 }) ?? Promise.resolve(), (err: unknown) => {
    assert.ok(err instanceof CriError);
    assert.equal(toFault(err).cause, 'refused');
    return true;
  });
});
