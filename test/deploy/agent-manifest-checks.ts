// What the issue requires of the agent's manifests, as functions over rendered objects, so the
// kustomize and Helm renders are held to the same rules and compared on the same projection.
//
// Each check throws an AssertionError naming the field; the projections return plain data for
// deepEqual comparisons.
import assert from 'node:assert/strict';
import type { K8sObject } from './render.ts';

/** Every grant the agent may hold: `Kind namespace apiGroup resource verb`. Nothing more. */
export const EXPECTED_AGENT_GRANTS: readonly string[] = [
  'Role nodepulse coordination.k8s.io leases create',
  'Role nodepulse coordination.k8s.io leases get',
  'Role nodepulse coordination.k8s.io leases patch',
  'ClusterRole - core nodes get',
  'ClusterRole - core nodes/status patch',
  'Role default events.k8s.io events create',
  'Role default events.k8s.io events patch',
].slice().sort();

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}
interface Binding extends K8sObject {
  roleRef: { kind: string; name: string };
  subjects?: Subject[];
}

/**
 * The grants that reach the service account `namespace/name`, flattened to one line each:
 * `Kind namespace apiGroup resource verb`, with ` [name,…]` appended when the rule is limited
 * by resourceNames. Rules with nonResourceURLs, and wildcards, are kept verbatim so that an
 * exact comparison fails on them.
 */
export function grantsOf(objects: readonly K8sObject[], sa: { namespace: string; name: string }): string[] {
  const grants: string[] = [];
  for (const obj of objects) {
    if (obj.kind !== 'RoleBinding' && obj.kind !== 'ClusterRoleBinding') continue;
    const binding = obj as Binding;
    const bindsSa = (binding.subjects ?? []).some(
      (s) => s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace,
    );
    if (!bindsSa) continue;
    const role = objects.find(
      (o) => o.kind === binding.roleRef.kind && o.metadata.name === binding.roleRef.name &&
        (o.kind === 'ClusterRole' || o.metadata.namespace === binding.metadata.namespace),
    );
    assert.ok(role, `${binding.kind}/${binding.metadata.name}: roleRef ${binding.roleRef.kind}/${binding.roleRef.name} must exist`);
    // A ClusterRole bound by a RoleBinding grants only in the binding's namespace.
    const scope = binding.kind === 'RoleBinding' ? (binding.metadata.namespace ?? '?') : '-';
    const kind = binding.kind === 'RoleBinding' ? 'Role' : 'ClusterRole';
    for (const rule of (role['rules'] ?? []) as PolicyRule[]) {
      if (rule.nonResourceURLs !== undefined) grants.push(`${kind} ${scope} nonResourceURLs ${rule.nonResourceURLs.join(',')}`);
      const names = rule.resourceNames === undefined ? '' : ` [${rule.resourceNames.join(',')}]`;
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          for (const verb of rule.verbs ?? []) grants.push(`${kind} ${scope} ${group === '' ? 'core' : group} ${resource} ${verb}${names}`);
        }
      }
    }
  }
  return grants.sort();
}

interface Container {
  name: string;
  image?: string;
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  livenessProbe?: { httpGet?: { path?: string; port?: unknown } };
  readinessProbe?: { httpGet?: { path?: string; port?: unknown } };
  resources?: unknown;
  securityContext?: Record<string, unknown>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface Volume {
  name: string;
  hostPath?: { path: string; type?: string };
  emptyDir?: unknown;
}
interface PodSpec {
  nodeSelector?: Record<string, string>;
  affinity?: { nodeAffinity?: NodeAffinity };
  tolerations?: unknown[];
  priorityClassName?: string;
  serviceAccountName?: string;
  securityContext?: Record<string, unknown>;
  containers: Container[];
  volumes?: Volume[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
}
interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: Array<{ matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }> };
  preferredDuringSchedulingIgnoredDuringExecution?: unknown[];
}

/**
 * The architectures a DaemonSet's pod may be scheduled on, by its required node affinity on
 * kubernetes.io/arch (`In`); undefined when some term leaves the architecture open (terms are
 * ORed, so every term must carry the rule).
 */
export function allowedArchitectures(ds: K8sObject): string[] | undefined {
  const terms = (ds as DaemonSetShape).spec.template.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const perTerm = terms.map((term) => {
    const rules = (term.matchExpressions ?? []).filter((e) => e.key === 'kubernetes.io/arch');
    if (rules.length !== 1 || rules[0]?.operator !== 'In') return undefined;
    return [...(rules[0].values ?? [])].sort();
  });
  if (perTerm.some((a) => a === undefined)) return undefined;
  return [...new Set(perTerm.flat() as string[])].sort();
}

interface DaemonSetShape extends K8sObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    updateStrategy?: { type?: string; rollingUpdate?: { maxUnavailable?: unknown } };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

/** The agent's pod, reduced to what the issue specifies; names of volumes are dropped. */
export function agentPodProjection(ds: K8sObject): Record<string, unknown> {
  const d = ds as DaemonSetShape;
  const pod = d.spec.template.spec;
  assert.equal(pod.containers.length, 1, 'the agent pod must have exactly one container');
  const c = pod.containers[0] as Container;
  const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
  const mounts = (c.volumeMounts ?? []).map((m) => {
    const v = volumes.get(m.name);
    assert.ok(v, `volumeMount ${m.name} must name a volume`);
    return { mountPath: m.mountPath, readOnly: m.readOnly ?? false, hostPath: v.hostPath ?? null, emptyDir: v.emptyDir ?? null };
  }).sort((a, b) => a.mountPath.localeCompare(b.mountPath));
  return {
    updateStrategy: d.spec.updateStrategy,
    nodeSelector: pod.nodeSelector,
    affinity: pod.affinity,
    tolerations: pod.tolerations,
    priorityClassName: pod.priorityClassName,
    podSecurityContext: pod.securityContext,
    hostNamespaces: [pod.hostNetwork ?? false, pod.hostPID ?? false, pod.hostIPC ?? false],
    env: c.env,
    ports: c.ports,
    livenessProbe: c.livenessProbe,
    readinessProbe: c.readinessProbe,
    resources: c.resources,
    securityContext: c.securityContext,
    mounts,
  };
}

/** The runtimes' socket directories the DaemonSet mounts: containerd, CRI-O, k3s/RKE2 containerd. */
export const RUNTIME_DIRS: readonly string[] = ['/run/containerd', '/run/crio', '/run/k3s/containerd'];
/** Host directories no mount may be: each holds every socket of the host. */
export const SHARED_RUN_DIRS: readonly string[] = ['/', '/run', '/var/run'];

/** Every hostPath the pod mounts, with its type, sorted by path. */
export function hostPathsOf(ds: K8sObject): Array<{ path: string; type: string | undefined; mountPath: string; readOnly: boolean }> {
  const pod = (ds as DaemonSetShape).spec.template.spec;
  const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
  return pod.containers
    .flatMap((c) => c.volumeMounts ?? [])
    .flatMap((m) => {
      const hostPath = volumes.get(m.name)?.hostPath;
      return hostPath === undefined ? [] : [{ path: hostPath.path, type: hostPath.type, mountPath: m.mountPath, readOnly: m.readOnly ?? false }];
    })
    .sort((a, b) => a.path.localeCompare(b.path));
}

/** The agent container's environment, by name. */
export function agentEnv(ds: K8sObject): Map<string, { name: string; value?: string; valueFrom?: unknown }> {
  const c = (ds as DaemonSetShape).spec.template.spec.containers[0];
  return new Map((c?.env ?? []).map((e) => [e.name, e]));
}

/** Asserts every DaemonSet requirement of the issue on one rendered DaemonSet. */
export function assertAgentDaemonSet(ds: K8sObject, serviceAccountName: string): void {
  const d = ds as DaemonSetShape;
  const pod = d.spec.template.spec;
  for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) {
    assert.equal(d.spec.template.metadata.labels[k], v, `pod template labels must carry selector label ${k}`);
  }
  assert.deepEqual(pod.nodeSelector, { 'kubernetes.io/os': 'linux' });
  assert.deepEqual(pod.tolerations, [{ operator: 'Exists' }], 'the agent must tolerate every taint');
  assert.equal(pod.priorityClassName, 'system-node-critical');
  assert.equal(pod.serviceAccountName, serviceAccountName);
  assert.deepEqual(d.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } });
  assert.equal(pod.hostNetwork ?? false, false);
  assert.equal(pod.hostPID ?? false, false);
  assert.equal(pod.hostIPC ?? false, false);

  const c = pod.containers[0] as Container;
  const env = new Map((c.env ?? []).map((e) => [e.name, e]));
  assert.deepEqual(env.get('NODE_NAME')?.valueFrom, { fieldRef: { fieldPath: 'spec.nodeName' } });
  assert.deepEqual(env.get('POD_NAMESPACE')?.valueFrom, { fieldRef: { fieldPath: 'metadata.namespace' } });
  assert.equal(env.has('CONTAINER_RUNTIME_ENDPOINT'), false, 'no CONTAINER_RUNTIME_ENDPOINT: the agent probes the runtime\'s socket');

  const port = (c.ports ?? []).find((p) => p.containerPort === 9356);
  assert.ok(port?.name, 'the container must name its port 9356');
  assert.deepEqual(c.livenessProbe?.httpGet, { path: '/livez', port: port.name });
  assert.deepEqual(c.readinessProbe?.httpGet, { path: '/readyz', port: port.name });

  const resources = c.resources as { requests?: Record<string, string>; limits?: Record<string, string> } | undefined;
  assert.ok(resources?.requests?.['cpu'] && resources.requests['memory'], 'cpu and memory requests must be set');
  assert.ok(resources.limits?.['memory'], 'a memory limit must be set');

  assert.deepEqual(c.securityContext, {
    runAsUser: 0,
    runAsGroup: 0,
    runAsNonRoot: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
  assert.deepEqual(pod.securityContext, { seccompProfile: { type: 'RuntimeDefault' } });

  // Each runtime's socket DIRECTORY, read-only, never the socket file; nothing else of the host.
  const hostMounts = hostPathsOf(ds);
  assert.deepEqual(hostMounts.map((m) => m.path), [...RUNTIME_DIRS].sort());
  for (const m of hostMounts) {
    assert.equal(m.readOnly, true, `${m.path} must be mounted read-only`);
    assert.equal(m.mountPath, m.path, `${m.path} must be the same path as on the host`);
    assert.equal(m.type, 'DirectoryOrCreate', `${m.path} must be mounted as a directory, created empty where that runtime is absent`);
    assert.equal(SHARED_RUN_DIRS.includes(m.path), false, `${m.path}: never /run or /var/run itself`);
  }
}
