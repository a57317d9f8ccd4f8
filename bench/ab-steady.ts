// A/B of the agent's steady state: candidate builds or Node.js settings measured alone against
// each other, on one real containerd node, in one sitting.
//
//   node bench/ab-steady.ts --variants FILE [--rounds 4] [--window 30] [--pods 110] [--json OUT]
//                           [--endpoint unix:///… --containers N]
//
// FILE is JSON: [{ "name": "base", "repo": "/path/to/a/checkout", "nodeFlags": [...], "env": {...},
// "args": [...] }, …].
// Each variant's repo must hold a built dist/; it is bundled as the image bundles it
// (scripts/bundle.ts) and run by bench/agent-bench.ts's runSteadyState, as `npm run bench` runs the
// agent (in a pod's shape, in-cluster, against the API stand-in). nodeFlags and env default to
// the agent's own (src/cli/agent-node-flags.ts); give them to measure a setting alone. With
// --endpoint, the agents relist a containerd already filled (bench/hold-containerd.ts) instead of
// one started and filled here.
//
// The variants take turns, one window each per round, the order rotating every round, so a
// change in the machine's load falls on each alike; the load average is printed with every
// window. Prints one line per window and, at the end, each variant's range and median.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleCommands } from '../scripts/bundle.ts';
import { SystemClock } from '../src/clock/clock.ts';
import { runSteadyState, type AgentShape, type SteadyState } from './agent-bench.ts';
import { emptyNode, fillNode, startBenchContainerd } from './containerd-node.ts';

interface Variant extends AgentShape {
  readonly name: string;
  readonly repo: string;
  /** Agent flags beyond the defaults (a longer relist period, to measure the rest of the agent). */
  readonly args?: readonly string[];
}

const clock = new SystemClock();
const log = (line: string): void => void process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      variants: { type: 'string' },
      rounds: { type: 'string', default: '4' },
      window: { type: 'string', default: '30' },
      pods: { type: 'string', default: '110' },
      json: { type: 'string' },
      endpoint: { type: 'string' },
      containers: { type: 'string', default: '330' },
    },
    strict: true,
  });
  if (values.variants === undefined) throw new Error('--variants: a JSON file must be given');
  const variants = JSON.parse(readFileSync(values.variants, 'utf8')) as Variant[];
  const rounds = Number(values.rounds);
  const windowMs = Number(values.window) * 1000;
  const pods = Number(values.pods);
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-bench-ab-'));
  const results: Array<{ variant: string; round: number; load1: number; steady: SteadyState }> = [];
  try {
    const bundles = new Map<string, string>();
    for (const v of variants) {
      const out = join(dir, `bundle-${v.name}`);
      await bundleCommands({ repoRoot: v.repo, outDir: out });
      bundles.set(v.name, out);
    }
    const measure = async (endpoint: string, containers: number): Promise<void> => {
      for (let round = 0; round < rounds; round++) {
        for (let k = 0; k < variants.length; k++) {
          const v = variants[(k + round) % variants.length]!;
          const { steady } = await runSteadyState({
            agentDir: bundles.get(v.name)!,
            dir,
            windowMs,
            endpoint,
            runtime: 'containerd',
            containers,
            ...(v.args === undefined ? {} : { agentArgs: v.args }),
            shape: { ...(v.nodeFlags === undefined ? {} : { nodeFlags: v.nodeFlags }), ...(v.env === undefined ? {} : { env: v.env }) },
            log,
          });
          const load1 = loadavg()[0] ?? 0;
          results.push({ variant: v.name, round, load1, steady });
          process.stdout.write(`round ${round} ${v.name.padEnd(16)} cpu ${steady.cpuPercentOfOneCore.toFixed(3)} %  rss ${steady.rssMiB.toFixed(1)} MiB (anon ${steady.rssAnonMiB.toFixed(1)})  heap ${steady.heapUsedMiB.toFixed(1)}/${steady.heapTotalMiB.toFixed(1)}  relists ${steady.relists}  load ${load1.toFixed(2)}\n`);
        }
      }
    };
    if (values.endpoint !== undefined) {
      await measure(values.endpoint, Number(values.containers));
    } else {
      const fixture = await startBenchContainerd(clock);
      try {
        const fill = await fillNode(fixture, { pods, containersPerPod: 3, clock, log });
        await measure(fixture.endpoint, fill.containers);
        await emptyNode(fixture, { clock, log });
      } finally {
        await fixture.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const v of variants) {
    const mine = results.filter((r) => r.variant === v.name);
    const cpu = mine.map((r) => r.steady.cpuPercentOfOneCore).sort((a, b) => a - b);
    const rss = mine.map((r) => r.steady.rssMiB).sort((a, b) => a - b);
    const mid = (xs: number[]): number => xs[Math.floor(xs.length / 2)] ?? Number.NaN;
    process.stdout.write(`${v.name.padEnd(16)} cpu ${cpu[0]?.toFixed(2)}–${cpu.at(-1)?.toFixed(2)} % (median ${mid(cpu).toFixed(2)})  rss ${rss[0]?.toFixed(1)}–${rss.at(-1)?.toFixed(1)} MiB\n`);
  }
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(results, null, 2)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`ab-steady: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
