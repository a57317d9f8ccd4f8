// Idle connections must not silence the BUILT agent's HTTP server, nor the built controller's,
// which serves on the same server code (src/http/bounded-server.ts).
//
// An unfriendly pod on the node's network opens connections from one address (127.0.0.2 here),
// sends half a request header on each and never finishes it, and opens a new one whenever one is
// closed. Meanwhile the probes (the kubelet's, Prometheus's) come from another address
// (127.0.0.1) and must be answered:
//
// | unfriendly connections held open | every probe from 127.0.0.1 (/livez, the controller's    |
// |                                  | /healthz)                                              |
// |----------------------------------|--------------------------------------------------------|
// | 80, reopened when closed         | answers 200 within PROBE_DEADLINE_MS (no reset, no     |
// | 500, reopened when closed        | timeout, no other status)                              |
//
// And the server bounds what one address holds: it closes unfriendly connections past its share
// (src/http/connection-guard.ts), so they are reopened, where an unbounded server keeps them all.
//
// The 1 s per-probe deadline is part of the rule (the kubelet's probe has a timeout too), not a
// timing benchmark: what is asserted is the outcome of every probe.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { AGENT_MAIN, startAgentProcess, startStandIn, type AgentProcess } from '../support/agent-process.ts';
import { startControllerProcess } from '../fleet/controller-harness.ts';
import { clock } from '../faults/api-world.ts';

const UNFRIENDLY_ADDRESS = '127.0.0.2';
const PROBE_ADDRESS = '127.0.0.1';
/** Every probe must be answered within this: the rule's own deadline. */
const PROBE_DEADLINE_MS = 1_000;
/** A probe every quarter second: 24 probes in one phase. */
const PROBE_EVERY_MS = 250;
const PHASE_MS = 6_000;
/** The connections settle (fill whatever the server holds) for this long before probing starts. */
const SETTLE_MS = 1_000;
/** Half a request: the header block is never ended, so the request never completes. */
const HALF_HEADER = 'GET /livez HTTP/1.1\r\nHost: agent\r\nUser-Agent: unfriendly\r\n';

interface Unfriendly {
  /** Connections opened so far, reopened ones included. */
  readonly opened: () => number;
  stop(): void;
}

/** Holds `count` half-header connections from UNFRIENDLY_ADDRESS open, reopening each as soon as it is closed. */
function holdHalfHeaders(port: number, count: number): Unfriendly {
  let stopped = false;
  let opened = 0;
  const sockets = new Set<Socket>();
  const open = (): void => {
    if (stopped) return;
    opened++;
    const socket = connect({ host: PROBE_ADDRESS, port, localAddress: UNFRIENDLY_ADDRESS });
    sockets.add(socket);
    socket.on('connect', () => socket.write(HALF_HEADER));
    socket.on('data', () => undefined);
    socket.on('error', () => undefined); // a reset is one way of being closed
    socket.on('close', () => {
      sockets.delete(socket);
      open();
    });
  };
  for (let i = 0; i < count; i++) open();
  return {
    opened: () => opened,
    stop: () => {
      stopped = true;
      for (const s of sockets) s.destroy();
    },
  };
}

/** One GET of `path` from PROBE_ADDRESS on a new connection: 'ok' for a 200 within the deadline, else what happened. */
function probe(port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: PROBE_ADDRESS, port, path, localAddress: PROBE_ADDRESS, agent: false });
    const timer = clock.after(PROBE_DEADLINE_MS, () => {
      settle(`no answer within ${PROBE_DEADLINE_MS} ms`);
      req.destroy();
    });
    let settled = false;
    const settle = (outcome: string): void => {
      if (settled) return;
      settled = true;
      timer.cancel();
      resolve(outcome);
    };
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => settle(res.statusCode === 200 ? 'ok' : `HTTP ${res.statusCode}`));
      res.on('error', (err) => settle(`response failed: ${err.message}`));
    });
    req.on('error', (err: NodeJS.ErrnoException) => settle(`request failed: ${err.code ?? err.message}`));
    req.end();
  });
}

async function probeWhile(url: string, path: string, count: number): Promise<{ outcomes: string[]; opened: number; slowestMs: number }> {
  const port = Number(new URL(url).port);
  const unfriendly = holdHalfHeaders(port, count);
  try {
    await clock.sleep(SETTLE_MS);
    const outcomes: string[] = [];
    let slowestMs = 0;
    for (let at = 0; at < PHASE_MS; at += PROBE_EVERY_MS) {
      const sent = clock.monotonicMs();
      outcomes.push(await probe(port, path));
      slowestMs = Math.max(slowestMs, clock.monotonicMs() - sent);
      await clock.sleep(PROBE_EVERY_MS);
    }
    return { outcomes, opened: unfriendly.opened(), slowestMs };
  } finally {
    unfriendly.stop();
  }
}

function failures(outcomes: readonly string[]): string[] {
  return outcomes.map((o, i) => `probe ${i + 1}: ${o}`).filter((o) => !o.endsWith(': ok'));
}

async function startAgent(t: TestContext): Promise<AgentProcess> {
  const standIn = await startStandIn(t, { nodeName: 'node-conns' });
  const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 1, containersPerPod: 1 });
  t.after(() => sim.close());
  return startAgentProcess(t, { args: ['--node-name', 'node-conns', '--cri-endpoint', sim.endpoint, '--kubeconfig', standIn.kubeconfig] });
}

/** 80 and then 500 unfriendly connections against `url`: every probe of `path` answers 200 within the deadline. */
async function holdsUp(t: TestContext, url: string, path: string): Promise<void> {
  assert.equal(await probe(Number(new URL(url).port), path), 'ok', `precondition: a probe of ${path} with no unfriendly connections answers 200`);
  for (const count of [80, 500]) {
    const { outcomes, opened, slowestMs } = await probeWhile(url, path, count);
    t.diagnostic(
      `${count} unfriendly connections (${opened} opened in all): ${outcomes.filter((o) => o === 'ok').length} of ${outcomes.length} probes of ${path} answered 200 within ${PROBE_DEADLINE_MS} ms (slowest ${Math.round(slowestMs)} ms)`,
    );
    assert.ok(opened >= count, `precondition: ${count} unfriendly connections were opened (${opened})`);
    assert.deepEqual(failures(outcomes), [], `with ${count} unfriendly connections, every probe of ${path} answered 200 within ${PROBE_DEADLINE_MS} ms`);
    assert.ok(opened > count, `the server closed unfriendly connections past its bound for one address, so they were reopened (${opened} opened for ${count} held)`);
  }
}

test('the agent: 80 and then 500 half-header connections from one address: every /livez probe from another answers 200 within 1 s', { timeout: 90_000 }, async (t) => {
  const agent = await startAgent(t);
  const pid = agent.pid;
  await holdsUp(t, agent.url, '/livez');
  assert.equal(agent.running, true, `the agent survived:\n${agent.stderrTail()}`);
  assert.equal(agent.pid, pid);
});

test('the controller: 80 and then 500 half-header connections from one address: every /healthz probe from another answers 200 within 1 s', { timeout: 90_000 }, async (t) => {
  const standIn = await startStandIn(t, { nodeName: 'node-conns' });
  assert.ok(existsSync(AGENT_MAIN), `precondition: ${AGENT_MAIN} is built (npm run build)`);
  const controller = await startControllerProcess(t, {
    main: AGENT_MAIN,
    kubeconfig: standIn.kubeconfig,
    identity: 'controller-conns',
    namespace: 'nodepulse',
    timings: { graceMs: 40_000, monitorPeriodMs: 5_000, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
  });
  const pid = controller.pid;
  await holdsUp(t, controller.url, '/healthz');
  assert.equal(controller.running, true, `the controller survived:\n${controller.stderrTail()}`);
  assert.equal(controller.pid, pid);
});
