// One side of the relist benchmark, in a process of its own (so that process.cpuUsage() and the
// RSS are this side's alone; the simulated runtime runs in yet another process).
//
//   node bench/relist-child.ts --side floor|nodepulse --endpoint unix:///… \
//        --iterations N --warmup W --max-message-bytes B
//
// | side      | one relist is                                                                  |
// |-----------|--------------------------------------------------------------------------------|
// | floor     | a bare @grpc/grpc-js client with @grpc/proto-loader's full decode (longs:      |
// |           | String, enums: String, defaults: true): ListPodSandbox ∥ ListContainers        |
// | nodepulse | Relister.tick(): the runtime client's relist, the ledger, the lifecycle diff,  |
// |           | the counts, and the agent's metrics for the outcome (recordRelistOutcome)      |
//
// Relists run back to back (each awaits the previous one). W warm-up relists are not measured:
// they pay for JIT, connection set-up and the first proto load. Then N relists are timed on the
// monotonic clock, and the process's CPU (user + system) is read before and after all N. Wall
// time per relist includes the runtime's own answer time, CPU does not (the runtime is another
// process).
//
// Prints ONE JSON line on stdout: { side, iterations, cpuMsPerRelist, p50Ms, p99Ms, bytes,
// rssMiB, peakRssMiB, heapUsedMiB, items }. `bytes` is the size of the two received protobuf
// answers of one relist. Any failed relist fails the run: exit 1 with one line on stderr.
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { Registry } from 'prom-client';
import { createRelistMetricsState, recordRelistOutcome } from '../src/agent/relist-metrics.ts';
import { SystemClock } from '../src/clock/clock.ts';
import { CRI_PROTO_FILE, CRI_SERVICE_NAME, findProtoRoot, FULL_DECODE_OPTIONS } from '../src/cri/cri-proto.ts';
import { createRuntimeClient } from '../src/cri/runtime-client.ts';
import { createAgentMetrics } from '../src/metrics/metrics.ts';
import { Relister } from '../src/relist/relister.ts';
import { percentile } from './stats.ts';

/** Each relist's deadline: far above any honest relist here, so only a broken run hits it. */
const RELIST_DEADLINE_MS = 60_000;
/** A relist threshold for the ledger (unused by the measurement, which judges nothing). */
const RELIST_THRESHOLD_MS = 180_000;
const MIB = 1024 * 1024;

export interface SideResult {
  readonly side: 'floor' | 'nodepulse';
  readonly iterations: number;
  readonly cpuMsPerRelist: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly bytes: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  readonly heapUsedMiB: number;
  readonly items: number;
}

interface Args {
  side: 'floor' | 'nodepulse';
  endpoint: string;
  iterations: number;
  warmup: number;
  maxMessageBytes: number;
}

/** One relist: resolves with the bytes and items received. */
type RelistOnce = () => Promise<{ bytes: number; items: number }>;

function parse(argv: string[]): Args {
  const { values } = parseArgs({
    args: argv,
    options: {
      side: { type: 'string' },
      endpoint: { type: 'string' },
      iterations: { type: 'string' },
      warmup: { type: 'string' },
      'max-message-bytes': { type: 'string' },
    },
    strict: true,
  });
  const side = values.side;
  if (side !== 'floor' && side !== 'nodepulse') throw new Error(`--side: ${JSON.stringify(side ?? '')} must be floor or nodepulse`);
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
    iterations: whole('iterations', values.iterations, 1),
    warmup: whole('warmup', values.warmup, 0),
    maxMessageBytes: whole('max-message-bytes', values['max-message-bytes'], 1),
  };
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
  const client = new grpc.Client(args.endpoint, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': args.maxMessageBytes,
  });
  // The received bytes are counted as the answers are decoded; reading a length costs nothing.
  let received = 0;
  const unary = (name: string): Promise<{ items?: unknown[]; containers?: unknown[] }> => {
    const method = service[name];
    if (method === undefined) return Promise.reject(new Error(`proto declares no ${name}`));
    const decode = (bytes: Buffer): { items?: unknown[]; containers?: unknown[] } => {
      received += bytes.length;
      return method.responseDeserialize(bytes) as { items?: unknown[]; containers?: unknown[] };
    };
    return new Promise((resolve, reject) => {
      const deadline = new Date(clock.wallMicros() / 1000 + RELIST_DEADLINE_MS);
      client.makeUnaryRequest(method.path, method.requestSerialize, decode, {}, new grpc.Metadata(), { deadline }, (err, answer) => {
        if (err === null && answer !== undefined) resolve(answer);
        else reject(err ?? new Error(`${name}: no answer and no error`));
      });
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
    onOutcome: (outcome, r) => recordRelistOutcome(metrics, memo, outcome, r),
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

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const clock = new SystemClock();
  const side = args.side === 'floor' ? await floorRelist(args, clock) : nodepulseRelist(args, clock);
  try {
    let last = { bytes: 0, items: 0 };
    for (let i = 0; i < args.warmup; i++) last = await side.relist();
    const walls: number[] = [];
    const cpuBefore = process.cpuUsage();
    for (let i = 0; i < args.iterations; i++) {
      const t0 = clock.monotonicMs();
      last = await side.relist();
      walls.push(clock.monotonicMs() - t0);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const memory = process.memoryUsage();
    const result: SideResult = {
      side: args.side,
      iterations: args.iterations,
      cpuMsPerRelist: (cpu.user + cpu.system) / 1000 / args.iterations,
      p50Ms: percentile(walls, 0.5),
      p99Ms: percentile(walls, 0.99),
      bytes: last.bytes,
      rssMiB: memory.rss / MIB,
      peakRssMiB: (process.resourceUsage().maxRSS * 1024) / MIB,
      heapUsedMiB: memory.heapUsed / MIB,
      items: last.items,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    side.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`relist-child: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
