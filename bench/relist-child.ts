// One Node.js side of the relist benchmark, in a process of its own (so that its CPU and RSS
// are this side's alone; the runtime runs in yet another process).
//
//   node bench/relist-child.ts --side floor|nodepulse|transport --endpoint unix:///… --warmup W \
//        --max-message-bytes B
//
// | side      | one relist is                                                                  |
// |-----------|--------------------------------------------------------------------------------|
// | floor     | a bare @grpc/grpc-js client with @grpc/proto-loader's full decode (longs:      |
// |           | String, enums: String, defaults: true): ListPodSandbox ∥ ListContainers        |
// | nodepulse | Relister.tick(): the runtime client's relist, the ledger, the lifecycle diff,  |
// |           | the counts, and the agent's metrics for the outcome (recordRelistOutcome)      |
// | transport | grpc-js alone: the same two calls, each answer's bytes counted and never       |
// |           | decoded. What any client on grpc-js pays before it reads an item: no Node.js   |
// |           | relist can cost less, so it shows how much of one is the decode and the        |
// |           | bookkeeping, and how much the calls themselves                                 |
//
// The protocol, shared with the kubelet side (bench/kubelet-cri/main.go), so that the harness
// (relist-sides.ts) drives every side alike and interleaves them:
//   - start: connect, make W warm-up relists (they pay for JIT, connection set-up and the proto
//     load), then print ONE JSON line {side, ready: true, items, bytes};
//   - each stdin line `run N`: N relists back to back, each timed on the monotonic clock, then
//     ONE JSON line {cpuMs, wallsMs, items, bytes, rssMiB, peakRssMiB, heapUsedMiB}. cpuMs is
//     the process's CPU (user + system, process.cpuUsage()) since the previous answer (since the
//     first `run` for the first), so work deferred past one batch (the collector's) is counted
//     against the next, and the sum over batches is every CPU second the side spent measuring;
//   - stdin closed, or `exit`: the client is closed and the process ends with status 0.
// `bytes` is the size of the two received protobuf answers of one relist; `items` is absent for
// the transport side, which never decodes them. Any failed relist ends the process with status 1
// and one line on stderr.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { createRelistMetricsState, recordRelistOutcome } from '../src/agent/relist-metrics.ts';
import { SystemClock } from '../src/clock/clock.ts';
import { CRI_PROTO_FILE, CRI_SERVICE_NAME, findProtoRoot, FULL_DECODE_OPTIONS } from '../src/cri/cri-proto.ts';
import { createRuntimeClient } from '../src/cri/runtime-client.ts';
import { createAgentMetrics } from '../src/metrics/metrics.ts';
import { Relister } from '../src/relist/relister.ts';

/** Each relist's deadline: far above any honest relist here, so only a broken run hits it. */
const RELIST_DEADLINE_MS = 60_000;
/** A relist threshold for the ledger (unused by the measurement, which judges nothing). */
const RELIST_THRESHOLD_MS = 180_000;
const MIB = 1024 * 1024;

export type NodeSideName = 'floor' | 'nodepulse' | 'transport';

/** The ready line. */
export interface SideReady {
  readonly side: string;
  readonly ready: true;
  /** Absent for the transport side, which does not decode the answers. */
  readonly items?: number;
  /** Absent for a side that cannot see the wire (the kubelet's client). */
  readonly bytes?: number;
}

/** The answer to one `run N`. */
export interface SideBatch {
  readonly cpuMs: number;
  readonly wallsMs: readonly number[];
  readonly items?: number;
  readonly bytes?: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  readonly heapUsedMiB?: number;
}

interface Args {
  side: NodeSideName;
  endpoint: string;
  warmup: number;
  maxMessageBytes: number;
}

/** One relist: resolves with the bytes received, and the items where the side decodes them. */
type RelistOnce = () => Promise<{ bytes: number; items?: number }>;

function parse(argv: string[]): Args {
  const { values } = parseArgs({
    args: argv,
    options: {
      side: { type: 'string' },
      endpoint: { type: 'string' },
      warmup: { type: 'string' },
      'max-message-bytes': { type: 'string' },
    },
    strict: true,
  });
  const side = values.side;
  if (side !== 'floor' && side !== 'nodepulse' && side !== 'transport') {
    throw new Error(`--side: ${JSON.stringify(side ?? '')} must be floor, nodepulse or transport`);
  }
  const endpoint = values.endpoint ?? '';
  if (!endpoint.startsWith('unix://')) throw new Error(`--endpoint: ${JSON.stringify(endpoint)} must be a unix:// URL`);
  const whole = (name: string, text: string | undefined, min: number): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: ${JSON.stringify(text ?? '')} must be a whole number ≥ ${min}`);
    return n;
  };
  return {
    side,
    endpoint,
    warmup: whole('warmup', values.warmup, 0),
    maxMessageBytes: whole('max-message-bytes', values['max-message-bytes'], 1),
  };
}

/** The plain grpc-js client the floor and transport sides share: only the receive limit set. */
function plainClient(args: Args): grpc.Client {
  return new grpc.Client(args.endpoint, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': args.maxMessageBytes,
  });
}

/** One unary call through Client.makeUnaryRequest, under the benchmark's deadline. */
function unaryCall<T>(client: grpc.Client, clock: SystemClock, path: string, serialize: (request: unknown) => Buffer, deserialize: (bytes: Buffer) => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = new Date(clock.wallMicros() / 1000 + RELIST_DEADLINE_MS);
    client.makeUnaryRequest(path, serialize, deserialize, {}, new grpc.Metadata(), { deadline }, (err, answer) => {
      if (err === null && answer !== undefined) resolve(answer);
      else reject(err ?? new Error(`${path}: no answer and no error`));
    });
  });
}

/**
 * The floor: proto-loader's full decode over a plain grpc-js client, both calls at once. The
 * calls go through Client.makeUnaryRequest with the loaded method's own serializers, which is
 * what a client class from grpc.loadPackageDefinition() does for each call.
 */
async function floorRelist(args: Args, clock: SystemClock): Promise<{ relist: RelistOnce; close: () => void }> {
  const protoLoader = await import('@grpc/proto-loader');
  const definition = await protoLoader.load(CRI_PROTO_FILE, { ...FULL_DECODE_OPTIONS, includeDirs: [findProtoRoot()] });
  const service = definition[CRI_SERVICE_NAME] as grpc.ServiceDefinition;
  const client = plainClient(args);
  // The received bytes are counted as the answers are decoded; reading a length costs nothing.
  let received = 0;
  const unary = (name: string): Promise<{ items?: unknown[]; containers?: unknown[] }> => {
    const method = service[name];
    if (method === undefined) return Promise.reject(new Error(`proto declares no ${name}`));
    return unaryCall(client, clock, method.path, method.requestSerialize, (bytes) => {
      received += bytes.length;
      return method.responseDeserialize(bytes) as { items?: unknown[]; containers?: unknown[] };
    });
  };
  return {
    relist: async () => {
      received = 0;
      const [sandboxes, containers] = await Promise.all([unary('ListPodSandbox'), unary('ListContainers')]);
      return { bytes: received, items: (sandboxes.items?.length ?? 0) + (containers.containers?.length ?? 0) };
    },
    close: () => client.close(),
  };
}

/**
 * grpc-js alone: the floor's client and calls with an empty request (both list requests are
 * empty messages, which encode to no bytes) and a deserializer that returns the answer's length.
 */
function transportRelist(args: Args, clock: SystemClock): { relist: RelistOnce; close: () => void } {
  const client = plainClient(args);
  const noBytes = Buffer.alloc(0);
  const serialize = (): Buffer => noBytes;
  const length = (bytes: Buffer): number => bytes.length;
  const unary = (name: string): Promise<number> => unaryCall(client, clock, `/${CRI_SERVICE_NAME}/${name}`, serialize, length);
  return {
    relist: async () => {
      const [sandboxes, containers] = await Promise.all([unary('ListPodSandbox'), unary('ListContainers')]);
      return { bytes: sandboxes + containers };
    },
    close: () => client.close(),
  };
}

/** nodepulse: the agent's relist tick with its metrics, on a fresh registry. */
function nodepulseRelist(args: Args, clock: SystemClock): { relist: RelistOnce; close: () => void } {
  const client = createRuntimeClient({ endpoint: args.endpoint, maxMessageBytes: args.maxMessageBytes, clock });
  const metrics = createAgentMetrics(new Registry(), { relistDeadlineMs: RELIST_DEADLINE_MS, version: 'bench', clock });
  const memo = createRelistMetricsState();
  const relister = new Relister({
    client,
    clock,
    deadlineMs: RELIST_DEADLINE_MS,
    thresholdMs: RELIST_THRESHOLD_MS,
    onOutcome: (outcome) => recordRelistOutcome(metrics, memo, outcome),
  });
  return {
    relist: async () => {
      const outcome = await relister.tick();
      if (outcome === undefined || outcome.fault !== undefined) {
        throw new Error(`relist failed: ${outcome?.fault?.code ?? 'aborted'}: ${outcome?.fault?.message ?? ''}`);
      }
      const counts = relister.counts();
      return { bytes: outcome.bytes, items: (counts?.pods ?? 0) + (counts?.containers ?? 0) };
    },
    close: () => client.close(),
  };
}

function write(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const clock = new SystemClock();
  const side = args.side === 'floor' ? await floorRelist(args, clock) : args.side === 'nodepulse' ? nodepulseRelist(args, clock) : transportRelist(args, clock);
  try {
    let last = await side.relist();
    for (let i = 1; i < args.warmup; i++) last = await side.relist();
    write({ side: args.side, ready: true, ...last } satisfies SideReady);
    let mark: NodeJS.CpuUsage | undefined;
    for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
      const command = line.trim();
      if (command === 'exit') break;
      const n = Number(/^run (\d+)$/.exec(command)?.[1]);
      if (!Number.isInteger(n) || n < 1) throw new Error(`command: ${JSON.stringify(command)} must be "run N" (N ≥ 1) or "exit"`);
      mark ??= process.cpuUsage();
      const wallsMs: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = clock.monotonicMs();
        last = await side.relist();
        wallsMs.push(clock.monotonicMs() - t0);
      }
      const now = process.cpuUsage();
      const cpuMs = (now.user - mark.user + now.system - mark.system) / 1000;
      mark = now;
      const memory = process.memoryUsage();
      write({
        cpuMs,
        wallsMs,
        ...last,
        rssMiB: memory.rss / MIB,
        peakRssMiB: (process.resourceUsage().maxRSS * 1024) / MIB,
        heapUsedMiB: memory.heapUsed / MIB,
      } satisfies SideBatch);
    }
  } finally {
    side.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`relist-child: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
