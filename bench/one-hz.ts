// The relist at the agent's own rate: every side of the relist benchmark (relist-bench.ts) makes
// one relist a second, all of them together, against one runtime.
//
// Why beside the back-to-back rows: the agent relists once a second, and a relist once a second
// runs on cold caches and leaves its garbage to collections that fall between relists, so it costs
// several times what the same relist costs back to back, on every side, Go's included. The
// steady state's CPU target is for the agent at 1 Hz; this section gives what each client's relist
// alone costs at that rate, so the target can be read against what grpc-js's calls alone and
// kubelet's own client cost there.
//
// How: the sides start one after the other (each connects and makes its warm-up relists back to
// back), then side k of n makes its i-th relist at start + i s + k/n s, so no two sides relist at
// once and each second's load falls on all of them alike. The first warmSeconds relists settle the
// 1 Hz rhythm and are not counted. A side's CPU is its process's (user + system, relist-child.ts's
// protocol) from the answer of the last unmeasured relist to the answer of the last one, so the
// idle second after each relist and the collections in it are counted; divided by that time, it
// is CPU per second, which at one relist a second is also CPU per relist.
import type { Clock } from '../src/clock/clock.ts';
import { assertSameAnswers, sideSpecs, type RuntimeKind, type SideName } from './relist-bench.ts';
import type { SideBatch } from './relist-child.ts';
import { SideProcess } from './side-process.ts';
import { percentile } from './stats.ts';

export interface OneHzSide {
  readonly side: SideName;
  readonly relists: number;
  readonly cpuMsPerSecond: number;
  readonly percentOfOneCore: number;
  readonly p50Ms: number;
  readonly rssMiB: number;
  readonly bytes?: number;
  readonly items?: number;
}

export interface OneHzResult {
  readonly runtime: RuntimeKind;
  readonly containers: number;
  readonly pods: number;
  readonly warmSeconds: number;
  readonly seconds: number;
  readonly floor: OneHzSide;
  readonly nodepulse: OneHzSide;
  readonly transport: OneHzSide;
  /** Absent when the kubelet side could not be built (outside CI only). */
  readonly kubelet?: OneHzSide;
}

export interface OneHzOptions {
  readonly root: string;
  readonly runtime: RuntimeKind;
  readonly endpoint: string;
  readonly pods: number;
  readonly containers: number;
  readonly maxMessageBytes: number;
  /** Relists back to back at start (JIT, connection, proto load). */
  readonly warmup: number;
  /** Seconds at 1 Hz before the measured ones. At least 1: it is where the measured CPU starts. */
  readonly warmSeconds: number;
  readonly seconds: number;
  readonly kubeletBinary: string | undefined;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}

/** A side's start (connect + warm-up) and one relist: far above a normal run. */
const START_TIMEOUT_MS = 120_000;
const RELIST_TIMEOUT_MS = 60_000;

export async function runOneHz(options: OneHzOptions): Promise<OneHzResult> {
  const { clock, warmSeconds, seconds } = options;
  if (!Number.isInteger(warmSeconds) || warmSeconds < 1) throw new RangeError(`warmSeconds: ${warmSeconds} must be a whole number ≥ 1`);
  if (!Number.isInteger(seconds) || seconds < 1) throw new RangeError(`seconds: ${seconds} must be a whole number ≥ 1`);
  const where = `1 Hz ${options.runtime} ${options.containers}`;
  const specs = sideSpecs(options.endpoint, { warmup: options.warmup, maxMessageBytes: options.maxMessageBytes }, options.kubeletBinary);
  const sides: { name: SideName; process: SideProcess }[] = [];
  const measured = new Map<SideName, { batches: SideBatch[]; firstMs: number; lastMs: number }>();
  try {
    for (const { name, file, args, env } of specs) {
      const { side } = await SideProcess.start(`${where} ${name}`, file, args, { cwd: options.root, timeoutMs: START_TIMEOUT_MS, env });
      sides.push({ name, process: side });
    }
    options.log(`${where}: ${sides.length} sides, one relist a second each, ${warmSeconds} s unmeasured then ${seconds} s`);
    const startMs = clock.monotonicMs() + 1000;
    await Promise.all(
      sides.map(async ({ name, process: side }, k) => {
        const record = { batches: [] as SideBatch[], firstMs: 0, lastMs: 0 };
        for (let i = 0; i < warmSeconds + seconds; i++) {
          const dueMs = startMs + i * 1000 + (k * 1000) / sides.length;
          const waitMs = dueMs - clock.monotonicMs();
          if (waitMs > 0) await clock.sleep(waitMs);
          const batch = await side.run(1, RELIST_TIMEOUT_MS);
          const answeredMs = clock.monotonicMs();
          if (i === warmSeconds - 1) record.firstMs = answeredMs;
          if (i >= warmSeconds) {
            record.batches.push(batch);
            record.lastMs = answeredMs;
          }
        }
        measured.set(name, record);
      }),
    );
  } finally {
    await Promise.all(sides.map((s) => s.process.close()));
  }

  const result = (name: SideName): OneHzSide | undefined => {
    const record = measured.get(name);
    if (record === undefined) return undefined;
    const last = record.batches.at(-1)!;
    const cpuMsPerSecond = record.batches.reduce((sum, b) => sum + b.cpuMs, 0) / ((record.lastMs - record.firstMs) / 1000);
    return {
      side: name,
      relists: record.batches.length,
      cpuMsPerSecond,
      percentOfOneCore: cpuMsPerSecond / 10,
      p50Ms: percentile(record.batches.flatMap((b) => b.wallsMs), 0.5),
      rssMiB: last.rssMiB,
      ...(last.bytes === undefined ? {} : { bytes: last.bytes }),
      ...(last.items === undefined ? {} : { items: last.items }),
    };
  };
  const floor = result('floor')!;
  const nodepulse = result('nodepulse')!;
  const transport = result('transport')!;
  const kubelet = result('kubelet');
  assertSameAnswers(where, { floor, nodepulse, transport, kubelet });
  options.log(
    `${where}: CPU ms per second floor ${floor.cpuMsPerSecond.toFixed(2)}, nodepulse ${nodepulse.cpuMsPerSecond.toFixed(2)}, transport ${transport.cpuMsPerSecond.toFixed(2)}` +
      (kubelet === undefined ? '' : `, kubelet ${kubelet.cpuMsPerSecond.toFixed(2)}`),
  );
  return {
    runtime: options.runtime,
    containers: options.containers,
    pods: options.pods,
    warmSeconds,
    seconds,
    floor,
    nodepulse,
    transport,
    ...(kubelet === undefined ? {} : { kubelet }),
  };
}
