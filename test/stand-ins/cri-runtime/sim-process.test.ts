// The simulated CRI runtime as a process of its own (src/stand-ins/cri-runtime/main.ts): its ready line, its
// control endpoint, a clean stop on SIGTERM, and a restart after SIGKILL on the same socket.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test, type TestContext } from 'node:test';
import { SystemClock } from '../../../src/clock/clock.ts';
import { createRuntimeClient } from '../../../src/cri/runtime-client.ts';

const MAIN = join(import.meta.dirname, '../../../src/stand-ins/cri-runtime/main.ts');
const clock = new SystemClock();
const START_TIMEOUT_MS = 10_000;

interface Running {
  child: ChildProcess;
  ready: { socket: string; endpoint: string; control: string | null };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

function spawnSim(t: TestContext, args: string[]): Running & { readyPromise: Promise<Running['ready']> } {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
  const readyPromise = new Promise<Running['ready']>((resolve, reject) => {
    const timer = clock.after(START_TIMEOUT_MS, () => reject(new Error(`no ready line in ${START_TIMEOUT_MS} ms; stderr: ${stderr}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => {
      timer.cancel();
      resolve(JSON.parse(line) as Running['ready']);
    });
    void exited.then(({ code }) => {
      timer.cancel();
      reject(new Error(`exited ${code} before ready; stderr: ${stderr}`));
    });
  });
  return { child, ready: undefined as never, exited, readyPromise };
}

async function startSim(t: TestContext, args: string[]): Promise<Running> {
  const running = spawnSim(t, args);
  return { ...running, ready: await running.readyPromise };
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'np-simp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('simulated runtime process', () => {
  test('prints one ready line, serves its pods, takes faults over its control endpoint and stops cleanly on SIGTERM', async (t) => {
    const socket = join(tempDir(t), 'cri.sock');
    const sim = await startSim(t, ['--socket', socket, '--pods', '3', '--containers-per-pod', '2', '--control', '127.0.0.1:0']);
    assert.equal(sim.ready.socket, socket);
    assert.equal(sim.ready.endpoint, `unix://${socket}`);
    assert.match(sim.ready.control ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);

    const client = createRuntimeClient({ endpoint: sim.ready.endpoint, clock });
    t.after(() => client.close());
    const listing = await client.relist({ deadlineMs: 5000 });
    assert.deepEqual([listing.sandboxes.length, listing.containers.length], [3, 6]);

    const res = await fetch(`${sim.ready.control}/faults`, {
      method: 'POST',
      body: JSON.stringify({ method: 'ListPodSandbox', code: 12, message: 'no v1 here', count: 1 }),
    });
    assert.equal(res.status, 200);
    await assert.rejects(client.relist({ deadlineMs: 5000 }), { code: 'unimplemented' });
    const calls = (await (await fetch(`${sim.ready.control}/calls`)).json()) as { received: Record<string, number> };
    assert.equal(calls.received['ListPodSandbox'], 2);

    sim.child.kill('SIGTERM');
    const { code, signal } = await sim.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
    assert.equal(existsSync(socket), false, 'socket removed on SIGTERM');
  });

  test('after SIGKILL the client sees unavailable, and a new process on the same socket serves again', async (t) => {
    const socket = join(tempDir(t), 'cri.sock');
    const first = await startSim(t, ['--socket', socket, '--pods', '2']);
    const client = createRuntimeClient({ endpoint: socket, clock });
    t.after(() => client.close());
    assert.equal((await client.relist({ deadlineMs: 5000 })).sandboxes.length, 2);

    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok(statSync(socket).isSocket(), 'precondition: SIGKILL left the socket file behind');
    await assert.rejects(client.relist({ deadlineMs: 2000 }), { code: 'unavailable' });

    await startSim(t, ['--socket', socket, '--pods', '4']);
    const deadline = clock.monotonicMs() + 5000;
    for (;;) {
      try {
        assert.equal((await client.relist({ deadlineMs: 1000 })).sandboxes.length, 4);
        break;
      } catch (err) {
        if (clock.monotonicMs() > deadline) throw err;
        await clock.sleep(50);
      }
    }
  });

  test('bad arguments exit 2 with one line per problem', async (t) => {
    const unknown = spawnSim(t, ['--socket', '/tmp/x.sock', '--nope']);
    unknown.readyPromise.catch(() => undefined);
    const refused = await unknown.exited;
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);

    const sim = spawnSim(t, ['--socket', 'relative.sock', '--pods=-3', '--control', '0.0.0.0:80', '--profile', 'docker']);
    sim.readyPromise.catch(() => undefined);
    const { code, stderr } = await sim.exited;
    assert.equal(code, 2);
    assert.deepEqual(stderr.trim().split('\n'), [
      'cri-sim: --socket: "relative.sock" must be an absolute path',
      'cri-sim: --pods: "-3" must be a whole number ≥ 0',
      'cri-sim: --control: "0.0.0.0:80" must be a loopback HOST:PORT, e.g. 127.0.0.1:0',
      'cri-sim: --profile: "docker" must be one of nodepulse-sim, cri-o',
    ]);
  });

  test('--profile cri-o answers Version as CRI-O', async (t) => {
    const socket = join(tempDir(t), 'crio.sock');
    await startSim(t, ['--socket', socket, '--profile', 'cri-o']);
    const client = createRuntimeClient({ endpoint: socket, clock });
    t.after(() => client.close());
    assert.equal((await client.version({ deadlineMs: 5000 })).runtimeName, 'cri-o');
  });
});
