// The agent's manifests, rendered by the real `kubectl kustomize` and `helm template`, checked
// against the Kubernetes and prometheus-operator schemas, against the requirements,
// and against each other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { agentEnv, assertAgentDaemonSet, agentPodProjection, EXPECTED_AGENT_GRANTS, grantsOf, hostPathsOf, RUNTIME_DIRS, SHARED_RUN_DIRS } from './agent-manifest-checks.ts';
import { HELM_ALL_COMPONENTS, helmRunner, only, REPO_ROOT, renderKustomize, renderKustomizeOverlay, withoutHooks, type K8sObject } from './render.ts';
import { livenessKillBound, startupGraceSeconds, type AgentDaemonSetSpec } from './liveness-bound.ts';
import { schemaErrors } from './schema.ts';

const AGENT_SA = { namespace: 'nodepulse', name: 'nodepulse' };
const OPTIONAL_KINDS = ['Service', 'ConfigMap', 'PodMonitor', 'PrometheusRule', 'NetworkPolicy', 'Deployment', 'PodDisruptionBudget'];
/** The safe defaults: on in the kustomize base and in the chart's defaults alike. */
const DEFAULT_SAFETY_KINDS = ['FlowSchema', 'PriorityLevelConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'];

const kustomizeAll = renderKustomize('deploy/overlays/all');
const kustomizeBase = renderKustomize('deploy');
const helm = helmRunner();
after(() => helm.close());
// The release's own objects; the hooks (uninstall, test) have tests of their own (chart-hooks.test.ts).
const helmAll = withoutHooks(helm.template(HELM_ALL_COMPONENTS));
const helmDefault = withoutHooks(helm.template([]));

function kinds(objects: readonly K8sObject[]): string[] {
  return objects.map((o) => o.kind).sort();
}

test('every object kustomize renders, with every component on, validates against its schema', () => {
  assert.ok(kustomizeAll.length >= 15, `precondition: the all overlay renders the full set, got ${kinds(kustomizeAll).join(',')}`);
  for (const kind of OPTIONAL_KINDS) assert.ok(kustomizeAll.some((o) => o.kind === kind), `the all overlay must render a ${kind}`);
  assert.deepEqual(kustomizeAll.flatMap(schemaErrors), []);
});

test('every object helm renders, with every component on, validates against its schema', () => {
  for (const kind of OPTIONAL_KINDS) assert.ok(helmAll.some((o) => o.kind === kind), `helm with every component must render a ${kind}`);
  assert.deepEqual(helmAll.flatMap(schemaErrors), []);
  assert.deepEqual(helmDefault.flatMap(schemaErrors), []);
});

test('a schema violation is reported, so the schema check can fail', () => {
  const ds = structuredClone(only(kustomizeAll, 'DaemonSet')) as K8sObject & { spec: { template: { spec: { containers: Array<{ ports: Array<{ containerPort: unknown }> }> } } } };
  const port = ds.spec.template.spec.containers[0]?.ports[0];
  assert.ok(port, 'precondition: the agent container has a port');
  port.containerPort = 'nine thousand';
  assert.equal(schemaErrors(ds).length, 1);
  assert.match(schemaErrors({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })[0] ?? '', /must have a known schema/);
});

test('helm lint --strict passes with the defaults and with every component on', () => {
  assert.match(helm.lint([]), /0 chart\(s\) failed/);
  assert.match(helm.lint(HELM_ALL_COMPONENTS), /0 chart\(s\) failed/);
});

test('the kustomize DaemonSet meets every requirement: selector, tolerations, probes, mounts, security', () => {
  assertAgentDaemonSet(only(kustomizeAll, 'DaemonSet'), 'nodepulse');
});

test('the helm DaemonSet meets every requirement: selector, tolerations, probes, mounts, security', () => {
  assertAgentDaemonSet(only(helmAll, 'DaemonSet'), 'nodepulse');
});

test('RBAC grants the agent exactly leases get/create/patch, nodes get, nodes/status patch and events create/patch', () => {
  assert.deepEqual(grantsOf(kustomizeAll, AGENT_SA), EXPECTED_AGENT_GRANTS);
  assert.deepEqual(grantsOf(kustomizeBase, AGENT_SA), EXPECTED_AGENT_GRANTS);
  assert.deepEqual(grantsOf(helmAll, AGENT_SA), EXPECTED_AGENT_GRANTS);
  assert.deepEqual(grantsOf(helmDefault, AGENT_SA), EXPECTED_AGENT_GRANTS);
});

const AGENT_ROLES = ['ClusterRole/-/nodepulse-agent', 'Role/default/nodepulse-events', 'Role/nodepulse/nodepulse-lease'];
const CONTROLLER_ROLES = ['ClusterRole/-/nodepulse-controller', 'Role/default/nodepulse-controller-events', 'Role/nodepulse/nodepulse-controller'];

function roles(objects: readonly K8sObject[]): string[] {
  return objects.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole').map((o) => `${o.kind}/${o.metadata.namespace ?? '-'}/${o.metadata.name}`).sort();
}

test('no role in the render exists beyond the agent\'s own three, and the controller\'s three when it is on', () => {
  assert.deepEqual(roles(kustomizeBase), AGENT_ROLES);
  assert.deepEqual(roles(helmDefault), AGENT_ROLES);
  assert.deepEqual(roles(kustomizeAll), [...AGENT_ROLES, ...CONTROLLER_ROLES].sort());
  assert.deepEqual(roles(helmAll), [...AGENT_ROLES, ...CONTROLLER_ROLES].sort());
});

test('a grant wider than the list fails the RBAC check', () => {
  const widened = kustomizeAll.map((o) =>
    o.kind === 'ClusterRole' ? { ...o, rules: [...(o['rules'] as unknown[]), { apiGroups: [''], resources: ['nodes'], verbs: ['list'] }] } : o);
  assert.notDeepEqual(grantsOf(widened, AGENT_SA), EXPECTED_AGENT_GRANTS);
});

test('kustomize and helm render the same agent pod and the same grants', () => {
  assert.deepEqual(agentPodProjection(only(helmAll, 'DaemonSet')), agentPodProjection(only(kustomizeAll, 'DaemonSet')));
  assert.deepEqual(grantsOf(helmAll, AGENT_SA), grantsOf(kustomizeAll, AGENT_SA));
});

test('kustomize and helm render the same optional components', () => {
  const spec = (objs: readonly K8sObject[], kind: string): unknown => only(objs, kind, kind === 'PrometheusRule' || kind === 'PodMonitor' ? 'nodepulse' : undefined)['spec'];
  assert.deepEqual(spec(helmAll, 'FlowSchema'), spec(kustomizeAll, 'FlowSchema'));
  assert.deepEqual(spec(helmAll, 'PriorityLevelConfiguration'), spec(kustomizeAll, 'PriorityLevelConfiguration'));
  assert.deepEqual(spec(helmAll, 'ValidatingAdmissionPolicy'), spec(kustomizeAll, 'ValidatingAdmissionPolicy'));
  assert.deepEqual(spec(helmAll, 'ValidatingAdmissionPolicyBinding'), spec(kustomizeAll, 'ValidatingAdmissionPolicyBinding'));
  assert.deepEqual(spec(helmAll, 'NetworkPolicy'), spec(kustomizeAll, 'NetworkPolicy'));
  assert.deepEqual(spec(helmAll, 'PrometheusRule'), spec(kustomizeAll, 'PrometheusRule'));
  const endpoints = (objs: readonly K8sObject[]): unknown => (spec(objs, 'PodMonitor') as { podMetricsEndpoints: unknown }).podMetricsEndpoints;
  assert.deepEqual(endpoints(helmAll), endpoints(kustomizeAll));
  const ports = (objs: readonly K8sObject[]): unknown => (spec(objs, 'Service') as { ports: unknown; clusterIP: unknown });
  assert.deepEqual({ ...(ports(helmAll) as object), selector: null }, { ...(ports(kustomizeAll) as object), selector: null });
});

test('the Service and PodMonitor select the agent pods, and the PodMonitor adds job and node labels', () => {
  for (const objects of [kustomizeAll, helmAll]) {
    const podLabels = (only(objects, 'DaemonSet')['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const svc = only(objects, 'Service')['spec'] as { clusterIP: string; selector: Record<string, string> };
    assert.equal(svc.clusterIP, 'None');
    for (const [k, v] of Object.entries(svc.selector)) assert.equal(podLabels[k], v, `Service selector ${k}`);
    const pm = only(objects, 'PodMonitor', 'nodepulse')['spec'] as { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ relabelings: unknown[] }> };
    for (const [k, v] of Object.entries(pm.selector.matchLabels)) assert.equal(podLabels[k], v, `PodMonitor selector ${k}`);
    assert.deepEqual(pm.podMetricsEndpoints[0]?.relabelings, [
      { action: 'replace', targetLabel: 'job', replacement: 'nodepulse' },
      { action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' },
    ]);
  }
});

test('the FlowSchema puts the agent\'s and the controller\'s Lease, Node and DaemonSet requests in a priority level of nodepulse\'s own', () => {
  for (const [what, objects] of [['kustomize', kustomizeBase], ['helm', helmDefault]] as const) {
    const fs = only(objects, 'FlowSchema')['spec'] as {
      priorityLevelConfiguration: { name: string };
      distinguisherMethod: { type: string };
      rules: Array<{ subjects: unknown[]; resourceRules: unknown[]; nonResourceRules?: unknown }>;
    };
    const level = only(objects, 'PriorityLevelConfiguration');
    assert.equal(fs.priorityLevelConfiguration.name, level.metadata.name, `${what}: the FlowSchema names the level it ships`);
    assert.notEqual(fs.priorityLevelConfiguration.name, 'node-high', `${what}: not the kubelets' own level`);
    assert.equal(fs.distinguisherMethod.type, 'ByUser', `${what}: one flow per service account, so the controller never waits behind the agents`);
    assert.deepEqual(fs.rules.map((r) => r.subjects), [[
      { kind: 'ServiceAccount', serviceAccount: { name: 'nodepulse', namespace: 'nodepulse' } },
      { kind: 'ServiceAccount', serviceAccount: { name: 'nodepulse-controller', namespace: 'nodepulse' } },
    ]], what);
    assert.deepEqual(fs.rules.map((r) => r.resourceRules), [[
      { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
      { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true },
      { verbs: ['*'], apiGroups: ['apps'], resources: ['daemonsets'], namespaces: ['*'] },
    ]], `${what}: their Leases, Nodes and the DaemonSet; not Events, so a flood of notices cannot take the renewals' seats`);
    assert.equal(fs.rules.some((r) => JSON.stringify(r).includes('events')), false);
  }
});

test('the admission policy confines the agent to its token\'s node, for leases and nodes/status', () => {
  const vap = only(kustomizeAll, 'ValidatingAdmissionPolicy')['spec'] as {
    failurePolicy: string;
    matchConditions: Array<{ expression: string }>;
    variables: Array<{ expression: string }>;
    validations: Array<{ expression: string }>;
    matchConstraints: { resourceRules: Array<{ resources: string[] }> };
  };
  assert.equal(vap.failurePolicy, 'Fail');
  assert.deepEqual(vap.matchConstraints.resourceRules.flatMap((r) => r.resources).sort(), ['leases', 'nodes/status']);
  assert.match(vap.matchConditions[0]?.expression ?? '', /system:serviceaccount:nodepulse:nodepulse/);
  assert.match(vap.variables[0]?.expression ?? '', /request\.userInfo\.extra\['authentication\.kubernetes\.io\/node-name'\]/);
  assert.ok(vap.validations.some((v) => v.expression === 'object.metadata.name == variables.tokenNode'));
  const binding = only(kustomizeAll, 'ValidatingAdmissionPolicyBinding')['spec'] as { policyName: string; validationActions: string[] };
  assert.equal(binding.policyName, only(kustomizeAll, 'ValidatingAdmissionPolicy').metadata.name);
  assert.deepEqual(binding.validationActions, ['Deny']);
});

test('helm renders no optional component unless asked, and the safe defaults always, as the kustomize base does', () => {
  for (const kind of OPTIONAL_KINDS) assert.equal(helmDefault.some((o) => o.kind === kind), false, kind);
  assert.deepEqual(kinds(kustomizeBase).filter((k) => OPTIONAL_KINDS.includes(k)), []);
  assert.deepEqual(kinds(helmDefault).filter((k) => DEFAULT_SAFETY_KINDS.includes(k)), [...DEFAULT_SAFETY_KINDS].sort());
  assert.deepEqual(kinds(kustomizeBase).filter((k) => DEFAULT_SAFETY_KINDS.includes(k)), [...DEFAULT_SAFETY_KINDS].sort());
});

test('the admission policy is rendered only where the API server serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy', () => {
  const older = withoutHooks(helm.template([], { apiVersions: [] }));
  assert.deepEqual(kinds(older).filter((k) => k.startsWith('ValidatingAdmissionPolicy')), [], 'a server without the kind gets no policy');
  assert.deepEqual(kinds(older).filter((k) => DEFAULT_SAFETY_KINDS.includes(k)), ['FlowSchema', 'PriorityLevelConfiguration'], 'the priority level needs only flowcontrol v1 (Kubernetes >= 1.29, the chart\'s floor)');
  const off = withoutHooks(helm.template(['admissionPolicy.enabled=false']));
  assert.deepEqual(kinds(off).filter((k) => k.startsWith('ValidatingAdmissionPolicy')), [], 'and it can be turned off');
  const withoutPolicy = renderKustomizeOverlay(['deploy/base'], ['deploy/components/without-admission-policy']);
  assert.deepEqual(kinds(withoutPolicy).filter((k) => k.startsWith('ValidatingAdmissionPolicy')), [], 'kustomize on an older server: the without-admission-policy component removes both');
  assert.deepEqual(kinds(withoutPolicy).filter((k) => !k.startsWith('ValidatingAdmissionPolicy')), kinds(kustomizeBase).filter((k) => !k.startsWith('ValidatingAdmissionPolicy')), 'and nothing else');
});

test('helm with the Node condition off drops its flag-guarded grants and passes --node-condition=false', () => {
  const objects = helm.template(['nodeCondition=false']);
  assert.deepEqual(grantsOf(objects, AGENT_SA), [
    'ClusterRole - core nodes get',
    'Role nodepulse coordination.k8s.io leases create',
    'Role nodepulse coordination.k8s.io leases get',
    'Role nodepulse coordination.k8s.io leases patch',
  ]);
  const args = (only(objects, 'DaemonSet')['spec'] as { template: { spec: { containers: Array<{ args?: string[] }> } } }).template.spec.containers[0]?.args;
  assert.deepEqual(args, ['--node-condition=false']);
});

test('kubectl kustomize deploy and helm template render a DaemonSet with no CONTAINER_RUNTIME_ENDPOINT, the three runtime directories, and no /run or /var/run', () => {
  for (const [what, objects] of [['kustomize deploy', kustomizeBase], ['kustomize all', kustomizeAll], ['helm default', helmDefault], ['helm all', helmAll]] as const) {
    const ds = only(objects, 'DaemonSet');
    assert.equal(agentEnv(ds).has('CONTAINER_RUNTIME_ENDPOINT'), false, `${what}: the agent probes; no endpoint is set`);
    const mounts = hostPathsOf(ds);
    assert.deepEqual(mounts.map((m) => m.path), [...RUNTIME_DIRS].sort(), `${what}: exactly the runtime directories`);
    for (const shared of SHARED_RUN_DIRS) assert.equal(mounts.some((m) => m.path === shared), false, `${what}: no mount of ${shared}`);
  }
});

test('helm values move the lease namespace, set thresholds, and mount a CRI-O endpoint\'s directory', () => {
  const objects = helm.template([
    'leaseNamespace=node-leases',
    'agent.relistThreshold=5m',
    'agent.relistDeadline=2m',
    'runtime.endpoint=unix:///run/crio/crio.sock',
    'runtime.socketDirs={/run/crio}',
    'tolerations[0].key=dedicated',
    'tolerations[0].operator=Exists',
  ], { release: 'np', namespace: 'ops' });
  assert.deepEqual(grantsOf(objects, { namespace: 'ops', name: 'np-nodepulse' }).filter((g) => g.includes('leases')), [
    'Role node-leases coordination.k8s.io leases create',
    'Role node-leases coordination.k8s.io leases get',
    'Role node-leases coordination.k8s.io leases patch',
  ]);
  const pod = (only(objects, 'DaemonSet')['spec'] as { template: { spec: { tolerations: unknown; volumes: Array<{ hostPath?: { path: string } }>; containers: Array<{ args?: string[] }> } } }).template.spec;
  assert.deepEqual(pod.containers[0]?.args, ['--relist-deadline=2m', '--relist-threshold=5m', '--lease-namespace=node-leases']);
  assert.deepEqual(pod.volumes.flatMap((v) => (v.hostPath ? [v.hostPath.path] : [])), ['/run/crio']);
  assert.equal(agentEnv(only(objects, 'DaemonSet')).get('CONTAINER_RUNTIME_ENDPOINT')?.value, 'unix:///run/crio/crio.sock');
  assert.deepEqual(pod.tolerations, [{ key: 'dedicated', operator: 'Exists' }]);
  assert.deepEqual(objects.flatMap(schemaErrors), []);
});

test('helm with a cri-dockerd endpoint sets it and mounts that socket file alone, never /run', () => {
  const objects = helm.template(['runtime.endpoint=unix:///run/cri-dockerd.sock']);
  const ds = only(objects, 'DaemonSet');
  assert.equal(agentEnv(ds).get('CONTAINER_RUNTIME_ENDPOINT')?.value, 'unix:///run/cri-dockerd.sock');
  assert.deepEqual(hostPathsOf(ds), [
    { path: '/run/containerd', type: 'DirectoryOrCreate', mountPath: '/run/containerd', readOnly: true },
    { path: '/run/cri-dockerd.sock', type: 'Socket', mountPath: '/run/cri-dockerd.sock', readOnly: true },
    { path: '/run/crio', type: 'DirectoryOrCreate', mountPath: '/run/crio', readOnly: true },
    { path: '/run/k3s/containerd', type: 'DirectoryOrCreate', mountPath: '/run/k3s/containerd', readOnly: true },
  ]);
  assert.deepEqual(objects.flatMap(schemaErrors), []);
  const elsewhere = hostPathsOf(only(helm.template(['runtime.endpoint=unix:///var/lib/rt/cri.sock']), 'DaemonSet'));
  assert.deepEqual(elsewhere.filter((m) => m.path === '/var/lib/rt'), [{ path: '/var/lib/rt', type: 'DirectoryOrCreate', mountPath: '/var/lib/rt', readOnly: true }], 'an endpoint in a directory of its own mounts that directory');
});

test('the cri-dockerd patch docs/install.md shows renders with kustomize: the endpoint, and that socket file alone', () => {
  const install = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
  const block = /<!-- cri-dockerd patch -->\s*```yaml\n([\s\S]*?)```/.exec(install)?.[1];
  assert.ok(block !== undefined, 'precondition: docs/install.md holds the cri-dockerd patch after its marker');
  const objects = renderKustomizeOverlay(['deploy/base'], [], [block]);
  const ds = only(objects, 'DaemonSet');
  assert.equal(agentEnv(ds).get('CONTAINER_RUNTIME_ENDPOINT')?.value, 'unix:///run/cri-dockerd.sock');
  assert.deepEqual(hostPathsOf(ds).map((m) => [m.path, m.type, m.mountPath, m.readOnly]), [
    ['/run/containerd', 'DirectoryOrCreate', '/run/containerd', true],
    ['/run/cri-dockerd.sock', 'Socket', '/run/cri-dockerd.sock', true],
    ['/run/crio', 'DirectoryOrCreate', '/run/crio', true],
    ['/run/k3s/containerd', 'DirectoryOrCreate', '/run/k3s/containerd', true],
  ]);
  assert.deepEqual(objects.flatMap(schemaErrors), []);
});

/** `20m` → 20, `1` → 1000 (millicores); `128Mi` → 128, `1Gi` → 1024 (MiB). */
function millicores(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000;
}
function mebibytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Mi|Gi)$/.exec(q);
  assert.ok(m, `memory ${q} must be in Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

test('the agent\'s resources follow the benchmark in docs/bench.md: twice its steady CPU, its RSS plus 20 to 60 %, a limit twice its RSS and half again its RSS at 1,000 containers', () => {
  const bench = readFileSync(join(REPO_ROOT, 'docs', 'bench.md'), 'utf8');
  const section = bench.slice(bench.indexOf('#### Agent steady state'));
  const row = /^\| ([\d.]+) \| ([\d.]+) \|/m.exec(section);
  assert.ok(section.length < bench.length && row, 'precondition: docs/bench.md has the agent steady-state table (CPU % of one core, RSS MiB)');
  const cpuPercent = Number(row[1]);
  const rssMiB = Number(row[2]);
  const larger = bench.slice(bench.indexOf('#### The agent on larger nodes'));
  const dense = /^\| [\d.]+ \| ([\d.]+) \|.*\| simulated \| 1,000 \|$/m.exec(larger);
  assert.ok(larger.length < bench.length && dense, 'precondition: docs/bench.md has the agent\'s RSS at 1,000 containers (simulated)');
  const denseRssMiB = Number(dense[1]);
  for (const objects of [kustomizeAll, helmDefault]) {
    const resources = (only(objects, 'DaemonSet')['spec'] as { template: { spec: { containers: Array<{ resources: { requests: Record<string, string>; limits: Record<string, string> } }> } } })
      .template.spec.containers[0]?.resources;
    assert.ok(resources, 'precondition: the agent container has resources');
    assert.ok(millicores(resources.requests['cpu'] ?? '0') >= 2 * cpuPercent * 10, `cpu request ${resources.requests['cpu']} must be at least twice ${cpuPercent} % of one core`);
    assert.ok(mebibytes(resources.requests['memory'] ?? '0') >= 1.2 * rssMiB, `memory request ${resources.requests['memory']} must be at least ${rssMiB} MiB + 20 %`);
    assert.ok(mebibytes(resources.requests['memory'] ?? '0') <= 1.6 * rssMiB, `memory request ${resources.requests['memory']} must be at most ${rssMiB} MiB + 60 %: requests follow the figures down too`);
    assert.ok(mebibytes(resources.limits['memory'] ?? '0') >= 2 * rssMiB, `memory limit ${resources.limits['memory']} must be at least twice ${rssMiB} MiB`);
    assert.ok(mebibytes(resources.limits['memory'] ?? '0') >= 1.5 * denseRssMiB, `memory limit ${resources.limits['memory']} must be at least ${denseRssMiB} MiB (1,000 containers) + 50 %`);
    assert.equal(resources.limits['cpu'], undefined, 'no CPU limit: throttling would delay the relists the agent times');
  }
});

test('an agent that cannot observe never becomes available: its readiness failures land well inside minReadySeconds, in both renders', () => {
  // /readyz turns 503 at the first relist that fails for the agent's own reason (about a second
  // after start). Even if one probe passed before that, the pod is Ready again only after it
  // has failed failureThreshold probes in a row, so it is never Ready for minReadySeconds on end:
  // the rollout counts it unavailable and stops within maxUnavailable.
  for (const objects of [kustomizeAll, helmDefault]) {
    const spec = only(objects, 'DaemonSet')['spec'] as {
      minReadySeconds?: number;
      updateStrategy?: { type?: string };
      template: { spec: { containers: Array<{ readinessProbe: { httpGet?: { path?: string }; periodSeconds: number; failureThreshold: number; successThreshold?: number; initialDelaySeconds?: number } }> } };
    };
    const probe = spec.template.spec.containers[0]?.readinessProbe;
    assert.ok(probe, 'precondition: the agent has a readiness probe');
    assert.equal(probe.httpGet?.path, '/readyz');
    assert.equal(spec.updateStrategy?.type, 'RollingUpdate', 'a rolling update waits for availability');
    const failWindowS = (probe.initialDelaySeconds ?? 0) + probe.periodSeconds * probe.failureThreshold;
    assert.ok(failWindowS * 2 <= (spec.minReadySeconds ?? 0),
      `readiness fails within ${failWindowS}s, which must be at most half of minReadySeconds ${spec.minReadySeconds}`);
  }
});

test('minReadySeconds is longer than the latest a liveness failure after the start-up grace can kill the pod, in both renders', () => {
  const graceS = startupGraceSeconds();
  for (const objects of [kustomizeAll, helmDefault]) {
    const spec = only(objects, 'DaemonSet')['spec'] as AgentDaemonSetSpec;
    const bound = livenessKillBound(spec, graceS);
    // Strictly longer: at equality the pod can count as available in the very second it is killed.
    assert.ok((spec.minReadySeconds ?? 0) > bound.seconds, `minReadySeconds ${spec.minReadySeconds} must be longer than ${bound.text}`);
  }
});

test('the controller\'s memory covers its largest steady state at 5,000 Nodes on the real API server in docs/bench.md: a request of that RSS plus 20 %, a limit twice it', () => {
  const bench = readFileSync(join(REPO_ROOT, 'docs', 'bench.md'), 'utf8');
  // The rows of the build that reads Nodes in protobuf (this one): "| protobuf | agents | env | sync |
  // median (max), median (max) MiB | …", one median and max per run.
  const rows = [...bench.matchAll(/^\| protobuf \| [\d,]+ \| [^|]+ \| [^|]+ \| ([^|]+) MiB \|/gm)];
  assert.ok(rows.length >= 2, 'precondition: docs/bench.md has the real API server\'s table with this build\'s controller runs');
  const maxima = rows.flatMap((row) => [...(row[1] as string).matchAll(/\(([\d.]+)\)/g)].map((m) => Number(m[1])));
  assert.ok(maxima.length >= rows.length, `precondition: every protobuf row gives each run's maximum in parentheses: ${rows.map((r) => r[1]).join(' | ')}`);
  const rssMiB = Math.max(...maxima);
  for (const objects of [kustomizeAll, helmAll]) {
    const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata?.name?.endsWith('-controller') === true);
    const resources = (deployment?.['spec'] as { template: { spec: { containers: Array<{ resources: { requests: Record<string, string>; limits: Record<string, string> } }> } } } | undefined)
      ?.template.spec.containers[0]?.resources;
    assert.ok(resources, 'precondition: the render has the controller Deployment, with resources');
    assert.ok(mebibytes(resources.requests['memory'] ?? '0') >= 1.2 * rssMiB, `memory request ${resources.requests['memory']} must be at least ${rssMiB} MiB + 20 %`);
    assert.ok(mebibytes(resources.limits['memory'] ?? '0') >= 2 * rssMiB, `memory limit ${resources.limits['memory']} must be at least twice ${rssMiB} MiB`);
  }
});
