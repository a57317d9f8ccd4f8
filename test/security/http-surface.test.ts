// The agent's HTTP surface, probed on the BUILT agent: it answers only its five routes, refuses
// every other method with 405 (naming GET and HEAD in Allow), and caps what a request may carry
// (a body over 1 KiB is 413 and the connection is closed; a header block over 8 KiB is 431).
// Nothing here may crash it or make it read more than the caps.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startSimRuntime } from '../../src/stand-ins/cri-runtime/sim-runtime.ts';
import { ROUTES } from '../../src/http/http-server.ts';
import { startAgentProcess, startStandIn, type AgentProcess } from '../support/agent-process.ts';
import { clock } from '../faults/api-world.ts';

const RAW_TIMEOUT_MS = 5_000;
const OTHER_METHODS = ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'];
const NOT_ROUTES = ['/', '/metrics/', '/status/x', '/healthz/ping', '/debug/pprof/', '/.env', '/%2e%2e/etc/passwd', '/livez%00', '/STATUS', '/metricsx'];

/** Sends raw bytes and resolves with everything the agent answered until it closed (or the timeout). */
function raw(agent: AgentProcess, request: string | Buffer): Promise<string> {
  const url = new URL(agent.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    const timer = clock.after(RAW_TIMEOUT_MS, () => socket.destroy());
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the answer is part of some cases
    socket.on('close', () => {
      timer.cancel();
      resolve(answer);
    });
    socket.write(request);
  });
}

function statusLine(answer: string): string {
  return answer.split('\r\n')[0] ?? '';
}

describe('the HTTP surface: five routes, GET and HEAD only, capped requests', { timeout: 60_000 }, () => {
  test('only the five routes answer; other methods are 405; bodies and headers are capped; the agent survives it all', async (t) => {
    const standIn = await startStandIn(t, { nodeName: 'node-http' });
    const sim = await startSimRuntime({ clock: standIn.clock, socketPath: join(standIn.dir, 'cri.sock'), pods: 1, containersPerPod: 1 });
    t.after(() => sim.close());
    const agent = await startAgentProcess(t, { args: ['--node-name', 'node-http', '--cri-endpoint', sim.endpoint, '--kubeconfig', standIn.kubeconfig] });
    const pid = agent.pid;
    assert.deepEqual([...ROUTES].sort(), ['/healthz', '/livez', '/metrics', '/readyz', '/status']);

    for (const route of ROUTES) {
      const res = await fetch(`${agent.url}${route}`, { signal: AbortSignal.timeout(RAW_TIMEOUT_MS) });
      assert.ok([200, 503].includes(res.status), `GET ${route}: ${res.status}`);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      await res.arrayBuffer();
      const head = await fetch(`${agent.url}${route}`, { method: 'HEAD', signal: AbortSignal.timeout(RAW_TIMEOUT_MS) });
      assert.equal(head.status, res.status, `HEAD ${route}`);
      assert.equal((await head.text()).length, 0, `HEAD ${route} has no body`);
      for (const method of OTHER_METHODS) {
        const other = await fetch(`${agent.url}${route}`, { method, signal: AbortSignal.timeout(RAW_TIMEOUT_MS) });
        assert.equal(other.status, 405, `${method} ${route}`);
        assert.equal(other.headers.get('allow'), 'GET, HEAD', `${method} ${route}: Allow`);
        await other.arrayBuffer();
      }
    }
    // TRACE (which fetch refuses to send) over a raw socket.
    for (const route of ROUTES) {
      const answer = await raw(agent, `TRACE ${route} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.match(statusLine(answer), /^HTTP\/1\.1 405 /, `TRACE ${route}`);
      assert.match(answer, /\r\nallow: GET, HEAD\r\n/i);
    }
    for (const path of NOT_ROUTES) {
      const answer = await raw(agent, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      assert.match(statusLine(answer), /^HTTP\/1\.1 (404|400) /, `GET ${path}: ${statusLine(answer)}`);
    }

    // A body over 1 KiB, declared or streamed: 413, and the connection is closed.
    const declared = await raw(agent, `GET /status HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n${'x'.repeat(2048)}`);
    assert.match(statusLine(declared), /^HTTP\/1\.1 413 /);
    assert.match(declared, /\r\nconnection: close\r\n/i);
    const chunked = await raw(agent, `GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n${'y'.repeat(2048)}\r\n`);
    assert.match(statusLine(chunked), /^HTTP\/1\.1 413 /);
    // A header block over 8 KiB: 431 from Node's parser, before any handler runs.
    const headers = await raw(agent, `GET /status HTTP/1.1\r\nHost: x\r\nX-Fill: ${'h'.repeat(16 * 1024)}\r\n\r\n`);
    assert.match(statusLine(headers), /^HTTP\/1\.1 431 /);
    // Garbage instead of HTTP: 400, and nothing else.
    const garbage = await raw(agent, Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x01, 0x00, 0x00, 0x00, 0x0d, 0x0a, 0x0d, 0x0a]));
    assert.match(statusLine(garbage), /^(HTTP\/1\.1 400 Bad Request|)$/, `a TLS hello gets 400 or a closed socket: ${statusLine(garbage)}`);
    // CONNECT is not a route either: no tunnel is ever opened.
    const tunnel = await raw(agent, 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n');
    assert.doesNotMatch(statusLine(tunnel), /^HTTP\/1\.1 200/);

    assert.equal(agent.running, true, `the agent survived the probes:\n${agent.stderrTail()}`);
    assert.equal(agent.pid, pid);
    assert.equal((await agent.get('/livez')).status, 200);
    assert.deepEqual(agent.logs().filter((l) => l['msg'] === 'HTTP handler failed'), [], 'no probe reached a handler error');
  });
});
