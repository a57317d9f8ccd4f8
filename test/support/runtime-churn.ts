// Steady churn on a real containerd, as a busy node makes it: pods and containers created,
// started, stopped and removed continuously, and images imported and removed (nothing can be
// pulled here, so an import of a fresh archive stands in for a pull, and a removal for image GC).
//
// | worker | one step                                                                        |
// |--------|---------------------------------------------------------------------------------|
// | pods   | below the population: run a pod with its containers; at it: every other step    |
// |        | replaces the oldest pod (containers stopped and removed, the pod stopped and    |
// |        | removed), the other steps restart one container of a pod (stopped, a new       |
// |        | attempt created and started, the old one removed), as the kubelet does          |
// | images | import a fresh noise image (noise-image.ts), then remove the one imported the   |
// |        | step before; one image of the churn's is present between steps                  |
//
// The two run side by side until the signal aborts, each as fast as the runtime lets it (pods) or
// every imageEveryMs (images). Pods go through the fixture's CRI client; images through `ctr`,
// given as a function so that a caller on a cluster node can run it inside the node's mount
// namespace.
//
// Failure modes: a failed step is counted under its operation with its first message kept, and
// the worker pauses errorPauseMs before its next step, so a runtime that refuses is not hammered
// and a fault never ends the churn. Bounded: the population is fixed, at most two churn images
// exist at once, and the error log keeps one message per operation.
//
// The pods it made are left for the caller to remove (the containerd fixture's close() removes
// every pod of its socket; stop() here removes the churn's own).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import type { FixtureCriClient } from '../fixtures/fixture-cri-client.ts';
import { noiseImage, type NoiseImage } from './noise-image.ts';

export interface RuntimeChurnOptions {
  readonly cri: FixtureCriClient;
  readonly clock: Clock;
  /** Pods kept running. */
  readonly pods: number;
  readonly containersPerPod: number;
  /** Runs `ctr -n k8s.io <args>` against the runtime's socket. */
  readonly ctr: (args: readonly string[]) => Promise<void>;
  readonly imageEveryMs: number;
  /** Size of each noise image's layer. */
  readonly imageBytes: number;
  /** Pause after a failed step. */
  readonly errorPauseMs: number;
  /** Names the churn's pods and images, so that two churns never share one. */
  readonly name: string;
}

export interface ChurnCounts {
  readonly podsRun: number;
  readonly podsRemoved: number;
  readonly containersRestarted: number;
  readonly imagesImported: number;
  readonly imagesRemoved: number;
  /** Failed steps per operation, with the first message of each. */
  readonly failures: Readonly<Record<string, { count: number; first: string }>>;
}

interface ChurnPod {
  readonly id: string;
  readonly containers: { id: string; name: string; attempt: number }[];
}

export class RuntimeChurn {
  readonly #options: RuntimeChurnOptions;
  readonly #abort = new AbortController();
  readonly #pods: ChurnPod[] = [];
  readonly #workDir: string;
  #seq = 0;
  #step = 0;
  #running: Promise<void> | undefined;
  readonly #counts = { podsRun: 0, podsRemoved: 0, containersRestarted: 0, imagesImported: 0, imagesRemoved: 0 };
  readonly #failures: Record<string, { count: number; first: string }> = {};

  constructor(options: RuntimeChurnOptions) {
    this.#options = options;
    this.#workDir = mkdtempSync(join(tmpdir(), `${options.name}-images-`));
  }

  /** Starts both workers. */
  start(): void {
    if (this.#running !== undefined) throw new Error('churn: start() must be called once');
    this.#running = Promise.all([this.#podLoop(), this.#imageLoop()]).then(() => undefined);
  }

  counts(): ChurnCounts {
    return { ...this.#counts, failures: structuredClone(this.#failures) };
  }

  /** The pods running now. */
  get population(): number {
    return this.#pods.length;
  }

  /** Stops both workers, removes the churn's pods and its work dir; returns the final counts. */
  async stop(): Promise<ChurnCounts> {
    this.#abort.abort();
    await this.#running;
    for (const pod of this.#pods.splice(0)) await this.#attempt('remove pod', () => this.#removePod(pod));
    rmSync(this.#workDir, { recursive: true, force: true });
    return this.counts();
  }

  async #podLoop(): Promise<void> {
    const { clock, errorPauseMs } = this.#options;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      const ok = await this.#podStep();
      if (!ok) await clock.sleep(errorPauseMs, signal).catch(() => undefined);
    }
  }

  async #podStep(): Promise<boolean> {
    if (this.#pods.length < this.#options.pods) return this.#attempt('run pod', () => this.#runPod());
    this.#step++;
    if (this.#step % 2 === 0) {
      const oldest = this.#pods.shift() as ChurnPod;
      return this.#attempt('remove pod', async () => {
        await this.#removePod(oldest);
        this.#counts.podsRemoved++;
      });
    }
    const pod = this.#pods[this.#step % this.#pods.length] as ChurnPod;
    return this.#attempt('restart container', () => this.#restartContainer(pod));
  }

  async #runPod(): Promise<void> {
    const { cri, containersPerPod, name } = this.#options;
    const podName = `${name}-${this.#seq++}`;
    const id = await cri.runPod(podName, { namespace: name });
    const pod: ChurnPod = { id, containers: [] };
    this.#pods.push(pod);
    for (let i = 0; i < containersPerPod; i++) {
      const cid = await cri.runContainer(id, `c${i}`);
      pod.containers.push({ id: cid, name: `c${i}`, attempt: 0 });
    }
    this.#counts.podsRun++;
  }

  async #removePod(pod: ChurnPod): Promise<void> {
    const { cri } = this.#options;
    for (const c of pod.containers) {
      await cri.stopContainer(c.id);
      await cri.removeContainer(c.id);
    }
    pod.containers.length = 0;
    await cri.stopPod(pod.id);
    await cri.removePod(pod.id);
  }

  async #restartContainer(pod: ChurnPod): Promise<void> {
    const { cri } = this.#options;
    const old = pod.containers.shift();
    if (old === undefined) return;
    await cri.stopContainer(old.id);
    const attempt = old.attempt + 1;
    const id = await cri.createContainer(pod.id, old.name, undefined, { attempt });
    pod.containers.push({ id, name: old.name, attempt });
    await cri.startContainer(id);
    await cri.removeContainer(old.id);
    this.#counts.containersRestarted++;
  }

  async #imageLoop(): Promise<void> {
    const { clock, ctr, imageEveryMs, imageBytes, name } = this.#options;
    const signal = this.#abort.signal;
    let previous: NoiseImage | undefined;
    while (!signal.aborted) {
      const image = noiseImage(this.#workDir, `docker.io/nodepulse/${name}-noise:${this.#seq++}`, imageBytes);
      const imported = await this.#attempt('import image', async () => {
        await ctr(['images', 'import', image.path]);
        this.#counts.imagesImported++;
      });
      rmSync(image.path, { force: true });
      if (previous !== undefined) {
        const ref = previous.ref;
        await this.#attempt('remove image', async () => {
          await ctr(['images', 'rm', ref]);
          this.#counts.imagesRemoved++;
        });
      }
      previous = imported ? image : undefined;
      await clock.sleep(imageEveryMs, signal).catch(() => undefined);
    }
    if (previous !== undefined) {
      const ref = previous.ref;
      await this.#attempt('remove image', () => ctr(['images', 'rm', ref]));
    }
  }

  async #attempt(what: string, fn: () => Promise<void>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      if (this.#abort.signal.aborted && what !== 'remove pod' && what !== 'remove image') return false;
      const f = (this.#failures[what] ??= { count: 0, first: err instanceof Error ? err.message : String(err) });
      f.count++;
      return false;
    }
  }
}
