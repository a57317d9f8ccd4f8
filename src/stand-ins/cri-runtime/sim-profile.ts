// How the simulated runtime presents itself: the runtime it answers as.
//
// A profile turns the simulated state (sim-state.ts) into the messages a given runtime sends:
// its Version strings, its Status conditions and extras, and the fields it fills in each pod
// sandbox and container of a listing. The state, the churn, the faults and the transport are the
// same for every profile (sim-runtime.ts); only the answers' shape differs.
//
// | profile         | answers as                                                            |
// |-----------------|-----------------------------------------------------------------------|
// | `nodepulse-sim` | the project's own runtime, shaped like containerd's CRI plugin         |
// |                 | (the default; what the demo, the benchmark and the soak use)           |
// | `cri-o`         | CRI-O, from its public source (crio-profile.ts)                        |
//
// Messages are plain objects in proto-loader's field names, encoded by the caller with the full
// proto. A profile that cannot report a scripted condition (CRI-O never says RuntimeReady=false)
// refuses it with a RangeError naming the value and why.
import type { SimContainer, SimSandbox } from './sim-state.ts';

export type SimProfileName = 'nodepulse-sim' | 'cri-o';

export const SIM_PROFILE_NAMES: readonly SimProfileName[] = ['nodepulse-sim', 'cri-o'];

/** What Status is scripted to report. */
export interface SimConditionState {
  readonly runtimeReady: boolean;
  readonly networkReady: boolean;
}

export interface SimProfile {
  readonly name: SimProfileName;
  /** The VersionResponse. */
  version(): Record<string, unknown>;
  /** The StatusResponse for these scripted conditions; `verbose` adds the info map. */
  status(conditions: SimConditionState, verbose: boolean): Record<string, unknown>;
  /** Throws a RangeError when this runtime could never report these conditions. */
  checkConditions(conditions: SimConditionState): void;
  /** One PodSandbox of a ListPodSandbox answer. */
  sandbox(s: SimSandbox): Record<string, unknown>;
  /** One Container of a ListContainers answer. */
  container(c: SimContainer): Record<string, unknown>;
}

export const SIM_RUNTIME_NAME = 'nodepulse-sim';
export const SIM_RUNTIME_VERSION = '1.0.0';

/** The default profile: the project's own runtime, shaped like containerd's CRI plugin. */
export const SIM_PROFILE: SimProfile = {
  name: 'nodepulse-sim',
  version: () => ({ version: '0.1.0', runtimeName: SIM_RUNTIME_NAME, runtimeVersion: SIM_RUNTIME_VERSION, runtimeApiVersion: 'v1' }),
  status: (conditions, verbose) => ({
    status: {
      conditions: [
        {
          type: 'RuntimeReady',
          status: conditions.runtimeReady,
          reason: conditions.runtimeReady ? '' : 'RuntimeNotReady',
          message: conditions.runtimeReady ? '' : 'nodepulse-sim: runtime scripted not ready',
        },
        {
          type: 'NetworkReady',
          status: conditions.networkReady,
          reason: conditions.networkReady ? '' : 'NetworkPluginNotReady',
          message: conditions.networkReady ? '' : 'Network plugin returns error: cni plugin not initialized',
        },
      ],
    },
    info: verbose ? { config: JSON.stringify({ runtime: SIM_RUNTIME_NAME }) } : {},
  }),
  checkConditions: () => undefined,
  sandbox: (s) => ({
    id: s.id,
    metadata: { name: s.name, uid: s.uid, namespace: s.namespace, attempt: s.attempt },
    state: s.state,
    createdAt: s.createdAtNs.toString(),
    labels: s.labels,
    annotations: s.annotations,
    runtimeHandler: s.runtimeHandler,
  }),
  container: (c) => ({
    id: c.id,
    podSandboxId: c.podSandboxId,
    metadata: { name: c.name, attempt: c.attempt },
    image: { image: c.image, annotations: {} },
    imageRef: c.imageRef,
    state: c.state,
    createdAt: c.createdAtNs.toString(),
    labels: c.labels,
    annotations: c.annotations,
  }),
};
