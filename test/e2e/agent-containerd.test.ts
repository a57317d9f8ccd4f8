// End to end (issue 3, acceptance 13): the built `nodepulse agent`, as a process, against a real
// containerd and the API stand-in, with
//   --relist-threshold 5s --relist-deadline 2s --lease-duration 4s --renew-interval 1s
// (and --api-timeout 2s, which the config requires to be no longer than the lease duration):
//   - the lease appears;
//   - after SIGSTOP to containerd, its renewTime stops moving between 4 s and 7 s later;
//   - after SIGCONT it moves again within 3 s.
//
// "Stops moving at" is when the renewal that never came was due: the last advance plus one
// renew interval (+ 4 % jitter), as a reader watching the lease sees it stop. SIGSTOP is sent
// just after a successful relist (seen in /status), so the runtime ages out 5 s after it and the
// stop lands at 5–6 s, inside the acceptance window. The lease is watched on the stand-in's
// object every 50 ms.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { requireContainerd, startContainerd } from '../fixtures/containerd.ts';
import { microTimeToMicros, pollUntil, startAgentProcess, startStandIn } from '../support/agent-process.ts';

const NODE = 'e2e-containerd';
const RENEW_INTERVAL_MS = 1_000;
/** Acceptance 13's window for the stop, from SIGSTOP. */
const STOP_AFTER_MIN_MS = 4_000;
const STOP_AFTER_MAX_MS = 7_000;
/** Acceptance 13: the lease moves again within 3 s of SIGCONT. */
const MOVES_AGAIN_WITHIN_MS = 3_000;
/** Watch the paused runtime this long, past the window, to see no late advance. */
const PAUSED_FOR_MS = STOP_AFTER_MAX_MS + 1_000;
const WATCH_INTERVAL_MS = 50;
const FIRST_RENEWAL_BOUND_MS = 15_000;

test('the built agent against a real containerd: the lease appears, stops 4–7 s after SIGSTOP, moves within 3 s of SIGCONT', async (t) => {
  if (!requireContainerd(t)) return;
  const clock = new SystemClock();
  const world = await startStandIn(t, { nodeName: NODE });
  const cd = await startContainerd();
  t.after(() => cd.close());
  const pod = await cd.cri.runPod('e2e', { namespace: 'e2e', uid: 'uid-e2e' });
  await cd.cri.runContainer(pod, 'app');
  const agent = await startAgentProcess(t, {
    args: [
      `--node-name=${NODE}`, `--cri-endpoint=${cd.endpoint}`, `--kubeconfig=${world.kubeconfig}`,
      '--relist-threshold', '5s', '--relist-deadline', '2s', '--lease-duration', '4s', '--renew-interval', '1s', '--api-timeout', '2s',
    ],
  });

  // The lease, as a reader sees it: each advance of renewTime, at this process's monotonic ms.
  const advances: Array<{ atMs: number; micros: number }> = [];
  const watching = new AbortController();
  const watcher = (async () => {
    while (!watching.signal.aborted) {
      const rt = world.lease()?.spec.renewTime;
      if (rt !== undefined) {
        const micros = microTimeToMicros(rt);
        if (advances.length === 0 || micros > (advances.at(-1)?.micros ?? 0)) advances.push({ atMs: clock.monotonicMs(), micros });
      }
      await clock.sleep(WATCH_INTERVAL_MS, watching.signal).catch(() => undefined);
    }
  })();
  t.after(async () => {
    watching.abort();
    await watcher;
  });

  await pollUntil('the lease appears', () => advances.length >= 2, { timeoutMs: FIRST_RENEWAL_BOUND_MS });
  const lease = world.lease();
  assert.equal(lease?.spec.holderIdentity, NODE);
  assert.match(lease?.spec.renewTime ?? '', /\.\d{6}Z$/, 'renewTime is a MicroTime with 6 fractional digits');
  assert.equal((await agent.status()).counts.pods, 1, 'the agent relists the real pod');

  // SIGSTOP just after a successful relist.
  const lastSuccess = (await agent.status()).runtime.lastSuccessBegan;
  await pollUntil('a fresh successful relist', async () => (await agent.status()).runtime.lastSuccessBegan !== lastSuccess, { timeoutMs: 5_000, intervalMs: 10 });
  const stoppedAtMs = clock.monotonicMs();
  cd.pause();
  await clock.sleep(PAUSED_FOR_MS);
  const lastBeforeCont = advances.filter((a) => a.atMs < clock.monotonicMs()).at(-1);
  assert.ok(lastBeforeCont !== undefined);
  const stopMovingAfterMs = lastBeforeCont.atMs + RENEW_INTERVAL_MS * 1.04 - stoppedAtMs;
  const contAtMs = clock.monotonicMs();
  cd.resume();
  const { value: next } = await pollUntil('the lease moves again', () => advances.find((a) => a.atMs > contAtMs), { timeoutMs: MOVES_AGAIN_WITHIN_MS + 5_000, intervalMs: 20 });
  const movedAfterMs = next.atMs - contAtMs;
  t.diagnostic(`last advance ${Math.round(lastBeforeCont.atMs - stoppedAtMs)} ms after SIGSTOP (stopped moving at ${Math.round(stopMovingAfterMs)} ms); moved again ${Math.round(movedAfterMs)} ms after SIGCONT`);

  assert.ok(
    stopMovingAfterMs >= STOP_AFTER_MIN_MS && stopMovingAfterMs <= STOP_AFTER_MAX_MS,
    `renewTime stops moving between 4 s and 7 s after SIGSTOP (at ${Math.round(stopMovingAfterMs)} ms)`,
  );
  assert.ok(movedAfterMs <= MOVES_AGAIN_WITHIN_MS, `renewTime moves again within 3 s of SIGCONT (took ${Math.round(movedAfterMs)} ms)`);
  assert.ok(agent.running, `the agent never exits; stderr: ${agent.stderrTail()}`);
});
