// The relist comparison: per node size, the floor and nodepulse's full relist tick, each in a
// child process of its own (relist-child.ts) against one simulated runtime in a third process.
//
// | size  | pods × containers per pod | why                                                    |
// |-------|---------------------------|--------------------------------------------------------|
// | 0     | 0 × 0                     | the fixed cost of two calls: gRPC, HTTP/2, the tick    |
// | 330   | 110 × 3                   | a full default node (kubelet's maxPods is 110)         |
// | 1,000 | 100 × 10                  | a dense node                                           |
// | 10,000| 1,000 × 10                | far past any real node: ~9.6 MB per relist             |
//
// At 10,000 both sides get a 64 MiB receive limit, as a user would raise --max-message-size;
// below it, upstream's 16 MiB default. The runtime does not churn: the listing is the same each
// time, so every relist decodes the same bytes (churn would make the two sides decode different
// answers). Each child does its warm-up relists, then the measured ones, back to back.
//
// The floor runs first, then nodepulse, against the same runtime process, which is stopped
// before the next size starts. Only one child runs at a time: on a 2-core machine the runtime
// has the other core.
import { join } from 'node:path';
import { runJsonChild, startServer } from './child-process.ts';
import type { SideResult } from './relist-child.ts';

export interface RelistSize {
  readonly containers: number;
  readonly pods: number;
  readonly containersPerPod: number;
  readonly maxMessageBytes: number;
  readonly iterations: number;
  readonly warmup: number;
}

export interface SizeResult {
  readonly containers: number;
  readonly pods: number;
  readonly maxMessageBytes: number;
  readonly floor: SideResult;
  readonly nodepulse: SideResult;
}

const MIB = 1024 * 1024;
/** Upstream's default receive limit, and the raised one for the 10,000-container listing. */
const DEFAULT_LIMIT = 16 * MIB;
const RAISED_LIMIT = 64 * MIB;
/** The runtime builds 10,000 containers and encodes them once; allow for a slow machine. */
const SIM_START_TIMEOUT_MS = 60_000;
/** One side at one size: far above a normal run (~10 s at 10,000 containers). */
const CHILD_TIMEOUT_MS = 120_000;

export function relistSizes(quick: boolean): RelistSize[] {
  const size = (containers: number, pods: number, containersPerPod: number, iterations: number, quickIterations: number): RelistSize => ({
    containers,
    pods,
    containersPerPod,
    maxMessageBytes: containers >= 10_000 ? RAISED_LIMIT : DEFAULT_LIMIT,
    iterations: quick ? quickIterations : iterations,
    warmup: quick ? Math.min(5, quickIterations) : Math.max(5, Math.round(iterations / 10)),
  });
  return [size(0, 0, 0, 500, 50), size(330, 110, 3, 400, 50), size(1_000, 100, 10, 200, 30), size(10_000, 1_000, 10, 40, 5)];
}

export async function runRelistBench(options: { root: string; dir: string; sizes: readonly RelistSize[]; log: (line: string) => void }): Promise<SizeResult[]> {
  const { root, dir, log } = options;
  const results: SizeResult[] = [];
  for (const size of options.sizes) {
    const socket = join(dir, `cri-${size.containers}.sock`);
    const sim = await startServer<{ endpoint: string }>(
      ['src/stand-ins/cri-runtime/main.ts', '--socket', socket, '--pods', String(size.pods), '--containers-per-pod', String(size.containersPerPod)],
      SIM_START_TIMEOUT_MS,
      root,
    );
    try {
      const side = (name: 'floor' | 'nodepulse'): Promise<SideResult> =>
        runJsonChild<SideResult>(
          [
            'bench/relist-child.ts',
            '--side', name,
            '--endpoint', sim.ready.endpoint,
            '--iterations', String(size.iterations),
            '--warmup', String(size.warmup),
            '--max-message-bytes', String(size.maxMessageBytes),
          ],
          CHILD_TIMEOUT_MS,
          root,
        );
      const floor = await side('floor');
      const nodepulse = await side('nodepulse');
      if (floor.items !== nodepulse.items || floor.bytes !== nodepulse.bytes) throw new Error(`size ${size.containers}: the sides received ${floor.items} items in ${floor.bytes} bytes and ${nodepulse.items} in ${nodepulse.bytes}; they must get the same answers`);
      log(`relist ${size.containers}: floor ${floor.cpuMsPerRelist.toFixed(2)} ms CPU, nodepulse ${nodepulse.cpuMsPerRelist.toFixed(2)} ms CPU`);
      results.push({ containers: size.containers, pods: size.pods, maxMessageBytes: size.maxMessageBytes, floor, nodepulse });
    } finally {
      await sim.stop();
    }
  }
  return results;
}
