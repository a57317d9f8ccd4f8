// The unary transport's own rules, against a node:http2 server in the test that sends exactly
// the frames each case needs. The runtime client's behaviour on a real gRPC server is in
// runtime-client.test.ts; this file covers what a well-behaved server never sends.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { GRPC_STATUS } from './grpc-fault.ts';
import {
  decodeGrpcMessage,
  encodeFrame,
  GrpcStatusError,
  isGrpcContentType,
  RECONNECT_GAP_MS,
  UnaryTransport,
  type UnaryTransportOptions,
} from './h2-unary.ts';

const PATH = '/runtime.v1.RuntimeService/Version';
const GRPC = { ':status': 200, 'content-type': 'application/grpc' } as const;
const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM, NGHTTP2_INTERNAL_ERROR, NGHTTP2_ENHANCE_YOUR_CALM } = http2.constants;

type Handler = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;

interface Server {
  readonly socketPath: string;
  /** Sessions the server has seen. */
  sessions: http2.ServerHttp2Session[];
  /** Each request's headers and body, and how its stream ended (rstCode). */
  requests: { headers: http2.IncomingHttpHeaders; body: Buffer; closed: Promise<number> }[];
  handler: Handler;
  listen(): Promise<void>;
}

function tempSocket(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'np-h2-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'cri.sock');
}

/** A node:http2 server on a unix socket; `handler` answers each request once its body is in. */
function h2Server(t: TestContext, socketPath = tempSocket(t)): Server {
  const server = http2.createServer();
  const state: Server = {
    socketPath,
    sessions: [],
    requests: [],
    handler: () => undefined,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => resolve());
      }),
  };
  server.on('session', (session) => {
    state.sessions.push(session);
    session.on('error', () => undefined);
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const closed = new Promise<number>((resolve) => stream.once('close', () => resolve(stream.rstCode ?? -1)));
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => {
      state.requests.push({ headers, body: Buffer.concat(chunks), closed });
      state.handler(stream, headers);
    });
  });
  t.after(async () => {
    for (const session of state.sessions) session.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return state;
}

function transport(t: TestContext, socketPath: string, options: Partial<UnaryTransportOptions> = {}): UnaryTransport {
  const made = new UnaryTransport({
    socketPath,
    maxMessageBytes: 1024,
    receiveWindowBytes: 4 * 1024 * 1024,
    userAgent: 'nodepulse/test',
    clock: new ManualClock(),
    ...options,
  });
  t.after(() => made.close());
  return made;
}

interface Outcome {
  readonly err: GrpcStatusError | null;
  readonly answer: Buffer | undefined;
}

function call(client: UnaryTransport, message: Buffer = Buffer.alloc(0)): Promise<Outcome> {
  return new Promise((resolve) => {
    client.call(PATH, encodeFrame(message), (err, answer) => resolve({ err, answer }));
  });
}

async function failure(client: UnaryTransport): Promise<GrpcStatusError> {
  const { err, answer } = await call(client);
  assert.equal(answer, undefined);
  assert.ok(err instanceof GrpcStatusError, 'expected a status, got an answer');
  return err;
}

function prefix(length: number, flag = 0): Buffer {
  const bytes = Buffer.alloc(5);
  bytes[0] = flag;
  bytes.writeUInt32BE(length, 1);
  return bytes;
}

/** A normal answer: headers, the framed message, trailers with status OK. */
function answerWith(message: Buffer): Handler {
  return (stream) => {
    stream.respond(GRPC, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(encodeFrame(message));
  };
}

describe('unary gRPC over node:http2', () => {
  test('a request is POST with the gRPC headers and one length-prefixed message; the answer is its message', async (t) => {
    const server = h2Server(t);
    await server.listen();
    server.handler = answerWith(Buffer.from('the answer'));
    const client = transport(t, server.socketPath);
    const { err, answer } = await call(client, Buffer.from([0x0a, 0x03, 0x61, 0x62, 0x63]));
    assert.equal(err, null);
    assert.deepEqual(answer, Buffer.from('the answer'));
    const [request] = server.requests;
    assert.ok(request !== undefined);
    assert.equal(request.headers[':method'], 'POST');
    assert.equal(request.headers[':path'], PATH);
    assert.equal(request.headers['content-type'], 'application/grpc');
    assert.equal(request.headers['te'], 'trailers');
    assert.equal(request.headers['user-agent'], 'nodepulse/test');
    assert.equal(request.headers['grpc-timeout'], undefined, 'deadlines are the caller\'s, on its clock');
    assert.equal(request.headers['grpc-encoding'], undefined);
    assert.deepEqual(request.body, Buffer.from([0, 0, 0, 0, 5, 0x0a, 0x03, 0x61, 0x62, 0x63]));
    assert.deepEqual(encodeFrame(Buffer.alloc(0)), Buffer.from([0, 0, 0, 0, 0]));
  });

  test('an answer split anywhere, prefix included, is received whole; an empty message is an answer', async (t) => {
    const server = h2Server(t);
    await server.listen();
    const message = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 251));
    server.handler = (stream) => {
      stream.respond(GRPC, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      const frame = encodeFrame(message);
      // One byte per DATA frame for the prefix and the start, then the rest in uneven pieces.
      for (let at = 0; at < frame.length; ) {
        const size = at < 8 ? 1 : 97;
        stream.write(frame.subarray(at, at + size));
        at += size;
      }
      stream.end();
    };
    const client = transport(t, server.socketPath);
    const split = await call(client);
    assert.equal(split.err, null);
    assert.deepEqual(split.answer, message);

    server.handler = answerWith(Buffer.alloc(0));
    const empty = await call(client);
    assert.equal(empty.err, null);
    assert.deepEqual(empty.answer, Buffer.alloc(0));
    assert.equal(server.sessions.length, 1, 'both calls went over one connection');
  });

  test('a Trailers-Only answer is the status in its headers, message percent-decoded', async (t) => {
    const server = h2Server(t);
    await server.listen();
    server.handler = (stream) =>
      stream.respond({ ...GRPC, 'grpc-status': '5', 'grpc-message': 'container %22c1%22 not found' }, { endStream: true });
    const err = await failure(transport(t, server.socketPath));
    assert.equal(err.code, GRPC_STATUS.NOT_FOUND);
    assert.equal(err.details, 'container "c1" not found');
    assert.equal(err.message, '5 NotFound: container "c1" not found');
  });

  test('grpc-message is percent-decoded UTF-8, and kept as received when it does not decode', async (t) => {
    const server = h2Server(t);
    await server.listen();
    let message = '';
    server.handler = (stream) => {
      stream.respond(GRPC, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '13', 'grpc-message': message }));
      stream.end();
    };
    const client = transport(t, server.socketPath);
    message = 'caf%C3%A9: 100%25 broken%0Aline 2';
    assert.equal((await failure(client)).details, 'café: 100% broken\nline 2');
    message = 'bad %E0%A4%A sequence';
    assert.equal((await failure(client)).details, 'bad %E0%A4%A sequence');
    assert.equal(decodeGrpcMessage(undefined), '');
    assert.equal(decodeGrpcMessage('plain, no escapes'), 'plain, no escapes');
  });

  test('without grpc-status, a non-200 HTTP status maps as gRPC says, and its body is not read as gRPC', async (t) => {
    const server = h2Server(t);
    await server.listen();
    let status = 0;
    server.handler = (stream) => {
      stream.respond({ ':status': status, 'content-type': 'text/html' });
      stream.end('<html>a proxy page, much larger than the receive limit would allow</html>'.repeat(100));
    };
    const client = transport(t, server.socketPath);
    const want: [number, number][] = [
      [400, GRPC_STATUS.INTERNAL],
      [401, GRPC_STATUS.UNAUTHENTICATED],
      [403, GRPC_STATUS.PERMISSION_DENIED],
      [404, GRPC_STATUS.UNIMPLEMENTED],
      [429, GRPC_STATUS.UNAVAILABLE],
      [502, GRPC_STATUS.UNAVAILABLE],
      [503, GRPC_STATUS.UNAVAILABLE],
      [504, GRPC_STATUS.UNAVAILABLE],
      [500, GRPC_STATUS.UNKNOWN],
      [302, GRPC_STATUS.UNKNOWN],
    ];
    for (const [http, grpc] of want) {
      status = http;
      const err = await failure(client);
      assert.deepEqual([http, err.code, err.details], [http, grpc, `unexpected HTTP status ${http} from the runtime`]);
    }
  });

  test('a grpc-status wins over the HTTP status; a 200 that is not application/grpc is UNKNOWN', async (t) => {
    const server = h2Server(t);
    await server.listen();
    const client = transport(t, server.socketPath);
    server.handler = (stream) => stream.respond({ ':status': 503, 'grpc-status': '8', 'grpc-message': 'busy' }, { endStream: true });
    const withStatus = await failure(client);
    assert.deepEqual([withStatus.code, withStatus.details], [GRPC_STATUS.RESOURCE_EXHAUSTED, 'busy']);

    server.handler = (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'text/plain' });
      stream.end(encodeFrame(Buffer.from('looks like gRPC, is not')));
    };
    const wrongType = await failure(client);
    assert.deepEqual([wrongType.code, wrongType.details], [GRPC_STATUS.UNKNOWN, 'unexpected content-type "text/plain" from the runtime']);

    for (const ok of ['application/grpc', 'application/grpc+proto', 'application/grpc;charset=utf-8']) assert.ok(isGrpcContentType(ok), ok);
    for (const bad of ['application/grpcx', 'application/json', undefined]) assert.ok(!isGrpcContentType(bad), String(bad));
  });

  test('a stream that ends without trailers is INTERNAL; trailers without grpc-status are UNKNOWN', async (t) => {
    const server = h2Server(t);
    await server.listen();
    const client = transport(t, server.socketPath);
    server.handler = (stream) => {
      stream.respond(GRPC);
      stream.end(encodeFrame(Buffer.from('x')));
    };
    const noTrailers = await failure(client);
    assert.deepEqual([noTrailers.code, noTrailers.details], [GRPC_STATUS.INTERNAL, 'the stream ended without trailers (no grpc-status)']);

    server.handler = (stream) => {
      stream.respond(GRPC, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'x-other': 'y' }));
      stream.end(encodeFrame(Buffer.from('x')));
    };
    const noStatus = await failure(client);
    assert.deepEqual([noStatus.code, noStatus.details], [GRPC_STATUS.UNKNOWN, 'the runtime ended the call without a grpc-status']);

    server.handler = (stream) => stream.respond(GRPC, { endStream: true });
    const headersOnly = await failure(client);
    assert.deepEqual([headersOnly.code, headersOnly.details], [GRPC_STATUS.UNKNOWN, 'the runtime ended the call without a grpc-status']);

    server.handler = (stream) => stream.respond({ ...GRPC, 'grpc-status': 'fourteen' }, { endStream: true });
    assert.equal((await failure(client)).code, GRPC_STATUS.UNKNOWN, 'a grpc-status that is not a number');
  });

  test('status OK needs exactly one whole message', async (t) => {
    const server = h2Server(t);
    await server.listen();
    const client = transport(t, server.socketPath);
    let body: Buffer = Buffer.alloc(0);
    server.handler = (stream) => {
      stream.respond(GRPC, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(body);
    };
    const cases: [string, Buffer, string][] = [
      ['none', Buffer.alloc(0), 'the runtime answered OK without a message'],
      ['cut in the prefix', prefix(10).subarray(0, 3), 'the answer ended inside a message prefix (3 of 5 bytes)'],
      ['cut in the message', Buffer.concat([prefix(10), Buffer.from('abcd')]), 'the answer ended inside a message (9 of 15 bytes)'],
      ['two', Buffer.concat([encodeFrame(Buffer.from('a')), encodeFrame(Buffer.from('b'))]), 'the runtime sent more than one message in a unary answer'],
    ];
    for (const [what, sent, details] of cases) {
      body = sent;
      const err = await failure(client);
      assert.deepEqual([what, err.code, err.details], [what, GRPC_STATUS.INTERNAL, details]);
    }
  });

  test('a compressed message is INTERNAL and the stream is cancelled', async (t) => {
    const server = h2Server(t);
    await server.listen();
    server.handler = (stream) => {
      stream.respond({ ...GRPC, 'grpc-encoding': 'gzip' });
      stream.write(Buffer.concat([prefix(3, 1), Buffer.from('zzz')])); // and the stream stays open
    };
    const err = await failure(transport(t, server.socketPath));
    assert.deepEqual([err.code, err.details], [GRPC_STATUS.INTERNAL, 'the runtime sent a compressed message, though no compression was offered']);
    assert.equal(await server.requests[0]?.closed, NGHTTP2_CANCEL, 'the server sees RST_STREAM(CANCEL)');
  });

  test('a length prefix over the limit is RESOURCE_EXHAUSTED at once: the message is never sent, the stream is cancelled', async (t) => {
    const server = h2Server(t);
    await server.listen();
    let length = 0;
    server.handler = (stream) => {
      stream.respond(GRPC, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      if (length > 1024) stream.write(prefix(length)); // only the prefix: the answer must not wait for the rest
      else stream.end(encodeFrame(Buffer.alloc(length, 7)));
    };
    const client = transport(t, server.socketPath, { maxMessageBytes: 1024 });
    length = 1025;
    const err = await failure(client);
    assert.deepEqual([err.code, err.details], [GRPC_STATUS.RESOURCE_EXHAUSTED, 'Received message larger than max (1025 vs. 1024)']);
    assert.equal(await server.requests[0]?.closed, NGHTTP2_CANCEL);

    length = 2 ** 32 - 1;
    assert.equal((await failure(client)).details, `Received message larger than max (${2 ** 32 - 1} vs. 1024)`);

    length = 1024;
    const atLimit = await call(client);
    assert.equal(atLimit.err, null);
    assert.equal(atLimit.answer?.length, 1024);
  });

  test('RST_STREAM from the server before a status maps as PROTOCOL-HTTP2 says', async (t) => {
    const server = h2Server(t);
    await server.listen();
    const client = transport(t, server.socketPath);
    let code = 0;
    server.handler = (stream) => stream.close(code);
    const want: [number, number][] = [
      [NGHTTP2_REFUSED_STREAM, GRPC_STATUS.UNAVAILABLE],
      [NGHTTP2_CANCEL, GRPC_STATUS.CANCELLED],
      [NGHTTP2_ENHANCE_YOUR_CALM, GRPC_STATUS.RESOURCE_EXHAUSTED],
      [NGHTTP2_INTERNAL_ERROR, GRPC_STATUS.INTERNAL],
    ];
    for (const [rst, grpc] of want) {
      code = rst;
      const err = await failure(client);
      assert.deepEqual([rst, err.code, err.details], [rst, grpc, `the runtime reset the stream (RST_STREAM code ${rst})`]);
    }
    assert.equal(server.sessions.length, 1, 'a reset stream leaves the connection in use');
  });

  test('the socket vanishing mid-answer is UNAVAILABLE, and the next call opens a new connection', async (t) => {
    // A byte pipe between client and server, cut right after it has passed part of the answer.
    const server = h2Server(t);
    await server.listen();
    server.handler = (stream) => {
      stream.respond(GRPC);
      stream.write(Buffer.concat([prefix(100), Buffer.from('PARTIAL')]));
    };
    const pipePath = tempSocket(t);
    const pipe = net.createServer((downstream) => {
      const upstream = net.connect(server.socketPath);
      downstream.pipe(upstream);
      upstream.on('data', (bytes: Buffer) => {
        downstream.write(bytes);
        if (bytes.includes('PARTIAL')) {
          downstream.end();
          upstream.destroy();
        }
      });
      downstream.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => pipe.listen(pipePath, resolve));
    t.after(() => pipe.close());
    const clock = new ManualClock();
    const client = transport(t, pipePath, { clock });
    const err = await failure(client);
    assert.deepEqual([err.code, err.details], [GRPC_STATUS.UNAVAILABLE, 'the connection to the runtime closed before the answer was complete']);

    await clock.advance(RECONNECT_GAP_MS);
    server.handler = answerWith(Buffer.from('ok'));
    assert.deepEqual((await call(client)).answer, Buffer.from('ok'));
    assert.equal(server.sessions.length, 2);
  });

  test('no socket is UNAVAILABLE with the system error; no new connection within the gap; the next call after it connects', async (t) => {
    const clock = new ManualClock();
    const server = h2Server(t);
    const client = transport(t, server.socketPath, { clock });
    const missing = await failure(client);
    assert.deepEqual([missing.code, missing.details], [GRPC_STATUS.UNAVAILABLE, `connect ENOENT ${server.socketPath}`]);

    await server.listen();
    server.handler = answerWith(Buffer.from('ok'));
    await clock.advance(RECONNECT_GAP_MS - 1);
    const inGap = await failure(client);
    assert.equal(inGap.code, GRPC_STATUS.UNAVAILABLE);
    assert.equal(inGap.details, `connect ENOENT ${server.socketPath} (no new connection within ${RECONNECT_GAP_MS} ms of the last)`);
    assert.equal(server.sessions.length, 0, 'the call in the gap did not connect');

    await clock.advance(1);
    assert.deepEqual((await call(client)).answer, Buffer.from('ok'));
    assert.deepEqual((await call(client)).answer, Buffer.from('ok'));
    assert.equal(server.sessions.length, 1, 'one connection for every call');
  });

  test('after the server closes the connection (GOAWAY), the next call opens a new one', async (t) => {
    const clock = new ManualClock();
    const server = h2Server(t);
    await server.listen();
    server.handler = answerWith(Buffer.from('ok'));
    const client = transport(t, server.socketPath, { clock });
    assert.deepEqual((await call(client)).answer, Buffer.from('ok'));
    const first = server.sessions[0];
    assert.ok(first !== undefined);
    await new Promise<void>((resolve) => first.close(resolve));
    await clock.advance(RECONNECT_GAP_MS);
    // The client learns of the close from its socket; a call that races it fails UNAVAILABLE.
    let outcome = await call(client);
    for (let tries = 0; outcome.err !== null && tries < 5; tries++) {
      assert.equal(outcome.err.code, GRPC_STATUS.UNAVAILABLE);
      await clock.advance(RECONNECT_GAP_MS);
      outcome = await call(client);
    }
    assert.deepEqual(outcome.answer, Buffer.from('ok'));
    assert.equal(server.sessions.length, 2);
  });

  test('the receive window is announced for streams and granted for the connection', async (t) => {
    const server = h2Server(t);
    await server.listen();
    const message = Buffer.alloc(3 * 1024 * 1024, 1);
    let windows: { stream: number | undefined; connection: number | undefined } | undefined;
    server.handler = (stream, headers) => {
      windows = { stream: stream.session?.remoteSettings.initialWindowSize, connection: stream.session?.state.remoteWindowSize };
      answerWith(message)(stream, headers);
    };
    const client = transport(t, server.socketPath, { maxMessageBytes: 4 * 1024 * 1024, receiveWindowBytes: 8 * 1024 * 1024 });
    const { err, answer } = await call(client);
    assert.equal(err, null);
    assert.equal(answer?.length, message.length);
    assert.deepEqual(windows, { stream: 8 * 1024 * 1024, connection: 8 * 1024 * 1024 });
    assert.throws(() => new UnaryTransport({ socketPath: '/x', maxMessageBytes: 1, receiveWindowBytes: 2 ** 31, userAgent: 'x', clock: new ManualClock() }), RangeError);
  });

  test('cancel() resets the stream and the callback is never called', async (t) => {
    const server = h2Server(t);
    await server.listen();
    server.handler = (stream) => stream.respond(GRPC); // and never answers
    const client = transport(t, server.socketPath);
    let called = false;
    const pending = client.call(PATH, encodeFrame(Buffer.alloc(0)), () => {
      called = true;
    });
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    pending.cancel();
    assert.equal(await server.requests[0]?.closed, NGHTTP2_CANCEL);
    assert.equal(called, false);
  });

  test('close() ends the calls in flight and every later call UNAVAILABLE "client closed"', async (t) => {
    const server = h2Server(t);
    await server.listen();
    server.handler = (stream) => stream.respond(GRPC);
    const client = transport(t, server.socketPath);
    const inFlight = call(client);
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    client.close();
    const { err } = await inFlight;
    assert.deepEqual([err?.code, err?.details], [GRPC_STATUS.UNAVAILABLE, 'client closed']);
    const later = await failure(client);
    assert.deepEqual([later.code, later.details], [GRPC_STATUS.UNAVAILABLE, 'client closed']);
    assert.equal(server.sessions.length, 1);
    await new Promise<void>((resolve) => (server.sessions[0]?.closed === true ? resolve() : server.sessions[0]?.once('close', resolve)));
  });

  test('neither an idle client nor a closed one keeps the process alive', async (t) => {
    const server = h2Server(t);
    await server.listen();
    server.handler = (stream, headers) => {
      if (server.requests.length === 2) stream.respond(GRPC); // the second call hangs
      else answerWith(Buffer.from('ok'))(stream, headers);
    };
    // A child makes one call and stays idle; another also starts a hanging call and closes.
    const script = (closeAfter: boolean): string => `
      import { UnaryTransport, encodeFrame } from ${JSON.stringify(new URL('./h2-unary.ts', import.meta.url).href)};
      import { SystemClock } from ${JSON.stringify(new URL('../clock/clock.ts', import.meta.url).href)};
      const client = new UnaryTransport({ socketPath: ${JSON.stringify(server.socketPath)}, maxMessageBytes: 1024,
        receiveWindowBytes: 1 << 20, userAgent: 'child', clock: new SystemClock() });
      client.call('/s/M', encodeFrame(Buffer.alloc(0)), (err, answer) => {
        console.log(err === null ? 'answer ' + answer.toString() : 'error ' + err.message);
        if (${closeAfter}) {
          client.call('/s/M', encodeFrame(Buffer.alloc(0)), (e) => console.log('second ' + e.details));
          setImmediate(() => client.close());
        }
      });`;
    for (const closeAfter of [false, true]) {
      server.requests.length = 0;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script(closeAfter)], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (bytes: Buffer) => (out += bytes.toString()));
      const code = await new Promise<number | null>((resolve) => {
        const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', (exitCode) => {
          clearTimeout(guard);
          resolve(exitCode);
        });
      });
      assert.equal(code, 0, `the child exited by itself (closeAfter=${closeAfter}): ${out}`);
      assert.equal(out, closeAfter ? 'answer ok\nsecond client closed\n' : 'answer ok\n');
    }
  });
});
