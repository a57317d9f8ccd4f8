// What turns a node's Ready False or Unknown, and when: the kubelet's side of the fault matrix,
// read from Kubernetes v1.34.4's source (k8s.io/kubernetes, k8s.io/cri-client and
// k8s.io/component-helpers at v0.34.4, the versions the test cluster is built from). The matrix
// test (test/cluster/) checks every row it measures against the window this model gives.
//
// The timers, each where the source sets it:
//
// | timer                           | value          | where                                                        |
// |---------------------------------|----------------|--------------------------------------------------------------|
// | runtime Status poll             | every 5 s      | pkg/kubelet/kubelet.go Run: wait.Until(kl.updateRuntimeUp, 5s)|
// | runtime sync threshold          | 30 s           | kubelet.go maxWaitForContainerRuntime, newRuntimeState       |
// | node status update              | 10 s, 4 % jitter, sliding | kubelet.go Run: wait.JitterUntil(kl.syncNodeStatus, |
// |                                 |                | nodeStatusUpdateFrequency, 0.04, true); v1beta1/defaults.go   |
// | every CRI call's deadline       | 2 min          | cri-client pkg/remote_runtime.go: context.WithTimeout(ctx,   |
// |                                 |                | r.timeout), r.timeout = runtimeRequestTimeout (defaults.go)  |
// | PLEG relist period / threshold  | 1 s / 3 min    | kubelet.go genericPlegRelistPeriod, genericPlegRelistThreshold|
// | kubelet's node Lease            | 40 s, renewed every 10 s (0.25), 4 % jitter | component-helpers apimachinery/lease/controller.go Run |
// | node-monitor-grace-period       | 50 s           | pkg/controller/nodelifecycle/config/v1alpha1/defaults.go     |
// | node-monitor-period             | 5 s            | cloud-provider config/v1alpha1/defaults.go                   |
//
// How they combine into Ready:
//
// - `updateRuntimeUp` (kubelet.go) calls CRI `Status`; only an answer whose RuntimeReady is true
//   stamps `runtimeState.setRuntimeSync(now)`. `runtimeState.runtimeErrors()` (runtime.go) says
//   "container runtime is down" once that stamp is 30 s old or older (`!last.Add(30s).After(now)`),
//   and adds every failing health check: PLEG's `Healthy()` (pleg/generic.go) fails once the last
//   successful relist *began* more than 3 min ago ("pleg was last seen active …; threshold is 3m0s").
//   `Relist()` stamps before `GetPods`, which asks ListPodSandbox and then ListContainers, serially,
//   each under its own 2 min deadline (kuberuntime_manager.go GetPods).
// - Nothing writes Ready when runtimeErrors() changes: `syncNodeStatus` (kubelet_node_status.go)
//   does, every nodeStatusUpdateFrequency. Its `setNodeStatus` runs `defaultNodeStatusFuncs` in
//   order, and `VersionInfo` (nodestatus/setters.go) calls CRI `Version` before `ReadyCondition`
//   reads runtimeErrors(). So while `Version` hangs, the status update hangs with it, up to the
//   2 min deadline, and Ready is written only after it. A Version that fails (refused) costs
//   nothing: the version reads "Unknown" and the update goes on. The image list comes from a
//   cache (images/image_gc_manager.go imageCache), never from the runtime in this path.
// - `tryUpdateNodeStatus` PATCHes when anything changed (a Ready that turns False is a change) or
//   every nodeStatusReportFrequency (5 min).
// - The kubelet's own Lease (kube-node-lease) is renewed by a loop that never calls the runtime.
//   The node lifecycle controller (`tryUpdateNodeHealth`, node_lifecycle_controller.go) counts a
//   node alive while its Lease's renewTime or its Ready condition moves, and only when neither
//   moved for the grace period does it write Ready=Unknown (reason NodeStatusUnknown, "Kubelet
//   stopped posting node status."), on its next monitor pass.
// - The cri-client dials with `:authority` localhost and without WaitForReady: a call to a
//   socket that refuses fails at once, it does not wait for the deadline.
//
// So, per fault, from its onset (t = 0), with the default timers (kubeletReadyWindow below):
//
// | fault                                        | Ready                  | window (s)                  |
// |----------------------------------------------|------------------------|-----------------------------|
// | every call hangs (containerd SIGSTOP)        | False, "container runtime is down" | [R, R + U·1.04] + the PATCH, R = 120, U = 10 |
// | ListPodSandbox/ListContainers hang, Status   | False, "PLEG is not healthy"       | [P − 1 s − d, P + U·1.04], P = 180 |
// | and Version answer                           |                        |                             |
// | the lists slower than nodepulse's deadline   | stays True while 2·delay + 1 s ≤ P  | never                  |
// | every call refused (containerd killed)       | False, "container runtime is down" | [S − 5 s, S + U·1.04], S = 30 |
// | the kubelet stopped                          | Unknown (by the controller)        | [G − L·1.04, G + M], G = 50, L = 10, M = 5 |
// | a fault of the agent alone (EACCES, an       | stays True             | never                       |
// | answer only its decoder fails, no socket,    |                        |                             |
// | its loop wedged, its API path cut)           |                        |                             |
//
// (d: the last successful relist's own duration; the lower bounds assume the last good Status
// or relist came as late as the period allows.) Every window is from the source; the fault matrix
// measures how long each really takes on the real cluster, and verdict-order.ts compares
// nodepulse's defaults against the sooner of the two, so a measurement can only tighten it.

/** The kubelet's and the node lifecycle controller's timers, in ms. */
export interface KubeletTimers {
  /** updateRuntimeUp's period (fixed in the source). */
  readonly runtimeStatusPeriodMs: number;
  /** maxWaitForContainerRuntime (fixed). */
  readonly runtimeSyncThresholdMs: number;
  /** nodeStatusUpdateFrequency. */
  readonly nodeStatusUpdateMs: number;
  /** The jitter on the status update and the lease renewal (0.04, fixed). */
  readonly jitterFraction: number;
  /** runtimeRequestTimeout: every CRI call's deadline. */
  readonly runtimeRequestTimeoutMs: number;
  readonly plegRelistPeriodMs: number;
  readonly plegRelistThresholdMs: number;
  /** nodeLeaseDurationSeconds × 0.25. */
  readonly leaseRenewMs: number;
  /** kube-controller-manager --node-monitor-grace-period. */
  readonly nodeMonitorGraceMs: number;
  /** kube-controller-manager --node-monitor-period. */
  readonly nodeMonitorPeriodMs: number;
}

/** The defaults of v1.34.4, from the files the header names. */
export const KUBELET_DEFAULTS: KubeletTimers = {
  runtimeStatusPeriodMs: 5_000,
  runtimeSyncThresholdMs: 30_000,
  nodeStatusUpdateMs: 10_000,
  jitterFraction: 0.04,
  runtimeRequestTimeoutMs: 120_000,
  plegRelistPeriodMs: 1_000,
  plegRelistThresholdMs: 180_000,
  leaseRenewMs: 10_000,
  nodeMonitorGraceMs: 50_000,
  nodeMonitorPeriodMs: 5_000,
};

/** The faults of the matrix, as the kubelet meets them. */
export type KubeletFault =
  | 'runtime-hangs'
  | 'lists-hang'
  | 'lists-slow'
  | 'runtime-refuses'
  | 'kubelet-stopped'
  | 'agent-only';

/** When Ready changes after a fault's onset, ms; undefined bounds mean it never does. */
export interface ReadyWindow {
  readonly status: 'False' | 'Unknown' | undefined;
  readonly earliestMs: number | undefined;
  readonly latestMs: number | undefined;
  /** The words the kubelet's message carries, for the matrix to look for. */
  readonly because: string | undefined;
}

const NEVER: ReadyWindow = { status: undefined, earliestMs: undefined, latestMs: undefined, because: undefined };

/**
 * The kubelet's Ready window for a fault, from its timers (the table above). `listDelayMs` is the
 * lists' added delay for 'lists-slow'; `relistMs` the duration of a normal PLEG relist (the lower
 * bound of 'lists-hang' subtracts it). The 'runtime-hangs' row assumes the deadline is at least
 * the sync threshold (R ≥ S), as the defaults have it: it throws otherwise, rather than give a
 * window the source does not support.
 */
export function kubeletReadyWindow(fault: KubeletFault, timers: KubeletTimers = KUBELET_DEFAULTS, options: { listDelayMs?: number; relistMs?: number } = {}): ReadyWindow {
  const update = timers.nodeStatusUpdateMs * (1 + timers.jitterFraction);
  switch (fault) {
    case 'runtime-hangs':
      if (timers.runtimeRequestTimeoutMs < timers.runtimeSyncThresholdMs) {
        throw new RangeError(`runtimeRequestTimeoutMs: ${timers.runtimeRequestTimeoutMs} must be at least runtimeSyncThresholdMs (${timers.runtimeSyncThresholdMs}) for this window`);
      }
      return { status: 'False', earliestMs: timers.runtimeRequestTimeoutMs, latestMs: timers.runtimeRequestTimeoutMs + update, because: 'container runtime is down' };
    case 'lists-hang':
      return {
        status: 'False',
        earliestMs: timers.plegRelistThresholdMs - timers.plegRelistPeriodMs - (options.relistMs ?? 0),
        latestMs: timers.plegRelistThresholdMs + update,
        because: 'PLEG is not healthy',
      };
    case 'lists-slow': {
      const delay = options.listDelayMs ?? 0;
      // Two serial lists per relist, each slowed; a relist that outlasts its own deadline fails.
      if (delay >= timers.runtimeRequestTimeoutMs) return kubeletReadyWindow('lists-hang', timers, options);
      return 2 * delay + timers.plegRelistPeriodMs <= timers.plegRelistThresholdMs ? NEVER : kubeletReadyWindow('lists-hang', timers, options);
    }
    case 'runtime-refuses':
      return {
        status: 'False',
        earliestMs: timers.runtimeSyncThresholdMs - timers.runtimeStatusPeriodMs,
        latestMs: timers.runtimeSyncThresholdMs + update,
        because: 'container runtime is down',
      };
    case 'kubelet-stopped':
      return {
        status: 'Unknown',
        earliestMs: timers.nodeMonitorGraceMs - timers.leaseRenewMs * (1 + timers.jitterFraction),
        latestMs: timers.nodeMonitorGraceMs + timers.nodeMonitorPeriodMs,
        because: 'Kubelet stopped posting node status.',
      };
    case 'agent-only':
      return NEVER;
  }
}
