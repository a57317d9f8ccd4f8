// `npm run bench`: nodepulse's relist beside its floor, beside grpc-js's calls alone and beside
// kubelet's own CRI client, on a real containerd and on the simulated runtime, back to back and
// once a second as the agent relists; the agent's steady state as it runs in a pod; its memory,
// its lease write cost and its latencies. Prints a Markdown report on stdout;
// progress goes to stderr.
//
//   node bench/run.ts [--quick] [--json FILE] [--only relist,steady,latency,rss] [--no-containerd]
//
// - --quick: the same rows and sections with fewer relists, 8 s at 1 Hz, an 8 s steady-state
//   window, a smaller containerd node (QUICK_CONTAINERD_PODS pods, said in the report), no steady
//   state at 1,000 and 10,000 containers and one run per RSS line (CI runs it, see
//   test/bench/bench-quick.test.ts).
// - --json FILE: also writes the result as JSON: { quick, machine, load, sizes: [ { runtime,
//   containers, pods, maxMessageBytes, floor: {cpuMsPerRelist, p50Ms, p99Ms, bytes, rssMiB, …},
//   nodepulse: {…}, kubelet: {…}, transport: {…} } ], oneHz: { runtime, containers, seconds,
//   floor: {cpuMsPerSecond, percentOfOneCore, p50Ms, …}, nodepulse, transport, kubelet },
//   kubelet, containerd, steadyState, steadyRss, lease, latencies, rssBreakdown, notes }.
// - --only: run some sections only (for working on one of them).
// - --no-containerd: leave the real containerd out even when it could run.
//
// The real parts: containerd (root, and containerd, ctr, runc and busybox on PATH) for the
// containerd rows, the steady state and a latency; Go (1.24 or later on PATH) for the kubelet
// side, built once into a cache outside the repository (kubelet-side.ts). Outside CI a missing
// one is left out and the report says so; under CI=true it fails the run (exit 1), so the CI
// cannot pass on a benchmark that skipped what it exists to measure.
//
// Needs the built agent (dist/; `npm run bench` builds it first); the agent sections run it as
// the image does, from a bundle of it made into the temp dir (scripts/bundle.ts). Everything runs on loopback and
// on unix sockets in a temp dir named nodepulse-bench-*, removed at the end; every process it
// starts is stopped. Exit codes: 0 done, 1 a measurement failed or a real part is missing under
// CI, 2 bad arguments.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleCommands } from '../scripts/bundle.ts';
import { SystemClock } from '../src/clock/clock.ts';
import { runLatencies, runSteadyState, simRuntime, startSim, type Latencies, type LeaseCost, type RuntimeControl, type SteadyState } from './agent-bench.ts';
import { emptyNode, fillNode, startBenchContainerd } from './containerd-node.ts';
import { kubeletBinary, type KubeletBinary } from './kubelet-side.ts';
import { runOneHz } from './one-hz.ts';
import { containerdSizes, runRow, simSocket, simulatedSizes, type SizeResult } from './relist-bench.ts';
import { renderReport, type BenchResult } from './report.ts';
import { runRssBreakdown } from './rss-breakdown.ts';

const SECTIONS = ['relist', 'steady', 'latency', 'rss'] as const;
type Section = (typeof SECTIONS)[number];
const FULL_WINDOW_MS = 60_000;
const QUICK_WINDOW_MS = 8_000;
/** The steady state at 1,000 and 10,000 containers is for its RSS; a shorter window does. */
const RSS_WINDOW_MS = 20_000;
/** A full default node: kubelet's maxPods, 3 containers each. */
const FULL_CONTAINERD_PODS = 110;
/** --quick fills the containerd node with fewer pods, to stay within CI's time. */
const QUICK_CONTAINERD_PODS = 30;
/** The relist at 1 Hz (one-hz.ts): back-to-back warm-up relists, then unmeasured and measured seconds. */
const ONE_HZ = { warmup: 20, full: { warmSeconds: 20, seconds: 60 }, quick: { warmSeconds: 2, seconds: 8 } } as const;
const CONTAINERD_TOOLS = ['containerd', 'ctr', 'runc', 'busybox'] as const;
const MIB = 1024 * 1024;
/** The simulated runtime builds 10,000 containers and encodes them once; allow for a slow machine. */
const SIM_START_TIMEOUT_MS = 60_000;

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
  return { quick: values.quick, json: values.json, only, containerd: !values['no-containerd'] };
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
async function containerdRuntime(clock: SystemClock): Promise<RuntimeControl> {
  const fixture = await startBenchContainerd(clock);
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
  const strict = process.env['CI'] === 'true';
  const clock = new SystemClock();
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const needsAgent = args.only.has('steady') || args.only.has('latency') || args.only.has('rss');
  if (needsAgent && !existsSync(join(root, 'dist/src/cli/main.js'))) {
    process.stderr.write('bench: dist/src/cli/main.js must exist: run `npm run build` first (`npm run bench` does)\n');
    return 1;
  }
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-bench-'));
  const notes: string[] = [
    'CPU is each side\'s own process (user + system) over its measured relists and the pauses between its batches; the runtime runs in another process and is not counted.',
    'Relist RSS is at the end of a side\'s relists; the Node sides run TypeScript through Node\'s type stripper (about +19 MiB each). nodepulse\'s relist side runs with the agent\'s Node.js settings (src/cli/agent-node-flags.ts), the floor with Node\'s defaults. The agent runs the image\'s bundle with the image\'s Node.js settings; its RSS is split into anonymous memory (heap, malloc, JIT code) and file-backed pages (the node binary\'s code and data it touched).',
  ];
  const loadBefore = loadavg();
  const sizes: SizeResult[] = [];
  // The agent runs from the image's bundle, made here from dist/ as the image's build makes it.
  const agentDir = join(dir, 'bundle');

  const result: { -readonly [K in keyof BenchResult]: BenchResult[K] } = {
    quick: args.quick,
    machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown' },
    load: { before: loadBefore, after: loadBefore },
    sizes,
    notes,
  };
  /** A real part is missing: a note outside CI, a failure under it. */
  const missing = (what: string): void => {
    if (strict) throw new Error(`${what}; under CI=true every real part must be there`);
    notes.push(`${what}: left out.`);
  };
  try {
    if (needsAgent) {
      log('bundling the agent (scripts/bundle.ts), as the image holds it');
      await bundleCommands({ repoRoot: root, outDir: agentDir });
    }
    let kubelet: KubeletBinary | undefined;
    if (args.only.has('relist')) {
      try {
        kubelet = await kubeletBinary(join(root, 'bench'), clock, log);
        result.kubelet = { client: 'k8s.io/cri-client v0.34.4 (Kubernetes 1.34.4)', goVersion: kubelet.goVersion, built: kubelet.built, ...(kubelet.buildSeconds === undefined ? {} : { buildSeconds: kubelet.buildSeconds }) };
      } catch (err) {
        missing(`The kubelet side: ${err instanceof Error ? err.message : String(err)}`);
      }
      for (const size of simulatedSizes(args.quick)) {
        const sim = await startSim(root, simSocket(dir, size), size.pods, size.containersPerPod, SIM_START_TIMEOUT_MS);
        try {
          sizes.push(await runRow({ root, runtime: 'simulated', endpoint: sim.ready.endpoint, size, kubeletBinary: kubelet?.path, clock, log }));
        } finally {
          await sim.stop();
        }
      }
    }

    const why = args.containerd ? await containerdUnavailable() : '--no-containerd';
    const containerdWanted = args.only.has('relist') || args.only.has('steady');
    if (containerdWanted && why !== undefined) missing(`The real containerd (${why})`);
    const windowMs = args.quick ? QUICK_WINDOW_MS : FULL_WINDOW_MS;
    if (args.quick && args.only.has('steady')) notes.push(`--quick: the steady-state window is ${QUICK_WINDOW_MS / 1000} s, not ${FULL_WINDOW_MS / 1000} s.`);
    if (containerdWanted && why === undefined) {
      const pods = args.quick ? QUICK_CONTAINERD_PODS : FULL_CONTAINERD_PODS;
      if (args.quick) notes.push(`--quick: the containerd node holds ${pods} pods of 3 containers, not ${FULL_CONTAINERD_PODS}.`);
      const fixture = await startBenchContainerd(clock);
      try {
        const [empty, full] = containerdSizes(args.quick, pods);
        if (args.only.has('relist')) sizes.push(await runRow({ root, runtime: 'containerd', endpoint: fixture.endpoint, size: empty!, kubeletBinary: kubelet?.path, clock, log }));
        const fill = await fillNode(fixture, { pods, containersPerPod: 3, clock, log });
        result.containerd = { pods, containers: fill.containers, fillSeconds: fill.seconds };
        if (args.only.has('relist')) {
          sizes.push(await runRow({ root, runtime: 'containerd', endpoint: fixture.endpoint, size: full!, kubeletBinary: kubelet?.path, clock, log }));
          const timing = args.quick ? ONE_HZ.quick : ONE_HZ.full;
          if (args.quick) notes.push(`--quick: the relist at 1 Hz is measured over ${timing.seconds} s, not ${ONE_HZ.full.seconds} s.`);
          result.oneHz = await runOneHz({
            root,
            runtime: 'containerd',
            endpoint: fixture.endpoint,
            pods,
            containers: fill.containers,
            maxMessageBytes: full!.maxMessageBytes,
            warmup: ONE_HZ.warmup,
            ...timing,
            kubeletBinary: kubelet?.path,
            clock,
            log,
          });
        }
        if (args.only.has('steady')) {
          const steady = await runSteadyState({ agentDir, dir, windowMs, endpoint: fixture.endpoint, runtime: 'containerd', containers: fill.containers, log });
          result.steadyState = steady.steady;
          result.lease = steady.lease;
        }
        await emptyNode(fixture, { clock, log });
      } finally {
        await fixture.close();
      }
    }

    if (args.only.has('steady')) {
      const steadySim = async (pods: number, perPod: number, ms: number, agentArgs: readonly string[]): Promise<{ steady: SteadyState; lease: LeaseCost }> => {
        const sim = await startSim(root, join(dir, `steady-${pods * perPod}.sock`), pods, perPod, SIM_START_TIMEOUT_MS);
        try {
          return await runSteadyState({ agentDir, dir, windowMs: ms, endpoint: sim.ready.endpoint, runtime: 'simulated', containers: pods * perPod, agentArgs, log });
        } finally {
          await sim.stop();
        }
      };
      if (result.steadyState === undefined) {
        const steady = await steadySim(110, 3, windowMs, []);
        result.steadyState = steady.steady;
        result.lease = steady.lease;
        notes.push('The steady state ran on the simulated runtime: no real containerd here.');
      }
      if (args.quick) {
        notes.push('--quick: no steady state at 1,000 and 10,000 containers.');
      } else {
        result.steadyRss = [(await steadySim(100, 10, RSS_WINDOW_MS, [])).steady, (await steadySim(1_000, 10, RSS_WINDOW_MS, [`--max-message-size=${64 * MIB}`])).steady];
      }
    }

    if (args.only.has('latency')) {
      const latencies: Record<string, Latencies> = {};
      const sim = await simRuntime(root, dir);
      try {
        latencies[sim.name] = await runLatencies({ agentDir, dir, runtime: sim, log });
      } finally {
        await sim.close();
      }
      if (why === undefined && !args.quick) {
        const containerd = await containerdRuntime(clock);
        try {
          latencies[containerd.name] = await runLatencies({ agentDir, dir, runtime: containerd, log });
        } finally {
          await containerd.close();
        }
      } else {
        notes.push(`Real containerd latencies skipped: ${why ?? '--quick'}.`);
      }
      result.latencies = latencies;
    }
    if (args.only.has('rss')) {
      log('RSS breakdown');
      result.rssBreakdown = await runRssBreakdown(root, args.quick ? 1 : 3, agentDir);
    }
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  result.load = { before: loadBefore, after: loadavg() };
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
