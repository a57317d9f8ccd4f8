// A real containerd shaped like a kubelet's node, for the benchmark's containerd rows and the
// agent's steady state: test/fixtures/containerd.ts starts it on a socket of its own (a temp dir
// named nodepulse-bench-containerd-*), and fillNode() makes host-network pods through the
// fixture's own CRI client, each with kubelet's labels and annotations, so the listings the
// clients decode are the size a kubelet-made pod's are:
//
// | record    | labels                                                  | annotations                        |
// |-----------|---------------------------------------------------------|------------------------------------|
// | sandbox   | app, pod-template-hash, io.kubernetes.pod.{name, namespace, uid} | kubernetes.io/config.{seen, source} |
// | container | io.kubernetes.container.name, io.kubernetes.pod.{name, namespace, uid} | io.kubernetes.container.{hash, ports, restartCount, terminationMessagePath, terminationMessagePolicy}, io.kubernetes.pod.terminationGracePeriod |
//
// containerd adds its own (io.cri-containerd.kind, image refs, ids). Every container runs the
// fixture's busybox image and sleeps. Pods are made a few at a time (POD_CONCURRENCY): each
// RunPodSandbox starts a shim, and on two cores more at once only queues.
//
// Failure modes: a failed CRI call rejects fillNode() with the fixture's error; the caller closes
// the fixture, which removes every pod it made (its shims included).
import { createHash } from 'node:crypto';
import type { Clock } from '../src/clock/clock.ts';
import { startContainerd, type ContainerdFixture } from '../test/fixtures/containerd.ts';

const POD_CONCURRENCY = 4;
/** Each CRI call of the filling: a RunPodSandbox took over 10 s on a loaded 2-core machine. */
const CALL_DEADLINE_MS = 60_000;
const CONTAINER_NAMES = ['app', 'sidecar', 'metrics'] as const;
/** Host network: there is no CNI here (../shared/FACTS.md). */
const NAMESPACE_MODE_NODE = 2;

export async function startBenchContainerd(clock: Clock): Promise<ContainerdFixture> {
  return startContainerd({ clock, dirPrefix: 'nodepulse-bench-containerd-', callDeadlineMs: CALL_DEADLINE_MS });
}

function hex(seed: string, n: number): string {
  return createHash('sha256').update(seed).digest('hex').slice(0, n);
}

/** Makes `pods` pods of `containersPerPod` running containers; resolves with the containers made and the time taken. */
export async function fillNode(
  fixture: ContainerdFixture,
  options: { pods: number; containersPerPod: number; clock: Clock; log: (line: string) => void },
): Promise<{ containers: number; seconds: number }> {
  const { pods, containersPerPod, clock, log } = options;
  const startedMs = clock.monotonicMs();
  const wallIso = new Date(Math.floor(clock.wallMicros() / 1000)).toISOString();
  let made = 0;
  const one = async (i: number): Promise<void> => {
    const app = `bench-app-${i % 10}`;
    const templateHash = hex(`template-${i % 10}`, 10);
    const name = `${app}-${templateHash}-${hex(`pod-${i}`, 5)}`;
    const namespace = `bench-ns-${i % 4}`;
    const uid = [hex(`uid-${i}`, 8), hex(`uid-${i}a`, 4), hex(`uid-${i}b`, 4), hex(`uid-${i}c`, 4), hex(`uid-${i}d`, 12)].join('-');
    const podId = await fixture.cri.runPodFromConfig({
      metadata: { name, uid, namespace, attempt: 0 },
      hostname: '',
      logDirectory: `/var/log/pods/${namespace}_${name}_${uid}`,
      labels: {
        app,
        'pod-template-hash': templateHash,
        'io.kubernetes.pod.name': name,
        'io.kubernetes.pod.namespace': namespace,
        'io.kubernetes.pod.uid': uid,
      },
      annotations: { 'kubernetes.io/config.seen': wallIso, 'kubernetes.io/config.source': 'api' },
      linux: { cgroupParent: '', securityContext: { namespaceOptions: { network: NAMESPACE_MODE_NODE } } },
    });
    for (let c = 0; c < containersPerPod; c++) {
      const cname = CONTAINER_NAMES[c] ?? `container-${c}`;
      const id = await fixture.cri.createContainerFromConfig(podId, {
        metadata: { name: cname, attempt: 0 },
        image: { image: fixture.image },
        command: [],
        args: [],
        logPath: `${cname}/0.log`,
        labels: {
          'io.kubernetes.container.name': cname,
          'io.kubernetes.pod.name': name,
          'io.kubernetes.pod.namespace': namespace,
          'io.kubernetes.pod.uid': uid,
        },
        annotations: {
          'io.kubernetes.container.hash': hex(`hash-${i}-${c}`, 8),
          'io.kubernetes.container.ports': '[{"name":"http","containerPort":8080,"protocol":"TCP"}]',
          'io.kubernetes.container.restartCount': '0',
          'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
          'io.kubernetes.container.terminationMessagePolicy': 'File',
          'io.kubernetes.pod.terminationGracePeriod': '30',
        },
        linux: { securityContext: { namespaceOptions: { network: NAMESPACE_MODE_NODE } } },
      });
      await fixture.cri.startContainer(id);
      made++;
    }
  };
  await inParallel(pods, one);
  const seconds = (clock.monotonicMs() - startedMs) / 1000;
  log(`containerd: ${pods} pods, ${made} containers made in ${seconds.toFixed(1)} s`);
  return { containers: made, seconds };
}

/**
 * Removes every pod, a few at a time, so the fixture's close() (which stops and removes what is
 * left one by one) finds nothing and stops containerd at once. RemovePodSandbox alone: the CRI
 * has the runtime end the pod's containers forcibly (seen here: 6 pods removed in about 3 s,
 * against about 5 s stopped first, on a loaded machine).
 */
export async function emptyNode(fixture: ContainerdFixture, options: { clock: Clock; log: (line: string) => void }): Promise<void> {
  const startedMs = options.clock.monotonicMs();
  const pods = await fixture.cri.listPods();
  await inParallel(pods.length, async (i) => {
    await fixture.cri.removePod(pods[i]!.id);
  });
  options.log(`containerd: ${pods.length} pods removed in ${((options.clock.monotonicMs() - startedMs) / 1000).toFixed(1)} s`);
}

/** Runs task(0 … n-1), POD_CONCURRENCY at a time; rejects with the first failure. */
async function inParallel(n: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(POD_CONCURRENCY, n) }, () => worker()));
}
