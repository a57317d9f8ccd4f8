// What the simulated CRI runtime holds: pod sandboxes and containers, shaped like the records a
// real containerd returns, and the churn that moves them through their lifecycles.
//
// Realistic sizes matter: the benchmark and the soak measure decoding cost, so every record
// carries what containerd's CRI plugin puts there for a kubelet-made pod: 64-hex ids, the
// io.kubernetes.* labels, kubelet's annotations (config.seen / config.source on sandboxes;
// container hash, restart count, termination message path and policy, grace period on
// containers), `sha256:` image ids and digest image refs, and nanosecond creation times.
//
// Churn (step()) follows kubelet's lifecycle, one step at a time:
//   1. containers that exited in an earlier step are removed, and so are sandboxes that were
//      stopped in an earlier step (a replacement sandbox, with fresh containers, takes each
//      one's place, so the node stays at N pods × M containers);
//   2. containers created in an earlier step start running;
//   3. `count` running containers exit (exit code 0, 1 or 137), and each gets a replacement
//      created in its pod, with the same name and attempt + 1, as a restart does. Every
//      POD_CHURN_EVERY-th of these instead stops a whole sandbox: the sandbox turns NOTREADY and
//      all its containers exit.
// Everything is deterministic for a given seed: ids and choices come from a seeded generator,
// so tests can assert exact outcomes.
//
// Assumptions: time comes from the injected Clock (wall microseconds → nanoseconds); the
// state is synchronous and single-threaded; nothing here touches the network.
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock/clock.ts';
import type { ContainerState, SandboxState } from '../../cri/types.ts';

/** Every POD_CHURN_EVERY-th churn action stops a whole sandbox instead of one container. */
export const POD_CHURN_EVERY = 10;

const NAMESPACES = ['default', 'kube-system', 'monitoring', 'payments', 'search', 'ingress'];
const APPS = ['api', 'worker', 'frontend', 'cache', 'exporter', 'scheduler', 'gateway', 'indexer'];
const CONTAINER_NAMES = ['main', 'sidecar', 'istio-proxy', 'log-shipper', 'metrics'];
const EXIT_CODES = [0, 1, 137];

export interface SimSandbox {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly attempt: number;
  state: SandboxState;
  readonly createdAtNs: bigint;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly runtimeHandler: string;
  readonly ip: string;
  /** The churn step in which it was stopped, if it was. */
  stoppedAtStep: number | undefined;
}

export interface SimContainer {
  readonly id: string;
  readonly podSandboxId: string;
  readonly name: string;
  readonly attempt: number;
  state: ContainerState;
  readonly createdAtNs: bigint;
  startedAtNs: bigint;
  finishedAtNs: bigint;
  exitCode: number;
  readonly image: string;
  readonly imageRef: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly logPath: string;
  /** The churn step in which it was created / exited. */
  readonly createdAtStep: number;
  exitedAtStep: number | undefined;
}

export interface SimCounts {
  readonly sandboxes: number;
  readonly containers: number;
  readonly sandboxesByState: Readonly<Record<string, number>>;
  readonly containersByState: Readonly<Record<string, number>>;
}

export class SimState {
  readonly #clock: Clock;
  readonly #seed: number;
  #counter = 0;
  readonly #rng: () => number;
  #step = 0;
  #actions = 0;
  #containersPerPod = 0;
  readonly #sandboxes = new Map<string, SimSandbox>();
  readonly #containers = new Map<string, SimContainer>();
  /** Bumped on every change, so encoders can cache their output. */
  generation = 0;

  constructor(options: { clock: Clock; seed?: number }) {
    this.#clock = options.clock;
    this.#seed = options.seed ?? 1;
    this.#rng = mulberry32(this.#seed);
  }

  /** Churn steps taken so far. */
  get steps(): number {
    return this.#step;
  }

  /** Replaces everything with `pods` ready sandboxes of `containersPerPod` running containers each. */
  setPods(pods: number, containersPerPod: number): void {
    checkCount('pods', pods);
    checkCount('containersPerPod', containersPerPod);
    this.#sandboxes.clear();
    this.#containers.clear();
    this.#containersPerPod = containersPerPod;
    for (let i = 0; i < pods; i++) this.#addPod('CONTAINER_RUNNING');
    this.generation++;
  }

  sandboxes(): SimSandbox[] {
    return [...this.#sandboxes.values()];
  }

  containers(): SimContainer[] {
    return [...this.#containers.values()];
  }

  sandbox(id: string): SimSandbox | undefined {
    return this.#sandboxes.get(id);
  }

  container(id: string): SimContainer | undefined {
    return this.#containers.get(id);
  }

  counts(): SimCounts {
    const sandboxesByState: Record<string, number> = {};
    const containersByState: Record<string, number> = {};
    for (const s of this.#sandboxes.values()) sandboxesByState[s.state] = (sandboxesByState[s.state] ?? 0) + 1;
    for (const c of this.#containers.values()) containersByState[c.state] = (containersByState[c.state] ?? 0) + 1;
    return { sandboxes: this.#sandboxes.size, containers: this.#containers.size, sandboxesByState, containersByState };
  }

  /** One churn step (see the module header) with `count` exits. */
  step(count = 1): void {
    checkCount('count', count);
    this.#step++;
    const now = this.#nowNs();
    // 1. Remove what exited or stopped in an earlier step; replace stopped sandboxes.
    for (const c of [...this.#containers.values()]) {
      if (c.exitedAtStep !== undefined && c.exitedAtStep < this.#step) this.#containers.delete(c.id);
    }
    for (const s of [...this.#sandboxes.values()]) {
      if (s.stoppedAtStep !== undefined && s.stoppedAtStep < this.#step) {
        for (const c of [...this.#containers.values()]) if (c.podSandboxId === s.id) this.#containers.delete(c.id);
        this.#sandboxes.delete(s.id);
        this.#addPod('CONTAINER_CREATED');
      }
    }
    // 2. Start what was created in an earlier step.
    for (const c of this.#containers.values()) {
      if (c.state === 'CONTAINER_CREATED' && c.createdAtStep < this.#step) {
        c.state = 'CONTAINER_RUNNING';
        c.startedAtNs = now;
      }
    }
    // 3. Exits, and the odd whole sandbox.
    for (let i = 0; i < count; i++) {
      const running = [...this.#containers.values()].filter(
        (c) => c.state === 'CONTAINER_RUNNING' && this.#sandboxes.get(c.podSandboxId)?.state === 'SANDBOX_READY',
      );
      const victim = running[Math.floor(this.#rng() * running.length)];
      if (victim === undefined) break;
      this.#actions++;
      if (this.#actions % POD_CHURN_EVERY === 0) {
        const sandbox = this.#sandboxes.get(victim.podSandboxId);
        if (sandbox !== undefined) {
          sandbox.state = 'SANDBOX_NOTREADY';
          sandbox.stoppedAtStep = this.#step;
          for (const c of this.#containers.values()) {
            if (c.podSandboxId === sandbox.id && c.state !== 'CONTAINER_EXITED') this.#exit(c, now, 137);
          }
        }
        continue;
      }
      this.#exit(victim, now, EXIT_CODES[Math.floor(this.#rng() * EXIT_CODES.length)] ?? 0);
      const sandbox = this.#sandboxes.get(victim.podSandboxId);
      if (sandbox !== undefined) this.#addContainer(sandbox, victim.name, victim.attempt + 1, 'CONTAINER_CREATED');
    }
    this.generation++;
  }

  #exit(c: SimContainer, now: bigint, exitCode: number): void {
    c.state = 'CONTAINER_EXITED';
    c.finishedAtNs = now;
    c.exitCode = exitCode;
    c.exitedAtStep = this.#step;
  }

  #addPod(containerState: ContainerState): void {
    const namespace = this.#pick(NAMESPACES);
    const app = this.#pick(APPS);
    const hash = this.#hex(10);
    const name = `${app}-${hash}-${this.#hex(5)}`;
    const uid = uuid(this.#hex(32));
    const id = this.#hex(64);
    const createdAtNs = this.#nowNs();
    const sandbox: SimSandbox = {
      id,
      name,
      namespace,
      uid,
      attempt: 0,
      state: 'SANDBOX_READY',
      createdAtNs,
      labels: {
        app,
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/part-of': namespace,
        'io.cri-containerd.kind': 'sandbox',
        'io.kubernetes.pod.name': name,
        'io.kubernetes.pod.namespace': namespace,
        'io.kubernetes.pod.uid': uid,
        'pod-template-hash': hash,
      },
      annotations: {
        'kubernetes.io/config.seen': rfc3339Nano(createdAtNs),
        'kubernetes.io/config.source': 'api',
      },
      runtimeHandler: '',
      ip: `10.244.${Math.floor(this.#rng() * 250)}.${1 + Math.floor(this.#rng() * 250)}`,
      stoppedAtStep: undefined,
    };
    this.#sandboxes.set(id, sandbox);
    for (let i = 0; i < this.#containersPerPod; i++) {
      const cname = CONTAINER_NAMES[i] ?? `container-${i}`;
      this.#addContainer(sandbox, cname, 0, containerState);
    }
  }

  #addContainer(sandbox: SimSandbox, name: string, attempt: number, state: ContainerState): void {
    const id = this.#hex(64);
    const imageId = this.#hex(64);
    const createdAtNs = this.#nowNs();
    const app = sandbox.labels['app'] ?? 'app';
    const container: SimContainer = {
      id,
      podSandboxId: sandbox.id,
      name,
      attempt,
      state,
      createdAtNs,
      startedAtNs: state === 'CONTAINER_RUNNING' ? createdAtNs : 0n,
      finishedAtNs: 0n,
      exitCode: 0,
      image: `sha256:${imageId}`,
      imageRef: `registry.example.com/${sandbox.namespace}/${app}@sha256:${this.#hex(64)}`,
      labels: {
        'io.kubernetes.container.name': name,
        'io.kubernetes.pod.name': sandbox.name,
        'io.kubernetes.pod.namespace': sandbox.namespace,
        'io.kubernetes.pod.uid': sandbox.uid,
      },
      annotations: {
        'io.kubernetes.container.hash': this.#hex(8),
        'io.kubernetes.container.ports': '[{"name":"http","containerPort":8080,"protocol":"TCP"}]',
        'io.kubernetes.container.restartCount': String(attempt),
        'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
        'io.kubernetes.container.terminationMessagePolicy': 'File',
        'io.kubernetes.pod.terminationGracePeriod': '30',
      },
      logPath: `/var/log/pods/${sandbox.namespace}_${sandbox.name}_${sandbox.uid}/${name}/${attempt}.log`,
      createdAtStep: this.#step,
      exitedAtStep: undefined,
    };
    this.#containers.set(id, container);
  }

  #nowNs(): bigint {
    // Wall microseconds, plus a sub-microsecond part so the nanosecond digits are not all zero.
    return BigInt(this.#clock.wallMicros()) * 1000n + BigInt(Math.floor(this.#rng() * 1000));
  }

  #pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#rng() * items.length)] as T;
  }

  /** `n` hex digits, unique per call (seed, counter). */
  #hex(n: number): string {
    let out = '';
    while (out.length < n) {
      out += createHash('sha256').update(`${this.#seed}:${this.#counter++}`).digest('hex');
    }
    return out.slice(0, n);
  }
}

function checkCount(key: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) throw new RangeError(`${key}: ${value} must be a whole number ≥ 0`);
}

function uuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** RFC 3339 with nanoseconds, as kubelet writes kubernetes.io/config.seen. */
function rfc3339Nano(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

/** A small seeded generator (mulberry32): deterministic churn for a given seed, replayable test inputs. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
