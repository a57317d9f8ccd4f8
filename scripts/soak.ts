// The soak: `npm run soak -- --minutes N`. Does the agent hold its memory and its handles flat
// while it relists ten times a second for a long time, through container churn and a flaky API?
//
//   the built agent (a real process) ──relist every 100 ms──► simulated runtime (its own process,
//        │                                                      churning containers every second)
//        └──lease, Node, Events────────────────────────────► API stand-in (in this process), which
//                                                              fails about 5 % of requests with
//                                                              500, 503 or 429 (+ Retry-After)
//
// Every second it samples the agent's RSS (/proc/PID/status VmRSS), and from the agent's own
// /metrics its heap in use (nodejs_heap_size_used_bytes), its open handles (the sum of
// nodejs_active_handles{type}) and its event-loop lag (nodejs_eventloop_lag_p99_seconds: how late
// the p99 delay sample since the previous scrape fired, 0 for a loop that keeps up). At the
// end it prints a summary table and judges the run with soak-verdict.ts: exit 1 when RSS grew
// more than 10 % after the warm-up or the handle floor rose, or when the agent exited, stopped
// relisting or never renewed its Lease; exit 0 otherwise; exit 2 for bad arguments.
//
// Options: --minutes N (required; fractions allowed), --fault-rate F (default 0.05),
// --json PATH (write every sample and the verdict). Needs `npm run build` first (the npm script
// does it): the agent and the simulated runtime run from dist/, as they ship.
//
// Bounds: every child is started with a deadline and killed by pid on the way out, also on
// SIGINT/SIGTERM; every scrape has a timeout; the stand-in keeps at most 10,000 request records;
// the agent's log is read line by line and only the last 50 lines are kept.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startApiServer, type ApiServerHandle } from '../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../src/stand-ins/api-server/kubeconfig.ts';
import { SystemClock } from '../src/clock/clock.ts';
import { judgeSoak, mib, soakLimitsFor, type SoakSample, type SoakVerdict } from './soak-verdict.ts';

const ROOT = join(import.meta.dirname, '..');
const NODE = join(ROOT, 'node_modules/.bin/node');
const AGENT = join(ROOT, 'dist/src/cli/main.js');
const SIM = join(ROOT, 'dist/src/stand-ins/cri-runtime/main.js');
const NODE_NAME = 'soak-node';
const TOKEN = 'soak-token-0123456789abcdef';
/** How long a child may take to print its ready line. */
const START_TIMEOUT_MS = 20_000;
const SCRAPE_TIMEOUT_MS = 2_000;
const SAMPLE_EVERY_MS = 1_000;
/** How often the fault dice look at the requests that arrived. */
const DICE_EVERY_MS = 50;
const STOP_TIMEOUT_MS = 10_000;
const LOG_TAIL_LINES = 50;
/** The simulated node: 40 pods × 3 containers, 5 container exits a second (and their restarts). */
const SIM_PODS = 40;
const SIM_CONTAINERS_PER_POD = 3;
const SIM_CHURN_PER_SECOND = 5;

/** The agent at 10 Hz with test-shortened lease timings (renew every second). */
const AGENT_TIMINGS = [
  '--relist-period', '100ms',
  '--relist-threshold', '5s',
  '--relist-deadline', '2s',
  '--lease-duration', '4s',
  '--api-timeout', '2s',
  '--status-period', '1s',
];

const clock = new SystemClock();

interface Options {
  readonly minutes: number;
  readonly faultRate: number;
  readonly json: string | undefined;
}

function parseOptions(argv: string[]): Options | string[] {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({ args: argv, options: { minutes: { type: 'string' }, 'fault-rate': { type: 'string' }, json: { type: 'string' } }, strict: true }).values;
  } catch (err) {
    return [`soak: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  const minutes = Number(values['minutes']);
  if (values['minutes'] === undefined || !(minutes > 0) || minutes > 24 * 60) problems.push(`minutes: ${values['minutes'] ?? '(unset)'} must be a number of minutes above 0 (--minutes N)`);
  const faultRate = values['fault-rate'] === undefined ? 0.05 : Number(values['fault-rate']);
  if (!(faultRate >= 0 && faultRate <= 0.5)) problems.push(`faultRate: ${values['fault-rate']} must be a fraction from 0 to 0.5`);
  return problems.length > 0 ? problems : { minutes, faultRate, json: values['json'] };
}

/** A child process and its stdout read as lines. */
interface Child {
  readonly proc: ChildProcess;
  readonly tail: string[];
  exitCode(): number | null | 'running';
  waitForLine(test: (line: string) => boolean, ms: number): Promise<string>;
}

function startChild(args: string[], name: string): Child {
  const proc = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const waiters = new Set<(line: string) => void>();
  let exited: number | null | 'running' = 'running';
  proc.once('exit', (code, signal) => {
    exited = code ?? (signal === null ? null : 128);
  });
  const keep = (line: string): void => {
    tail.push(line);
    if (tail.length > LOG_TAIL_LINES) tail.shift();
    for (const w of [...waiters]) w(line);
  };
  createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', keep);
  createInterface({ input: proc.stderr as NodeJS.ReadableStream }).on('line', (line) => keep(`[${name} stderr] ${line}`));
  return {
    proc,
    tail,
    exitCode: () => exited,
    waitForLine: (test, ms) =>
      new Promise((resolve, reject) => {
        const timer = clock.after(ms, () => {
          waiters.delete(check);
          reject(new Error(`${name}: no matching line within ${ms} ms; last lines:\n${tail.join('\n')}`));
        });
        const check = (line: string): void => {
          if (!test(line)) return;
          timer.cancel();
          waiters.delete(check);
          resolve(line);
        };
        waiters.add(check);
        proc.once('exit', () => check(''));
      }),
  };
}

async function stopChild(child: Child | undefined): Promise<void> {
  if (child === undefined || child.exitCode() !== 'running') return;
  const done = new Promise<void>((resolve) => child.proc.once('exit', () => resolve()));
  child.proc.kill('SIGTERM');
  const timer = clock.after(STOP_TIMEOUT_MS, () => child.proc.kill('SIGKILL'));
  await done;
  timer.cancel();
}

/** Parses a Prometheus text exposition into name{labels} → value. */
function parseExposition(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

function sumOf(metrics: Map<string, number>, name: string): number {
  let sum = 0;
  for (const [key, value] of metrics) if (key === name || key.startsWith(`${name}{`)) sum += value;
  return sum;
}

async function scrape(url: string): Promise<Map<string, number>> {
  const controller = new AbortController();
  const timer = clock.after(SCRAPE_TIMEOUT_MS, () => controller.abort(new Error(`scrape: no answer within ${SCRAPE_TIMEOUT_MS} ms`)));
  try {
    const res = await fetch(`${url}/metrics`, { signal: controller.signal });
    return parseExposition(await res.text());
  } finally {
    timer.cancel();
  }
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m === null) throw new Error(`/proc/${pid}/status has no VmRSS line`);
  return Number(m[1]) * 1024;
}

/**
 * Arms a fault for the next request with probability `rate` for each request that arrived
 * since the last look: about `rate` of all requests fail, at most one fault is pending at a time.
 */
function faultDice(api: ApiServerHandle, rate: number, signal: AbortSignal): { armed: Record<string, number> } {
  const armed: Record<string, number> = { '500': 0, '503': 0, '429': 0 };
  let seen = api.requests.lastSeq();
  const look = (): void => {
    if (signal.aborted) return;
    const now = api.requests.lastSeq();
    for (; seen < now; seen++) {
      if (api.faults.pending() > 0 || Math.random() >= rate) continue;
      const pick = Math.floor(Math.random() * 3);
      if (pick === 0) api.faults.failNext(1, '/**', 500);
      else if (pick === 1) api.faults.failNext(1, '/**', 503, { retryAfterSeconds: 1 });
      else api.faults.failNext(1, '/**', 429, { retryAfterSeconds: 1 });
      const status = pick === 0 ? '500' : pick === 1 ? '503' : '429';
      armed[status] = (armed[status] ?? 0) + 1;
    }
    clock.after(DICE_EVERY_MS, look);
  };
  look();
  return { armed };
}

interface SoakResult {
  readonly minutes: number;
  readonly samples: SoakSample[];
  readonly verdict: SoakVerdict;
  readonly problems: string[];
  readonly relists: { success: number; failed: number; perSecond: number };
  readonly lease: { success: number; error: number; withheld: number };
  readonly apiRequests: number;
  readonly faultsArmed: Record<string, number>;
  readonly agentExit: number | null | 'running';
}

async function soak(options: Options): Promise<SoakResult> {
  const dir = mkdtempSync(join(tmpdir(), 'np-soak-'));
  const stop = new AbortController();
  let api: ApiServerHandle | undefined;
  let sim: Child | undefined;
  let agent: Child | undefined;
  const onSignal = (): void => stop.abort(new Error('interrupted'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    api = await startApiServer({ clock, tokens: { [TOKEN]: 'system:serviceaccount:nodepulse:nodepulse' }, maxRecordedRequests: 10_000 });
    api.store.put({ apiVersion: 'v1', kind: 'Node', metadata: { name: NODE_NAME, labels: { 'kubernetes.io/os': 'linux' } } });
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
    const kubeconfig = join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, { server: api.url, tokenFile });

    const socket = join(dir, 'cri.sock');
    sim = startChild([SIM, '--socket', socket, '--pods', String(SIM_PODS), '--containers-per-pod', String(SIM_CONTAINERS_PER_POD), '--churn-per-second', String(SIM_CHURN_PER_SECOND)], 'cri-sim');
    const simReady = JSON.parse(await sim.waitForLine((l) => l.startsWith('{"socket"'), START_TIMEOUT_MS)) as { endpoint: string };

    agent = startChild(
      [AGENT, 'agent', '--node-name', NODE_NAME, '--cri-endpoint', simReady.endpoint, '--kubeconfig', kubeconfig, '--http-address', '127.0.0.1:0', ...AGENT_TIMINGS],
      'agent',
    );
    const started = JSON.parse(await agent.waitForLine((l) => l.includes('"msg":"Agent started"'), START_TIMEOUT_MS)) as { http: string };
    const url = `http://${started.http}`;
    const pid = agent.proc.pid;
    if (pid === undefined) throw new Error('agent: no pid');
    const t0 = clock.monotonicMs();
    const dice = faultDice(api, options.faultRate, stop.signal);

    const samples: SoakSample[] = [];
    const endMs = t0 + options.minutes * 60_000;
    let last = new Map<string, number>();
    process.stdout.write(
      `soak: ${options.minutes} min, agent pid ${pid} at ${url}, sampling every ${SAMPLE_EVERY_MS} ms\n`,
    );
    while (clock.monotonicMs() < endMs && !stop.signal.aborted && agent.exitCode() === 'running') {
      await clock.sleep(SAMPLE_EVERY_MS, stop.signal).catch(() => undefined);
      if (agent.exitCode() !== 'running' || stop.signal.aborted) break;
      try {
        last = await scrape(url);
        samples.push({
          atS: (clock.monotonicMs() - t0) / 1000,
          rssBytes: rssBytes(pid),
          heapUsedBytes: sumOf(last, 'nodejs_heap_size_used_bytes'),
          handles: sumOf(last, 'nodejs_active_handles'),
          lagP99S: sumOf(last, 'nodejs_eventloop_lag_p99_seconds'),
        });
      } catch (err) {
        process.stdout.write(`soak: sample missed (${(err as Error).message})\n`);
      }
    }
    stop.abort(new Error('soak over'));

    const limits = soakLimitsFor(options.minutes * 60);
    const verdict = judgeSoak(samples, limits);
    const problems = [...verdict.problems];
    const relistOk = last.get('nodepulse_relist_duration_seconds_count{result="success"}') ?? 0;
    const relistAll = sumOf(last, 'nodepulse_relist_duration_seconds_count');
    const lastAt = samples.at(-1)?.atS ?? 1;
    const lease = {
      success: last.get('nodepulse_lease_renewals_total{result="success"}') ?? 0,
      error: last.get('nodepulse_lease_renewals_total{result="error"}') ?? 0,
      withheld: last.get('nodepulse_lease_renewals_total{result="withheld"}') ?? 0,
    };
    const agentExit = agent.exitCode();
    if (stop.signal.reason instanceof Error && stop.signal.reason.message === 'interrupted') problems.push('run: interrupted');
    if (agentExit !== 'running') problems.push(`agent: exited with ${String(agentExit)} during the soak; last lines:\n${agent.tail.join('\n')}`);
    // 10 Hz with a sliding period is a little under 10 a second; half of that means it stalled.
    if (relistOk / lastAt < 5) problems.push(`relists: ${(relistOk / lastAt).toFixed(1)}/s succeeded, must be at least 5/s at --relist-period 100ms`);
    if (lease.success === 0) problems.push('lease: must have been renewed at least once');
    return {
      minutes: options.minutes,
      samples,
      verdict,
      problems,
      relists: { success: relistOk, failed: relistAll - relistOk, perSecond: relistOk / lastAt },
      lease,
      apiRequests: api.requests.lastSeq(),
      faultsArmed: dice.armed,
      agentExit,
    };
  } finally {
    stop.abort(new Error('soak over'));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopChild(agent);
    await stopChild(sim);
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function printSummary(r: SoakResult): void {
  const rows: string[] = [];
  const pad = (s: string, n: number): string => s.padStart(n);
  rows.push(`${pad('t (s)', 7)} ${pad('RSS', 10)} ${pad('heap used', 10)} ${pad('handles', 8)} ${pad('lag p99', 9)}`);
  // About twelve rows, evenly through the run, plus the last sample.
  const every = Math.max(1, Math.floor(r.samples.length / 12));
  r.samples.forEach((s, i) => {
    if (i % every !== 0 && i !== r.samples.length - 1) return;
    rows.push(`${pad(s.atS.toFixed(0), 7)} ${pad(mib(s.rssBytes), 10)} ${pad(mib(s.heapUsedBytes), 10)} ${pad(String(s.handles), 8)} ${pad(`${(s.lagP99S * 1000).toFixed(1)} ms`, 9)}`);
  });
  const w = (name: string, x: SoakVerdict['baseline']): string =>
    x === undefined
      ? `${name}: (empty)`
      : `${name} ${x.fromS.toFixed(0)}–${x.toS.toFixed(0)} s (${x.samples} samples): RSS median ${mib(x.rssMedianBytes)}, heap median ${mib(x.heapMedianBytes)}, handles ${x.handlesMin}–${x.handlesMax}, lag p99 max ${(x.lagP99MaxS * 1000).toFixed(1)} ms`;
  process.stdout.write(
    [
      '',
      rows.join('\n'),
      '',
      w('baseline', r.verdict.baseline),
      w('final   ', r.verdict.final),
      `RSS growth: ${r.verdict.rssGrowth === undefined ? 'n/a' : `${(r.verdict.rssGrowth * 100).toFixed(1)}%`} (limit 10%)`,
      `relists: ${r.relists.success} succeeded (${r.relists.perSecond.toFixed(1)}/s), ${r.relists.failed} failed`,
      `lease renewals: ${r.lease.success} succeeded, ${r.lease.error} failed, ${r.lease.withheld} withheld`,
      `API requests: ${r.apiRequests}; faults injected: ${Object.entries(r.faultsArmed).map(([k, v]) => `${v}×${k}`).join(', ')}`,
      r.problems.length === 0 ? 'soak: PASS' : `soak: FAIL\n${r.problems.map((p) => `  ${p}`).join('\n')}`,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (Array.isArray(options)) {
    for (const line of options) process.stderr.write(`${line}\n`);
    return 2;
  }
  for (const file of [AGENT, SIM]) {
    if (!existsSync(file)) {
      process.stderr.write(`soak: ${file} must exist (run npm run build first)\n`);
      return 2;
    }
  }
  const result = await soak(options);
  printSummary(result);
  if (options.json !== undefined) writeFileSync(options.json, `${JSON.stringify(result, null, 2)}\n`);
  return result.problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`soak: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
