// Relist latency on this machine's real containerd under steady churn: the figures the default
// relist threshold and deadline are chosen from (docs/design.md "Defaults from data").
//
//   `npm run relist-latency -- --minutes N [--period 1s] [--pods 50] [--json PATH] [--record PATH]`
//
//   the product's Relister (the agent's client: grpc-js, the lean decoder, ledger and diff)
//        │  relists every period, sliding, under the current default deadline
//        ▼
//   containerd 1.6 (test/fixtures/containerd.ts, a temp dir of its own)
//        ▲
//   RuntimeChurn (test/support/runtime-churn.ts): pods and containers run, restarted, stopped and
//   removed without pause; a fresh image imported and the previous one removed every few seconds
//
// What it reports, from every relist of the run (relist-latency-summary.ts): the duration's p50,
// p90, p99, p99.9 and maximum, the relists that failed and why, and the longest gap between the
// starts of two successful relists (what the threshold is compared with: the runtime is judged
// Unhealthy only when no relist that succeeded began within the threshold). Also the machine's
// load average over the run, sampled every 10 s, since the machine may be shared.
//
// --json writes the report with every sample; --record writes the report alone (no samples),
// with the date and the versions, as docs/relist-latency.json keeps the figures the defaults were
// chosen from (test/matrix/shipped-defaults.test.ts reads it).
//
// The period defaults to the agent's 1 s; a shorter one gives more samples in the same time (a
// p99.9 wants thousands) and adds the relists' own load, which errs on the slow side.
//
// Needs root, containerd, ctr, runc and busybox. Cleans up on SIGINT/SIGTERM: the churn's pods
// are removed, containerd is stopped and its dir removed (the fixture's close()).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { SystemClock, wallMs } from '../src/clock/clock.ts';
import { parseDuration } from '../src/clock/duration.ts';
import { createRuntimeClient } from '../src/cri/runtime-client.ts';
import { Relister } from '../src/relist/relister.ts';
import { startContainerd } from '../test/fixtures/containerd.ts';
import { findExecutable } from '../test/support/require.ts';
import { RuntimeChurn } from '../test/support/runtime-churn.ts';
import { summarizeRelists, type RelistSample } from './relist-latency-summary.ts';

const execFileAsync = promisify(execFile);
/** The deadline the relists run under: long, so a slow relist is measured rather than cut. */
const DEADLINE_MS = 60_000;
/** A threshold for the ledger only; the judgement is not what is measured. */
const THRESHOLD_MS = 180_000;
const LOAD_SAMPLE_MS = 10_000;
const CTR_TIMEOUT_MS = 120_000;
const PROGRESS_EVERY_MS = 60_000;

interface Options {
  readonly minutes: number;
  readonly periodMs: number;
  readonly pods: number;
  readonly containersPerPod: number;
  readonly imageEveryMs: number;
  readonly json: string | undefined;
  readonly record: string | undefined;
}

function parseOptions(argv: string[]): Options | string[] {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        minutes: { type: 'string' },
        period: { type: 'string' },
        pods: { type: 'string' },
        'containers-per-pod': { type: 'string' },
        'image-every': { type: 'string' },
        json: { type: 'string' },
        record: { type: 'string' },
      },
      strict: true,
    }).values as Record<string, string | undefined>;
  } catch (err) {
    return [`relist-latency: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  const minutes = Number(values['minutes']);
  if (values['minutes'] === undefined || !(minutes > 0) || minutes > 24 * 60) problems.push(`minutes: ${values['minutes'] ?? '(unset)'} must be a number of minutes above 0 (--minutes N)`);
  const ms = (key: string, fallback: string): number => {
    const text = values[key] ?? fallback;
    const parsed = parseDuration(text);
    if (parsed === undefined || parsed <= 0) problems.push(`${key}: ${text} must be a duration such as 500ms or 1s`);
    return parsed ?? 0;
  };
  const int = (key: string, fallback: number, max: number): number => {
    const n = values[key] === undefined ? fallback : Number(values[key]);
    if (!Number.isInteger(n) || n < 1 || n > max) problems.push(`${key}: ${values[key]} must be a whole number from 1 to ${max}`);
    return n;
  };
  const options: Options = {
    minutes,
    periodMs: ms('period', '1s'),
    pods: int('pods', 50, 110),
    containersPerPod: int('containers-per-pod', 2, 10),
    imageEveryMs: ms('image-every', '5s'),
    json: values['json'],
    record: values['record'],
  };
  return problems.length > 0 ? problems : options;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (Array.isArray(options)) {
    for (const line of options) process.stderr.write(`${line}\n`);
    return 2;
  }
  const clock = new SystemClock();
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());

  const containerd = await startContainerd({ clock, callDeadlineMs: 60_000 });
  const ctrPath = findExecutable('ctr') ?? 'ctr';
  const churn = new RuntimeChurn({
    cri: containerd.cri,
    clock,
    pods: options.pods,
    containersPerPod: options.containersPerPod,
    ctr: async (args) => {
      await execFileAsync(ctrPath, ['-a', containerd.socketPath, '-n', 'k8s.io', ...args], { timeout: CTR_TIMEOUT_MS });
    },
    imageEveryMs: options.imageEveryMs,
    imageBytes: 2 * 1024 * 1024,
    errorPauseMs: 1_000,
    name: 'relist-latency',
  });
  const client = createRuntimeClient({ endpoint: containerd.endpoint, clock });
  const relister = new Relister({ client, clock, deadlineMs: DEADLINE_MS, thresholdMs: THRESHOLD_MS });
  const samples: RelistSample[] = [];
  const loads: number[] = [];
  const version = await containerd.cri.version();
  let exitCode = 0;
  try {
    churn.start();
    const startedMs = clock.monotonicMs();
    const endMs = startedMs + options.minutes * 60_000;
    let nextLoad = startedMs;
    let nextProgress = startedMs + PROGRESS_EVERY_MS;
    while (!stop.signal.aborted && clock.monotonicMs() < endMs) {
      const outcome = await relister.tick(stop.signal);
      if (outcome !== undefined) {
        const counts = relister.counts();
        samples.push({
          beganMs: outcome.began.monotonicMs - startedMs,
          durationMs: outcome.durationMs,
          result: outcome.result,
          pods: counts?.pods ?? 0,
          containers: counts?.containers ?? 0,
        });
      }
      const now = clock.monotonicMs();
      if (now >= nextLoad) {
        loads.push((loadavg()[0] as number));
        nextLoad += LOAD_SAMPLE_MS;
      }
      if (now >= nextProgress) {
        const s = summarizeRelists(samples, loads);
        process.stderr.write(`[${Math.round((now - startedMs) / 1000)}s] ${s.relists} relists, p99 ${s.p99Ms.toFixed(1)} ms, max ${s.maxMs.toFixed(1)} ms, failed ${s.failed}, pods ${churn.population}, load ${loads.at(-1)?.toFixed(1)}\n`);
        nextProgress += PROGRESS_EVERY_MS;
      }
      await clock.sleep(options.periodMs, stop.signal).catch(() => undefined);
    }
  } catch (err) {
    process.stderr.write(`relist-latency: ${err instanceof Error ? err.stack : String(err)}\n`);
    exitCode = 1;
  } finally {
    const counts = await churn.stop();
    client.close();
    await containerd.close();
    const summary = summarizeRelists(samples, loads);
    const { json: _json, record: _record, ...settings } = options;
    const report = {
      date: new Date(wallMs(clock)).toISOString(),
      runtime: `${version.runtimeName} ${version.runtimeVersion}`,
      node: process.version,
      cpus: cpus().length,
      options: settings,
      churn: counts,
      summary,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    if (options.json !== undefined) writeFileSync(options.json, JSON.stringify({ ...report, samples }, null, 1));
    if (options.record !== undefined) writeFileSync(options.record, `${JSON.stringify(report, null, 2)}\n`);
  }
  return exitCode;
}

if (import.meta.main) process.exitCode = await main();
