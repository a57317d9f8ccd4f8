// `npm run bench`: nodepulse beside its floor, the agent's steady state, its memory, its lease
// write cost and its latencies (issue 7). Prints a Markdown report on stdout; progress goes to
// stderr.
//
//   node bench/run.ts [--quick] [--json FILE] [--only relist,steady,latency,rss] [--no-containerd]
//
// - --quick: the same sizes and sections with fewer iterations, a 8 s steady-state window and one
//   run per RSS line, and no real containerd (under a minute; CI runs it, see
//   test/bench/bench-quick.test.ts). The report says when it is quick.
// - --json FILE: also writes the result as JSON: { quick, machine, sizes: [ { containers, pods,
//   maxMessageBytes, floor: {cpuMsPerRelist, p50Ms, p99Ms, bytes, rssMiB, …}, nodepulse: {…} } ],
//   steadyState, lease, latencies, rssBreakdown, notes }.
// - --only: run some sections only (for working on one of them).
// - --no-containerd: skip the real-containerd latencies even when they could run (they need root
//   and containerd, ctr, runc and busybox on PATH; otherwise they are skipped and the report
//   says so).
//
// Needs the built agent (dist/; `npm run bench` builds it first). Everything runs on loopback and
// on unix sockets in a temp dir that is removed at the end; every process it starts is stopped.
// Exit codes: 0 done, 1 a measurement failed, 2 bad arguments.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runLatencies, runSteadyState, simRuntime, type Latencies, type RuntimeControl } from './agent-bench.ts';
import { relistSizes, runRelistBench } from './relist-bench.ts';
import { renderReport, type BenchResult } from './report.ts';
import { runRssBreakdown } from './rss-breakdown.ts';

const SECTIONS = ['relist', 'steady', 'latency', 'rss'] as const;
type Section = (typeof SECTIONS)[number];
const FULL_WINDOW_MS = 60_000;
const QUICK_WINDOW_MS = 8_000;
const CONTAINERD_TOOLS = ['containerd', 'ctr', 'runc', 'busybox'] as const;

interface Args {
  quick: boolean;
  json: string | undefined;
  only: ReadonlySet<Section>;
  containerd: boolean;
}

function parse(argv: string[]): Args {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'string' },
      only: { type: 'string' },
      'no-containerd': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const only = new Set<Section>();
  for (const name of (values.only ?? SECTIONS.join(',')).split(',')) {
    if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--only: ${JSON.stringify(name)} must be one of ${SECTIONS.join(', ')}`);
    only.add(name as Section);
  }
  if (values.json === '') throw new Error('--json: "" must be a file path');
  return { quick: values.quick, json: values.json, only, containerd: !values['no-containerd'] && !values.quick };
}

/** Why a real containerd cannot run here, or undefined when it can. */
async function containerdUnavailable(): Promise<string | undefined> {
  const { findExecutable, isRoot } = await import('../test/support/require.ts');
  const missing = CONTAINERD_TOOLS.filter((tool) => findExecutable(tool) === undefined);
  if (missing.length > 0) return `${missing.join(', ')} not on PATH`;
  if (!isRoot()) return 'not root';
  return undefined;
}

/** A real containerd (test/fixtures/containerd.ts) as a RuntimeControl: kill() and restart(). */
async function containerdRuntime(): Promise<RuntimeControl> {
  const { startContainerd } = await import('../test/fixtures/containerd.ts');
  const fixture = await startContainerd();
  return {
    name: 'containerd (real)',
    endpoint: fixture.endpoint,
    stop: () => fixture.kill(),
    start: () => fixture.restart(),
    async close() {
      await fixture.close();
    },
  };
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parse(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const needsAgent = args.only.has('steady') || args.only.has('latency') || args.only.has('rss');
  if (needsAgent && !existsSync(join(root, 'dist/src/cli/main.js'))) {
    process.stderr.write('bench: dist/src/cli/main.js must exist: run `npm run build` first (`npm run bench` does)\n');
    return 1;
  }
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-bench-'));
  const notes: string[] = [
    'CPU is the measuring process\'s own (process.cpuUsage: user + system); the simulated runtime runs in another process and is not counted.',
    'Relist RSS is at the end of back-to-back relists, in a process that runs TypeScript through Node\'s type stripper (about +19 MiB on both sides); the agent runs compiled JavaScript from dist/.',
  ];
  const result: { -readonly [K in keyof BenchResult]: BenchResult[K] } = {
    quick: args.quick,
    machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown' },
    sizes: [],
    notes,
  };
  try {
    if (args.only.has('relist')) {
      result.sizes = await runRelistBench({ root, dir, sizes: relistSizes(args.quick), log });
    }
    if (args.only.has('steady')) {
      const windowMs = args.quick ? QUICK_WINDOW_MS : FULL_WINDOW_MS;
      const steady = await runSteadyState({ root, dir, windowMs, log });
      result.steadyState = steady.steady;
      result.lease = steady.lease;
      if (args.quick) notes.push(`--quick: the steady-state window is ${QUICK_WINDOW_MS / 1000} s, not ${FULL_WINDOW_MS / 1000} s.`);
    }
    if (args.only.has('latency')) {
      const latencies: Record<string, Latencies> = {};
      const sim = await simRuntime(root, dir);
      try {
        latencies[sim.name] = await runLatencies({ root, dir, runtime: sim, log });
      } finally {
        await sim.close();
      }
      const why = args.containerd ? await containerdUnavailable() : args.quick ? '--quick' : '--no-containerd';
      if (why === undefined) {
        const containerd = await containerdRuntime();
        try {
          latencies[containerd.name] = await runLatencies({ root, dir, runtime: containerd, log });
        } finally {
          await containerd.close();
        }
      } else {
        notes.push(`Real containerd latencies skipped: ${why}.`);
      }
      result.latencies = latencies;
    }
    if (args.only.has('rss')) {
      log('RSS breakdown');
      result.rssBreakdown = await runRssBreakdown(root, args.quick ? 1 : 3);
    }
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const report = renderReport(result);
  process.stdout.write(report);
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
