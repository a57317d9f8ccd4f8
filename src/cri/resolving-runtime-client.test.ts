// The resolving client's rules, each on a manual clock with strict doubles (one per socket):
// given endpoints are never probed; a probe runs at most once a second and is shared by the
// calls that wait for it; a choice is dropped when its relist finds no runtime before any relist
// succeeded, and held after one did; the Node is read at most once a minute; a call's deadline
// covers the probe it waited for.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { CriError, toFault } from './cri-error.ts';
import { PROBE_VERSION_DEADLINE_MS } from './endpoint-probe.ts';
import { ScriptedRuntimeClient } from '../stand-ins/doubles/scripted-runtime-client.ts';
import type { CallOptions, RuntimeVersion } from './types.ts';
import { NODE_READ_INTERVAL_MS, REPROBE_GAP_MS, ResolvingRuntimeClient, type ResolvingRuntimeClientOptions } from './resolving-runtime-client.ts';

const CONTAINERD = 'unix:///run/containerd/containerd.sock';
const CRIO = 'unix:///run/crio/crio.sock';
const CANDIDATES = [CONTAINERD, CRIO];
const DEADLINE = { deadlineMs: 60_000 };

const version = (runtimeName: string, runtimeVersion: string): RuntimeVersion => ({ version: '0.1.0', runtimeName, runtimeVersion, runtimeApiVersion: 'v1' });

/** A world of sockets: which exist, how each answers Version; every client created is kept. */
function world(clock: ManualClock, sockets: Record<string, RuntimeVersion | CriError | 'hang'>, extra: Partial<ResolvingRuntimeClientOptions> = {}) {
  const clients: ScriptedRuntimeClient[] = [];
  let statCalls = 0;
  const live = { ...sockets } as Record<string, RuntimeVersion | CriError | 'hang' | undefined>;
  // The ledger's answer, as the relister writes it: a relist that resolved is a success.
  let succeeded = false;
  const resolving = new ResolvingRuntimeClient({
    configured: undefined,
    clock,
    relistSucceeded: () => succeeded,
    candidates: CANDIDATES,
    exists: (path) => {
      statCalls++;
      return live[`unix://${path}`] !== undefined;
    },
    create: (endpoint) => {
      const client = new ScriptedRuntimeClient(endpoint);
      const answer = live[endpoint];
      assert.ok(answer !== undefined, `precondition: a client is created only for a socket that exists (${endpoint})`);
      client.versionAnswer = answer;
      clients.push(client);
      return client;
    },
    ...extra,
  });
  return {
    resolving,
    /** A relist through the client, recorded as the relister records it. */
    relist: async (o: CallOptions): ReturnType<ResolvingRuntimeClient['relist']> => {
      const listing = await resolving.relist(o);
      succeeded = true;
      return listing;
    },
    clients,
    live,
    statCalls: () => statCalls,
    /** The newest client for an endpoint. */
    client: (endpoint: string): ScriptedRuntimeClient => {
      const found = clients.filter((c) => c.endpoint === endpoint).at(-1);
      assert.ok(found, `precondition: a client for ${endpoint} was created`);
      return found;
    },
  };
}

/** Lets promise chains run without moving time. */
const settle = (clock: ManualClock): Promise<void> => clock.advance(0);

describe('ResolvingRuntimeClient', () => {
  test('a given endpoint is used as given and never probed', async () => {
    const clock = new ManualClock();
    const created: string[] = [];
    let stats = 0;
    const resolving = new ResolvingRuntimeClient({
      configured: { endpoint: 'unix:///run/cri-dockerd.sock', path: '/run/cri-dockerd.sock', source: 'CONTAINER_RUNTIME_ENDPOINT' },
      clock,
      relistSucceeded: () => false,
      exists: () => {
        stats++;
        return true;
      },
      create: (endpoint) => {
        created.push(endpoint);
        return new ScriptedRuntimeClient(endpoint);
      },
    });
    const stop = new AbortController();
    const relist = resolving.relist({ ...DEADLINE, signal: stop.signal });
    await settle(clock);
    assert.deepEqual(created, ['unix:///run/cri-dockerd.sock']);
    assert.equal(stats, 0, 'no socket is looked for');
    const view = resolving.view();
    assert.equal(view.rule, 'configured');
    assert.equal(view.reason, 'given by CONTAINER_RUNTIME_ENDPOINT; used as given, never probed');
    stop.abort(new Error('test over'));
    await assert.rejects(relist, /test over/);
    resolving.close();
  });

  test('no runtime anywhere: fails unavailable with every path and why, and probes again only after a second', async () => {
    const clock = new ManualClock();
    const w = world(clock, {});
    await assert.rejects(w.relist(DEADLINE), (err: unknown) => {
      assert.ok(err instanceof CriError);
      assert.equal(err.code, 'unavailable');
      assert.match(err.message, /no runtime chosen among unix:\/\/\/run\/containerd\/containerd\.sock, unix:\/\/\/run\/crio\/crio\.sock: no socket answered CRI Version/);
      assert.equal(toFault(err).cause, 'no-socket', 'nothing to choose: the agent cannot observe');
      return true;
    });
    assert.equal(w.statCalls(), 2);
    await clock.advance(REPROBE_GAP_MS - 1);
    await assert.rejects(w.relist(DEADLINE), /no socket answered CRI Version/);
    assert.equal(w.statCalls(), 2, 'a call within the gap gets the last probe\'s answer, without probing');
    await clock.advance(1);
    await assert.rejects(w.relist(DEADLINE));
    assert.equal(w.statCalls(), 4, 'one second after the last probe began, a call probes again');
  });

  test('calls that arrive while a probe runs share it', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CONTAINERD]: 'hang', [CRIO]: version('cri-o', '1.30.4') });
    const a = w.resolving.status(DEADLINE);
    const b = w.resolving.version(DEADLINE);
    await settle(clock);
    w.client(CRIO).statusAnswer = { conditions: [] };
    await clock.advance(PROBE_VERSION_DEADLINE_MS);
    await Promise.all([a, b]);
    assert.equal(w.clients.length, 2, 'one client per socket: one probe');
    assert.equal(w.client(CRIO).versionCalls, 2, 'the probe\'s Version and the caller\'s own');
  });

  test('a chosen socket whose relist finds no runtime before any succeeded is dropped, and the next probe finds the runtime', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CONTAINERD]: version('containerd', '1.7.13') });
    const first = w.relist(DEADLINE);
    await settle(clock);
    assert.equal(w.resolving.view().endpoint, CONTAINERD);
    w.client(CONTAINERD).next().fail('unavailable', 'connection refused');
    await assert.rejects(first, /connection refused/);
    assert.equal(w.client(CONTAINERD).closed, true, 'the dropped socket\'s client is closed');
    const dropped = w.resolving.view();
    assert.equal(dropped.endpoint, null);
    assert.match(dropped.reason, /^dropped unix:\/\/\/run\/containerd\/containerd\.sock: its relist failed before any succeeded \(connection refused\); probing again$/);

    delete w.live[CONTAINERD];
    w.live[CRIO] = version('cri-o', '1.30.4');
    await clock.advance(REPROBE_GAP_MS);
    const second = w.relist(DEADLINE);
    await settle(clock);
    assert.equal(w.resolving.view().endpoint, CRIO);
    w.client(CRIO).next().answer();
    await second;
    assert.equal(w.resolving.view().held, true);
  });

  test('a socket that is there but refuses is the runtime when nothing answers: its relists fail as the runtime\'s, before and after each drop', async () => {
    const clock = new ManualClock();
    const refusing = (): CriError => new CriError('unavailable', 'connect ECONNREFUSED', { detail: 'Error: connect ECONNREFUSED /run/containerd/containerd.sock', grpcCode: 14 });
    const w = world(clock, { [CONTAINERD]: refusing() });
    const first = w.relist(DEADLINE);
    await settle(clock);
    assert.equal(w.resolving.view().rule, 'sick-runtime');
    w.client(CONTAINERD).next().fail('unavailable', 'connect ECONNREFUSED /run/containerd/containerd.sock');
    await assert.rejects(first, (err: unknown) => toFault(err).cause === 'refused');
    assert.equal(w.resolving.view().endpoint, null, 'precondition: the choice was dropped');
    await assert.rejects(w.relist(DEADLINE), (err: unknown) => {
      assert.equal(toFault(err).cause, 'refused', 'a call inside the reprobe gap keeps the dropped relist\'s cause');
      return true;
    });
    await clock.advance(REPROBE_GAP_MS);
    const again = w.relist(DEADLINE);
    await settle(clock);
    assert.equal(w.resolving.view().endpoint, CONTAINERD, 'the next probe chooses the sick runtime again');
    w.client(CONTAINERD).next().fail('unavailable', 'connect ECONNREFUSED /run/containerd/containerd.sock');
    await assert.rejects(again, (err: unknown) => toFault(err).cause === 'refused');
  });

  test('a socket chosen once and gone at the next probe vanished: the runtime\'s fault, not "no socket"', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CONTAINERD]: version('containerd', '1.7.13') });
    const first = w.relist(DEADLINE);
    await settle(clock);
    delete w.live[CONTAINERD];
    w.client(CONTAINERD).next().fail('unavailable', 'connect ENOENT /run/containerd/containerd.sock');
    await assert.rejects(first, (err: unknown) => toFault(err).cause === 'vanished');
    await clock.advance(REPROBE_GAP_MS);
    await assert.rejects(w.relist(DEADLINE), (err: unknown) => {
      assert.equal(toFault(err).cause, 'vanished', `the probe finds no file where the chosen socket was: ${(err as Error).message}`);
      return true;
    });
  });

  test('a socket the agent may not open: nothing is chosen, and the fault is the agent\'s (permission-denied)', async () => {
    const clock = new ManualClock();
    const eacces = new CriError('unavailable', 'connect EACCES', { detail: 'Error: connect EACCES /run/containerd/containerd.sock', grpcCode: 14 });
    const w = world(clock, { [CONTAINERD]: eacces });
    await assert.rejects(w.relist(DEADLINE), (err: unknown) => {
      assert.equal(toFault(err).cause, 'permission-denied');
      assert.match((err as Error).message, /connect EACCES/, 'the runtime\'s words are kept');
      return true;
    });
    assert.equal(w.resolving.view().endpoint, null);
  });

  test('a given endpoint whose socket was never seen fails no-socket; once a relist reached it, its loss is vanished', async () => {
    const clock = new ManualClock();
    const client = new ScriptedRuntimeClient('unix:///run/cri.sock');
    const resolving = new ResolvingRuntimeClient({
      configured: { endpoint: 'unix:///run/cri.sock', path: '/run/cri.sock', source: '--cri-endpoint' },
      clock,
      relistSucceeded: () => false,
      create: () => client,
    });
    const causeOf = async (fail: (c: ScriptedRuntimeClient) => void): Promise<string> => {
      const relist = resolving.relist(DEADLINE);
      await settle(clock);
      fail(client);
      let cause = 'none';
      await relist.catch((err: unknown) => {
        cause = toFault(err).cause;
      });
      return cause;
    };
    const enoent = (c: ScriptedRuntimeClient): void => c.next().fail('unavailable', 'Error: connect ENOENT /run/cri.sock');
    assert.equal(await causeOf(enoent), 'no-socket', 'the path given holds nothing: the agent\'s setting');
    assert.equal(await causeOf(enoent), 'no-socket');
    assert.equal(await causeOf((c) => c.next().fail('unavailable', 'Error: connect ECONNREFUSED /run/cri.sock')), 'refused', 'now it is there');
    assert.equal(await causeOf(enoent), 'vanished', 'seen once, its loss is the runtime\'s');
  });

  test('a socket a relist succeeded on is held: a later failure is the runtime\'s, and nothing is probed', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CONTAINERD]: version('containerd', '1.7.13'), [CRIO]: version('cri-o', '1.30.4') });
    const ok = w.relist(DEADLINE);
    await settle(clock);
    w.client(CONTAINERD).next().answer();
    await ok;
    const failing = w.relist(DEADLINE);
    await settle(clock);
    w.client(CONTAINERD).next().fail('unavailable', 'connection refused');
    await assert.rejects(failing);
    await clock.advance(REPROBE_GAP_MS * 5);
    const again = w.relist(DEADLINE);
    await settle(clock);
    assert.equal(w.clients.length, 2, 'no new probe');
    assert.equal(w.client(CONTAINERD).pending.length, 1, 'the next relist goes to the held socket');
    assert.equal(w.resolving.view().endpoint, CONTAINERD);
    w.client(CONTAINERD).next().answer();
    await again;
  });

  test('a relist fault that is the runtime\'s own answer (oversized listing) keeps the socket', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CRIO]: version('cri-o', '1.30.4') });
    const first = w.relist(DEADLINE);
    await settle(clock);
    w.client(CRIO).next().fail('resource_exhausted', 'received message larger than max');
    await assert.rejects(first);
    assert.equal(w.resolving.view().endpoint, CRIO);
    assert.equal(w.client(CRIO).closed, false);
  });

  test('an empty containerRuntimeVersion, as the API server stores it before the kubelet reports, names no runtime', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CONTAINERD]: version('containerd', '1.7.13') }, { nodeRuntime: async () => '' });
    const found = w.relist(DEADLINE);
    await settle(clock);
    w.client(CONTAINERD).next().answer();
    await found;
    const view = w.resolving.view();
    assert.deepEqual([view.endpoint, view.rule, view.nodeRuntime], [CONTAINERD, 'probe-order', null]);
  });

  test('the Node decides between sockets, and is read at most once a minute', async () => {
    const clock = new ManualClock();
    let reads = 0;
    const w = world(clock, { [CONTAINERD]: version('containerd', '1.7.13') }, {
      nodeRuntime: async () => {
        reads++;
        return 'cri-o://1.30.4';
      },
    });
    await assert.rejects(w.relist(DEADLINE), /the Node's containerRuntimeVersion is cri-o:\/\/1\.30\.4, but no socket answered as cri-o/);
    assert.equal(reads, 1);
    assert.equal(w.resolving.view().nodeRuntime, 'cri-o://1.30.4');
    await clock.advance(REPROBE_GAP_MS);
    await assert.rejects(w.relist(DEADLINE));
    assert.equal(reads, 1, 'the Node read a second ago still holds');
    w.live[CRIO] = version('cri-o', '1.30.4');
    await clock.advance(NODE_READ_INTERVAL_MS - REPROBE_GAP_MS);
    const found = w.relist(DEADLINE);
    await settle(clock);
    assert.equal(reads, 2, 'a minute after the last read, the Node is read again');
    const view = w.resolving.view();
    assert.equal(view.endpoint, CRIO);
    assert.equal(view.rule, 'node-runtime');
    w.client(CRIO).next().answer();
    await found;
  });

  test('a call\'s deadline covers the probe it waited for', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CONTAINERD]: 'hang', [CRIO]: version('cri-o', '1.30.4') });
    const relist = w.relist({ deadlineMs: 5_000 });
    await clock.advance(PROBE_VERSION_DEADLINE_MS);
    assert.equal(w.client(CRIO).next().options.deadlineMs, 5_000 - PROBE_VERSION_DEADLINE_MS);
    w.client(CRIO).next().answer();
    await relist;
    const late = w.relist({ deadlineMs: 1_000 });
    await settle(clock);
    assert.equal(w.client(CRIO).next().options.deadlineMs, 1_000, 'a held socket costs no probe time');
    w.client(CRIO).next().answer();
    await late;
  });

  test('close() closes the chosen client and fails every later call', async () => {
    const clock = new ManualClock();
    const w = world(clock, { [CRIO]: version('cri-o', '1.30.4') });
    const first = w.relist(DEADLINE);
    await settle(clock);
    w.client(CRIO).next().answer();
    await first;
    w.resolving.close();
    assert.equal(w.client(CRIO).closed, true);
    await assert.rejects(w.relist(DEADLINE), /runtime client is closed/);
  });
});
