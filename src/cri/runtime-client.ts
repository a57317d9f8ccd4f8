// The agent's read-only CRI client: gRPC runtime.v1 over @grpc/grpc-js on a unix socket.
//
// What it is: the RuntimeClient of types.ts. It has the six read-only calls of proto/ plus
// relist() (ListPodSandbox ∥ ListContainers under one deadline) and close(), and nothing else:
// no code path through it can create, stop or remove anything on the runtime.
//
// How it behaves:
//   - One grpc-js channel for the client's life (runtime-channel.ts has its options and why).
//     grpc-js connects it on the first call and reconnects it when the runtime goes away, with
//     a backoff capped at the agent's relist period: once the runtime is back, the next relist
//     reaches it within about a second. A call made while the channel is failing ends at once
//     with `unavailable` and grpc-js's words for the last connect error.
//   - Calls go through the channel's Client.makeUnaryRequest with the lean encoders and decoders
//     of lean-decode.ts as its `serialize` and `deserialize`: the relist path never builds the
//     full messages. PodSandboxStatus and ContainerStatus are rare and the agent never calls
//     them, so they take the full proto's serializers (cri-proto.ts, proto-loader on proto/),
//     loaded on first use, over the same channel.
//   - A max receive size (default 16 MiB, as upstream). A larger answer is `resource_exhausted`,
//     its own fault, not a dead runtime.
//   - Every call has a deadline (CallOptions.deadlineMs), timed on the injected Clock's monotonic
//     timers: when it passes, the call is cancelled and rejects with `deadline_exceeded`. grpc-js's
//     own `deadline` is a wall-clock instant (a Date, sent as grpc-timeout), which a stepped wall
//     clock would shorten or stretch, so it is never set. Give the client the system clock
//     outside tests; on a ManualClock a deadline passes only when the test advances it. The first
//     PodSandboxStatus / ContainerStatus call also loads the full proto, once, before its deadline
//     starts.
//   - relist() issues both listings at once, under ONE deadline: a hung runtime costs one
//     deadline, not two (kubelet's serial calls cost two, more than its relist threshold). When
//     one call fails, the other is cancelled and relist() rejects with the first fault.
//   - An aborted `signal` cancels the call(s) and rejects with the signal's reason, untouched:
//     the caller stopped; the runtime did not fail.
//   - Cancelling a call (deadline, signal, its sibling failing, close()) cancels it in grpc-js,
//     which resets its stream (RST_STREAM CANCEL), so the runtime sees it cancelled.
//   - close() cancels the calls in flight and closes the channel; they, and any call after,
//     reject with `unavailable` ("client closed"). An idle or closed client does not keep the
//     process alive (grpc-js holds its connection unref'd while no call runs).
//   - Faults are CriErrors typed by gRPC status (grpc-fault.ts); the runtime's own message is in
//     the message and in `detail`, and grpc-js's error under `cause`. A fault of the connection
//     or the deadline names the socket. An answer the lean decoder refuses is `other`, "answer
//     could not be decoded", with the decoder's error as its cause and `undecodable` as its
//     failure mode (fault-cause.ts): the runtime answered, and the agent could not read it.
//
// `bytes` in the listings' results is the size of the received protobuf messages.
import * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { Clock } from '../clock/clock.ts';
import { CriError } from './cri-error.ts';
import { loadCriService } from './cri-proto.ts';
import { parseCriEndpoint } from './endpoint.ts';
import { criErrorFromGrpc, criErrorFromStatus, GRPC_STATUS } from './grpc-fault.ts';
import {
  decodeListContainersResponse,
  decodeListPodSandboxResponse,
  decodeStatusResponse,
  decodeVersionResponse,
  encodeVersionRequest,
} from './lean-decode.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_LIMIT, runtimeChannelOptions } from './runtime-channel.ts';
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

export { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_LIMIT } from './runtime-channel.ts';

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
  /** Times the deadlines: the system clock, from the command's entry point, outside tests. */
  readonly clock: Clock;
}

/** One unary RPC as grpc-js takes it: its path, and how its request and answer are (de)serialized. */
interface UnaryMethod<T> {
  readonly name: string;
  readonly path: string;
  readonly serialize: (request: unknown) => Buffer;
  readonly deserialize: (answer: Buffer) => T;
}

type Items<T> = { items: T[]; bytes: number };

const SERVICE_PATH = '/runtime.v1.RuntimeService/';
/** An empty request message: ListPodSandbox and ListContainers without filter, Status not verbose. */
const EMPTY_MESSAGE = Buffer.alloc(0);
const emptyRequest = (): Buffer => EMPTY_MESSAGE;
const VERSION_MESSAGE = encodeVersionRequest(CRI_CLIENT_API_VERSION);

function leanMethod<T>(name: string, serialize: () => Buffer, deserialize: (answer: Buffer) => T): UnaryMethod<T> {
  return { name, path: SERVICE_PATH + name, serialize, deserialize };
}

const VERSION_METHOD = leanMethod('Version', () => VERSION_MESSAGE, decodeVersionResponse);
const STATUS_METHOD = leanMethod('Status', emptyRequest, decodeStatusResponse);
const LIST_POD_SANDBOX_METHOD = leanMethod('ListPodSandbox', emptyRequest, (answer): Items<PodSandbox> => ({
  items: decodeListPodSandboxResponse(answer),
  bytes: answer.length,
}));
const LIST_CONTAINERS_METHOD = leanMethod('ListContainers', emptyRequest, (answer): Items<Container> => ({
  items: decodeListContainersResponse(answer),
  bytes: answer.length,
}));

/** One call in flight, settled exactly once: by its answer, or by cancel(). */
interface Started<T> {
  readonly method: string;
  readonly promise: Promise<T>;
  readonly settled: () => boolean;
  cancel(reason: unknown): void;
}

export function createRuntimeClient(options: RuntimeClientOptions): RuntimeClient {
  const { endpoint, path: socketPath } = parseCriEndpoint(options.endpoint, 'endpoint');
  const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1 || maxMessageBytes > MAX_MESSAGE_BYTES_LIMIT) {
    throw new RangeError(`maxMessageBytes: ${maxMessageBytes} must be a whole number from 1 to ${MAX_MESSAGE_BYTES_LIMIT}`);
  }
  const { clock } = options;
  const channel = new grpc.Client(endpoint, grpc.credentials.createInsecure(), runtimeChannelOptions(maxMessageBytes));
  const inFlight = new Set<Started<unknown>>();
  let closed = false;

  function start<T>(method: UnaryMethod<T>, request: unknown): Started<T> {
    let done = false;
    let decodeError: unknown;
    let resolve!: (value: T) => void;
    let reject!: (reason: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const started: Started<T> = {
      method: method.name,
      promise,
      settled: () => done,
      cancel(reason: unknown): void {
        if (!settle()) return;
        reject(reason);
        call.cancel();
      },
    };
    const settle = (): boolean => {
      if (done) return false;
      done = true;
      inFlight.delete(started as Started<unknown>);
      return true;
    };
    // grpc-js turns a throwing deserializer into INTERNAL with the error's text only; the
    // decoder's own error (and its offset) is kept here for the CriError's cause.
    const deserialize = (answer: Buffer): T => {
      try {
        return method.deserialize(answer);
      } catch (err) {
        decodeError = err;
        throw err;
      }
    };
    inFlight.add(started as Started<unknown>);
    const call = channel.makeUnaryRequest<unknown, T>(method.path, method.serialize, deserialize, request, new grpc.Metadata(), {}, (err, answer) => {
      if (!settle()) return;
      if (decodeError !== undefined) {
        const text = decodeError instanceof Error ? decodeError.message : String(decodeError);
        reject(new CriError('other', `RuntimeService/${method.name}: answer could not be decoded: ${text}`, { detail: text, cause: decodeError, knownCause: 'undecodable' }));
      } else if (err !== null || answer === undefined) {
        reject(criErrorFromGrpc(method.name, err ?? new Error('no answer and no error'), socketPath));
      } else {
        resolve(answer);
      }
    });
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
      cancelAll(criErrorFromStatus(pending.join('+'), GRPC_STATUS.DEADLINE_EXCEEDED, `deadline of ${deadlineMs}ms exceeded`, { socketPath }));
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
    return criErrorFromStatus('*', GRPC_STATUS.UNAVAILABLE, 'client closed', { socketPath });
  }

  async function one<T>(method: UnaryMethod<T>, request: unknown, options: CallOptions): Promise<T> {
    const [answer] = await together(options, () => [start(method, request)]);
    return answer as T;
  }

  /** One call with the full proto: loads it (once), then runs the call under the deadline. */
  async function fullCall(name: string, request: object, options: CallOptions): Promise<Record<string, unknown>> {
    let definition: MethodDefinition<object, object>;
    try {
      const service = await loadCriService();
      const found = service[name];
      if (found === undefined) throw new Error(`proto/ declares no ${name}`);
      definition = found;
    } catch (err) {
      throw criErrorFromGrpc(name, err);
    }
    const method: UnaryMethod<Record<string, unknown>> = {
      name,
      path: definition.path,
      serialize: definition.requestSerialize as (request: unknown) => Buffer,
      deserialize: definition.responseDeserialize as (answer: Buffer) => Record<string, unknown>,
    };
    return one(method, request, options);
  }

  const client: RuntimeClient = {
    endpoint,

    version: (options) => one<RuntimeVersion>(VERSION_METHOD, undefined, options),

    status: (options) => one<RuntimeStatus>(STATUS_METHOD, undefined, options),

    async relist(options) {
      const [sandboxes, containers] = (await together(options, () => [
        start(LIST_POD_SANDBOX_METHOD, undefined),
        start(LIST_CONTAINERS_METHOD, undefined),
      ])) as [Items<PodSandbox>, Items<Container>];
      return { sandboxes: sandboxes.items, containers: containers.items, bytes: sandboxes.bytes + containers.bytes } satisfies Listing;
    },

    listPodSandbox: (options) => one(LIST_POD_SANDBOX_METHOD, undefined, options),

    listContainers: (options) => one(LIST_CONTAINERS_METHOD, undefined, options),

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
      channel.close();
    },
  };
  return Object.freeze(client);
}

/** proto-loader gives an enum's name, or its number when the proto does not name it. */
function enumName<T extends string>(value: unknown): T {
  return (typeof value === 'number' ? `UNKNOWN_${value}` : String(value)) as T;
}
