// The few Kubernetes object shapes nodepulse reads and writes, in the fields it uses. These are
// JSON shapes as the API server sends them (coordination.k8s.io/v1 Lease, core/v1 Node,
// events.k8s.io/v1 Event); fields nodepulse does not use are passed through untyped.

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly creationTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
}

export interface LeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  /** MicroTime: RFC 3339 with exactly 6 fractional digits. */
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
}

export interface Lease {
  readonly apiVersion?: 'coordination.k8s.io/v1';
  readonly kind?: 'Lease';
  readonly metadata: ObjectMeta;
  readonly spec?: LeaseSpec;
}

export interface NodeCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason?: string;
  readonly message?: string;
  /** metav1.Time: RFC 3339, whole seconds. */
  readonly lastHeartbeatTime?: string;
  readonly lastTransitionTime?: string;
}

export interface Node {
  readonly apiVersion?: 'v1';
  readonly kind?: 'Node';
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly unschedulable?: boolean };
  readonly status?: {
    readonly conditions?: readonly NodeCondition[];
    /** containerRuntimeVersion: `runtime_name://runtime_version` from the runtime's CRI Version, as the kubelet reports it. */
    readonly nodeInfo?: { readonly containerRuntimeVersion?: string };
  };
}

export interface ObjectReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
}

/** events.k8s.io/v1 Event. */
export interface KubeEvent {
  readonly apiVersion: 'events.k8s.io/v1';
  readonly kind: 'Event';
  readonly metadata: ObjectMeta;
  /** MicroTime. */
  readonly eventTime: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly action: string;
  readonly reason: string;
  readonly type: 'Normal' | 'Warning';
  readonly note?: string;
  readonly regarding: ObjectReference;
}
