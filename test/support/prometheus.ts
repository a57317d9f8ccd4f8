// A real Prometheus (Debian's 2.42) for tests: started on loopback with a private TSDB folder,
// a generated config and the caller's rule files, and read only through its HTTP API.
//
// What it does: writes prometheus.yml (global scrape and evaluation intervals, rule_files,
// the caller's scrape_configs) into a fresh temporary folder, spawns
// `prometheus --config.file … --storage.tsdb.path … --web.listen-address=127.0.0.1:<free port>`,
// and resolves once GET /-/ready answers 200. The handle queries /api/v1/query,
// /api/v1/query_range, /api/v1/alerts and /api/v1/label/<name>/values.
//
// Assumptions and failure modes:
//   - The binary is the one requireExecutables(t, ['prometheus']) found; this module never looks
//     for it itself.
//   - Prometheus must be ready within READY_TIMEOUT_MS, or start rejects with the tail of its log
//     (a bad config makes it exit at once: the rejection then carries its exit code and log).
//   - Every API call has a deadline (API_TIMEOUT_MS). A reply whose `status` is not `success`
//     throws with Prometheus' errorType and error, so a bad PromQL is a test failure, not an
//     empty result.
//   - The free port is found by binding port 0 and closing it: another process could take it in
//     between, in which case Prometheus exits and start rejects with "address already in use".
//   - Cleanup is registered in t.after: SIGTERM, SIGKILL after STOP_TIMEOUT_MS, and the folder is
//     removed. It runs after a failed test too.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { stringify } from 'yaml';
import { SystemClock, type Clock } from '../../src/clock/clock.ts';

/** Prometheus 2.42 is ready in about 1 s here; a loaded 2-core CI machine gets 20. */
export const READY_TIMEOUT_MS = 20_000;
/** Prometheus answers queries from memory; 5 s means it is wedged. */
export const API_TIMEOUT_MS = 5_000;
/** Prometheus stops in well under a second on SIGTERM with a small TSDB. */
export const STOP_TIMEOUT_MS = 5_000;
/** Log kept for failure messages (the newest bytes). */
const LOG_TAIL_BYTES = 64 * 1024;
/** Pause between readiness probes. */
const READY_POLL_MS = 100;

/** A port on 127.0.0.1 that was free a moment ago (bind port 0, read it, close). */
export async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('freeLoopbackPort: a TCP address must be bound');
  return address.port;
}

export interface RuleFile {
  /** File name inside the instance's folder, e.g. `rules.yaml`. */
  readonly name: string;
  readonly text: string;
}

export interface PrometheusOptions {
  /** Path of the prometheus binary (from requireExecutables). */
  readonly binary: string;
  /** Entries of `scrape_configs`, in Prometheus' own YAML field names. */
  readonly scrapeConfigs: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly ruleFiles?: readonly RuleFile[];
  /** global.scrape_interval (and scrape_timeout), in seconds; default 1. */
  readonly scrapeIntervalS?: number;
  /** global.evaluation_interval, in seconds; default 1. */
  readonly evaluationIntervalS?: number;
  readonly clock?: Clock;
}

export interface InstantSample {
  readonly metric: Readonly<Record<string, string>>;
  /** [unix seconds, value as Prometheus prints it] */
  readonly value: readonly [number, string];
}

export interface RangeSeries {
  readonly metric: Readonly<Record<string, string>>;
  readonly values: ReadonlyArray<readonly [number, string]>;
}

export interface PrometheusAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** `pending` or `firing` (inactive alerts are not listed). */
  readonly state: string;
  readonly activeAt: string;
  readonly value: string;
}

export interface PrometheusInstance {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The instance's private folder (config, rule files, TSDB). */
  readonly dir: string;
  query(promql: string): Promise<InstantSample[]>;
  queryRange(promql: string, range: { readonly startS: number; readonly endS: number; readonly stepS: number }): Promise<RangeSeries[]>;
  alerts(): Promise<PrometheusAlert[]>;
  labelValues(label: string): Promise<string[]>;
  /** The newest LOG_TAIL_BYTES of Prometheus' log, for failure messages. */
  log(): string;
  readonly running: boolean;
}

/** Starts Prometheus and resolves once it is ready; it is stopped and its folder removed in t.after. */
export async function startPrometheus(t: Pick<TestContext, 'after'>, options: PrometheusOptions): Promise<PrometheusInstance> {
  const clock = options.clock ?? new SystemClock();
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-prom-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ruleFiles = (options.ruleFiles ?? []).map((f) => {
    const path = join(dir, f.name);
    writeFileSync(path, f.text);
    return path;
  });
  const scrapeS = options.scrapeIntervalS ?? 1;
  const config = {
    global: {
      scrape_interval: `${scrapeS}s`,
      scrape_timeout: `${scrapeS}s`,
      evaluation_interval: `${options.evaluationIntervalS ?? 1}s`,
    },
    rule_files: ruleFiles,
    scrape_configs: options.scrapeConfigs,
  };
  const configPath = join(dir, 'prometheus.yml');
  writeFileSync(configPath, stringify(config));

  const port = await freeLoopbackPort();
  const child = spawn(
    options.binary,
    [`--config.file=${configPath}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const instance = new RunningPrometheus(child, `http://127.0.0.1:${port}`, dir);
  t.after(() => instance.stop(clock));
  await instance.waitReady(clock);
  return instance;
}

interface ApiReply {
  status?: string;
  errorType?: string;
  error?: string;
  data?: unknown;
}

class RunningPrometheus implements PrometheusInstance {
  readonly url: string;
  readonly dir: string;
  readonly #child: ChildProcess;
  #log = '';

  constructor(child: ChildProcess, url: string, dir: string) {
    this.#child = child;
    this.url = url;
    this.dir = dir;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#log = (this.#log + chunk).slice(-LOG_TAIL_BYTES);
    });
    child.once('error', (err) => {
      this.#log += `spawn error: ${err.message}\n`;
    });
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  log(): string {
    return this.#log;
  }

  async waitReady(clock: Clock): Promise<void> {
    const deadline = clock.monotonicMs() + READY_TIMEOUT_MS;
    while (clock.monotonicMs() < deadline) {
      if (!this.running) throw new Error(`prometheus: exited (code ${this.#child.exitCode}) before it was ready; its log:\n${this.#log}`);
      const ready = await fetch(`${this.url}/-/ready`, { signal: AbortSignal.timeout(API_TIMEOUT_MS) }).then(
        (res) => res.status === 200,
        () => false,
      );
      if (ready) return;
      await clock.sleep(READY_POLL_MS);
    }
    throw new Error(`prometheus: /-/ready must answer 200 within ${READY_TIMEOUT_MS} ms; its log:\n${this.#log}`);
  }

  async #get(path: string, params: Readonly<Record<string, string>> = {}): Promise<unknown> {
    const query = new URLSearchParams(params).toString();
    const res = await fetch(`${this.url}${path}${query === '' ? '' : `?${query}`}`, { signal: AbortSignal.timeout(API_TIMEOUT_MS) });
    const body = (await res.json()) as ApiReply;
    if (body.status !== 'success') {
      throw new Error(`prometheus: GET ${path} ${JSON.stringify(params)} must succeed, got HTTP ${res.status} ${body.errorType ?? ''}: ${body.error ?? ''}`);
    }
    return body.data;
  }

  async query(promql: string): Promise<InstantSample[]> {
    const data = (await this.#get('/api/v1/query', { query: promql })) as { resultType: string; result: InstantSample[] };
    if (data.resultType !== 'vector') throw new Error(`prometheus: ${promql} must be an instant vector, got ${data.resultType}`);
    return data.result;
  }

  async queryRange(promql: string, range: { readonly startS: number; readonly endS: number; readonly stepS: number }): Promise<RangeSeries[]> {
    const data = (await this.#get('/api/v1/query_range', {
      query: promql,
      start: range.startS.toFixed(3),
      end: range.endS.toFixed(3),
      step: String(range.stepS),
    })) as { result: RangeSeries[] };
    return data.result;
  }

  async alerts(): Promise<PrometheusAlert[]> {
    return ((await this.#get('/api/v1/alerts')) as { alerts: PrometheusAlert[] }).alerts;
  }

  async labelValues(label: string): Promise<string[]> {
    return (await this.#get(`/api/v1/label/${encodeURIComponent(label)}/values`)) as string[];
  }

  async stop(clock: Clock): Promise<void> {
    if (!this.running) return;
    const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
    this.#child.kill('SIGTERM');
    const timer = new AbortController();
    const killed = clock.sleep(STOP_TIMEOUT_MS, timer.signal).then(
      () => {
        if (this.running) this.#child.kill('SIGKILL');
      },
      () => undefined,
    );
    await Promise.race([exited, killed]);
    timer.abort();
    await exited;
  }
}
