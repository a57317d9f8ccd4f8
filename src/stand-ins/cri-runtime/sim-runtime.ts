// The simulated CRI runtime: a strict runtime.v1 RuntimeService on a unix socket, in-process.
//
// What it is for: the demo, the tests, the benchmark and the soak need a runtime they can
// script, with answers the size of a real containerd's. It serves the six read-only calls of
// proto/ (Version, Status, ListPodSandbox, ListContainers, PodSandboxStatus, ContainerStatus)
// from a SimState (sim-state.ts), and can be told to misbehave (sim-faults.ts).
//
// | the script                     | the runtime                                                 |
// |--------------------------------|-------------------------------------------------------------|
// | setPods(N, M)                  | holds N ready sandboxes × M running containers              |
// | step(k) / churnPerSecond: k    | moves containers created → running → exited → removed       |
// | addFault({method, code, ...})  | the next calls fail with the code / come late / hang / come  |
// |                                | malformed (an answer no client can decode)                  |
// | clearFaults()                  | forgets the faults, and answers calls that were hanging     |
// | setOversize(bytes)             | pads an annotation so each listing is larger than bytes     |
// | setConditions({...})           | Status reports RuntimeReady / NetworkReady as told          |
// | profile: 'cri-o' (at start)    | answers as CRI-O does (crio-profile.ts); default: its own   |
// | close()                        | stops serving (clients see UNAVAILABLE), removes the socket |
//
// Strict, as a fake should be: every other runtime.v1 method is answered UNIMPLEMENTED, a
// label_selector filter (which it does not support) is answered INVALID_ARGUMENT, and both are
// counted in calls().unexpected. Every call is counted per method: received, answered, failed
// (with a status), cancelled (the client left first).
//
// Answers are encoded with the full proto (proto-loader); encoding cost is the simulated
// runtime's, not the agent's, and the listings are encoded once per change of state.
//
// Assumptions and failure modes:
//   - The socket path must be short enough for a unix socket (≤ 107 bytes). A socket file left
//     there by a killed runtime is removed first, as containerd does; any other file is an error.
//   - Delays and churn ticks run on the injected Clock.
//   - Version, Status and the listings' fields come from the profile (sim-profile.ts): by
//     default runtime name SIM_RUNTIME_NAME, shaped like containerd; `cri-o` answers as CRI-O.
import { lstatSync, rmSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import type { Clock, Timer } from '../../clock/clock.ts';
import { loadCriService } from '../../cri/cri-proto.ts';
import { status as GRPC_STATUS } from '@grpc/grpc-js';
import { CRIO_PROFILE } from './crio-profile.ts';
import { FaultScript, MALFORMED_ANSWER, type SimFault } from './sim-faults.ts';
import { CRI_SIM_METHODS, REFUSED_CRI_METHODS, type CriSimMethod } from './sim-methods.ts';
import { SIM_PROFILE, type SimProfile, type SimProfileName } from './sim-profile.ts';
import { SimState, type SimContainer, type SimCounts, type SimSandbox } from './sim-state.ts';

export { SIM_RUNTIME_NAME, SIM_RUNTIME_VERSION } from './sim-profile.ts';
/** The annotation that carries the padding of an oversized answer. */
export const PADDING_ANNOTATION = 'nodepulse.io/padding';
/** The call log keeps this many most recent events. */
export const CALL_LOG_LIMIT = 1000;
/** Longest unix socket path (sun_path is 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

export interface SimRuntimeOptions {
  /** Where to listen: an absolute path. */
  readonly socketPath: string;
  readonly pods?: number;
  readonly containersPerPod?: number;
  /** Churn exits per second, on the clock; 0 (default) churns only on step(). */
  readonly churnPerSecond?: number;
  /** Seeds ids and churn choices; default 1. */
  readonly seed?: number;
  /** Times delays and churn: the system clock from a main, a manual one in unit tests. */
  readonly clock: Clock;
  readonly runtimeReady?: boolean;
  readonly networkReady?: boolean;
  /** Which runtime it answers as; `nodepulse-sim` by default. */
  readonly profile?: SimProfileName;
}

export interface SimConditions {
  readonly runtimeReady?: boolean;
  readonly networkReady?: boolean;
}

export type SimCallEventKind = 'received' | 'answered' | 'failed' | 'cancelled' | 'unexpected';

export interface SimCallEvent {
  readonly seq: number;
  readonly method: string;
  readonly event: SimCallEventKind;
}

export interface SimCallCounts {
  readonly received: Readonly<Record<string, number>>;
  readonly answered: Readonly<Record<string, number>>;
  readonly failed: Readonly<Record<string, number>>;
  readonly cancelled: Readonly<Record<string, number>>;
  /** Calls outside the six, and filters it does not support. */
  readonly unexpected: number;
}

export interface SimRuntime {
  readonly socketPath: string;
  /** The runtime it answers as. */
  readonly profile: SimProfileName;
  /** unix:///path, for a RuntimeClient. */
  readonly endpoint: string;
  setPods(pods: number, containersPerPod: number): void;
  /** One churn step with `count` exits (default 1). */
  step(count?: number): void;
  addFault(fault: SimFault): void;
  clearFaults(): void;
  activeFaults(): SimFault[];
  /** Pads each non-empty listing past this many bytes; undefined stops padding. */
  setOversize(bytes: number | undefined): void;
  setConditions(conditions: SimConditions): void;
  calls(): SimCallCounts;
  callLog(): readonly SimCallEvent[];
  /** Calls accepted and held by a hang fault. */
  hangingCalls(): number;
  counts(): SimCounts;
  sandboxes(): readonly SimSandbox[];
  containers(): readonly SimContainer[];
  close(): Promise<void>;
}

class SimStatusError extends Error {
  readonly code: number;
  readonly details: string;
  readonly unexpected: boolean;

  constructor(code: number, details: string, unexpected = false) {
    super(details);
    this.code = code;
    this.details = details;
    this.unexpected = unexpected;
  }
}

/** Starts the simulated runtime and resolves once it listens on the socket. */
export async function startSimRuntime(options: SimRuntimeOptions): Promise<SimRuntime> {
  const socketPath = options.socketPath;
  if (!socketPath.startsWith('/')) throw new RangeError(`socketPath: ${JSON.stringify(socketPath)} must be an absolute path`);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    throw new RangeError(`socketPath: ${socketPath} must be at most ${MAX_SOCKET_PATH_BYTES} bytes long`);
  }
  const churnPerSecond = options.churnPerSecond ?? 0;
  if (!Number.isInteger(churnPerSecond) || churnPerSecond < 0) {
    throw new RangeError(`churnPerSecond: ${churnPerSecond} must be a whole number ≥ 0`);
  }
  const { clock } = options;
  const service = await loadCriService();
  const state = new SimState(options.seed === undefined ? { clock } : { clock, seed: options.seed });
  state.setPods(options.pods ?? 0, options.containersPerPod ?? 1);
  const faults = new FaultScript();
  const profile: SimProfile = options.profile === 'cri-o' ? CRIO_PROFILE : SIM_PROFILE;
  let conditions = { runtimeReady: options.runtimeReady ?? true, networkReady: options.networkReady ?? true };
  profile.checkConditions(conditions);
  let oversizeBytes: number | undefined;

  const counts = {
    received: {} as Record<string, number>,
    answered: {} as Record<string, number>,
    failed: {} as Record<string, number>,
    cancelled: {} as Record<string, number>,
    unexpected: 0,
  };
  let log: SimCallEvent[] = [];
  let seq = 0;
  const record = (method: string, event: SimCallEventKind): void => {
    if (event === 'unexpected') counts.unexpected++;
    else counts[event][method] = (counts[event][method] ?? 0) + 1;
    log.push({ seq: seq++, method, event });
    if (log.length > CALL_LOG_LIMIT * 2) log = log.slice(-CALL_LOG_LIMIT);
  };

  const hung = new Set<() => void>();
  const timers = new Set<Timer>();

  // Encoded listings, cached per (state generation, padding).
  const encode = (method: CriSimMethod, value: object): Buffer => {
    const definition = service[method];
    if (definition === undefined) throw new Error(`proto/ declares no ${method}`);
    return definition.responseSerialize(value);
  };
  let cache: { generation: number; oversize: number | undefined; pods: Buffer; containers: Buffer } | undefined;
  const listings = (): { pods: Buffer; containers: Buffer } => {
    if (cache === undefined || cache.generation !== state.generation || cache.oversize !== oversizeBytes) {
      cache = {
        generation: state.generation,
        oversize: oversizeBytes,
        pods: encode('ListPodSandbox', { items: padFirst(state.sandboxes().map(profile.sandbox), oversizeBytes) }),
        containers: encode('ListContainers', { containers: padFirst(state.containers().map(profile.container), oversizeBytes) }),
      };
    }
    return cache;
  };

  const answers: Record<CriSimMethod, (request: Record<string, unknown>) => unknown> = {
    Version: () => profile.version(),
    Status: (request) => profile.status(conditions, request['verbose'] === true),
    ListPodSandbox: (request) => {
      const filter = request['filter'] as { id?: string; state?: { state?: string } | null; labelSelector?: Record<string, string> } | null;
      if (filter === null || filter === undefined) return listings().pods;
      rejectLabelSelector(filter.labelSelector);
      const items = state
        .sandboxes()
        .filter((s) => (filter.id === undefined || filter.id === '' || s.id.startsWith(filter.id)) && (filter.state === null || filter.state === undefined || s.state === filter.state.state))
        .map(profile.sandbox);
      return encode('ListPodSandbox', { items: padFirst(items, oversizeBytes) });
    },
    ListContainers: (request) => {
      const filter = request['filter'] as {
        id?: string;
        podSandboxId?: string;
        state?: { state?: string } | null;
        labelSelector?: Record<string, string>;
      } | null;
      if (filter === null || filter === undefined) return listings().containers;
      rejectLabelSelector(filter.labelSelector);
      const items = state
        .containers()
        .filter(
          (c) =>
            (filter.id === undefined || filter.id === '' || c.id.startsWith(filter.id)) &&
            (filter.podSandboxId === undefined || filter.podSandboxId === '' || c.podSandboxId.startsWith(filter.podSandboxId)) &&
            (filter.state === null || filter.state === undefined || c.state === filter.state.state),
        )
        .map(profile.container);
      return encode('ListContainers', { containers: padFirst(items, oversizeBytes) });
    },
    PodSandboxStatus: (request) => {
      const id = String(request['podSandboxId'] ?? '');
      const sandbox = state.sandbox(id);
      if (sandbox === undefined) {
        throw new SimStatusError(GRPC_STATUS.NOT_FOUND, `an error occurred when try to find sandbox "${id}": not found`);
      }
      const containers = state.containers().filter((c) => c.podSandboxId === id);
      return {
        status: {
          id: sandbox.id,
          metadata: { name: sandbox.name, uid: sandbox.uid, namespace: sandbox.namespace, attempt: sandbox.attempt },
          state: sandbox.state,
          createdAt: sandbox.createdAtNs.toString(),
          network: { ip: sandbox.ip, additionalIps: [] },
          linux: { namespaces: { options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } } },
          labels: sandbox.labels,
          annotations: sandbox.annotations,
          runtimeHandler: sandbox.runtimeHandler,
        },
        info: request['verbose'] === true ? { info: JSON.stringify({ pid: 4242, processStatus: 'running' }) } : {},
        containersStatuses: request['verbose'] === true ? containers.map(containerStatusMessage) : [],
        timestamp: '0',
      };
    },
    ContainerStatus: (request) => {
      const id = String(request['containerId'] ?? '');
      const container = state.container(id);
      if (container === undefined) {
        throw new SimStatusError(GRPC_STATUS.NOT_FOUND, `an error occurred when try to find container "${id}": not found`);
      }
      return {
        status: containerStatusMessage(container),
        info: request['verbose'] === true ? { info: JSON.stringify({ pid: 4243, sandboxID: container.podSandboxId }) } : {},
      };
    },
  };

  const server = new grpc.Server({ 'grpc.max_send_message_length': -1 });
  for (const method of CRI_SIM_METHODS) {
    const definition = service[method];
    if (definition === undefined) throw new Error(`proto/ declares no ${method}`);
    // Listings are encoded ahead (listings()), and a malformed answer is bytes as they are.
    const serialize = (value: unknown): Buffer => (Buffer.isBuffer(value) ? value : definition.responseSerialize(value as object));
    server.register<Record<string, unknown>, unknown>(
      definition.path,
      (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        handle(method, call, callback);
      },
      serialize,
      (bytes: Buffer) => definition.requestDeserialize(bytes) as Record<string, unknown>,
      'unary',
    );
  }
  for (const [serviceName, methods] of Object.entries(REFUSED_CRI_METHODS)) {
    for (const { name, stream } of methods) {
      const path = `/${serviceName}/${name}`;
      const details = `nodepulse-sim: ${serviceName}/${name} is not served: only the six read-only calls are`;
      const refuse = (): void => {
        record(name, 'received');
        record(name, 'unexpected');
        record(name, 'failed');
      };
      const identity = (b: Buffer): Buffer => b;
      if (stream) {
        server.register<Buffer, Buffer>(
          path,
          (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
            refuse();
            call.emit('error', statusError(GRPC_STATUS.UNIMPLEMENTED, details));
          },
          identity,
          identity,
          'serverStream',
        );
      } else {
        server.register<Buffer, Buffer>(
          path,
          (_call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
            refuse();
            callback(statusError(GRPC_STATUS.UNIMPLEMENTED, details));
          },
          identity,
          identity,
          'unary',
        );
      }
    }
  }

  function handle(
    method: CriSimMethod,
    call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>,
    callback: grpc.sendUnaryData<unknown>,
  ): void {
    record(method, 'received');
    const fault = faults.take(method);
    let finished = false;
    let timer: Timer | undefined;
    const release = (): void => respond(false);
    const respond = (withFault: boolean): void => {
      if (finished) return;
      finished = true;
      hung.delete(release);
      if (timer !== undefined) timers.delete(timer);
      if (withFault && fault?.code !== undefined) {
        record(method, 'failed');
        callback(statusError(fault.code, fault.message ?? `nodepulse-sim: scripted fault (code ${fault.code}) on ${method}`));
        return;
      }
      if (withFault && fault?.malformed === true) {
        record(method, 'answered');
        callback(null, MALFORMED_ANSWER);
        return;
      }
      let value: unknown;
      try {
        value = answers[method](call.request);
      } catch (err) {
        if (err instanceof SimStatusError) {
          if (err.unexpected) record(method, 'unexpected');
          record(method, 'failed');
          callback(statusError(err.code, err.details));
          return;
        }
        record(method, 'failed');
        callback(statusError(GRPC_STATUS.INTERNAL, `nodepulse-sim: ${err instanceof Error ? err.message : String(err)}`));
        return;
      }
      record(method, 'answered');
      callback(null, value);
    };
    call.on('cancelled', () => {
      if (finished) return;
      finished = true;
      hung.delete(release);
      if (timer !== undefined) {
        timer.cancel();
        timers.delete(timer);
      }
      record(method, 'cancelled');
    });
    if (fault?.hang === true) {
      hung.add(release);
      return;
    }
    if (fault?.delayMs !== undefined) {
      timer = clock.after(fault.delayMs, () => respond(true));
      timers.add(timer);
      return;
    }
    respond(true);
  }

  removeStaleSocket(socketPath);
  await new Promise<void>((resolve, reject) => {
    server.bindAsync(`unix://${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err === null ? resolve() : reject(err)));
  });

  let churnTimer: Timer | undefined;
  const churn = (): void => {
    churnTimer = clock.after(1000, () => {
      state.step(churnPerSecond);
      churn();
    });
  };
  if (churnPerSecond > 0) churn();

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    profile: profile.name,
    endpoint: `unix://${socketPath}`,
    setPods: (pods, containersPerPod) => state.setPods(pods, containersPerPod),
    step: (count) => state.step(count),
    addFault: (fault) => faults.add(fault),
    clearFaults: () => {
      faults.clear();
      for (const release of [...hung]) release();
    },
    activeFaults: () => faults.active(),
    setOversize: (bytes) => {
      if (bytes !== undefined && (!Number.isInteger(bytes) || bytes < 0)) {
        throw new RangeError(`oversizeBytes: ${bytes} must be a whole number ≥ 0`);
      }
      oversizeBytes = bytes;
    },
    setConditions: (next) => {
      const wanted = {
        runtimeReady: next.runtimeReady ?? conditions.runtimeReady,
        networkReady: next.networkReady ?? conditions.networkReady,
      };
      profile.checkConditions(wanted);
      conditions = wanted;
    },
    calls: () => ({
      received: { ...counts.received },
      answered: { ...counts.answered },
      failed: { ...counts.failed },
      cancelled: { ...counts.cancelled },
      unexpected: counts.unexpected,
    }),
    callLog: () => log.slice(-CALL_LOG_LIMIT),
    hangingCalls: () => hung.size,
    counts: () => state.counts(),
    sandboxes: () => state.sandboxes(),
    containers: () => state.containers(),
    close: () => {
      closing ??= (async () => {
        churnTimer?.cancel();
        for (const timer of timers) timer.cancel();
        timers.clear();
        hung.clear();
        server.forceShutdown();
        rmSync(socketPath, { force: true });
      })();
      return closing;
    },
  };

  function rejectLabelSelector(selector: Record<string, string> | undefined): void {
    if (selector !== undefined && Object.keys(selector).length > 0) {
      throw new SimStatusError(GRPC_STATUS.INVALID_ARGUMENT, 'nodepulse-sim: label_selector filters are not supported', true);
    }
  }
}

function statusError(code: number, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

function removeStaleSocket(path: string): void {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) throw new Error(`socketPath: ${path} must not be an existing file that is not a socket`);
  rmSync(path, { force: true });
}

function containerStatusMessage(c: SimContainer): Record<string, unknown> {
  const exited = c.state === 'CONTAINER_EXITED';
  return {
    id: c.id,
    metadata: { name: c.name, attempt: c.attempt },
    state: c.state,
    createdAt: c.createdAtNs.toString(),
    startedAt: c.startedAtNs.toString(),
    finishedAt: c.finishedAtNs.toString(),
    exitCode: c.exitCode,
    image: { image: c.image, annotations: {} },
    imageRef: c.imageRef,
    reason: exited ? (c.exitCode === 0 ? 'Completed' : 'Error') : '',
    message: '',
    labels: c.labels,
    annotations: c.annotations,
    mounts: [
      {
        containerPath: '/dev/termination-log',
        hostPath: `/var/lib/kubelet/pods/${c.labels['io.kubernetes.pod.uid'] ?? ''}/containers/${c.name}/${c.id.slice(0, 8)}`,
        propagation: 'PROPAGATION_PRIVATE',
      },
    ],
    logPath: c.logPath,
    stopSignal: 'RUNTIME_DEFAULT',
  };
}

/** Pads the first item's annotations so the whole listing is larger than `bytes`. */
function padFirst(items: Record<string, unknown>[], bytes: number | undefined): Record<string, unknown>[] {
  const first = items[0];
  if (bytes === undefined || first === undefined) return items;
  const annotations = { ...(first['annotations'] as Record<string, string>), [PADDING_ANNOTATION]: 'x'.repeat(bytes + 1) };
  return [{ ...first, annotations }, ...items.slice(1)];
}
