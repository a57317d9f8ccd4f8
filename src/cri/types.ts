// The contract between the agent and a container runtime, in the few fields the agent uses.
//
// Records are lean on purpose: a relist decodes only what the ledger, the lifecycle diff and
// the counts read (ids, states, metadata names, creation time). Creation times are kept as
// bigint nanoseconds, because a CRI int64 past 2^53 would lose precision as a number.

export type SandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY' | `UNKNOWN_${number}`;
export type ContainerState =
  | 'CONTAINER_CREATED'
  | 'CONTAINER_RUNNING'
  | 'CONTAINER_EXITED'
  | 'CONTAINER_UNKNOWN'
  | `UNKNOWN_${number}`;

export interface PodSandbox {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly attempt: number;
  readonly state: SandboxState;
  readonly createdAtNs: bigint;
}

export interface Container {
  readonly id: string;
  readonly podSandboxId: string;
  readonly name: string;
  readonly attempt: number;
  readonly state: ContainerState;
  readonly createdAtNs: bigint;
}

/** What one relist returns: both listings, taken under one deadline. */
export interface Listing {
  readonly sandboxes: readonly PodSandbox[];
  readonly containers: readonly Container[];
  /** Bytes received for both answers, for the metrics and the benchmark. */
  readonly bytes: number;
}

export interface RuntimeVersion {
  readonly version: string;
  readonly runtimeName: string;
  readonly runtimeVersion: string;
  readonly runtimeApiVersion: string;
}

export interface RuntimeCondition {
  readonly type: string;
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

export interface RuntimeStatus {
  readonly conditions: readonly RuntimeCondition[];
}

/**
 * The agent's runtime client. Read-only by construction: these are the only calls it has,
 * and proto/ declares no others (the CRI socket is root-equivalent).
 */
export interface RuntimeClient {
  /** The endpoint in use, e.g. unix:///run/containerd/containerd.sock. */
  readonly endpoint: string;
  version(options: CallOptions): Promise<RuntimeVersion>;
  status(options: CallOptions): Promise<RuntimeStatus>;
  /** ListPodSandbox ∥ ListContainers, issued together under ONE deadline. */
  relist(options: CallOptions): Promise<Listing>;
  listPodSandbox(options: CallOptions): Promise<{ items: readonly PodSandbox[]; bytes: number }>;
  listContainers(options: CallOptions): Promise<{ items: readonly Container[]; bytes: number }>;
  podSandboxStatus(id: string, options: CallOptions): Promise<{ id: string; state: SandboxState }>;
  containerStatus(id: string, options: CallOptions): Promise<{ id: string; state: ContainerState }>;
  /** Closes the channel. Calls in flight fail with `unavailable`. */
  close(): void;
}

export interface CallOptions {
  /** The deadline for the whole call (both listings for relist), in ms from now. */
  readonly deadlineMs: number;
  readonly signal?: AbortSignal;
}
