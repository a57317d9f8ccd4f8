import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startApiServer } from '../stand-ins/api-server/api-server.ts';
import { SystemClock } from '../clock/clock.ts';
import { ManualClock } from '../clock/manual-clock.ts';
import { KubeApiError } from './kube-api-error.ts';
import { KubeClient } from './kube-client.ts';
import { decodeNodeList, decodeNodeWatchEvent } from './kube-protobuf.ts';
import type { Node } from './kube-types.ts';
import type { ListPage, WatchEvent } from './list-watch.ts';
import { leanAuth, type LeanAuthOptions } from './auth/lean-auth.ts';

/** Real time, only to wait (bounded) for a request to reach the loopback server. */
const REAL_TIME = new SystemClock();

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A loopback server on port 0 that records every request and answers with handler. */
async function server(t: TestContext, handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const srv: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, contentType: req.headers['content-type'], body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => { srv.closeAllConnections(); srv.close(() => resolve()); }));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

/** A server reached directly, with what the test gives it; the clock is the client's. */
function target(server: string, auth: { token?: string; tokenFile?: string } = {}): Omit<LeanAuthOptions, 'clock'> {
  return { server, ...auth, source: 'test' };
}

function client(t: TestContext, tgt: Omit<LeanAuthOptions, 'clock'>, clock = new ManualClock()): KubeClient {
  const c = new KubeClient({ auth: leanAuth({ ...tgt, clock }), clock });
  t.after(() => c.close());
  return c;
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

async function rejection(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeApiError, `expected a KubeApiError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

test('a lease merge patch goes to the real path with its content type and the bearer token', async (t) => {
  const s = await server(t, (_req, res) => json(res, 200, { metadata: { name: 'n1' } }));
  const c = client(t, target(s.url, { token: 'tok' }));
  const lease = await c.patchLease('np', 'n1', { spec: { renewTime: 'x' } });
  assert.deepEqual(lease, { metadata: { name: 'n1' } });
  assert.deepEqual(s.seen, [
    {
      method: 'PATCH',
      url: '/apis/coordination.k8s.io/v1/namespaces/np/leases/n1',
      authorization: 'Bearer tok',
      contentType: 'application/merge-patch+json',
      body: '{"spec":{"renewTime":"x"}}',
    },
  ]);
});

test('each call uses its own path, verb and content type', async (t) => {
  const s = await server(t, (_req, res) => json(res, 200, {}));
  const c = client(t, target(s.url));
  await c.getLease('np', 'n1');
  await c.createLease('np', { metadata: { name: 'n1' } });
  await c.getNode('n1');
  await c.patchNodeStatus('n1', { status: {} });
  await c.createEvent('default', {
    apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: 'e' }, eventTime: 't', reportingController: 'c',
    reportingInstance: 'i', action: 'a', reason: 'r', type: 'Normal', regarding: {},
  });
  await c.replaceLease('np', 'n1', { metadata: { name: 'n1', resourceVersion: '7' } });
  await c.deleteLease('np', 'n1');
  await c.listPods('agents', { labelSelector: 'app=x', limit: '500' });
  await c.patchNode('n1', { spec: { taints: [] } });
  await c.jsonPatchNode('n1', [{ op: 'remove', path: '/spec/taints/0' }]);
  assert.deepEqual(s.seen.map((r) => `${r.method} ${r.url} ${r.contentType ?? '-'} ${r.authorization ?? 'no-auth'}`), [
    'GET /apis/coordination.k8s.io/v1/namespaces/np/leases/n1 - no-auth',
    'POST /apis/coordination.k8s.io/v1/namespaces/np/leases application/json no-auth',
    'GET /api/v1/nodes/n1 - no-auth',
    'PATCH /api/v1/nodes/n1/status application/strategic-merge-patch+json no-auth',
    'POST /apis/events.k8s.io/v1/namespaces/default/events application/json no-auth',
    'PUT /apis/coordination.k8s.io/v1/namespaces/np/leases/n1 application/json no-auth',
    'DELETE /apis/coordination.k8s.io/v1/namespaces/np/leases/n1 - no-auth',
    'GET /api/v1/namespaces/agents/pods?labelSelector=app%3Dx&limit=500 - no-auth',
    'PATCH /api/v1/nodes/n1 application/merge-patch+json no-auth',
    'PATCH /api/v1/nodes/n1 application/json-patch+json no-auth',
  ]);
  assert.deepEqual(JSON.parse(s.seen[1]?.body ?? ''), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1' } });
  assert.deepEqual(JSON.parse(s.seen[5]?.body ?? ''), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1', resourceVersion: '7' } });
  assert.deepEqual(JSON.parse(s.seen[9]?.body ?? ''), [{ op: 'remove', path: '/spec/taints/0' }]);
});

test('a token file is re-read after 60 s, and at once after a 401', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'token');
  writeFileSync(file, 'one\n');
  let valid = 'one';
  const s = await server(t, (req, res) => {
    if (req.headers.authorization === `Bearer ${valid}`) json(res, 200, {});
    else json(res, 401, { kind: 'Status', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });
  const clock = new ManualClock();
  const c = client(t, target(s.url, { tokenFile: file }), clock);
  await c.getNode('n');
  writeFileSync(file, 'two\n');
  await clock.advance(59_999);
  await c.getNode('n'); // still "one", which the server still accepts
  await clock.advance(1);
  valid = 'two';
  await c.getNode('n'); // 60 s: re-read, "two"
  // Rotate again; the server accepts only the new token at once.
  writeFileSync(file, 'three\n');
  valid = 'three';
  const err = await rejection(c.getNode('n'));
  assert.equal(err.code, 'unauthorized');
  await c.getNode('n'); // the 401 re-read the file: "three"
  assert.deepEqual(s.seen.map((r) => r.authorization), ['Bearer one', 'Bearer one', 'Bearer two', 'Bearer two', 'Bearer three']);
});

test('no error message or property holds the bearer token', async (t) => {
  const s = await server(t, (_req, res) => json(res, 403, { kind: 'Status', message: 'forbidden', reason: 'Forbidden', code: 403 }));
  const c = client(t, target(s.url, { token: 'very-secret-token' }));
  const err = await rejection(c.getNode('n'));
  assert.equal(err.code, 'forbidden');
  assert.doesNotMatch(JSON.stringify({ ...err, message: err.message, stack: err.stack }), /very-secret-token/);
  assert.doesNotMatch(JSON.stringify(c), /very-secret-token/);
});

test('a request with no answer times out on the injected clock as unavailable', async (t) => {
  const s = await server(t, () => { /* never answers */ });
  const clock = new ManualClock();
  const c = client(t, target(s.url), clock);
  const pending = rejection(c.getNode('n'));
  for (let i = 0; i < 100 && s.seen.length === 0; i++) await REAL_TIME.sleep(10);
  assert.equal(s.seen.length, 1, 'precondition: the request reached the server');
  await clock.advance(9_999);
  await clock.advance(1);
  const err = await pending;
  assert.equal(err.code, 'unavailable');
  assert.equal(err.message, 'GET nodes n: no answer within 10000ms');
});

test("the caller's signal aborts a request as aborted, not as unavailable", async (t) => {
  const s = await server(t, () => { /* never answers */ });
  const c = client(t, target(s.url));
  const controller = new AbortController();
  const pending = rejection(c.getNode('n', { signal: controller.signal }));
  for (let i = 0; i < 100 && s.seen.length === 0; i++) await REAL_TIME.sleep(10);
  controller.abort();
  assert.equal((await pending).code, 'aborted');
});

test('a refused connection is unavailable', async (t) => {
  const s = await server(t, (_req, res) => json(res, 200, {}));
  const port = new URL(s.url).port;
  const probe = createServer();
  // A port that was free a moment ago: bind and close to get one nobody listens on.
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const freePort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  assert.notEqual(String(freePort), port);
  const c = client(t, target(`http://127.0.0.1:${freePort}`));
  const err = await rejection(c.getNode('n'));
  assert.equal(err.code, 'unavailable');
  assert.match(err.message, /^GET nodes n: ECONNREFUSED/);
});

test('a 2xx that is not a JSON object is bad_response, naming the status', async (t) => {
  const s = await server(t, (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<html>login</html>'); });
  const err = await rejection(client(t, target(s.url)).getNode('n'));
  assert.equal(err.code, 'bad_response');
  assert.equal(err.message, 'GET nodes n: HTTP 200 with a body that is not a JSON object: "<html>login</html>"');
});

test('a body past the size bound is refused', async (t) => {
  const s = await server(t, (_req, res) => json(res, 200, { pad: 'x'.repeat(2048) }));
  const clock = new ManualClock();
  const c = new KubeClient({ auth: leanAuth({ ...target(s.url), clock }), clock, maxResponseBytes: 1024 });
  t.after(() => c.close());
  const err = await rejection(c.getNode('n'));
  assert.equal(err.code, 'bad_response');
  assert.match(err.message, /a body larger than 1024 bytes/);
});

test('a 429 keeps Retry-After', async (t) => {
  const s = await server(t, (_req, res) => json(res, 429, { kind: 'Status', message: 'slow down', reason: 'TooManyRequests', code: 429 }, { 'retry-after': '2' }));
  const err = await rejection(client(t, target(s.url)).patchLease('np', 'n', {}));
  assert.equal(err.code, 'too_many_requests');
  assert.equal(err.retryAfterMs, 2_000);
  assert.equal(err.message, 'PATCH leases np/n: HTTP 429 TooManyRequests: slow down');
});

test('on the API stand-in, a rotated token file is picked up within 60 s, while the old token still works', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock();
  // During a projected-token rotation both tokens are valid; the users tell them apart.
  const api = await startApiServer({ clock, tokens: { 'token-old': 'agent-old', 'token-new': 'agent-new' } });
  t.after(() => api.close());
  writeFileSync(join(dir, 'token'), 'token-old\n');
  const c = client(t, target(api.url, { tokenFile: join(dir, 'token') }), clock);
  api.store.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } });
  await c.getNode('n');
  writeFileSync(join(dir, 'token'), 'token-new\n');
  await clock.advance(30_000);
  await c.getNode('n');
  await clock.advance(30_000);
  await c.getNode('n');
  assert.deepEqual(api.requests.all().map((r) => [r.atMs, r.user, r.status]), [
    [0, 'agent-old', 200],
    [30_000, 'agent-old', 200],
    [60_000, 'agent-new', 200],
  ]);
});

// ---- watches go through the same core ------------------------------------------------------

const WATCH = { path: '/api/v1/nodes', query: { resourceVersion: '5' }, idleMs: 1_000, what: 'WATCH /api/v1/nodes' };

test('a watch streams one event per line, even split across chunks, and resolves when the server ends it', async (t) => {
  const s = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODI');
    res.end('FIED","object":{"metadata":{"name":"b"}}}\n');
  });
  const c = client(t, target(s.url, { token: 'tok' }));
  const events: unknown[] = [];
  await c.watch({ ...WATCH, signal: new AbortController().signal }, (e) => events.push(e));
  assert.deepEqual(events, [
    { type: 'ADDED', object: { metadata: { name: 'a' } } },
    { type: 'MODIFIED', object: { metadata: { name: 'b' } } },
  ]);
  assert.deepEqual(s.seen.map((r) => [r.url, r.authorization]), [['/api/v1/nodes?resourceVersion=5&watch=true', 'Bearer tok']]);
});

test('a watch answered 401 re-reads the token file before it fails, as a request does', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'token');
  writeFileSync(file, 'old\n');
  const s = await server(t, (req, res) => {
    if (req.headers.authorization === 'Bearer new') json(res, 200, { kind: 'NodeList', items: [], metadata: {} });
    else json(res, 401, { kind: 'Status', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });
  const c = client(t, target(s.url, { tokenFile: file }));
  await rejection(c.getNode('n')); // reads "old" for the first time
  writeFileSync(file, 'new\n');
  const err = await rejection(c.watch({ ...WATCH, signal: new AbortController().signal }, () => undefined));
  assert.equal(err.code, 'unauthorized');
  assert.equal(err.status, 401);
  await c.request({ method: 'GET', path: '/api/v1/nodes', what: 'LIST nodes' });
  assert.deepEqual(s.seen.map((r) => r.authorization), ['Bearer old', 'Bearer old', 'Bearer new']);
});

test('a watch with nothing for its idle window fails as unavailable; every chunk restarts the window', async (t) => {
  let stream: ServerResponse | undefined;
  const s = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('\n');
    stream = res;
  });
  const clock = new ManualClock();
  const c = client(t, target(s.url), clock);
  const events: unknown[] = [];
  let settled = false;
  const pending = rejection(c.watch({ ...WATCH, signal: new AbortController().signal }, (e) => events.push(e))).finally(() => {
    settled = true;
  });
  for (let i = 0; i < 100 && stream === undefined; i++) await REAL_TIME.sleep(10);
  assert.ok(stream !== undefined, 'precondition: the watch reached the server');
  await REAL_TIME.sleep(20); // the first chunk arrives
  await clock.advance(999);
  stream.write('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n');
  for (let i = 0; i < 100 && events.length === 0; i++) await REAL_TIME.sleep(10);
  assert.equal(events.length, 1, 'precondition: the bookmark arrived');
  await clock.advance(999); // 1,998 ms since the watch began, 999 since the last chunk
  await REAL_TIME.sleep(20);
  assert.equal(settled, false, 'the watch is still open 999 ms after its last chunk');
  await clock.advance(1);
  const err = await pending;
  assert.equal(err.code, 'unavailable');
  assert.equal(err.message, 'WATCH /api/v1/nodes: no answer within 1000ms');
});

// ---- Nodes in protobuf (kube-protobuf.ts), on a real server's captured answers --------------

const PROTOBUF_FIXTURES = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'kube-protobuf');
const captured = (name: string): Buffer => readFileSync(join(PROTOBUF_FIXTURES, name));
const NODES_LIST = { method: 'GET' as const, path: '/api/v1/nodes', what: 'LIST /api/v1/nodes' };

test('a request given a protobuf reader asks for protobuf first, reads a protobuf answer with it, and a JSON answer as JSON', async (t) => {
  const accepts: Array<string | undefined> = [];
  let answerJson = false;
  const s = await server(t, (req, res) => {
    accepts.push(req.headers.accept);
    if (answerJson) return json(res, 200, { items: [{ metadata: { name: 'from-json' } }], metadata: { resourceVersion: '9' } });
    res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf' });
    res.end(captured('nodes.pb'));
  });
  const c = client(t, target(s.url));
  const fromProtobuf = await c.request<ListPage<Node>>({ ...NODES_LIST, protobuf: decodeNodeList });
  assert.deepEqual(fromProtobuf.items.map((n) => n.metadata.name), ['np-node-1', 'np-node-2', 'np-node-3']);
  answerJson = true;
  const fromJson = await c.request<ListPage<Node>>({ ...NODES_LIST, protobuf: decodeNodeList });
  assert.deepEqual(fromJson.items.map((n) => n.metadata.name), ['from-json']);
  await c.request<ListPage<Node>>(NODES_LIST);
  assert.deepEqual(accepts, ['application/vnd.kubernetes.protobuf, application/json', 'application/vnd.kubernetes.protobuf, application/json', 'application/json']);
});

test('a protobuf watch is read frame by frame: a real server\'s captured stream, written in pieces', async (t) => {
  const stream = captured('watch-initial.pb');
  const s = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf;stream=watch' });
    // Written cut inside the first length prefix, inside a frame and at a frame's end; the socket
    // may join the pieces, so the cuts themselves are held in response-reader.test.ts.
    for (const [from, to] of [[0, 2], [2, 1000], [1000, 3274], [3274, stream.length]] as const) res.write(stream.subarray(from, to));
    res.end();
  });
  const c = client(t, target(s.url));
  const events: Array<WatchEvent<Node>> = [];
  await c.watch({ ...WATCH, signal: new AbortController().signal, protobuf: decodeNodeWatchEvent }, (e) => events.push(e as WatchEvent<Node>));
  assert.deepEqual(events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`), ['ADDED np-node-1', 'ADDED np-node-2', 'ADDED np-node-3', 'BOOKMARK ', 'MODIFIED np-node-2', 'MODIFIED np-node-3']);
});

test('an error answer in protobuf is the same KubeApiError as its JSON; an unreadable answer or a watch cut inside a frame is bad_response', async (t) => {
  let answer: 'status' | 'garbage' | 'cut' = 'status';
  const s = await server(t, (_req, res) => {
    if (answer === 'status') {
      res.writeHead(404, { 'content-type': 'application/vnd.kubernetes.protobuf' });
      res.end(captured('status404.pb'));
    } else if (answer === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf' });
      res.end(Buffer.from('{"items":[]}'));
    } else {
      res.writeHead(200, { 'content-type': 'application/vnd.kubernetes.protobuf;stream=watch' });
      res.end(captured('watch-initial.pb').subarray(0, 3000));
    }
  });
  const c = client(t, target(s.url));
  await assert.rejects(c.request({ ...NODES_LIST, protobuf: decodeNodeList }), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'not_found' && err.status === 404 && err.message.includes('nodes "no-such-node" not found'));
  answer = 'garbage';
  await assert.rejects(c.request({ ...NODES_LIST, protobuf: decodeNodeList }), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'bad_response' && /protobuf body that cannot be read: not a Kubernetes protobuf object/.test(err.message));
  answer = 'cut';
  await assert.rejects(c.watch({ ...WATCH, signal: new AbortController().signal, protobuf: decodeNodeWatchEvent }, () => undefined), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'bad_response' && /the watch ended inside an event \(3000 bytes of it\)/.test(err.message));
});
