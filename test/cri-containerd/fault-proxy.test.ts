// The CRI fault proxy (test/cri-fault-proxy) between CRI clients and a real containerd: it
// forwards every call unchanged, and hangs, delays, fails or garbles the methods it is told to.
// The fault matrix on the real cluster runs on it; this file proves it here first.
//
// | what                                   | shown by                                                       |
// |----------------------------------------|----------------------------------------------------------------|
// | transparent forwarding                 | nodepulse's runtime client and the fixture's full-proto client |
// |                                        | read the same through the proxy as direct; pods and containers |
// |                                        | are created, started, stopped and removed through it; images   |
// |                                        | listed; containerd's own error status comes through unchanged  |
// | metadata, status details, streams      | a grpc-js upstream that echoes: request metadata reaches it,   |
// |                                        | its header and trailer metadata, status and details and every  |
// |                                        | streamed message come back                                     |
// | Go clients, either :authority          | the kubelet's k8s.io/cri-client ("localhost") and a crictl-    |
// |                                        | style client (the socket path) read the same as direct         |
// | hang (the two lists)                   | lists end at the caller's deadline, Status and Version answer; |
// |                                        | clear releases a held relist, which then gets the real answer  |
// | delay (longer than the deadline)       | deadline_exceeded; a longer deadline gets the answer, late     |
// | fail UNAVAILABLE, UNIMPLEMENTED        | the product's error for each; the kubelet's client refuses an  |
// |                                        | UNIMPLEMENTED Version when it connects                         |
// | garble                                 | the lean decoder's exact error; the full decode (proto-loader) |
// |                                        | and the kubelet's client fail too                              |
// | a fault for one caller (user-agent)    | the lists garbled for nodepulse alone: the kubelet's client    |
// |                                        | reads them whole; empty or with clear, refused                 |
// | commands                               | a refused command names every problem and changes nothing; a   |
// |                                        | fault changes only calls that start after it; one log line per |
// |                                        | command and per fault, with counts                             |
// | upstream not there                     | UNAVAILABLE, as a direct caller gets, in grpc-go's words       |
// | the socket                             | mode 0660, root's group or the one given, as containerd's      |
// | SIGTERM                                | held calls end UNAVAILABLE, exit 0, both sockets removed       |
// | the matrix's layout                    | the proxy at containerd's default path in a private mount      |
// |                                        | namespace, containerd moved: the shipped agent's probe finds   |
// |                                        | the proxy, relists through it, and goes stale when the lists   |
// |                                        | hang while Status answers                                      |
//
// And the build (no containerd needed): cached outside the repository, keyed by Go's version and
// every byte of the module, the newest few entries kept; no Go fails under CI=true, skips outside.
//
// Real time: these are real processes. The deadlines are the callers' own (the product's client
// times them on the system clock here); every wait is bounded by a named constant.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SystemClock, wallMs } from '../../src/clock/clock.ts';
import { CriError } from '../../src/cri/cri-error.ts';
import { createRuntimeClient } from '../../src/cri/runtime-client.ts';
import type { Container, PodSandbox, RuntimeClient } from '../../src/cri/types.ts';
import { requireContainerd, startContainerd, type ContainerdFixture } from '../fixtures/containerd.ts';
import { FixtureCriClient, FixtureCriError } from '../fixtures/fixture-cri-client.ts';
import { linesWith, metricValue, pollUntil, startAgentProcess, startStandIn } from '../support/agent-process.ts';
import { runCriClientProbe, type ProbeResult } from '../support/cri-client-probe.ts';
import { AGENT_USER_AGENT, criFaultProxyBinaries, KUBELET_USER_AGENT, requireGo, startCriFaultProxy } from '../support/cri-fault-proxy.ts';
import { BUILD_TIMEOUT_MS, cacheRoot, CRI_FAULT_PROXY_MODULE, findGo, MAX_CACHE_ENTRIES, moduleHash, pruneCache } from '../../scripts/build-cri-fault-proxy.ts';
import { REPO_ROOT } from '../support/agent-process.ts';
import { hostRunSnapshot, namespaceLauncher, requireMountNamespace, shippedAgentSettings } from '../support/mount-namespace.ts';
import { RUNTIME_FAULT_TIMINGS, THRESHOLD_MS } from '../faults/runtime-fault-timing.ts';

/** A cold Go build cache makes the first build long (scripts/build-cri-fault-proxy.ts); later runs find the binaries cached. */
const BUILD_BOUND_MS = 10 * 60_000;
/** A deadline no healthy call on this machine comes near. */
const CALL_MS = 10_000;
/** A deadline a held or delayed call outlives. */
const SHORT_MS = 400;
/** A delay longer than SHORT_MS and short enough for the file's budget. */
const DELAY_MS = 1_200;
/** Each subtest's bound: a fault test that hangs fails here instead of at the file's bound. */
const SUBTEST_MS = 60_000;
/** Waiting for the proxy's counters to show a held call (it counts as the call arrives). */
const SEEN_BOUND_MS = 5_000;
const LIST_PODS = '/runtime.v1.RuntimeService/ListPodSandbox';
const LIST_CONTAINERS = '/runtime.v1.RuntimeService/ListContainers';
const STATUS_METHOD = '/runtime.v1.RuntimeService/Status';
const VERSION_METHOD = '/runtime.v1.RuntimeService/Version';
/** What the lean decoder says about every garbled answer (the proxy's garblePrefix). */
const LEAN_GARBLE_ERROR = 'invalid wire type 7 at byte 1';
const PROXY_NAME = 'proxy';
/** A group no account on the machine needs, for the socket's group. */
const SOCKET_GID = 4242;

const byId = <T extends { id: string }>(items: readonly T[]): T[] => [...items].sort((a, b) => a.id.localeCompare(b.id));

function tempDir(t: Pick<TestContext, 'after'>): string {
  const dir = mkdtempSync(join(tmpdir(), `np-${PROXY_NAME}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Rejects unless `promise` rejects; resolves with what it rejected with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  assert.fail('the call must fail');
}

async function criError(promise: Promise<unknown>): Promise<CriError> {
  const err = await rejection(promise);
  assert.ok(err instanceof CriError, `a CriError, got ${String(err)}`);
  return err;
}

async function fixtureError(promise: Promise<unknown>): Promise<FixtureCriError> {
  const err = await rejection(promise);
  assert.ok(err instanceof FixtureCriError, `a FixtureCriError, got ${String(err)}`);
  return err;
}

/** The probe's readings with lists sorted, for comparing two runs. */
function sortedProbe(p: ProbeResult): ProbeResult {
  const sort = <T extends { id: string }>(r: { value?: T[] | undefined; error?: unknown } | undefined): typeof r =>
    r?.value === undefined ? r : { value: byId(r.value) } as typeof r;
  return { ...p, pods: sort(p.pods), containers: sort(p.containers), images: sort(p.images) } as ProbeResult;
}

/** What the product's client reads, in id order. */
async function productReading(client: RuntimeClient): Promise<{ version: unknown; status: unknown; sandboxes: PodSandbox[]; containers: Container[]; bytes: number }> {
  const [version, status, listing] = await Promise.all([
    client.version({ deadlineMs: CALL_MS }),
    client.status({ deadlineMs: CALL_MS }),
    client.relist({ deadlineMs: CALL_MS }),
  ]);
  return { version, status, sandboxes: byId(listing.sandboxes), containers: byId(listing.containers), bytes: listing.bytes };
}

test('the proxy\'s build: cached outside the repository under Go\'s version and every byte of the module; no Go fails under CI', (t) => {
  const copy = join(tempDir(t), 'module');
  cpSync(CRI_FAULT_PROXY_MODULE, copy, { recursive: true });
  const original = moduleHash(copy);
  assert.equal(original, moduleHash(), 'the hash reads the files, not where they are');
  writeFileSync(join(copy, 'codec.go'), '// one more line\n', { flag: 'a' });
  const edited = moduleHash(copy);
  assert.notEqual(edited, original, 'a changed byte changes the key');
  renameSync(join(copy, 'codec.go'), join(copy, 'codec2.go'));
  assert.notEqual(moduleHash(copy), edited, 'a renamed file changes the key');

  const saved = { cache: process.env['NODEPULSE_CACHE_DIR'], ci: process.env['CI'] };
  t.after(() => {
    for (const [key, value] of [['NODEPULSE_CACHE_DIR', saved.cache], ['CI', saved.ci]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
  process.env['NODEPULSE_CACHE_DIR'] = '/var/cache/elsewhere';
  assert.equal(cacheRoot(), '/var/cache/elsewhere');
  delete process.env['NODEPULSE_CACHE_DIR'];
  assert.equal(cacheRoot(), join(process.env['HOME'] ?? '', '.cache', 'nodepulse'));
  assert.ok(!cacheRoot().startsWith(REPO_ROOT), 'the cache is outside the repository');

  // The cache keeps the newest entries and builds that may still be running.
  const cache = join(tempDir(t), 'cri-fault-proxy');
  const nowMs = wallMs(new SystemClock());
  const names = ['current', 'a', 'b', 'c', 'd', 'e', '.current-live', '.old-dead'];
  names.forEach((name, i) => {
    mkdirSync(join(cache, name), { recursive: true });
    const at = new Date(name === '.old-dead' ? nowMs - 3 * BUILD_TIMEOUT_MS : nowMs - i * 60_000);
    utimesSync(join(cache, name), at, at);
  });
  pruneCache(cache, 'current', nowMs);
  assert.equal(MAX_CACHE_ENTRIES, 4, 'precondition: the table below keeps four');
  assert.deepEqual(readdirSync(cache).sort(), ['.current-live', 'a', 'b', 'c', 'current']);

  assert.equal(findGo('', join(copy, 'no-go-here')), undefined, 'no Go on PATH nor at the fallback');
  const skipped: unknown[] = [];
  const fakeT = { skip: (why?: string) => void skipped.push(why) };
  process.env['CI'] = 'true';
  assert.throws(() => requireGo(fakeT, () => undefined), { message: 'precondition: the CRI fault proxy is built with Go, and CI must have it (/usr/local/go/bin/go)' });
  assert.deepEqual(skipped, [], 'under CI=true a missing Go never skips');
  delete process.env['CI'];
  assert.equal(requireGo(fakeT, () => undefined), false);
  assert.deepEqual(skipped, ['needs Go to build the CRI fault proxy'], 'outside CI it skips, saying why');
});

test('the CRI fault proxy on a real containerd', { timeout: BUILD_BOUND_MS + 120_000 }, async (t) => {
  if (!requireContainerd(t) || !requireGo(t)) return;
  const built = await criFaultProxyBinaries();
  t.diagnostic(`proxy binaries ${built.built ? `built in ${built.buildMs} ms` : 'found in the cache'}: ${built.dir}`);
  assert.equal(built.dir, join(cacheRoot(), 'cri-fault-proxy', built.key));
  assert.match(built.key, new RegExp(`^go[\\w.+-]+-${moduleHash().slice(0, 16)}$`), 'keyed by Go\'s version and the module as it is now');
  const clock = new SystemClock();
  const cd = await startContainerd({ clock });
  t.after(() => cd.close());
  for (const name of ['web', 'db']) {
    const pod = await cd.cri.runPod(name, { namespace: PROXY_NAME });
    await cd.cri.runContainer(pod, `${name}-app`);
  }
  const dir = tempDir(t);
  const proxy = await startCriFaultProxy(t, { listen: join(dir, 'cri.sock'), upstream: cd.socketPath, control: join(dir, 'control.sock'), clock });
  const direct = createRuntimeClient({ endpoint: cd.endpoint, clock });
  const via = createRuntimeClient({ endpoint: proxy.endpoint, clock });
  const fixtureVia = new FixtureCriClient({ endpoint: proxy.endpoint, image: cd.image, clock });
  t.after(() => {
    direct.close();
    via.close();
    fixtureVia.close();
  });

  await t.test('transparent: the product\'s client and the fixture\'s full decode read the same through the proxy as direct', { timeout: SUBTEST_MS }, async () => {
    const [mine, theirs] = await Promise.all([productReading(direct), productReading(via)]);
    assert.equal(mine.sandboxes.length, 2, 'precondition: two real pods');
    assert.equal(mine.containers.length, 2, 'precondition: two real containers');
    assert.deepEqual(theirs, mine);
    const pod = mine.sandboxes[0] as PodSandbox;
    const ctr = mine.containers[0] as Container;
    assert.deepEqual(await via.podSandboxStatus(pod.id, { deadlineMs: CALL_MS }), await direct.podSandboxStatus(pod.id, { deadlineMs: CALL_MS }));
    assert.deepEqual(await via.containerStatus(ctr.id, { deadlineMs: CALL_MS }), await direct.containerStatus(ctr.id, { deadlineMs: CALL_MS }));

    assert.deepEqual(await fixtureVia.version(), await cd.cri.version());
    assert.deepEqual(await fixtureVia.status(), await cd.cri.status());
    assert.deepEqual(byId(await fixtureVia.listPods()), byId(await cd.cri.listPods()));
    assert.deepEqual(byId(await fixtureVia.listContainers()), byId(await cd.cri.listContainers()));
    const images = byId(await cd.cri.listImages());
    assert.ok(images.some((i) => i.repoTags.includes(cd.image)), `precondition: the test image is listed: ${JSON.stringify(images)}`);
    assert.deepEqual(byId(await fixtureVia.listImages()), images, 'ImageService ListImages');

    // containerd's own error status, through unchanged.
    const missing = 'f'.repeat(64);
    const theirsErr = await fixtureError(fixtureVia.containerStatus(missing));
    const mineErr = await fixtureError(cd.cri.containerStatus(missing));
    assert.equal(mineErr.code, 'NOT_FOUND', `precondition: containerd answers NOT_FOUND: ${mineErr.message}`);
    assert.deepEqual([theirsErr.code, theirsErr.message], [mineErr.code, mineErr.message]);
  });

  await t.test('transparent: a pod and its container run, stop and go through the proxy, and containerd has them', { timeout: SUBTEST_MS }, async () => {
    const pod = await fixtureVia.runPod('through-proxy', { namespace: PROXY_NAME });
    const ctr = await fixtureVia.createContainer(pod, 'app');
    await fixtureVia.startContainer(ctr);
    assert.equal((await cd.cri.containerStatus(ctr)).state, 'CONTAINER_RUNNING', 'containerd runs the container made through the proxy');
    assert.equal((await via.listPodSandbox({ deadlineMs: CALL_MS })).items.filter((p) => p.id === pod).length, 1);
    await fixtureVia.stopContainer(ctr);
    await fixtureVia.removeContainer(ctr);
    await fixtureVia.stopPod(pod);
    await fixtureVia.removePod(pod);
    assert.deepEqual((await cd.cri.listPods()).filter((p) => p.id === pod), [], 'containerd no longer has the pod removed through the proxy');
    const counts = (await proxy.state()).calls.byMethod;
    for (const m of ['RunPodSandbox', 'CreateContainer', 'StartContainer', 'StopContainer', 'RemoveContainer', 'StopPodSandbox', 'RemovePodSandbox']) {
      assert.deepEqual(counts[`/runtime.v1.RuntimeService/${m}`], { forwarded: 1, faulted: 0 }, `${m} went through the proxy once`);
    }
  });

  await t.test('transparent: request metadata, header and trailer metadata, status details and streamed messages pass unchanged', { timeout: SUBTEST_MS }, async (t) => {
    const echoDir = tempDir(t);
    const echo = await startEchoUpstream(t, join(echoDir, 'echo.sock'));
    const echoProxy = await startCriFaultProxy(t, { listen: join(echoDir, 'cri.sock'), upstream: echo.socketPath, control: join(echoDir, 'control.sock'), clock });
    const client = new grpc.Client(echoProxy.endpoint, grpc.credentials.createInsecure());
    t.after(() => client.close());

    const sent = new grpc.Metadata();
    sent.set('x-request-id', 'r-42');
    sent.set('x-token-bin', Buffer.from([0, 1, 2, 255]));
    const deadline = wallMs(clock) + CALL_MS;
    const unary = await echoUnary(client, VERSION_METHOD, Buffer.from('ping'), sent, deadline);
    assert.deepEqual(unary.answer, Buffer.from('gnip'), 'the answer\'s bytes');
    assert.deepEqual(echo.seen.at(-1), { path: VERSION_METHOD, requestId: ['r-42'], tokenBin: [Buffer.from([0, 1, 2, 255])] }, 'the upstream saw the request metadata');
    assert.deepEqual(unary.header.get('x-echo-request-id'), ['r-42'], 'header metadata');
    assert.deepEqual(unary.trailer.get('x-trailer'), ['done'], 'trailer metadata');

    const failed = await echoUnary(client, STATUS_METHOD, Buffer.from('x'), new grpc.Metadata(), deadline);
    assert.equal(failed.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(failed.error?.details, ECHO_STATUS_MESSAGE);
    assert.deepEqual(failed.error?.metadata.get('grpc-status-details-bin'), [ECHO_STATUS_DETAILS], 'the status details, byte for byte');
    assert.deepEqual(failed.error?.metadata.get('x-trailer'), ['failed'], 'trailer metadata with an error');

    const streamed = await echoStream(client, '/runtime.v1.RuntimeService/GetContainerEvents');
    assert.deepEqual(streamed, ['event-0', 'event-1', 'event-2'].map((s) => Buffer.from(s)), 'every streamed message, in order');
    await echoProxy.garble(['/runtime.v1.RuntimeService/GetContainerEvents']);
    const garbled = await echoStream(client, '/runtime.v1.RuntimeService/GetContainerEvents');
    const prefix = Buffer.from([0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert.deepEqual(garbled, ['event-0', 'event-1', 'event-2'].map((s) => Buffer.concat([prefix, Buffer.from(s)])), 'garble prefixes every streamed message');
    assert.equal((await echoProxy.stop()).code, 0);
  });

  await t.test('a Go client with either :authority (the kubelet\'s cri-client, "localhost"; crictl\'s, the socket path) reads the same through the proxy as direct', { timeout: SUBTEST_MS }, async () => {
    const kubeletDirect = await runCriClientProbe(cd.endpoint, 'kubelet');
    const kubeletVia = await runCriClientProbe(proxy.endpoint, 'kubelet');
    const crictlVia = await runCriClientProbe(proxy.endpoint, 'crictl');
    assert.equal(kubeletVia.authority, 'localhost');
    assert.equal(crictlVia.authority, join(dir, 'cri.sock'));
    const pods = byId(await cd.cri.listPods()).map(({ id, name, namespace, uid, attempt, state, createdAt }) => ({ id, name, namespace, uid, attempt, state, createdAt }));
    assert.equal(pods.length, 2, 'precondition: two real pods');
    const expected = sortedProbe(kubeletDirect);
    assert.deepEqual(expected.pods, { value: pods }, 'the probe reads the pods the fixture reads');
    assert.deepEqual(expected.version, { value: await cd.cri.version() });
    assert.deepEqual(sortedProbe(kubeletVia), expected);
    assert.deepEqual(sortedProbe(crictlVia), { ...expected, client: 'crictl', authority: join(dir, 'cri.sock') });
  });

  await t.test('hang on the two lists: they end at the caller\'s deadline while Status and Version answer; clear releases a held relist', { timeout: SUBTEST_MS }, async () => {
    const before = await productReading(direct);
    const set = await proxy.hang(['lists']);
    assert.deepEqual(set.faults.map((f) => [f.selector, f.fault, f.held]), [LIST_CONTAINERS, LIST_PODS].map((m) => [m, 'hang', 0]));

    const err = await criError(via.relist({ deadlineMs: SHORT_MS }));
    assert.equal(err.code, 'deadline_exceeded');
    assert.equal(err.message, `RuntimeService/ListPodSandbox+ListContainers: rpc error: code = DeadlineExceeded desc = deadline of ${SHORT_MS}ms exceeded (socket ${join(dir, 'cri.sock')})`);
    // A grpc-timeout deadline ends the held call too. Go's gRPC server (the proxy's, as containerd's)
    // resets the stream (RST_STREAM CANCEL) when the deadline it was sent passes, which races
    // grpc-js's own timer for the same instant: the caller reads whichever comes first.
    const fixtureErr = await fixtureError(fixtureVia.listPods({ deadlineMs: SHORT_MS }));
    assert.ok(['DEADLINE_EXCEEDED', 'CANCELLED'].includes(fixtureErr.code), `the caller's deadline ended it: ${fixtureErr.message}`);
    await pollUntil('the proxy lets go of calls whose caller gave up', async () => (await proxy.state()).faults.every((f) => f.held === 0), { timeoutMs: SEEN_BOUND_MS });

    assert.deepEqual(await via.status({ deadlineMs: CALL_MS }), before.status, 'Status answers while the lists hang');
    assert.deepEqual(await via.version({ deadlineMs: CALL_MS }), before.version, 'Version answers while the lists hang');

    const held = via.relist({ deadlineMs: CALL_MS });
    await pollUntil('the relist is held', async () => (await proxy.state()).faults.every((f) => f.held === 1), { timeoutMs: SEEN_BOUND_MS });
    const cleared = await proxy.clear();
    assert.deepEqual(cleared.ended.map((e) => [e.selector, e.fault, e.applied, e.released]).sort(), [
      [LIST_CONTAINERS, 'hang', 2, 1],
      [LIST_PODS, 'hang', 3, 1],
    ], 'applied: each list\'s calls under the hang; released: the held relist\'s call');
    const listing = await held;
    assert.deepEqual([byId(listing.sandboxes), byId(listing.containers)], [before.sandboxes, before.containers], 'the released relist gets the real answer');
    assert.deepEqual(cleared.faults, []);
  });

  await t.test('delay longer than the deadline: deadline_exceeded; a longer deadline gets the answer, no sooner than the delay', { timeout: SUBTEST_MS }, async () => {
    await proxy.delay(['lists'], DELAY_MS);
    const err = await criError(via.relist({ deadlineMs: SHORT_MS }));
    assert.equal(err.code, 'deadline_exceeded');
    assert.equal(err.message, `RuntimeService/ListPodSandbox+ListContainers: rpc error: code = DeadlineExceeded desc = deadline of ${SHORT_MS}ms exceeded (socket ${join(dir, 'cri.sock')})`);
    const began = clock.monotonicMs();
    const listing = await via.relist({ deadlineMs: CALL_MS });
    const took = clock.monotonicMs() - began;
    assert.ok(took >= DELAY_MS, `the answer came after the delay (${Math.round(took)} ms ≥ ${DELAY_MS} ms)`);
    assert.equal(listing.sandboxes.length, 2);
    const cleared = await proxy.clear(['lists']);
    assert.deepEqual(cleared.ended.map((e) => [e.fault, e.applied]), [['delay', 2], ['delay', 2]]);
  });

  await t.test('fail: UNAVAILABLE and UNIMPLEMENTED reach the product as their own faults, never forwarded', { timeout: SUBTEST_MS }, async () => {
    await proxy.fail(['/runtime.v1.RuntimeService/ListContainers'], 'UNAVAILABLE', 'injected: runtime went away');
    const unavailable = await criError(via.relist({ deadlineMs: CALL_MS }));
    assert.equal(unavailable.code, 'unavailable');
    assert.equal(unavailable.message, `RuntimeService/ListContainers: rpc error: code = Unavailable desc = injected: runtime went away (socket ${join(dir, 'cri.sock')})`);
    const fixtureErr = await fixtureError(fixtureVia.listContainers());
    assert.deepEqual([fixtureErr.code, fixtureErr.message], ['UNAVAILABLE', 'ListContainers: injected: runtime went away (UNAVAILABLE)']);

    await proxy.fail([VERSION_METHOD], 12, 'injected: no CRI v1 here');
    const unimplemented = await criError(via.version({ deadlineMs: CALL_MS }));
    assert.equal(unimplemented.code, 'unimplemented');
    assert.equal(unimplemented.message, 'runtime does not implement CRI runtime.v1 (RuntimeService/Version): injected: no CRI v1 here');
    const kubelet = await runCriClientProbe(proxy.endpoint, 'kubelet');
    assert.deepEqual(kubelet.connect, { error: { code: 'UNIMPLEMENTED', message: 'injected: no CRI v1 here' } }, 'the kubelet\'s client refuses a runtime whose Version is UNIMPLEMENTED');

    const state = await proxy.state();
    assert.deepEqual(state.calls.byMethod[VERSION_METHOD]?.faulted, 2, 'both Version calls met the fault');
    const cleared = await proxy.clear();
    assert.deepEqual(cleared.ended.map((e) => [e.selector, e.fault, e.applied]).sort(), [
      ['/runtime.v1.RuntimeService/ListContainers', 'fail', 2],
      [VERSION_METHOD, 'fail', 2],
    ]);
  });

  await t.test('garble: the lean decoder fails with its exact error, the full decode and the kubelet\'s client fail too', { timeout: SUBTEST_MS }, async () => {
    await proxy.garble(['lists', VERSION_METHOD]);
    const pods = await criError(via.listPodSandbox({ deadlineMs: CALL_MS }));
    assert.deepEqual([pods.code, pods.message], ['other', `RuntimeService/ListPodSandbox: answer could not be decoded: ${LEAN_GARBLE_ERROR}`]);
    const containers = await criError(via.listContainers({ deadlineMs: CALL_MS }));
    assert.deepEqual([containers.code, containers.message], ['other', `RuntimeService/ListContainers: answer could not be decoded: ${LEAN_GARBLE_ERROR}`]);
    const relist = await criError(via.relist({ deadlineMs: CALL_MS }));
    assert.match(relist.message, /^RuntimeService\/List(PodSandbox|Containers): answer could not be decoded: invalid wire type 7 at byte 1$/);
    const version = await criError(via.version({ deadlineMs: CALL_MS }));
    assert.equal(version.message, `RuntimeService/Version: answer could not be decoded: ${LEAN_GARBLE_ERROR}`);

    // proto-loader's decoder does not check a message field's wire type: it reads the varint after
    // the tag as the item's length, which runs past the answer.
    const full = await fixtureError(fixtureVia.listPods());
    assert.deepEqual([full.code, full.message], ['INTERNAL', 'ListPodSandbox: Response message parsing error: index out of range (INTERNAL)']);
    const fullContainers = await fixtureError(fixtureVia.listContainers());
    assert.deepEqual([fullContainers.code, fullContainers.message], ['INTERNAL', 'ListContainers: Response message parsing error: index out of range (INTERNAL)']);

    await proxy.clear([VERSION_METHOD]);
    const kubelet = await runCriClientProbe(proxy.endpoint, 'kubelet');
    assert.equal(kubelet.pods?.error?.code, 'INTERNAL', `the kubelet's client cannot decode it either: ${JSON.stringify(kubelet.pods)}`);
    // protobuf-go puts a space or a no-break space after "proto:", by a hash of the binary, so that
    // nobody matches its messages exactly; \s takes either.
    assert.match(kubelet.pods?.error?.message ?? '', /^grpc: failed to unmarshal the received message: proto:\s+cannot parse invalid wire-format data$/);
    assert.equal(kubelet.containers?.error?.code, 'INTERNAL');
    assert.ok(kubelet.version?.value !== undefined, 'Version, no longer garbled, answers');

    await proxy.clear();
    assert.deepEqual(await productReading(via), await productReading(direct), 'clear restores the plain answers');
  });

  await t.test('a fault for one caller: the lists garbled for nodepulse\'s client alone, the kubelet\'s client reads them whole', { timeout: SUBTEST_MS }, async () => {
    const set = await proxy.command({ methods: ['lists'], fault: 'garble', userAgent: AGENT_USER_AGENT });
    assert.deepEqual(set.faults.map((f) => [f.selector, f.fault, f.userAgent]), [
      [LIST_CONTAINERS, 'garble', AGENT_USER_AGENT],
      [LIST_PODS, 'garble', AGENT_USER_AGENT],
    ]);
    const relist = await criError(via.relist({ deadlineMs: CALL_MS }));
    assert.match(relist.message, /^RuntimeService\/List(PodSandbox|Containers): answer could not be decoded: invalid wire type 7 at byte 1$/);
    const kubelet = await runCriClientProbe(proxy.endpoint, 'kubelet');
    assert.equal(kubelet.pods?.error, undefined, `the kubelet's client is not garbled: ${JSON.stringify(kubelet.pods?.error)}`);
    const directPods = (await runCriClientProbe(cd.endpoint, 'kubelet')).pods?.value;
    assert.ok(kubelet.pods?.value !== undefined && directPods !== undefined, 'precondition: both probes listed the pods');
    // containerd lists sandboxes in no fixed order, so the two listings are compared by id.
    assert.deepEqual(byId(kubelet.pods.value), byId(directPods), 'it reads what a direct caller reads');
    const state = await proxy.state();
    assert.equal(state.faults.find((f) => f.selector === LIST_PODS)?.applied, 1, 'only the product\'s ListPodSandbox met the fault, not the kubelet\'s');
    const forKubelet = await proxy.command({ methods: [VERSION_METHOD], fault: 'fail', code: 'UNAVAILABLE', userAgent: KUBELET_USER_AGENT });
    assert.equal(forKubelet.faults.find((f) => f.selector === VERSION_METHOD)?.userAgent, KUBELET_USER_AGENT);
    assert.ok((await via.version({ deadlineMs: CALL_MS })).runtimeName !== '', 'a fault for the kubelet leaves the product\'s Version alone');
    const refused = await proxy.control('POST', '/faults', JSON.stringify({ methods: [], fault: 'clear', userAgent: '' }));
    assert.deepEqual(refused, { status: 400, body: { errors: ['userAgent: "" must not be given with clear (clear ends a selector\'s fault whoever it applies to)'] } });
    const empty = await proxy.control('POST', '/faults', JSON.stringify({ methods: ['lists'], fault: 'hang', userAgent: '' }));
    assert.deepEqual(empty, { status: 400, body: { errors: ['userAgent: "" must be the start of a user-agent, 1 to 256 bytes'] } });
    await proxy.clear();
    assert.deepEqual(await productReading(via), await productReading(direct), 'clear restores the plain answers');
  });

  await t.test('commands: a refused one names every problem and changes nothing; a fault changes only calls that start after it; logs count', { timeout: SUBTEST_MS }, async () => {
    const refused = await proxy.control('POST', '/faults', JSON.stringify({ methods: ['ListPods'], fault: 'explode', delayMs: 5 }));
    assert.deepEqual(refused, {
      status: 400,
      body: {
        errors: [
          'methods[0]: "ListPods" must be a full method name (/package.Service/Method), a service (/package.Service/*), "*" or a set (images, lists, status)',
          'fault: "explode" must be one of hang, delay, fail, garble, clear',
          'delayMs: 5 must be given only with fault delay',
        ],
      },
    });
    assert.deepEqual((await proxy.control('POST', '/faults', JSON.stringify({ methods: ['*'], fault: 'fail' }))).body, { errors: ['code: (missing) must be given with fault fail'] });
    assert.deepEqual((await proxy.control('POST', '/faults', JSON.stringify({ methods: ['*'], fault: 'delay', delayMs: 0 }))).body, { errors: ['delayMs: 0 must be a whole number of milliseconds from 1 to 3600000'] });
    assert.deepEqual((await proxy.control('POST', '/faults', JSON.stringify({ methods: ['*'], fault: 'fail', code: 'OK' }))).body, { errors: ['code: "OK" must be a gRPC status name (CANCELLED to UNAUTHENTICATED) or its number (1 to 16)'] });
    assert.deepEqual((await proxy.control('POST', '/faults', JSON.stringify({ fault: 'hang', extra: 1 }))).body, { errors: ['body: unknown field "extra" must be a JSON command object'] });
    assert.deepEqual((await proxy.state()).faults, [], 'no refused command put a fault in force');

    // A call that began under a delay keeps it; a call that begins after the next command meets that one.
    await proxy.delay([VERSION_METHOD], DELAY_MS);
    const early = via.version({ deadlineMs: CALL_MS });
    await pollUntil('the first Version is under the delay', async () => (await proxy.state()).faults[0]?.applied === 1, { timeoutMs: SEEN_BOUND_MS });
    await proxy.fail([VERSION_METHOD], 'UNAVAILABLE', 'injected: later');
    const late = await criError(via.version({ deadlineMs: CALL_MS }));
    assert.equal(late.code, 'unavailable');
    assert.deepEqual(await early, await direct.version({ deadlineMs: CALL_MS }), 'the earlier call answers as its own fault said');
    await proxy.clear();

    const logs = proxy.logs();
    const commands = logs.filter((l) => l['msg'] === 'Command');
    assert.ok(commands.length >= 10, `one line per accepted command (${commands.length})`);
    assert.equal(logs.filter((l) => l['msg'] === 'Command refused').length, 7, 'one line per refused command: five here, two in the caller subtest');
    const applied = logs.filter((l) => l['msg'] === 'Fault applied' && l['selector'] === LIST_PODS);
    assert.deepEqual(applied.map((l) => l['fault']), ['hang', 'delay', 'garble', 'garble'], 'one line when each fault first applies, not one per call (the second garble is the caller subtest\'s)');
    const ended = logs.filter((l) => l['msg'] === 'Fault ended' && l['selector'] === LIST_PODS);
    assert.deepEqual(ended.map((l) => [l['fault'], l['applied'], l['released'], l['reason']]), [
      ['hang', 3, 1, 'cleared'],
      ['delay', 2, 0, 'cleared'],
      ['garble', 4, 0, 'cleared'],
      ['garble', 1, 0, 'cleared'],
    ], 'one line per fault ended, with its counts: the caller subtest\'s garble met the product\'s call alone');
    assert.ok(logs.every((l) => typeof l['msg'] === 'string' && /^[A-Z]/.test(l['msg'])), 'constant messages, capitalised');
  });

  await t.test('the socket as containerd makes it: mode 0660, root\'s group or the one given', { timeout: SUBTEST_MS }, async (t) => {
    const plain = statSync(join(dir, 'cri.sock'));
    assert.deepEqual([plain.mode & 0o777, plain.uid, plain.gid], [0o660, 0, 0]);
    const gidDir = tempDir(t);
    const grouped = await startCriFaultProxy(t, { listen: join(gidDir, 'cri.sock'), upstream: cd.socketPath, control: join(gidDir, 'control.sock'), listenGid: SOCKET_GID, clock });
    const st = statSync(join(gidDir, 'cri.sock'));
    assert.deepEqual([st.mode & 0o777, st.gid], [0o660, SOCKET_GID]);
    assert.equal((await grouped.stop()).code, 0);
  });

  await t.test('upstream not there: UNAVAILABLE, the code a direct caller gets, in grpc-go\'s words', { timeout: SUBTEST_MS }, async (t) => {
    const goneDir = tempDir(t);
    const missing = join(goneDir, 'no-runtime.sock');
    const orphan = await startCriFaultProxy(t, { listen: join(goneDir, 'cri.sock'), upstream: missing, control: join(goneDir, 'control.sock'), clock });
    const client = createRuntimeClient({ endpoint: orphan.endpoint, clock });
    const directly = createRuntimeClient({ endpoint: `unix://${missing}`, clock });
    t.after(() => {
      client.close();
      directly.close();
    });
    const err = await criError(client.relist({ deadlineMs: CALL_MS }));
    const directErr = await criError(directly.relist({ deadlineMs: CALL_MS }));
    assert.equal(directErr.code, 'unavailable', `precondition: a missing socket is unavailable to a direct caller: ${directErr.message}`);
    assert.equal(err.code, 'unavailable');
    assert.match(err.message, new RegExp(`^RuntimeService/List(PodSandbox|Containers): rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix ${missing}: connect: no such file or directory" \\(socket ${join(goneDir, 'cri.sock')}\\)$`));
    assert.equal((await orphan.stop()).code, 0);
  });

  await t.test('SIGTERM: a held call ends UNAVAILABLE, the proxy exits 0 and removes both sockets', { timeout: SUBTEST_MS }, async (t) => {
    const stopDir = tempDir(t);
    const doomed = await startCriFaultProxy(t, { listen: join(stopDir, 'cri.sock'), upstream: cd.socketPath, control: join(stopDir, 'control.sock'), clock });
    const client = createRuntimeClient({ endpoint: doomed.endpoint, clock });
    t.after(() => client.close());
    await doomed.hang(['status']);
    const held = criError(client.status({ deadlineMs: CALL_MS }));
    await pollUntil('the Status call is held', async () => (await doomed.state()).faults[0]?.held === 1, { timeoutMs: SEEN_BOUND_MS });
    assert.deepEqual(await doomed.stop(), { code: 0, signal: null });
    const err = await held;
    assert.deepEqual([err.code, err.message], ['unavailable', 'RuntimeService/Status: rpc error: code = Unavailable desc = cri-fault-proxy: stopping (socket ' + join(stopDir, 'cri.sock') + ')']);
    assert.equal(existsSync(join(stopDir, 'cri.sock')), false, 'the CRI socket is removed');
    assert.equal(existsSync(join(stopDir, 'control.sock')), false, 'the control socket is removed');
    const last = doomed.logs().slice(-3);
    assert.deepEqual(last.map((l) => l['msg']), ['Proxy stopping', 'Fault ended', 'Proxy stopped']);
    assert.deepEqual([last[1]?.['applied'], last[1]?.['released'], last[1]?.['reason']], [1, 1, 'stopping'], 'the hang ended by the stop, with its counts');
  });

  await t.test('the matrix\'s layout: the proxy at containerd\'s default path in a private mount namespace, containerd moved; the agent\'s probe finds it and goes stale when the lists hang while Status answers', { timeout: SUBTEST_MS }, async (t) => {
    if (!requireMountNamespace(t, ['nsenter'])) return;
    await layoutTest(t, cd);
  });
});

/** The matrix's node layout, with the shipped agent's settings (plus short timings) in the proxy's namespace. */
async function layoutTest(t: TestContext, cd: ContainerdFixture): Promise<void> {
  const before = hostRunSnapshot();
  const clock = new SystemClock();
  const dir = tempDir(t);
  const moved = '/run/containerd-proxy-upstream';
  const defaultPath = '/run/containerd/containerd.sock';
  const proxy = await startCriFaultProxy(t, {
    listen: defaultPath,
    upstream: join(moved, 'containerd.sock'),
    control: join(dir, 'control.sock'),
    launcher: namespaceLauncher({ [moved]: cd.dir }),
    clock,
  });
  const node = 'proxy-layout';
  const world = await startStandIn(t, { nodeName: node });
  const shipped = shippedAgentSettings(node);
  assert.equal(shipped.env['CONTAINER_RUNTIME_ENDPOINT'], undefined, 'precondition: the shipped DaemonSet names no endpoint, so the agent probes');
  const agent = await startAgentProcess(t, {
    launcher: ['nsenter', `--mount=/proc/${proxy.pid}/ns/mnt`],
    env: shipped.env,
    args: [...shipped.args, `--kubeconfig=${world.kubeconfig}`, ...RUNTIME_FAULT_TIMINGS, '--status-period=1s'],
  });

  type Probed = { endpoint: string; state: string; runtime?: { name: string } };
  const { value: healthy } = await pollUntil('the agent relists through the proxy', async () => {
    const s = (await agent.status()) as Awaited<ReturnType<typeof agent.status>> & { criEndpoint: { endpoint: string; probed: Probed[] }; runtimeConditions: Array<{ type: string; status: boolean }> };
    return s.runtime.state === 'Healthy' && s.lease.renewing ? s : undefined;
  }, { timeoutMs: 15_000 });
  assert.equal(healthy.criEndpoint.endpoint, `unix://${defaultPath}`);
  assert.deepEqual(healthy.criEndpoint.probed.map((p) => [p.endpoint, p.state, p.runtime?.name]), [
    [`unix://${defaultPath}`, 'answered', 'containerd'],
    ['unix:///run/crio/crio.sock', 'absent', undefined],
    ['unix:///run/k3s/containerd/containerd.sock', 'absent', undefined],
    ['unix:///var/run/cri-dockerd.sock', 'absent', undefined],
  ], 'the proxy answers Version at containerd\'s path as containerd itself');
  assert.equal(healthy.counts.pods, (await cd.cri.listPods()).length, 'it counts containerd\'s pods');
  const seen = (await proxy.state()).calls.byMethod;
  assert.ok((seen[LIST_PODS]?.forwarded ?? 0) > 0 && (seen[STATUS_METHOD]?.forwarded ?? 0) > 0, `the relists and Status went through the proxy: ${JSON.stringify(seen)}`);

  await proxy.hang(['lists']);
  const statusBefore = (await proxy.state()).calls.byMethod[STATUS_METHOD]?.forwarded ?? 0;
  const { value: stale } = await pollUntil('the agent\'s ledger goes stale and its lease is withheld', async () => {
    const s = (await agent.status()) as Awaited<ReturnType<typeof agent.status>> & { runtimeConditions: Array<{ type: string; status: boolean }> };
    return s.runtime.state === 'Unhealthy' && !s.lease.renewing ? s : undefined;
  }, { timeoutMs: THRESHOLD_MS + 10_000 });
  assert.equal(stale.runtime.lastFault?.code, 'deadline_exceeded', `the hung lists: ${JSON.stringify(stale.runtime.lastFault)}`);
  assert.deepEqual(stale.runtimeConditions.find((c) => c.type === 'RuntimeReady')?.status, true, 'Status still answers RuntimeReady');
  const statusDuring = (await proxy.state()).calls.byMethod[STATUS_METHOD]?.forwarded ?? 0;
  assert.ok(statusDuring > statusBefore, `Status calls went on answering during the hang (${statusBefore} → ${statusDuring})`);
  assert.equal(linesWith(agent, 'Runtime status poll failing').length, 0, 'no Status poll failed');
  assert.equal(metricValue(await agent.metrics(), 'nodepulse_runtime_healthy'), 0);

  const cleared = await proxy.clear();
  assert.ok(cleared.ended.every((e) => e.fault === 'hang' && e.released <= 1), `the held relist's calls went on: ${JSON.stringify(cleared.ended)}`);
  await pollUntil('the agent recovers once the lists answer', async () => {
    const s = await agent.status();
    return s.runtime.state === 'Healthy' && s.lease.renewing;
  }, { timeoutMs: 10_000 });
  assert.equal(await agent.stop(), 0);
  assert.deepEqual(await proxy.stop(), { code: 0, signal: null });
  assert.deepEqual(hostRunSnapshot(), before, 'nothing of the private namespace reached the host\'s /run');
}

// ─── A grpc-js upstream that echoes, for what containerd never sends ───────────────────────

const ECHO_STATUS_MESSAGE = 'echo says no';
/** google.rpc.Status { code: 9 (FAILED_PRECONDITION), message: ECHO_STATUS_MESSAGE }, by hand. */
const ECHO_STATUS_DETAILS = Buffer.concat([Buffer.from([0x08, 9, 0x12, ECHO_STATUS_MESSAGE.length]), Buffer.from(ECHO_STATUS_MESSAGE)]);

interface EchoUpstream {
  readonly socketPath: string;
  readonly seen: Array<{ path: string; requestId: grpc.MetadataValue[]; tokenBin: grpc.MetadataValue[] }>;
}

const raw = { serialize: (b: Buffer): Buffer => b, deserialize: (b: Buffer): Buffer => b };

async function startEchoUpstream(t: Pick<TestContext, 'after'>, socketPath: string): Promise<EchoUpstream> {
  const seen: EchoUpstream['seen'] = [];
  const server = new grpc.Server();
  const unary = (path: string): grpc.MethodDefinition<Buffer, Buffer> => ({
    path, requestStream: false, responseStream: false,
    requestSerialize: raw.serialize, requestDeserialize: raw.deserialize, responseSerialize: raw.serialize, responseDeserialize: raw.deserialize,
  });
  server.addService({
    Version: unary(VERSION_METHOD),
    Status: unary(STATUS_METHOD),
    GetContainerEvents: { ...unary('/runtime.v1.RuntimeService/GetContainerEvents'), responseStream: true },
  }, {
    Version: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      seen.push({ path: VERSION_METHOD, requestId: call.metadata.get('x-request-id'), tokenBin: call.metadata.get('x-token-bin') });
      const header = new grpc.Metadata();
      header.set('x-echo-request-id', call.metadata.get('x-request-id')[0] ?? '');
      call.sendMetadata(header);
      const trailer = new grpc.Metadata();
      trailer.set('x-trailer', 'done');
      callback(null, Buffer.from([...call.request].reverse()), trailer);
    },
    Status: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const metadata = new grpc.Metadata();
      metadata.set('x-trailer', 'failed');
      metadata.set('grpc-status-details-bin', ECHO_STATUS_DETAILS);
      callback({ code: grpc.status.FAILED_PRECONDITION, details: ECHO_STATUS_MESSAGE, metadata });
    },
    GetContainerEvents: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      for (let i = 0; i < 3; i++) call.write(Buffer.from(`event-${i}`));
      call.end();
    },
  });
  await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err === null ? resolve() : reject(err))));
  // forceShutdown, not tryShutdown: grpc-js's graceful close can wait forever on a session whose
  // peer (the stopped proxy) went away at the same moment.
  t.after(() => server.forceShutdown());
  return { socketPath, seen };
}

interface UnaryOutcome {
  readonly answer?: Buffer;
  readonly error?: grpc.ServiceError;
  readonly header: grpc.Metadata;
  readonly trailer: grpc.Metadata;
}

function echoUnary(client: grpc.Client, path: string, request: Buffer, metadata: grpc.Metadata, deadline: number): Promise<UnaryOutcome> {
  return new Promise((resolve) => {
    let header = new grpc.Metadata();
    let trailer = new grpc.Metadata();
    let answer: Buffer | undefined;
    let error: grpc.ServiceError | undefined;
    let pending = 2;
    const done = (): void => {
      if (--pending === 0) resolve({ ...(answer === undefined ? {} : { answer }), ...(error === undefined ? {} : { error }), header, trailer });
    };
    const call = client.makeUnaryRequest(path, raw.serialize, raw.deserialize, request, metadata, { deadline }, (err, value) => {
      if (err !== null) error = err;
      else answer = value;
      done();
    });
    call.on('metadata', (m: grpc.Metadata) => {
      header = m;
    });
    call.on('status', (s: grpc.StatusObject) => {
      trailer = s.metadata;
      done();
    });
  });
}

function echoStream(client: grpc.Client, path: string): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const messages: Buffer[] = [];
    const call = client.makeServerStreamRequest(path, raw.serialize, raw.deserialize, Buffer.alloc(0), new grpc.Metadata(), {});
    call.on('data', (m: Buffer) => messages.push(m));
    call.on('error', reject);
    call.on('end', () => resolve(messages));
  });
}
