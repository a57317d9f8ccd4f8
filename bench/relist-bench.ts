// The relist comparison: per row (a runtime and a node size), four sides, each a process of its
// own, against one runtime in yet another process, measured in the same sitting and interleaved.
//
// | side      | one relist is                                                                   |
// |-----------|---------------------------------------------------------------------------------|
// | floor     | grpc-js + proto-loader's full decode, ListPodSandbox ∥ ListContainers            |
// | nodepulse | Relister.tick() as the agent runs it (bench/relist-child.ts)                    |
// | kubelet   | kubelet 1.34.4's own CRI client, k8s.io/cri-client (bench/kubelet-cri), the two |
// |           | lists one after the other as the PLEG asks them                                  |
// | transport | grpc-js alone: the same two calls, the answers never decoded: the part of any    |
// |           | Node.js relist that is the calls themselves                                      |
//
// | runtime    | size  | pods × containers per pod | why                                          |
// |------------|-------|---------------------------|----------------------------------------------|
// | simulated  | 0     | 0 × 0                     | the fixed cost of a relist                   |
// | simulated  | 330   | 110 × 3                   | a full default node (kubelet's maxPods)      |
// | simulated  | 1,000 | 100 × 10                  | a dense node                                 |
// | simulated  | 10,000| 1,000 × 10                | far past any real node: ~9.6 MB per relist   |
// | containerd | 0     | 0 × 0                     | the fixed cost, on the runtime users run     |
// | containerd | 330   | 110 × 3 (fewer in --quick)| a full default node, on the runtime users run|
//
// nodepulse's side runs with the agent's Node.js settings and environment
// (src/cli/agent-node-flags.ts), as the agent runs its relist, and so does the transport side
// (the floor's client and calls, nothing decoded), so that nodepulse's cost less the transport's
// is what nodepulse does with the answers; the floor runs with Node's defaults, as a plain
// Node.js client would. The settings cost the relist CPU (V8 stops at
// Maglev: docs/bench.md has the relist with Node's defaults beside it), so the rows give
// nodepulse's cost where users pay it, not its best.
//
// Fairness: the sides start one after the other (each connects and makes its warm-up
// relists), then the measured relists run in ROUNDS: in each round every side makes one batch,
// and the order of the sides rotates from round to round. A shift in the machine's load during
// a row therefore falls on every side alike. Only one side runs at a time; the runtime has the
// other core. Each side counts its own process CPU (user + system) across all its batches and
// the pauses between them (relist-child.ts), divided by its measured relists.
//
// Receive limits: the Node sides get upstream's 16 MiB, and 64 MiB at 10,000 containers, as a
// user would raise --max-message-size. The kubelet's client has a fixed 16 MiB (cri-client's
// maxMsgSize), which holds the largest single answer here (ListContainers at 10,000, ~8 MB).
// The runtime does not churn: every relist of a row gets the same items, which the harness checks
// (floor and nodepulse must also have received the same bytes).
import { join } from 'node:path';
import { AGENT_ENV, AGENT_NODE_FLAGS } from '../src/cli/agent-node-flags.ts';
import type { Clock } from '../src/clock/clock.ts';
import { percentile } from './stats.ts';
import { SideProcess } from './side-process.ts';
import type { SideBatch } from './relist-child.ts';

export type RuntimeKind = 'containerd' | 'simulated';
export type SideName = 'floor' | 'nodepulse' | 'kubelet' | 'transport';

export interface RelistSize {
  readonly containers: number;
  readonly pods: number;
  readonly containersPerPod: number;
  readonly maxMessageBytes: number;
  /** Measured relists per side, in `rounds` equal batches. */
  readonly iterations: number;
  readonly rounds: number;
  readonly warmup: number;
}

export interface SideResult {
  readonly side: SideName;
  readonly iterations: number;
  readonly cpuMsPerRelist: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The two answers' wire size; the kubelet's client does not expose it. */
  readonly bytes?: number;
  readonly rssMiB: number;
  readonly peakRssMiB: number;
  /** Absent for the transport side, which does not decode the answers. */
  readonly items?: number;
}

export interface SizeResult {
  readonly runtime: RuntimeKind;
  readonly containers: number;
  readonly pods: number;
  readonly maxMessageBytes: number;
  readonly floor: SideResult;
  readonly nodepulse: SideResult;
  /** Absent when the kubelet side could not be built (outside CI only). */
  readonly kubelet?: SideResult;
  readonly transport: SideResult;
}

const MIB = 1024 * 1024;
const DEFAULT_LIMIT = 16 * MIB;
const RAISED_LIMIT = 64 * MIB;
/** A side's start (connect + warm-up) and one batch: far above a normal run. */
const START_TIMEOUT_MS = 120_000;
const BATCH_TIMEOUT_MS = 120_000;

/**
 * Relists per side on an empty runtime. An empty relist costs about half a millisecond, nearly
 * all of it grpc-js's two calls on every Node side alike, so the sides differ by less than the
 * machine's load moves them from one second to the next; 3,000 relists in 20 rounds (about 2 s
 * of CPU a side) give that drift more rounds to fall on the sides alike. It still decides which
 * side comes out ahead from run to run: docs/bench.md has the runs.
 */
const EMPTY_RELISTS = 3_000;
const EMPTY_ROUNDS = 20;

/** The simulated runtime's sizes. */
export function simulatedSizes(quick: boolean): RelistSize[] {
  return [
    size(0, 0, 0, quick ? 50 : EMPTY_RELISTS, quick ? 5 : EMPTY_ROUNDS),
    size(330, 110, 3, quick ? 50 : 400, quick ? 5 : 10),
    size(1_000, 100, 10, quick ? 30 : 200, quick ? 5 : 10),
    size(10_000, 1_000, 10, quick ? 5 : 40, quick ? 5 : 8),
  ];
}

/** The real containerd's sizes; `pods` is how many pods the node is filled with. */
export function containerdSizes(quick: boolean, pods: number): RelistSize[] {
  return [size(0, 0, 0, quick ? 50 : EMPTY_RELISTS, quick ? 5 : EMPTY_ROUNDS), size(pods * 3, pods, 3, quick ? 50 : 400, quick ? 5 : 10)];
}

function size(containers: number, pods: number, containersPerPod: number, iterations: number, rounds: number): RelistSize {
  return {
    containers,
    pods,
    containersPerPod,
    maxMessageBytes: containers >= 10_000 ? RAISED_LIMIT : DEFAULT_LIMIT,
    iterations,
    rounds,
    warmup: Math.max(5, Math.round(iterations / 10)),
  };
}

export interface RowOptions {
  readonly root: string;
  readonly runtime: RuntimeKind;
  readonly endpoint: string;
  readonly size: RelistSize;
  /** The kubelet side's binary, or undefined to run without it. */
  readonly kubeletBinary: string | undefined;
  readonly clock: Clock;
  readonly log: (line: string) => void;
}

/** How to start one side: its name, the file to run, its arguments and its environment. */
export interface SideSpec {
  readonly name: SideName;
  readonly file: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * The sides against one runtime: floor, nodepulse, transport and, when its binary is given,
 * kubelet. nodepulse and transport run with the agent's settings (see the header).
 */
export function sideSpecs(endpoint: string, row: Pick<RelistSize, 'warmup' | 'maxMessageBytes'>, kubeletBinary: string | undefined): SideSpec[] {
  const node = (name: 'floor' | 'nodepulse' | 'transport'): SideSpec => {
    const asAgent = name !== 'floor';
    return {
      name,
      file: process.execPath,
      args: [
        ...(asAgent ? AGENT_NODE_FLAGS : []),
        'bench/relist-child.ts', '--side', name, '--endpoint', endpoint, '--warmup', String(row.warmup), '--max-message-bytes', String(row.maxMessageBytes),
      ],
      env: asAgent ? { ...process.env, ...AGENT_ENV } : process.env,
    };
  };
  const specs = [node('floor'), node('nodepulse'), node('transport')];
  if (kubeletBinary !== undefined) specs.push({ name: 'kubelet', file: kubeletBinary, args: ['--endpoint', endpoint, '--warmup', String(row.warmup)], env: process.env });
  return specs;
}

/** One row: every side against one runtime, interleaved in rounds. */
export async function runRow(options: RowOptions): Promise<SizeResult> {
  const { root, runtime, endpoint, size: row, log } = options;
  const specs = sideSpecs(endpoint, row, options.kubeletBinary);

  const sides: { name: SideName; process: SideProcess; bytes: number | undefined; batches: SideBatch[] }[] = [];
  try {
    for (const { name, file, args, env } of specs) {
      const { side, ready } = await SideProcess.start(`${runtime} ${row.containers} ${name}`, file, args, { cwd: root, timeoutMs: START_TIMEOUT_MS, env });
      sides.push({ name, process: side, bytes: ready.bytes, batches: [] });
    }
    const perRound = Math.ceil(row.iterations / row.rounds);
    for (let round = 0; round < row.rounds; round++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(round + k) % sides.length]!;
        side.batches.push(await side.process.run(perRound, BATCH_TIMEOUT_MS));
      }
    }
  } finally {
    await Promise.all(sides.map((s) => s.process.close()));
  }

  const results = new Map<SideName, SideResult>();
  for (const side of sides) {
    const walls = side.batches.flatMap((b) => b.wallsMs);
    const last = side.batches.at(-1)!;
    const cpuMs = side.batches.reduce((sum, b) => sum + b.cpuMs, 0);
    results.set(side.name, {
      side: side.name,
      iterations: walls.length,
      cpuMsPerRelist: cpuMs / walls.length,
      p50Ms: percentile(walls, 0.5),
      p99Ms: percentile(walls, 0.99),
      ...(last.bytes === undefined ? {} : { bytes: last.bytes }),
      rssMiB: last.rssMiB,
      peakRssMiB: last.peakRssMiB,
      ...(last.items === undefined ? {} : { items: last.items }),
    });
  }
  const floor = results.get('floor')!;
  const nodepulse = results.get('nodepulse')!;
  const transport = results.get('transport')!;
  const kubelet = results.get('kubelet');
  const where = `${runtime} ${row.containers}`;
  assertSameAnswers(where, { floor, nodepulse, transport, kubelet });
  const expected = row.pods + row.containers;
  if (floor.items !== expected) throw new Error(`${where}: the runtime listed ${floor.items} items, it must list ${row.pods} pods and ${row.containers} containers`);
  log(
    `relist ${where}: CPU ms per relist floor ${floor.cpuMsPerRelist.toFixed(2)}, nodepulse ${nodepulse.cpuMsPerRelist.toFixed(2)}, transport ${transport.cpuMsPerRelist.toFixed(2)}` +
      (kubelet === undefined ? '' : `, kubelet ${kubelet.cpuMsPerRelist.toFixed(2)}`),
  );
  return { runtime, containers: row.containers, pods: row.pods, maxMessageBytes: row.maxMessageBytes, floor, nodepulse, ...(kubelet === undefined ? {} : { kubelet }), transport };
}

/** What a side received, as far as it can tell: the wire bytes (not the kubelet's) and the items (not transport's). */
interface Received {
  readonly items?: number;
  readonly bytes?: number;
}

/**
 * Throws unless every side got the same answers: floor and nodepulse the same items and bytes,
 * transport the floor's bytes, kubelet (when it ran) the floor's items.
 */
export function assertSameAnswers(where: string, sides: { floor: Received; nodepulse: Received; transport: Received; kubelet: Received | undefined }): void {
  const { floor, nodepulse, transport, kubelet } = sides;
  if (floor.items !== nodepulse.items || floor.bytes !== nodepulse.bytes || transport.bytes !== floor.bytes) {
    throw new Error(
      `${where}: floor received ${floor.items} items in ${floor.bytes} bytes, nodepulse ${nodepulse.items} in ${nodepulse.bytes} and transport ${transport.bytes} bytes; they must get the same answers`,
    );
  }
  if (kubelet !== undefined && kubelet.items !== floor.items) throw new Error(`${where}: kubelet received ${kubelet.items} items and floor ${floor.items}; they must get the same answers`);
}

/** Socket path for a simulated row, in the bench's temp dir. */
export function simSocket(dir: string, size: RelistSize): string {
  return join(dir, `cri-${size.containers}.sock`);
}
