// `nodepulse fleet --watch` against the API stand-in, on a manual reader's clock: it prints once
// the informers are synced, prints again only when a verdict changes (by an event, or by time
// alone), and, interrupted, exits with the last verdict's code.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../../src/clock/clock.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { runFleet } from '../../src/cli/fleet-command.ts';
import { agentLease, realisticNode } from './fleet-fixtures.ts';

const real = new SystemClock();
const GRACE_S = 5;
/** Real time given to the informers' HTTP (a list, a watch event) between steps of the manual clock. */
const LET_HTTP_THROUGH_MS = 50;

interface Doc {
  readonly basis: string;
  readonly nodes: ReadonlyArray<{ readonly node: string; readonly verdict: string }>;
}

async function watch(t: TestContext) {
  const server = await startApiServer({ clock: real });
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-fleet-watch-'));
  t.after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, { server: server.url });
  const clock = new ManualClock({ startWallMs: Math.floor(real.wallMicros() / 1000) });
  const put = (o: Record<string, unknown>): void => {
    server.store.put(o as Parameters<typeof server.store.put>[0]);
  };
  put(realisticNode('node-a', 1, { createdMicros: clock.wallMicros() - 86_400_000_000 }));
  const renew = (): void => put(agentLease('node-a', clock.wallMicros()));
  renew();

  const out: string[] = [];
  const err: string[] = [];
  const interrupt = new AbortController();
  const run = runFleet(
    ['--kubeconfig', kubeconfig, '--watch', '-o', 'json', '--grace', `${GRACE_S}s`],
    { stdout: { write: (s) => void out.push(s) }, stderr: { write: (s) => void err.push(s) }, env: {}, clock },
    interrupt.signal,
  );
  return {
    out,
    err,
    /** Moves the reader's clock second by second, renewing the lease every 2 s while `renewing`. */
    seconds: async (n: number, renewing: boolean): Promise<void> => {
      for (let i = 0; i < n; i++) {
        if (renewing && clock.monotonicMs() % 2_000 === 0) renew();
        await real.sleep(LET_HTTP_THROUGH_MS);
        await clock.advance(1_000);
      }
    },
    /** Interrupts the watch (as Ctrl-C does) and returns its exit code. */
    interrupt: async (): Promise<number> => {
      interrupt.abort(new Error('interrupted'));
      return run;
    },
    verdicts: (): string[] => out.map((text) => (JSON.parse(text) as Doc).nodes.map((n) => `${n.node}:${n.verdict}`).join(',')),
    bases: (): string[] => out.map((text) => (JSON.parse(text) as Doc).basis),
  };
}

test('fleet --watch: prints when synced, again only when a verdict changes (by time alone, or by an event), and exits 1 when interrupted while a node is Stale', async (t) => {
  const w = await watch(t);
  await w.seconds(10, true); // renewed throughout: Fresh, printed once
  assert.deepEqual(w.verdicts(), ['node-a:Fresh'], 'one print once synced, none while nothing changed');
  await w.seconds(GRACE_S + 5, false); // silent past the grace: Stale by time alone
  assert.deepEqual(w.verdicts(), ['node-a:Fresh', 'node-a:Stale'], 'one more print when the verdict turned Stale');
  await w.seconds(5, true); // moving again: Fresh, seen through the watch
  await w.seconds(GRACE_S + 5, false);
  const code = await w.interrupt();
  assert.deepEqual(w.err, [], 'nothing on stderr');
  assert.deepEqual(w.verdicts(), ['node-a:Fresh', 'node-a:Stale', 'node-a:Fresh', 'node-a:Stale'], 'exactly one print per change');
  assert.ok(w.bases().every((b) => b === 'reader-clock'), "judged on the reader's clock");
  assert.equal(code, 1, 'interrupted while a judged node is Stale: exit 1');
});

test('fleet --watch: interrupted while every judged node is Fresh, it exits 0', async (t) => {
  const w = await watch(t);
  await w.seconds(5, true);
  const code = await w.interrupt();
  assert.deepEqual(w.verdicts(), ['node-a:Fresh'], 'precondition: the node was seen Fresh');
  assert.equal(code, 0);
});
