// What issue 8 requires of the controller's install, as functions over rendered objects, so the
// kustomize component (deploy/components/controller over deploy/controller) and the Helm chart
// (controller.enabled) are held to the same rules and compared on the same projection.
//
// Each check throws an AssertionError naming the field; the projection returns plain data for
// deepEqual comparisons.
import assert from 'node:assert/strict';
import { ELECTION_LEASE_NAME } from '../../src/election/leader-elector.ts';
import type { K8sObject } from './render.ts';

/** The controller's election lease, as the controller names it. */
export const ELECTION_LEASE = ELECTION_LEASE_NAME;

/**
 * Every grant the controller may hold without --taint, in grantsOf's form. Nothing more:
 * - list/watch leases (the agents' leases, in the lease namespace) and nodes;
 * - its own election lease: get/update by name, create (RBAC cannot limit create by name);
 * - patch nodes/status (the RuntimeRelistUnhealthy condition);
 * - create events.k8s.io events in `default` (it only POSTs Events; it never patches one);
 * - list/watch the agent DaemonSet, by name: marking pauses while it rolls out.
 */
export function expectedControllerGrants(namespaces: { release: string; leases: string; agentDaemonSet?: string }): string[] {
  const daemonSet = namespaces.agentDaemonSet ?? 'nodepulse';
  return [
    `Role ${namespaces.release} apps daemonsets list [${daemonSet}]`,
    `Role ${namespaces.release} apps daemonsets watch [${daemonSet}]`,
    `Role ${namespaces.leases} coordination.k8s.io leases list`,
    `Role ${namespaces.leases} coordination.k8s.io leases watch`,
    `Role ${namespaces.release} coordination.k8s.io leases create`,
    `Role ${namespaces.release} coordination.k8s.io leases get [${ELECTION_LEASE}]`,
    `Role ${namespaces.release} coordination.k8s.io leases update [${ELECTION_LEASE}]`,
    'ClusterRole - core nodes list',
    'ClusterRole - core nodes watch',
    'ClusterRole - core nodes/status patch',
    'Role default events.k8s.io events create',
  ].sort();
}

/** The one grant --taint adds: a JSON merge PATCH of the Node's spec.taints. */
export const TAINT_GRANT = 'ClusterRole - core nodes patch';

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  resources?: unknown;
  securityContext?: Record<string, unknown>;
  volumeMounts?: unknown[];
}
interface DeploymentShape extends K8sObject {
  spec: {
    replicas?: number;
    strategy?: unknown;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName?: string;
        nodeSelector?: Record<string, string>;
        tolerations?: unknown[];
        affinity?: { podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: Array<{ podAffinityTerm: { topologyKey: string; labelSelector: { matchLabels: Record<string, string> } } }> } };
        securityContext?: Record<string, unknown>;
        hostNetwork?: boolean;
        hostPID?: boolean;
        volumes?: unknown[];
        containers: Container[];
      };
    };
  };
}

/** The controller's Deployment, reduced to what the issue and the manifests' header specify. */
export function controllerPodProjection(deployment: K8sObject): Record<string, unknown> {
  const d = deployment as DeploymentShape;
  const pod = d.spec.template.spec;
  assert.equal(pod.containers.length, 1, 'the controller pod must have exactly one container');
  const c = pod.containers[0] as Container;
  const anti = pod.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.map((t) => t.podAffinityTerm.topologyKey);
  return {
    replicas: d.spec.replicas,
    strategy: d.spec.strategy,
    nodeSelector: pod.nodeSelector,
    tolerations: pod.tolerations ?? [],
    antiAffinityTopologyKeys: anti,
    podSecurityContext: pod.securityContext,
    command: c.command,
    args: c.args,
    env: c.env,
    ports: c.ports,
    livenessProbe: c.livenessProbe,
    readinessProbe: c.readinessProbe,
    resources: c.resources,
    securityContext: c.securityContext,
    volumes: pod.volumes ?? [],
  };
}

/** Asserts what issue 8 and the controller's flags require of one rendered Deployment. */
export function assertControllerDeployment(deployment: K8sObject, expect: { serviceAccountName: string; leaseNamespace: string }): void {
  const d = deployment as DeploymentShape;
  const pod = d.spec.template.spec;
  assert.equal(d.spec.replicas, 2, 'two replicas: one leads, one stands by');
  for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) {
    assert.equal(d.spec.template.metadata.labels[k], v, `pod template labels must carry selector label ${k}`);
  }
  assert.equal(d.spec.selector.matchLabels['app.kubernetes.io/component'], 'controller', 'the selector must not match the agent pods');
  assert.equal(pod.serviceAccountName, expect.serviceAccountName);
  const anti = pod.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0]?.podAffinityTerm;
  assert.equal(anti?.topologyKey, 'kubernetes.io/hostname', 'the replicas must be spread over nodes');
  assert.deepEqual(anti.labelSelector.matchLabels, d.spec.selector.matchLabels);
  assert.equal(pod.hostNetwork ?? false, false);
  assert.equal(pod.hostPID ?? false, false);
  assert.equal(pod.securityContext?.['runAsNonRoot'], true, 'the controller only talks HTTPS: it needs no root');

  const c = pod.containers[0] as Container;
  assert.deepEqual(c.command, ['node', 'dist/src/cli/main.js', 'controller']);
  const args = c.args ?? [];
  assert.ok(args.includes(`--lease-namespace=${expect.leaseNamespace}`), `--lease-namespace=${expect.leaseNamespace} must be set: ${args.join(' ')}`);
  assert.ok(!args.some((a) => a.startsWith('--namespace') || a.startsWith('--identity')),
    'the election namespace and identity come from POD_NAMESPACE and POD_NAME');
  const env = new Map((c.env ?? []).map((e) => [e.name, e]));
  assert.deepEqual(env.get('POD_NAME')?.valueFrom, { fieldRef: { fieldPath: 'metadata.name' } });
  assert.deepEqual(env.get('POD_NAMESPACE')?.valueFrom, { fieldRef: { fieldPath: 'metadata.namespace' } });
  const port = (c.ports ?? []).find((p) => p.containerPort === 9357);
  assert.ok(port?.name !== undefined, 'the controller serves /metrics and /healthz on a named port 9357');
  assert.ok(args.includes('--http-address=:9357'), '--http-address must match the container port');
  assert.deepEqual(c.securityContext, {
    privileged: false,
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
  });
  const resources = c.resources as { requests?: Record<string, string>; limits?: Record<string, string> } | undefined;
  assert.ok(resources?.requests?.['cpu'] && resources.requests['memory'] && resources.limits?.['memory'], 'cpu and memory requests and a memory limit');
}
