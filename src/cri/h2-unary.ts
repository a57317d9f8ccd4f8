// Unary gRPC calls over node:http2 on a unix socket: the runtime client's whole transport.
//
// What it does: sends one request message and receives one answer message per call, on one
// HTTP/2 connection (session) shared by every call. It knows nothing of CRI: it moves framed
// bytes and turns the HTTP/2 and gRPC signals into a gRPC status (GrpcStatusError, whose `code`
// and `details` grpc-fault.ts maps to a CriError). Deadlines are not its business either: the
// caller times them on its own clock and calls cancel().
//
// Connection:
//   - One session at a time, opened on the first call (not before) and kept for the next ones.
//     When it closes, fails, or the peer sends GOAWAY, it is forgotten and the next call opens a
//     new one: once the runtime is back, the next call reaches it. Calls already running on a
//     session that received GOAWAY finish on it, as HTTP/2 allows.
//   - No reconnect loop and no timers: only a call opens a session, so the callers' own pace
//     (a relist a second) is the reconnect pace. A guard against a caller that retries in a
//     tight loop: a new session is not opened within RECONNECT_GAP_MS of the previous one;
//     a call in that gap fails at once, UNAVAILABLE, with why the previous session ended.
//   - Flow control: the stream window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection window
//     (setLocalWindowSize, once connected) are both receiveWindowBytes, so a large answer
//     streams without waiting on WINDOW_UPDATE round trips (the HTTP/2 default is 64 KiB).
//   - Node's own session memory cap is lifted: the receive limit and the window already bound
//     what a peer can make this process hold.
//   - The socket is unref'd while no call is running, so an idle client never keeps the process
//     alive; close() destroys the session and its socket, and every later call fails.
//
// Requests (gRPC over HTTP/2, grpc/doc/PROTOCOL-HTTP2.md): HEADERS `:method POST`,
// `:path /<service>/<Method>`, `:scheme http`, `:authority localhost`,
// `content-type: application/grpc`, `te: trailers`, `user-agent`, and nothing else (no
// grpc-timeout: see above; no grpc-encoding: requests are not compressed, and no
// grpc-accept-encoding: answers must not be). Then one DATA payload: the length-prefixed message
// (1 byte compressed-flag 0, 4 bytes big-endian length, the message; encodeFrame) and END_STREAM.
//
// Answers, in the order they are judged:
//   1. A grpc-status, in the trailers or in the response headers (a Trailers-Only answer), is
//      the call's status, whatever the HTTP status; grpc-message is its details, percent-decoded
//      (left as received when it does not decode). A status that is not a number is UNKNOWN.
//   2. Without one, a `:status` other than 200 maps as gRPC's "HTTP to gRPC status code mapping"
//      says (httpStatusToGrpc: 400 INTERNAL, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED,
//      404 UNIMPLEMENTED, 429/502/503/504 UNAVAILABLE, other UNKNOWN); a 200 whose content-type
//      is not application/grpc[+format][;params] is UNKNOWN. The body of such an answer is not
//      read as gRPC.
//   3. Trailers (or a Trailers-Only answer) without grpc-status: UNKNOWN. A stream that ends with
//      no trailers at all: INTERNAL.
//   4. Status OK needs exactly one whole message: none, a second one, or a stream that ends
//      inside one is INTERNAL.
//   5. A message with compressed-flag 1 is INTERNAL (no compression was offered), as is any other
//      flag value.
//   6. A length prefix over maxMessageBytes: the stream is cancelled at once, RESOURCE_EXHAUSTED
//      "Received message larger than max (N vs. M)", before any of the message is buffered.
// The answer is received into one buffer of exactly the announced length, allocated once when
// the prefix has arrived; each DATA chunk is copied into it.
//
// Failure modes (the status a call ends with):
//   - No socket, nobody listening, the connection lost before or during the answer, a stream
//     destroyed by Node for a connection fault: UNAVAILABLE, with the system error's words
//     (e.g. `connect ENOENT /run/containerd/containerd.sock`).
//   - RST_STREAM from the peer before a status: mapped as PROTOCOL-HTTP2.md's "Errors" table
//     (REFUSED_STREAM UNAVAILABLE, CANCEL CANCELLED, ENHANCE_YOUR_CALM RESOURCE_EXHAUSTED,
//     INADEQUATE_SECURITY PERMISSION_DENIED, any other INTERNAL).
//   - Node refusing to open a stream (the session is going away, out of stream ids): UNAVAILABLE.
//   - cancel(): the stream is closed with RST_STREAM(CANCEL); the callback is not called.
//   - After close(): UNAVAILABLE "client closed".
// The callback is called exactly once per call unless the call is cancelled first, and never
// before call() has returned.
import * as http2 from 'node:http2';
import { connect as netConnect } from 'node:net';
import type { Clock } from '../clock/clock.ts';
import { GRPC_STATUS, grpcCodeName } from './grpc-fault.ts';

/** A new session is not opened within this many ms of the previous one (see the header). */
export const RECONNECT_GAP_MS = 100;

/** The HTTP/2 default window (RFC 9113 §6.9.2); a larger one is announced and granted. */
export const DEFAULT_WINDOW_BYTES = 65_535;

/** The largest HTTP/2 window (RFC 9113 §6.9.1). */
export const MAX_WINDOW_BYTES = 2 ** 31 - 1;

const PREFIX_BYTES = 5;
const {
  NGHTTP2_CANCEL,
  NGHTTP2_NO_ERROR,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_ENHANCE_YOUR_CALM,
  NGHTTP2_INADEQUATE_SECURITY,
  NGHTTP2_FLAG_END_STREAM,
} = http2.constants;

/** A gRPC status a call ended with. `code` and `details` are what grpc-fault.ts reads. */
export class GrpcStatusError extends Error {
  readonly code: number;
  readonly details: string;

  constructor(code: number, details: string, options?: { cause?: unknown }) {
    super(`${code} ${grpcCodeName(code)}: ${details}`, options);
    this.name = 'GrpcStatusError';
    this.code = code;
    this.details = details;
  }
}

/** Called once with the answer message, or with the status the call failed with. */
export type UnaryDone = (err: GrpcStatusError | null, answer: Buffer | undefined) => void;

export interface UnaryCall {
  /** Stops the call: RST_STREAM(CANCEL), and its callback is never called. */
  cancel(): void;
}

export interface UnaryTransportOptions {
  /** The unix socket's path. */
  readonly socketPath: string;
  /** Largest answer message accepted, in bytes. */
  readonly maxMessageBytes: number;
  /** The stream and connection receive window, in bytes (at most MAX_WINDOW_BYTES). */
  readonly receiveWindowBytes: number;
  /** Sent as user-agent. */
  readonly userAgent: string;
  /** Times the reconnect gap. */
  readonly clock: Clock;
}

/** A gRPC length-prefixed message: flag 0 (not compressed), 4-byte big-endian length, bytes. */
export function encodeFrame(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, PREFIX_BYTES);
  return frame;
}

/** gRPC's "HTTP to gRPC status code mapping", for answers without grpc-status. */
export function httpStatusToGrpc(status: number): number {
  switch (status) {
    case 400:
      return GRPC_STATUS.INTERNAL;
    case 401:
      return GRPC_STATUS.UNAUTHENTICATED;
    case 403:
      return GRPC_STATUS.PERMISSION_DENIED;
    case 404:
      return GRPC_STATUS.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GRPC_STATUS.UNAVAILABLE;
    default:
      return GRPC_STATUS.UNKNOWN;
  }
}

/** PROTOCOL-HTTP2.md's "Errors": the status of a stream the peer reset before a status. */
export function rstCodeToGrpc(rstCode: number): number {
  switch (rstCode) {
    case NGHTTP2_REFUSED_STREAM:
      return GRPC_STATUS.UNAVAILABLE;
    case NGHTTP2_CANCEL:
      return GRPC_STATUS.CANCELLED;
    case NGHTTP2_ENHANCE_YOUR_CALM:
      return GRPC_STATUS.RESOURCE_EXHAUSTED;
    case NGHTTP2_INADEQUATE_SECURITY:
      return GRPC_STATUS.PERMISSION_DENIED;
    default:
      return GRPC_STATUS.INTERNAL;
  }
}

/** grpc-message is percent-encoded UTF-8; a value that does not decode is kept as received. */
export function decodeGrpcMessage(value: string | string[] | undefined): string {
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** application/grpc, optionally +format and ;parameters. */
export function isGrpcContentType(value: unknown): boolean {
  if (typeof value !== 'string' || !value.startsWith('application/grpc')) return false;
  const next = value.charCodeAt('application/grpc'.length);
  return Number.isNaN(next) || next === 0x2b /* + */ || next === 0x3b /* ; */;
}

function grpcStatusOf(value: string | string[] | undefined): number {
  const text = Array.isArray(value) ? value[0] : value;
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : GRPC_STATUS.UNKNOWN;
}

/** Why a Node error ended a stream: the system error under a pending-stream cancel, else its own words. */
function transportWords(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : err.message;
}

const REQUEST_OPTIONS: http2.ClientSessionRequestOptions = { endStream: false };
const CALL = Symbol('nodepulse.unaryCall');
type CallStream = http2.ClientHttp2Stream & { [CALL]?: Receiving };

/** One call in flight: the receive state machine. Its listeners are shared, not per-call closures. */
class Receiving implements UnaryCall {
  readonly stream: CallStream;
  readonly session: http2.ClientHttp2Session;
  readonly #transport: UnaryTransport;
  readonly #done: UnaryDone;
  readonly #maxMessageBytes: number;
  #settled = false;
  /** An answer that is not gRPC (HTTP status or content-type): its status, unless one comes. */
  #httpFault: GrpcStatusError | undefined;
  /** A Node error on the stream that is not the peer's RST_STREAM. */
  #transportError: Error | undefined;
  // The message being received: prefix bytes seen (0-5), its length, its buffer and fill.
  #prefixSeen = 0;
  #flag = 0;
  #length = 0;
  #body: Buffer | undefined;
  #filled = 0;
  #answer: Buffer | undefined;

  constructor(transport: UnaryTransport, session: http2.ClientHttp2Session, stream: CallStream, maxMessageBytes: number, done: UnaryDone) {
    this.#transport = transport;
    this.session = session;
    this.stream = stream;
    this.#maxMessageBytes = maxMessageBytes;
    this.#done = done;
    stream[CALL] = this;
    stream.on('response', onResponse);
    stream.on('data', onData);
    stream.on('trailers', onTrailers);
    stream.on('error', onStreamError);
    stream.on('close', onStreamClose);
  }

  cancel(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#transport.callEnded();
    this.stream.close(NGHTTP2_CANCEL);
  }

  response(headers: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader, flags: number): void {
    if (this.#settled) return;
    if (headers['grpc-status'] !== undefined) {
      this.#status(headers);
      return;
    }
    const status = headers[':status'] ?? 0;
    if (status !== 200) {
      this.#httpFault = new GrpcStatusError(httpStatusToGrpc(status), `unexpected HTTP status ${status} from the runtime`);
    } else if (!isGrpcContentType(headers['content-type'])) {
      this.#httpFault = new GrpcStatusError(GRPC_STATUS.UNKNOWN, `unexpected content-type ${JSON.stringify(headers['content-type'] ?? '')} from the runtime`);
    }
    if ((flags & NGHTTP2_FLAG_END_STREAM) !== 0) this.#status(headers);
  }

  trailers(trailers: http2.IncomingHttpHeaders): void {
    if (!this.#settled) this.#status(trailers);
  }

  data(chunk: Buffer): void {
    if (this.#settled || this.#httpFault !== undefined) return;
    let at = 0;
    const end = chunk.length;
    while (at < end) {
      const body = this.#body;
      if (body !== undefined) {
        const n = Math.min(end - at, body.length - this.#filled);
        chunk.copy(body, this.#filled, at, at + n);
        this.#filled += n;
        at += n;
        if (this.#filled === body.length) this.#message(body);
        continue;
      }
      // The 5-byte prefix, which may be split across chunks.
      const byte = chunk[at++] as number;
      if (this.#prefixSeen === 0) this.#flag = byte;
      else this.#length = this.#length * 256 + byte;
      if (++this.#prefixSeen < PREFIX_BYTES) continue;
      if (!this.#prefixDone()) return;
    }
  }

  /** The prefix is complete: checks it and makes the message's buffer. False when the call failed. */
  #prefixDone(): boolean {
    if (this.#answer !== undefined) {
      this.#fail(new GrpcStatusError(GRPC_STATUS.INTERNAL, 'the runtime sent more than one message in a unary answer'), true);
      return false;
    }
    if (this.#flag !== 0) {
      const why = this.#flag === 1 ? 'a compressed message, though no compression was offered' : `a message with the invalid flag ${this.#flag}`;
      this.#fail(new GrpcStatusError(GRPC_STATUS.INTERNAL, `the runtime sent ${why}`), true);
      return false;
    }
    if (this.#length > this.#maxMessageBytes) {
      this.#fail(new GrpcStatusError(GRPC_STATUS.RESOURCE_EXHAUSTED, `Received message larger than max (${this.#length} vs. ${this.#maxMessageBytes})`), true);
      return false;
    }
    const body = Buffer.allocUnsafe(this.#length);
    if (body.length === 0) this.#message(body);
    else {
      this.#body = body;
      this.#filled = 0;
    }
    return true;
  }

  #message(body: Buffer): void {
    this.#answer = body;
    this.#body = undefined;
    this.#prefixSeen = 0;
    this.#length = 0;
  }

  /** Trailers, or a Trailers-Only answer: the call's end. */
  #status(fields: http2.IncomingHttpHeaders): void {
    const raw = fields['grpc-status'];
    if (raw === undefined) {
      this.#fail(this.#httpFault ?? new GrpcStatusError(GRPC_STATUS.UNKNOWN, 'the runtime ended the call without a grpc-status'), false);
      return;
    }
    const code = grpcStatusOf(raw);
    if (code !== GRPC_STATUS.OK) {
      this.#fail(new GrpcStatusError(code, decodeGrpcMessage(fields['grpc-message'])), false);
      return;
    }
    if (this.#prefixSeen !== 0 || this.#body !== undefined) {
      const where =
        this.#body === undefined
          ? `a message prefix (${this.#prefixSeen} of ${PREFIX_BYTES} bytes)`
          : `a message (${PREFIX_BYTES + this.#filled} of ${PREFIX_BYTES + this.#length} bytes)`;
      this.#fail(new GrpcStatusError(GRPC_STATUS.INTERNAL, `the answer ended inside ${where}`), false);
      return;
    }
    const answer = this.#answer;
    if (answer === undefined) {
      this.#fail(new GrpcStatusError(GRPC_STATUS.INTERNAL, 'the runtime answered OK without a message'), false);
      return;
    }
    this.#settled = true;
    this.#transport.callEnded();
    this.#done(null, answer);
  }

  streamError(err: Error): void {
    // The peer's RST_STREAM also arrives as an error; its code is judged at close.
    if ((err as { code?: unknown }).code !== 'ERR_HTTP2_STREAM_ERROR') this.#transportError ??= err;
  }

  /** The stream is gone without a status: why, in order of what is known. */
  closed(): void {
    if (this.#settled) return;
    const transportError = this.#transportError;
    if (this.#transport.closed) {
      this.#fail(new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, 'client closed'), false);
    } else if (transportError !== undefined) {
      this.#fail(new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, transportWords(transportError), { cause: transportError }), false);
    } else if (this.session.destroyed || this.session.closed) {
      this.#fail(new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, 'the connection to the runtime closed before the answer was complete'), false);
    } else if (this.stream.rstCode !== undefined && this.stream.rstCode !== NGHTTP2_NO_ERROR) {
      const rst = this.stream.rstCode;
      this.#fail(new GrpcStatusError(rstCodeToGrpc(rst), `the runtime reset the stream (RST_STREAM code ${rst})`), false);
    } else {
      this.#fail(this.#httpFault ?? new GrpcStatusError(GRPC_STATUS.INTERNAL, 'the stream ended without trailers (no grpc-status)'), false);
    }
  }

  #fail(err: GrpcStatusError, cancel: boolean): void {
    this.#settled = true;
    this.#body = undefined;
    this.#transport.callEnded();
    if (cancel) this.stream.close(NGHTTP2_CANCEL);
    this.#done(err, undefined);
  }
}

function receivingOf(stream: CallStream): Receiving {
  return stream[CALL] as Receiving;
}
function onResponse(this: CallStream, headers: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader, flags: number): void {
  receivingOf(this).response(headers, flags);
}
function onData(this: CallStream, chunk: Buffer): void {
  receivingOf(this).data(chunk);
}
function onTrailers(this: CallStream, trailers: http2.IncomingHttpHeaders): void {
  receivingOf(this).trailers(trailers);
}
function onStreamError(this: CallStream, err: Error): void {
  receivingOf(this).streamError(err);
}
function onStreamClose(this: CallStream): void {
  receivingOf(this).closed();
}

/** A call that failed before it had a stream; its callback runs on the next tick. */
class FailedCall implements UnaryCall {
  #cancelled = false;

  constructor(err: GrpcStatusError, done: UnaryDone) {
    process.nextTick(() => {
      if (!this.#cancelled) done(err, undefined);
    });
  }

  cancel(): void {
    this.#cancelled = true;
  }
}

export class UnaryTransport {
  readonly #options: UnaryTransportOptions;
  readonly #headers = new Map<string, http2.OutgoingHttpHeaders>();
  #session: http2.ClientHttp2Session | undefined;
  #openedAtMs = Number.NEGATIVE_INFINITY;
  /** Why the last session ended, for the calls failed in the reconnect gap. */
  #lastEnd = 'the connection to the runtime closed';
  #running = 0;
  #closed = false;

  constructor(options: UnaryTransportOptions) {
    if (!(options.receiveWindowBytes >= DEFAULT_WINDOW_BYTES && options.receiveWindowBytes <= MAX_WINDOW_BYTES)) {
      throw new RangeError(`receiveWindowBytes: ${options.receiveWindowBytes} must be from ${DEFAULT_WINDOW_BYTES} to ${MAX_WINDOW_BYTES}`);
    }
    this.#options = options;
  }

  /** Starts a unary call to `path` (e.g. /runtime.v1.RuntimeService/Version) with a framed request (encodeFrame). */
  call(path: string, frame: Buffer, done: UnaryDone): UnaryCall {
    if (this.#closed) return new FailedCall(new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, 'client closed'), done);
    const session = this.#sessionForCall();
    if (session instanceof GrpcStatusError) return new FailedCall(session, done);
    let stream: CallStream;
    try {
      stream = session.request(this.#headersFor(path), REQUEST_OPTIONS);
    } catch (err) {
      // Node refuses a stream on a session that is closing or out of stream ids: the next call opens another.
      this.#forget(session, err instanceof Error ? err.message : String(err));
      return new FailedCall(new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, err instanceof Error ? err.message : String(err), { cause: err }), done);
    }
    if (this.#running++ === 0) session.ref();
    const receiving = new Receiving(this, session, stream, this.#options.maxMessageBytes, done);
    stream.end(frame);
    return receiving;
  }

  /** Fails every later call, and closes the session and its socket. Calls in flight end UNAVAILABLE unless cancelled first. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const session = this.#session;
    this.#session = undefined;
    session?.destroy();
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** A call settled or was cancelled. */
  callEnded(): void {
    if (--this.#running === 0) this.#session?.unref();
  }

  #sessionForCall(): http2.ClientHttp2Session | GrpcStatusError {
    const current = this.#session;
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    if (current !== undefined) this.#forget(current, 'the connection to the runtime closed');
    const now = this.#options.clock.monotonicMs();
    if (now - this.#openedAtMs < RECONNECT_GAP_MS) {
      return new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, `${this.#lastEnd} (no new connection within ${RECONNECT_GAP_MS} ms of the last)`);
    }
    this.#openedAtMs = now;
    return this.#open();
  }

  #open(): http2.ClientHttp2Session {
    const { socketPath, receiveWindowBytes } = this.#options;
    const session = http2.connect('http://localhost', {
      createConnection: () => netConnect(socketPath),
      settings: { initialWindowSize: receiveWindowBytes, enablePush: false },
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
    });
    this.#session = session;
    session.once('connect', () => {
      if (receiveWindowBytes > DEFAULT_WINDOW_BYTES && !session.destroyed) session.setLocalWindowSize(receiveWindowBytes);
    });
    session.on('error', (err: Error) => this.#forget(session, err.message));
    session.on('goaway', (code: number) => this.#forget(session, `the runtime sent GOAWAY (code ${code})`));
    session.once('close', () => this.#forget(session, 'the connection to the runtime closed'));
    if (this.#running === 0) session.unref();
    return session;
  }

  /** The session will take no new calls: the next call opens another. The first reason is kept. */
  #forget(session: http2.ClientHttp2Session, why: string): void {
    if (this.#session !== session) return;
    this.#session = undefined;
    this.#lastEnd = why;
  }

  #headersFor(path: string): http2.OutgoingHttpHeaders {
    let headers = this.#headers.get(path);
    if (headers === undefined) {
      headers = {
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        'user-agent': this.#options.userAgent,
      };
      this.#headers.set(path, headers);
    }
    return headers;
  }
}
