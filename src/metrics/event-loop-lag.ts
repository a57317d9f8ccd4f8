// The process and Node.js default metrics, with the event-loop lag measured by the agent itself.
//
// prom-client's default collectors are used as they are (memory, file descriptors, heap, handles,
// GC), all but two: its CPU collector, which loads @opentelemetry/api (process-cpu.ts has the
// agent's, with the same families), and its event-loop lag collector, for two reasons.
//   - Cost. A sampler wakes the process at every sample, on every node, forever, and
//     prom-client's samples every 10 ms by default. Sampling every 500 ms keeps the agent inside
//     its CPU budget; docs/bench.md has the figures, side by side with a faster sampler.
//   - Meaning. Node's histogram records the whole interval between two samples, not how late a
//     sample was, so an idle loop sampled every 100 ms reads p50 = p99 = 0.1 s. And reset()
//     also forgets the previous sample's time, so the first sample after each scrape is dropped,
//     and a stall just after a scrape goes unseen.
//
// So the agent samples every EVENT_LOOP_SAMPLE_MS (500 ms) with a timer of its own and records
// how late each one fired (fire time − due time) in a Node histogram. The families keep
// prom-client's names, so Node.js dashboards work unchanged, and read 0 for a loop that keeps up.
//
// | family                                      | value at a scrape                                    |
// |---------------------------------------------|------------------------------------------------------|
// | nodejs_eventloop_lag_seconds                | how long a setImmediate queued at the previous scrape|
// |                                             | waited to run                                        |
// | nodejs_eventloop_lag_{min,max,mean}_seconds | of how late the samples since the previous scrape    |
// |                                             | fired                                                |
// | nodejs_eventloop_lag_{p50,p90,p99}_seconds  | the same, percentiles                                |
// | nodejs_eventloop_lag_stddev_seconds         | their standard deviation                             |
//
// Each scrape starts the samples afresh, so a value covers the time since the previous scrape. A
// scrape that finds no sample since the last one (two scrapes closer than 500 ms) leaves the
// values as they were. Values are in whole microseconds, to three significant digits (Node's
// histogram keeps three; it records whole nanoseconds, at least 1). What 500 ms does not see: a
// stall that starts and ends between two due times, so a stall shorter than 500 ms may go unseen;
// every stall of 500 ms or more delays a sample and shows in full. The agent's own judgements
// work in seconds (its loops' idle and stuck windows, the relist threshold), so a shorter stall
// cannot change what it reports.
//
// The sampler runs on the clock it is given, like every other timer of the agent.
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import gc from 'prom-client/lib/metrics/gc.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import version from 'prom-client/lib/metrics/version.js';
import { registerProcessCpu } from './process-cpu.ts';
import { Gauge } from './prom-client.ts';
import type { Clock, Timer } from '../clock/clock.ts';

/** How often the event loop is sampled, in ms (see the header for why 500). */
export const EVENT_LOOP_SAMPLE_MS = 500;

type DefaultCollector = (registry: Registry, config: object) => void;

/**
 * prom-client's default collectors the agent registers, by the names its metricsList gives them
 * and in its order (a test holds these names to that list, so a collector a later version adds is
 * not silently left out). Each is imported by name, not required from that list at run time, so
 * that a bundler sees every module the agent runs (the image ships the agent bundled:
 * scripts/bundle.ts). Not among them: eventLoopLag, replaced by the sampler below, and
 * processCpuTotal, replaced by process-cpu.ts (it loads @opentelemetry/api).
 */
export const PROM_CLIENT_COLLECTORS: Readonly<Record<string, DefaultCollector>> = {
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  processResources,
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
  gc,
};

/** The default collectors this file replaces with the agent's own. */
export const REPLACED_COLLECTORS = ['eventLoopLag', 'processCpuTotal'] as const;

/**
 * Registers prom-client's default process and Node.js collectors on `registry`, its CPU and
 * event-loop lag ones replaced by the agent's own. The sampler runs on `clock` (the system clock
 * in the agent) for the life of the process; its timer does not keep the process alive.
 */
export function collectProcessMetrics(registry: Registry, clock: Clock, sampleMs: number = EVENT_LOOP_SAMPLE_MS): void {
  for (const collector of Object.values(PROM_CLIENT_COLLECTORS)) {
    collector(registry, {});
  }
  registerProcessCpu(registry);
  const sampler = new EventLoopLagSampler(clock, sampleMs);
  sampler.start();
  registerEventLoopLag(registry, sampler.lateness, clock, sampleMs);
}

/** Fires every `intervalMs` and records how late each firing was, in nanoseconds. */
export class EventLoopLagSampler {
  /** How late each sample fired, ns (at least 1: the histogram takes no 0). */
  readonly lateness: RecordableHistogram = createHistogram();
  readonly #clock: Clock;
  readonly #intervalMs: number;
  #timer: Timer | undefined;

  constructor(clock: Clock, intervalMs: number) {
    if (!(intervalMs > 0)) throw new RangeError(`intervalMs: ${intervalMs} must be a positive number of milliseconds`);
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  start(): void {
    if (this.#timer === undefined) this.#schedule(this.#clock.monotonicMs() + this.#intervalMs);
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #schedule(dueMs: number): void {
    this.#timer = this.#clock.after(
      dueMs - this.#clock.monotonicMs(),
      () => {
        const now = this.#clock.monotonicMs();
        this.lateness.record(Math.max(1, Math.round((now - dueMs) * 1e6)));
        this.#schedule(now + this.#intervalMs);
      },
      { keepsProcessAlive: false },
    );
  }
}

/** What the lag gauges read: a histogram of lateness in nanoseconds (Node's, or a test's). */
export interface LatenessHistogram {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly mean: number;
  readonly stddev: number;
  percentile(percentile: number): number;
  reset(): void;
}

/** The lag gauges over `lateness`; `clock` times the setImmediate wait. */
export function registerEventLoopLag(registry: Registry, lateness: LatenessHistogram, clock: Clock, sampleMs: number): void {
  const registers = [registry];
  const seconds = (ns: number): number => Math.floor(ns / 1e3) / 1e6;
  const gauge = (suffix: string, help: string): Gauge =>
    new Gauge({ name: `nodejs_eventloop_lag_${suffix}_seconds`, help, registers });

  // Registered first: its collect() sets the other gauges, and a scrape reads the families in
  // the order they were registered.
  let immediateWaitMs = 0;
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'How long a callback queued with setImmediate at the previous scrape waited to run, in seconds.',
    registers,
    collect() {
      this.set(immediateWaitMs / 1000);
      const queuedMs = clock.monotonicMs();
      setImmediate(() => {
        immediateWaitMs = clock.monotonicMs() - queuedMs;
      });
      if (lateness.count === 0) return;
      min.set(seconds(lateness.min));
      max.set(seconds(lateness.max));
      mean.set(seconds(lateness.mean));
      stddev.set(seconds(lateness.stddev));
      for (const { p, gauge: g } of percentiles) g.set(seconds(lateness.percentile(p)));
      lateness.reset();
    },
  });

  const what = `how late the event loop ran a timer due every ${sampleMs} ms, since the last scrape, in seconds`;
  const min = gauge('min', `The least of ${what}.`);
  const max = gauge('max', `The most of ${what}.`);
  const mean = gauge('mean', `The mean of ${what}.`);
  const stddev = gauge('stddev', `The standard deviation of ${what}.`);
  const percentiles = ([50, 90, 99] as const).map((p) => ({ p, gauge: gauge(`p${p}`, `The ${p}th percentile of ${what}.`) }));
}
