// The agent's read-only CRI client: gRPC runtime.v1 over node:http2 on a unix socket.
//
// What it is: the RuntimeClient of types.ts. It has the six read-only calls of proto/ plus
// relist() (ListPodSandbox ∥ ListContainers under one deadline) and close(), and nothing else:
// no code path through it can create, stop or remove anything on the runtime.
//
// How it behaves:
//   - One HTTP/2 connection for the client's life, through the unary transport of h2-unary.ts
//     (the gRPC protocol rules, status mapping and failure modes are its header). It is opened
//     by the first call and replaced when it closes, fails or gets GOAWAY: the next call opens
//     a new one (never within RECONNECT_GAP_MS of the last attempt; a call in that gap fails at
//     once with `unavailable`), so once the runtime is back the next relist reaches it, within
//     about a second at the agent's relist period. A dead runtime never leaves a call hanging:
//     its socket's close ends every call on it, and the deadline ends the rest.
//   - A max receive size (default 16 MiB, as upstream). A larger answer is `resource_exhausted`
//     (cancelled as soon as its length prefix arrives), its own fault, not a dead runtime.
//   - Every call has a deadline (CallOptions.deadlineMs), timed on the injected Clock's monotonic
//     timers: when it passes, the call is cancelled and rejects with `deadline_exceeded`. A
//     stepped wall clock cannot shorten or stretch it. (So no grpc-timeout header is sent: gRPC
//     deadlines are wall-clock instants. Give the client the system clock outside tests; on a
//     ManualClock a deadline passes only when the test advances it.) The first PodSandboxStatus /
//     ContainerStatus call also loads the full proto before its deadline starts (tens of ms, once).
//   - The HTTP/2 flow-control window is twice the receive limit, so a large listing streams
//     without waiting on a WINDOW_UPDATE round trip every 64 KiB (the default window).
//   - relist() issues both listings at once, under ONE deadline: a hung runtime costs one
//     deadline, not two (kubelet's serial calls cost two, more than its relist threshold). When
//     one call fails, the other is cancelled and relist() rejects with the first fault.
//   - An aborted `signal` cancels the call(s) and rejects with the signal's reason, untouched:
//     the caller stopped; the runtime did not fail.
//   - Cancelling a call (deadline, signal, its sibling failing, close()) resets its stream
//     (RST_STREAM CANCEL), so the runtime sees it cancelled.
//   - close() closes the connection and destroys its socket; calls in flight, and any call after,
//     reject with `unavailable` ("client closed"). A closed (or idle) client does not keep the
//     process alive.
//   - Faults are CriErrors typed by gRPC status (grpc-fault.ts); the runtime's own message is in
//     the message and in `detail`, and the transport's GrpcStatusError under `cause`.
//
// The relist path is lean: ListPodSandbox and ListContainers go out as constant frames (an empty
// request: no filter) and each answer comes back as one buffer of exactly its size, which
// lean-decode.ts reads for the few fields the agent keeps. `bytes` in their results is the size
// of the received protobuf messages. Version and Status are lean too (the agent polls Status
// every 5 s, and the full proto would cost every agent about 17 MiB of RSS for it).
// PodSandboxStatus and ContainerStatus are rare and the agent never calls them, so they encode
// and decode with the full proto (cri-proto.ts), loaded on first use, over the same transport.
//
// Measured here (2 cores, noisy; 210 sandboxes + 420 containers = 495 KB per relist, the
// simulated runtime in its own process): a proto-loader client (the floor) used 7.2-9.3 ms of
// client CPU per relist, this client over @grpc/grpc-js 2.2-3.0 ms; at 1,000 sandboxes + 10,000
// containers (9.6 MB), 113-126 ms against 24-31 ms. Decoding alone is 0.37 ms against 3.6 ms for
// the full decode. Over grpc-js most of what was left was its per-call machinery and the garbage
// of its receive buffers, hence the transport of its own (docs/bench.md has the numbers).
import type { MethodDefinition } from '@grpc/proto-loader';
import { SystemClock, type Clock } from '../clock/clock.ts';
import { VERSION } from '../version.ts';
import { CriError } from './cri-error.ts';
import { loadCriService } from './cri-proto.ts';
import { parseCriEndpoint } from './endpoint.ts';
import { criErrorFromGrpc, criErrorFromStatus, GRPC_STATUS } from './grpc-fault.ts';
import { DEFAULT_WINDOW_BYTES, encodeFrame, MAX_WINDOW_BYTES, UnaryTransport, type UnaryCall } from './h2-unary.ts';
import {
  decodeListContainersResponse,
  decodeListPodSandboxResponse,
  decodeStatusResponse,
  decodeVersionResponse,
  encodeVersionRequest,
} from './lean-decode.ts';
import type {
  CallOptions,
  Container,
  ContainerState,
  Listing,
  PodSandbox,
  RuntimeClient,
  RuntimeStatus,
  RuntimeVersion,
  SandboxState,
} from './types.ts';

/** Upstream's default max receive size (kubelet's maxMsgSize): 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The largest receive size gRPC accepts (a signed 32-bit length). */
export const MAX_MESSAGE_BYTES_LIMIT = 2 ** 31 - 1;

export { RECONNECT_GAP_MS } from './h2-unary.ts';

/** The CRI API version the client announces in Version (as kubelet does). */
export const CRI_CLIENT_API_VERSION = '0.1.0';

/** The calls a RuntimeClient makes to the runtime. With `endpoint` and `close`, its whole surface. */
export const RUNTIME_CLIENT_CALLS = [
  'version',
  'status',
  'relist',
  'listPodSandbox',
  'listContainers',
  'podSandboxStatus',
  'containerStatus',
] as const;

export interface RuntimeClientOptions {
  /** unix:///path/to/socket, or an absolute path (see endpoint.ts). */
  readonly endpoint: string;
  /** Max size of one received message; default DEFAULT_MAX_MESSAGE_BYTES. */
  readonly maxMessageBytes?: number;
  /** Times the deadlines; default the system clock. */
  readonly clock?: Clock;
}

const SERVICE_PATH = '/runtime.v1.RuntimeService/';
/** An empty request message (all defaults: ListPodSandbox and ListContainers without filter, Status not verbose), framed. */
const EMPTY_REQUEST = encodeFrame(Buffer.alloc(0));
const VERSION_REQUEST = encodeFrame(encodeVersionRequest(CRI_CLIENT_API_VERSION));
const USER_AGENT = `nodepulse/${VERSION}`;

/** One call in flight, settled exactly once: by its answer, or by cancel(). */
interface Started<T> {
  readonly method: string;
  readonly promise: Promise<T>;
  readonly settled: () => boolean;
  cancel(reason: unknown): void;
}

export function createRuntimeClient(options: RuntimeClientOptions): RuntimeClient {
  const { endpoint, path } = parseCriEndpoint(options.endpoint, 'endpoint');
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1 || maxMessageBytes > MAX_MESSAGE_BYTES_LIMIT) {
    throw new RangeError(`maxMessageBytes: ${maxMessageBytes} must be a whole number from 1 to ${MAX_MESSAGE_BYTES_LIMIT}`);
  }
  const clock = options.clock ?? new SystemClock();
  const transport = new UnaryTransport({
    socketPath: path,
    maxMessageBytes,
    receiveWindowBytes: Math.max(DEFAULT_WINDOW_BYTES, Math.min(2 * maxMessageBytes, MAX_WINDOW_BYTES)),
    userAgent: USER_AGENT,
    clock,
  });
  const inFlight = new Set<Started<unknown>>();
  let closed = false;

  function start<T>(method: string, frame: Buffer, decode: (bytes: Buffer) => T): Started<T> {
    let done = false;
    let resolve!: (value: T) => void;
    let reject!: (reason: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const settle = (): boolean => {
      if (done) return false;
      done = true;
      inFlight.delete(started as Started<unknown>);
      return true;
    };
    const call: UnaryCall = transport.call(SERVICE_PATH + method, frame, (err, bytes) => {
      if (!settle()) return;
      if (err !== null || bytes === undefined) {
        reject(criErrorFromGrpc(method, err ?? new Error('no answer and no error')));
        return;
      }
      try {
        resolve(decode(bytes));
      } catch (decodeErr) {
        const text = decodeErr instanceof Error ? decodeErr.message : String(decodeErr);
        reject(new CriError('other', `RuntimeService/${method}: answer could not be decoded: ${text}`, { detail: text, cause: decodeErr }));
      }
    });
    const started: Started<T> = {
      method,
      promise,
      settled: () => done,
      cancel(reason: unknown): void {
        if (!settle()) return;
        reject(reason);
        call.cancel();
      },
    };
    inFlight.add(started as Started<unknown>);
    return started;
  }

  /**
   * Runs calls together under one deadline and one signal. Resolves with every answer, or
   * rejects with the first fault after cancelling the rest.
   */
  function together(options: CallOptions, begin: () => readonly Started<unknown>[]): Promise<unknown[]> {
    const { deadlineMs, signal } = options;
    if (!Number.isFinite(deadlineMs)) {
      return Promise.reject(new RangeError(`deadlineMs: ${deadlineMs} must be a finite number of milliseconds`));
    }
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (closed) return Promise.reject(closedError());
    const calls = begin();
    const cancelAll = (reason: unknown): void => {
      for (const call of calls) call.cancel(reason);
    };
    const timer = clock.after(deadlineMs, () => {
      const pending = calls.filter((call) => !call.settled()).map((call) => call.method);
      cancelAll(criErrorFromStatus(pending.join('+'), GRPC_STATUS.DEADLINE_EXCEEDED, `deadline of ${deadlineMs}ms exceeded`));
    });
    const onAbort = (): void => cancelAll(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    for (const call of calls) call.promise.catch(cancelAll);
    return Promise.all(calls.map((call) => call.promise)).finally(() => {
      timer.cancel();
      signal?.removeEventListener('abort', onAbort);
    });
  }

  function closedError(): CriError {
    return criErrorFromStatus('*', GRPC_STATUS.UNAVAILABLE, 'client closed');
  }

  const startListPodSandbox = (): Started<{ items: PodSandbox[]; bytes: number }> =>
    start('ListPodSandbox', EMPTY_REQUEST, (bytes) => ({ items: decodeListPodSandboxResponse(bytes), bytes: bytes.length }));
  const startListContainers = (): Started<{ items: Container[]; bytes: number }> =>
    start('ListContainers', EMPTY_REQUEST, (bytes) => ({ items: decodeListContainersResponse(bytes), bytes: bytes.length }));

  /** One call with the full proto: loads it (once), then runs the call under the deadline. */
  async function fullCall(method: string, request: object, options: CallOptions): Promise<Record<string, unknown>> {
    let definition: MethodDefinition<object, object>;
    try {
      const service = await loadCriService();
      const found = service[method];
      if (found === undefined) throw new Error(`proto/ declares no ${method}`);
      definition = found;
    } catch (err) {
      throw criErrorFromGrpc(method, err);
    }
    let frame: Buffer;
    try {
      frame = encodeFrame(definition.requestSerialize(request));
    } catch (err) {
      throw criErrorFromGrpc(method, err);
    }
    const decode = (bytes: Buffer): Record<string, unknown> => definition.responseDeserialize(bytes) as Record<string, unknown>;
    const [answer] = await together(options, () => [start(method, frame, decode)]);
    return answer as Record<string, unknown>;
  }

  const client: RuntimeClient = {
    endpoint,

    async version(options) {
      const [answer] = await together(options, () => [start('Version', VERSION_REQUEST, decodeVersionResponse)]);
      return answer as RuntimeVersion;
    },

    async status(options) {
      // StatusRequest { verbose: false } is all defaults: an empty message.
      const [answer] = await together(options, () => [start('Status', EMPTY_REQUEST, decodeStatusResponse)]);
      return answer as RuntimeStatus;
    },

    async relist(options) {
      const [sandboxes, containers] = (await together(options, () => [startListPodSandbox(), startListContainers()])) as [
        { items: PodSandbox[]; bytes: number },
        { items: Container[]; bytes: number },
      ];
      return { sandboxes: sandboxes.items, containers: containers.items, bytes: sandboxes.bytes + containers.bytes } satisfies Listing;
    },

    async listPodSandbox(options) {
      const [answer] = await together(options, () => [startListPodSandbox()]);
      return answer as { items: PodSandbox[]; bytes: number };
    },

    async listContainers(options) {
      const [answer] = await together(options, () => [startListContainers()]);
      return answer as { items: Container[]; bytes: number };
    },

    async podSandboxStatus(id, options) {
      const answer = await fullCall('PodSandboxStatus', { podSandboxId: id, verbose: false }, options);
      const status = answer['status'] as { id?: unknown; state?: unknown } | null | undefined;
      if (status === null || status === undefined) {
        throw new CriError('other', `RuntimeService/PodSandboxStatus: the runtime answered no status for sandbox ${id}`);
      }
      return { id: String(status.id ?? ''), state: enumName<SandboxState>(status.state) };
    },

    async containerStatus(id, options) {
      const answer = await fullCall('ContainerStatus', { containerId: id, verbose: false }, options);
      const status = answer['status'] as { id?: unknown; state?: unknown } | null | undefined;
      if (status === null || status === undefined) {
        throw new CriError('other', `RuntimeService/ContainerStatus: the runtime answered no status for container ${id}`);
      }
      return { id: String(status.id ?? ''), state: enumName<ContainerState>(status.state) };
    },

    close() {
      if (closed) return;
      closed = true;
      const error = closedError();
      for (const call of [...inFlight]) call.cancel(error);
      transport.close();
    },
  };
  return Object.freeze(client);
}

/** proto-loader gives an enum's name, or its number when the proto does not name it. */
function enumName<T extends string>(value: unknown): T {
  return (typeof value === 'number' ? `UNKNOWN_${value}` : String(value)) as T;
}
