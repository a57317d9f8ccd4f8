// The agent's relist against a real containerd (issue 2, acceptance 3): what a relist sees,
// the lifecycle events of a real container, and the ledger under real faults.
//
// One containerd for the whole file (CI budget); the tests run in order and build on each
// other's state. The agent's client runs on the system clock, so its deadlines are real gRPC
// time; the relister's clock is a ManualClock, so the ledger's ageing is stepped by hand and no
// test waits for a threshold to pass.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { CriError } from '../../src/cri/cri-error.ts';
import { createRuntimeClient } from '../../src/cri/runtime-client.ts';
import { Relister } from '../../src/relist/relister.ts';
import { requireContainerd, startContainerd } from '../fixtures/containerd.ts';

/** Upstream's relist threshold; on the manual clock it costs no real time. */
const THRESHOLD_MS = 180_000;
/** A test-shortened relist deadline (the agent's default is 60 s). */
const SHORT_DEADLINE_MS = 1_000;
/** A deadline no healthy or refused relist comes near, so a hang would show as a failure. */
const GENEROUS_DEADLINE_MS = 10_000;
/** The agent's relist period, kept between relists that model its loop. */
const RELIST_PERIOD_MS = 1_000;

test('relisting a real containerd', async (t) => {
  if (!requireContainerd(t)) return;
  const cd = await startContainerd();
  t.after(() => cd.close());
  const real = new SystemClock();
  const client = createRuntimeClient({ endpoint: cd.endpoint, clock: real });
  t.after(() => client.close());

  await t.test('a relist sees exactly the sandboxes and containers the fixture made, with their states', async () => {
    const ready = await cd.cri.runPod('web', { namespace: 'shop', uid: 'uid-web', attempt: 2 });
    await cd.cri.runContainer(ready, 'app');
    const done = await cd.cri.runContainer(ready, 'init', ['sh', '-c', 'exit 0']);
    await cd.cri.waitForContainerState(done, 'CONTAINER_EXITED');
    const created = await cd.cri.createContainer(ready, 'pending');
    const stopped = await cd.cri.runPod('batch', { namespace: 'jobs', uid: 'uid-batch' });
    await cd.cri.runContainer(stopped, 'worker');
    await cd.cri.stopPod(stopped);

    const listing = await client.relist({ deadlineMs: GENEROUS_DEADLINE_MS });
    const pods = await cd.cri.listPods();
    const containers = await cd.cri.listContainers();
    assert.equal(pods.length, 2, 'precondition: the fixture sees its two pods');
    assert.equal(containers.length, 4, 'precondition: the fixture sees its four containers');

    assert.deepEqual(
      listing.sandboxes.map((s) => [s.id, s.name, s.namespace, s.uid, s.attempt, s.state, s.createdAtNs]).sort(),
      pods.map((p) => [p.id, p.name, p.namespace, p.uid, p.attempt, p.state, BigInt(p.createdAt)]).sort(),
    );
    assert.deepEqual(
      listing.containers.map((c) => [c.id, c.podSandboxId, c.name, c.attempt, c.state, c.createdAtNs]).sort(),
      containers.map((c) => [c.id, c.podSandboxId, c.name, c.attempt, c.state, BigInt(c.createdAt)]).sort(),
    );
    // And the states are the ones the fixture's actions make, not merely the same as its reading.
    const stateOf = new Map([...listing.sandboxes, ...listing.containers].map((x) => [x.id, x.state]));
    assert.equal(stateOf.get(ready), 'SANDBOX_READY');
    assert.equal(stateOf.get(stopped), 'SANDBOX_NOTREADY');
    assert.equal(stateOf.get(done), 'CONTAINER_EXITED');
    assert.equal(stateOf.get(created), 'CONTAINER_CREATED');
    assert.equal(listing.containers.filter((c) => c.state === 'CONTAINER_RUNNING').map((c) => c.name).join(), 'app');
    assert.equal(listing.containers.find((c) => c.name === 'worker')?.state, 'CONTAINER_EXITED');
    assert.ok(listing.bytes > 0);
  });

  const clock = new ManualClock();
  const relister = new Relister({ client, clock, deadlineMs: GENEROUS_DEADLINE_MS, thresholdMs: THRESHOLD_MS });

  await t.test('a container that starts, exits and is removed gives ContainerStarted, ContainerDied, ContainerRemoved', async () => {
    const podId = await cd.cri.runPod('lifecycle');
    assert.equal((await relister.tick())?.result, 'success', 'precondition: the baseline relist answers');

    // Short-lived, but not so short that it could exit before the next relist sees it running.
    const id = await cd.cri.runContainer(podId, 'blink', ['sh', '-c', 'sleep 1; exit 0']);
    const started = await relister.tick();
    assert.equal(started?.result, 'success');
    // Still running after the relist means it was running during it.
    assert.equal((await cd.cri.containerStatus(id)).state, 'CONTAINER_RUNNING', 'precondition: the relist after start saw it running');
    await clock.advance(RELIST_PERIOD_MS);

    await cd.cri.waitForContainerState(id, 'CONTAINER_EXITED');
    assert.equal((await relister.tick())?.result, 'success');
    await clock.advance(RELIST_PERIOD_MS);

    await cd.cri.removeContainer(id);
    assert.equal((await relister.tick())?.result, 'success');

    assert.deepEqual(
      relister.recentEvents().filter((e) => e.id === id).map((e) => [e.type, e.kind, e.podSandboxId, e.name]),
      [
        ['ContainerStarted', 'container', podId, 'blink'],
        ['ContainerDied', 'container', podId, 'blink'],
        ['ContainerRemoved', 'container', podId, 'blink'],
      ],
    );
    assert.equal(relister.ledger.health(clock.monotonicMs()).state, 'Healthy');
  });

  await t.test('SIGSTOP: a relist fails with deadline_exceeded at its deadline, and the ledger then ages out', async () => {
    const hung = new Relister({ client, clock, deadlineMs: SHORT_DEADLINE_MS, thresholdMs: THRESHOLD_MS });
    assert.equal((await hung.tick())?.result, 'success', 'precondition: the runtime answers before the fault');
    const lastSuccessAt = clock.monotonicMs();
    await clock.advance(RELIST_PERIOD_MS);

    await cd.pause();
    try {
      const asked = real.monotonicMs();
      const outcome = await hung.tick();
      const waited = real.monotonicMs() - asked;
      assert.equal(outcome?.result, 'deadline_exceeded');
      assert.equal(outcome?.fault?.code, 'deadline_exceeded');
      assert.ok(waited >= SHORT_DEADLINE_MS - 50, `the relist waited its deadline (${waited} ms)`);
      assert.ok(waited < SHORT_DEADLINE_MS + 2_000, `the relist ended at its deadline, not later (${waited} ms)`);

      // One failed relist inside the threshold leaves the runtime healthy.
      assert.equal(hung.ledger.health(clock.monotonicMs()).state, 'Healthy');
      await clock.advance(lastSuccessAt + THRESHOLD_MS - clock.monotonicMs());
      assert.equal(hung.ledger.health(clock.monotonicMs()).state, 'Healthy', 'at exactly the threshold it is still healthy');
      await clock.advance(1);
      const health = hung.ledger.health(clock.monotonicMs());
      assert.equal(health.state, 'Unhealthy');
      assert.equal(health.state === 'Unhealthy' && health.why, 'failing');
      assert.equal(health.state === 'Unhealthy' && health.lastSuccess.monotonicMs, lastSuccessAt, 'names the last success');
      assert.equal(health.state === 'Unhealthy' && health.lastFault?.code, 'deadline_exceeded');

      // A relist hung in flight vouches for nothing: the ledger ages out while it waits.
      const inFlight = relister.tick();
      await clock.advance(THRESHOLD_MS + 1);
      const silent = relister.ledger.health(clock.monotonicMs());
      assert.equal(silent.state, 'Unhealthy');
      assert.equal(silent.state === 'Unhealthy' && silent.why, 'silent');
      cd.resume();
      assert.equal((await inFlight)?.result, 'success', 'the hung relist completes once containerd resumes');
    } finally {
      if (cd.paused) cd.resume();
    }
  });

  await t.test('SIGKILL: a relist fails with unavailable', async () => {
    await cd.kill();
    const asked = real.monotonicMs();
    const outcome = await relister.tick();
    assert.equal(outcome?.result, 'unavailable');
    assert.ok(real.monotonicMs() - asked < GENEROUS_DEADLINE_MS, 'a refused socket fails fast, not at the deadline');
    await assert.rejects(client.relist({ deadlineMs: GENEROUS_DEADLINE_MS }), (err) => err instanceof CriError && err.code === 'unavailable');
  });

  await t.test('a restarted containerd is healthy again within two relists', async (tt) => {
    await clock.advance(THRESHOLD_MS + 1);
    assert.equal(relister.ledger.health(clock.monotonicMs()).state, 'Unhealthy', 'precondition: the outage aged the ledger out');
    const before = await cd.cri.listContainers().catch(() => undefined);
    assert.equal(before, undefined, 'precondition: containerd is down');

    await cd.restart();
    const results: string[] = [];
    for (let relist = 1; relist <= 2; relist++) {
      if (relist > 1) {
        // The agent's loop waits one period between relists; the client's reconnect backoff
        // (at most 1 s) must fit inside it.
        await real.sleep(RELIST_PERIOD_MS);
        await clock.advance(RELIST_PERIOD_MS);
      }
      const outcome = await relister.tick();
      results.push(outcome?.result ?? 'aborted');
      if (outcome?.result === 'success') break;
    }
    tt.diagnostic(`relists after restart: ${results.join(', ')}`);
    assert.equal(results.at(-1), 'success', `relists after restart: ${results.join(', ')}`);
    assert.equal(relister.ledger.health(clock.monotonicMs()).state, 'Healthy');
  });
});
