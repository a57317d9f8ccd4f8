// The controller's install paths (issue 8): the kustomize component deploy/components/controller
// (which installs deploy/controller, in the `all` overlay too) and the Helm chart's
// controller.enabled, rendered by the real tools, validated against the Kubernetes schemas, held
// to exactly the grants the controller uses, and compared with each other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { runController } from '../../src/cli/controller-command.ts';
import { grantsOf } from './agent-manifest-checks.ts';
import { assertControllerDeployment, controllerPodProjection, expectedControllerGrants, TAINT_GRANT } from './controller-manifest-checks.ts';
import { CHART_DIR, helmRunner, only, REPO_ROOT, renderKustomize, renderKustomizeOverlay, type K8sObject } from './render.ts';
import { schemaErrors } from './schema.ts';

const CONTROLLER_SA = { namespace: 'nodepulse', name: 'nodepulse-controller' };
const DEFAULT_GRANTS = expectedControllerGrants({ release: 'nodepulse', leases: 'nodepulse' });
const CONTROLLER_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Deployment', 'PodDisruptionBudget', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'ServiceAccount'];

const helm = helmRunner();
after(() => helm.close());
const kustomizeController = renderKustomizeOverlay(['deploy/base'], ['deploy/components/controller']);
const kustomizeTaint = renderKustomizeOverlay(['deploy/base'], ['deploy/components/controller', 'deploy/components/controller-taint']);
const kustomizeAll = renderKustomize('deploy/overlays/all');
const helmController = helm.template(['controller.enabled=true']);
const helmTaint = helm.template(['controller.enabled=true', 'controller.taint=true']);

function controllerObjects(objects: readonly K8sObject[]): K8sObject[] {
  return objects.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'controller');
}

function args(objects: readonly K8sObject[]): string[] {
  return (only(objects, 'Deployment')['spec'] as { template: { spec: { containers: Array<{ args?: string[] }> } } }).template.spec.containers[0]?.args ?? [];
}

test('the controller component and helm controller.enabled render the controller\'s objects, each valid against its schema', () => {
  for (const [what, objects] of [['kustomize', kustomizeController], ['helm', helmController]] as const) {
    assert.deepEqual(controllerObjects(objects).map((o) => o.kind).sort(), CONTROLLER_KINDS, what);
    assert.deepEqual(objects.flatMap(schemaErrors), [], what);
  }
  // The all overlay adds controller-monitoring: its PodMonitor and PrometheusRule.
  assert.deepEqual(controllerObjects(kustomizeAll).map((o) => o.kind).sort(), [...CONTROLLER_KINDS, 'PodMonitor', 'PrometheusRule'].sort());
  assert.deepEqual(kustomizeAll.flatMap(schemaErrors), []);
});

test('the controller PodMonitor scrapes every controller replica as job nodepulse-controller, the same in kustomize and helm', () => {
  const helmMonitored = helm.template(['controller.enabled=true', 'monitoring.enabled=true']);
  const specs = [kustomizeAll, helmMonitored].map((objects) => only(objects, 'PodMonitor', 'nodepulse-controller')['spec'] as {
    selector: { matchLabels: Record<string, string> };
    podMetricsEndpoints: Array<{ port: string; relabelings: unknown[] }>;
  });
  assert.deepEqual(specs[1], specs[0]);
  const spec = specs[0];
  const podLabels = (only(kustomizeAll, 'Deployment')['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
  assert.ok(spec !== undefined && Object.entries(spec.selector.matchLabels).every(([k, v]) => podLabels[k] === v), 'it selects the controller pods');
  assert.equal(spec?.selector.matchLabels['app.kubernetes.io/component'], 'controller', 'and not the agents');
  assert.equal(spec?.podMetricsEndpoints[0]?.port, 'metrics');
  assert.deepEqual(spec?.podMetricsEndpoints[0]?.relabelings, [{ action: 'replace', targetLabel: 'job', replacement: 'nodepulse-controller' }]);
  assert.equal(helm.template(['monitoring.enabled=true']).some((o) => o.metadata.name === 'nodepulse-controller'), false, 'no controller PodMonitor without the controller');
});

test('the controller Deployment meets issue 8: two spread replicas, the controller subcommand, downward-API identity, no privilege', () => {
  assertControllerDeployment(only(kustomizeController, 'Deployment'), { serviceAccountName: 'nodepulse-controller', leaseNamespace: 'nodepulse' });
  assertControllerDeployment(only(helmController, 'Deployment'), { serviceAccountName: 'nodepulse-controller', leaseNamespace: 'nodepulse' });
});

test('RBAC grants the controller exactly list/watch leases and nodes, its election lease, nodes/status patch and events create', () => {
  assert.deepEqual(grantsOf(kustomizeController, CONTROLLER_SA), DEFAULT_GRANTS);
  assert.deepEqual(grantsOf(kustomizeAll, CONTROLLER_SA), DEFAULT_GRANTS);
  assert.deepEqual(grantsOf(helmController, CONTROLLER_SA), DEFAULT_GRANTS);
  assert.ok(!args(kustomizeController).includes('--taint') && !args(helmController).includes('--taint'), 'precondition: --taint is off by default');
});

test('a grant wider than the list fails the controller RBAC check', () => {
  const widened = kustomizeController.map((o) =>
    o.kind === 'Role' && o.metadata.name === 'nodepulse-controller'
      ? { ...o, rules: [...(o['rules'] as unknown[]), { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['delete'] }] }
      : o);
  assert.notDeepEqual(grantsOf(widened, CONTROLLER_SA), DEFAULT_GRANTS);
  const unnamed = kustomizeController.map((o) =>
    o.kind === 'Role' && o.metadata.name === 'nodepulse-controller'
      ? { ...o, rules: (o['rules'] as Array<Record<string, unknown>>).map(({ resourceNames: _names, ...rule }) => rule) }
      : o);
  assert.notDeepEqual(grantsOf(unnamed, CONTROLLER_SA), DEFAULT_GRANTS, 'get/update on every lease, not only the election lease, must fail');
});

test('--taint comes with exactly one more grant, patch on nodes, in kustomize (controller-taint) and helm (controller.taint)', () => {
  const withTaint = [...DEFAULT_GRANTS, TAINT_GRANT].sort();
  assert.deepEqual(grantsOf(kustomizeTaint, CONTROLLER_SA), withTaint);
  assert.deepEqual(grantsOf(helmTaint, CONTROLLER_SA), withTaint);
  assert.deepEqual(args(kustomizeTaint).filter((a) => a === '--taint'), ['--taint']);
  assert.deepEqual(args(helmTaint), args(kustomizeTaint));
});

test('the controller adds no grant to the agent, and the agent none to the controller', () => {
  const agentSa = { namespace: 'nodepulse', name: 'nodepulse' };
  assert.deepEqual(grantsOf(kustomizeController, agentSa), grantsOf(renderKustomize('deploy'), agentSa));
  assert.deepEqual(grantsOf(helmController, agentSa), grantsOf(helm.template([]), agentSa));
});

test('kustomize and helm render the same controller pod, grants and disruption budget', () => {
  assert.deepEqual(controllerPodProjection(only(helmController, 'Deployment')), controllerPodProjection(only(kustomizeController, 'Deployment')));
  assert.deepEqual(controllerPodProjection(only(helmTaint, 'Deployment')), controllerPodProjection(only(kustomizeTaint, 'Deployment')));
  assert.deepEqual(grantsOf(helmController, CONTROLLER_SA), grantsOf(kustomizeController, CONTROLLER_SA));
  const budget = (objects: readonly K8sObject[]): unknown => (only(objects, 'PodDisruptionBudget')['spec'] as { maxUnavailable: unknown }).maxUnavailable;
  assert.equal(budget(helmController), 1);
  assert.equal(budget(kustomizeController), 1);
});

test('the controller\'s selectors and disruption budget match only its own pods, never the agent\'s', () => {
  for (const objects of [kustomizeController, helmController]) {
    const agentLabels = (only(objects, 'DaemonSet')['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const deployment = only(objects, 'Deployment')['spec'] as { template: { metadata: { labels: Record<string, string> } } };
    const selector = (only(objects, 'PodDisruptionBudget')['spec'] as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
    const matches = (labels: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);
    assert.equal(matches(deployment.template.metadata.labels), true);
    assert.equal(matches(agentLabels), false);
  }
});

test('helm with a separate lease namespace grants list/watch there and keeps the election lease in the release namespace', () => {
  const objects = helm.template(['controller.enabled=true', 'leaseNamespace=node-leases'], { release: 'np', namespace: 'ops' });
  assert.deepEqual(grantsOf(objects, { namespace: 'ops', name: 'np-nodepulse-controller' }), expectedControllerGrants({ release: 'ops', leases: 'node-leases', agentDaemonSet: 'np-nodepulse' }));
  assertControllerDeployment(only(objects, 'Deployment'), { serviceAccountName: 'np-nodepulse-controller', leaseNamespace: 'node-leases' });
  assert.deepEqual(objects.flatMap(schemaErrors), []);
});

test('helm controller values become the controller\'s flags; empty values leave its defaults', () => {
  const objects = helm.template([
    'controller.enabled=true',
    'controller.grace=1m30s',
    'controller.nodeLabelSelector=node-role.kubernetes.io/worker',
    'controller.monitorPeriod=10s',
    'controller.maxWritesPerSecond=5',
    'controller.leaderElection.leaseDuration=30s',
    'controller.leaderElection.renewDeadline=20s',
    'controller.leaderElection.retryPeriod=4s',
    'controller.logLevel=debug',
  ]);
  assert.deepEqual(args(objects), [
    '--http-address=:9357',
    '--lease-namespace=nodepulse',
    '--agent-daemonset=nodepulse/nodepulse',
    '--grace=1m30s',
    '--leader-elect-lease-duration=30s',
    '--leader-elect-renew-deadline=20s',
    '--leader-elect-retry-period=4s',
    '--log-level=debug',
    '--max-writes-per-second=5',
    '--monitor-period=10s',
    '--node-selector=node-role.kubernetes.io/worker',
  ]);
  assert.deepEqual(args(helmController), [
    '--http-address=:9357',
    '--lease-namespace=nodepulse',
    '--agent-daemonset=nodepulse/nodepulse',
    '--node-selector=kubernetes.io/os=linux,kubernetes.io/arch in (amd64,arm64)',
  ]);
});

test('helm lint --strict passes with the controller on, with and without --taint', () => {
  assert.match(helm.lint(['controller.enabled=true']), /0 chart\(s\) failed/);
  assert.match(helm.lint(['controller.enabled=true', 'controller.taint=true']), /0 chart\(s\) failed/);
});

test('docs/install.md documents every controller flag and every controller Helm value', async () => {
  const docs = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## The controller'));
  assert.ok(section.length > 1000, 'precondition: docs/install.md has a "## The controller" section');
  let usage = '';
  const code = await runController(['--help'], { stdout: { write: (s: string) => (usage += s) }, stderr: { write: () => true }, env: {}, clock: new ManualClock() }, new AbortController().signal);
  assert.equal(code, 0, 'precondition: controller --help exits 0');
  const flags = [...new Set([...usage.matchAll(/^\s+(--[a-z-]+)/gm)].map((m) => m[1] ?? ''))];
  assert.ok(flags.length >= 12, `precondition: the usage lists the flags, got ${flags.join(' ')}`);
  assert.deepEqual(flags.filter((f) => !section.includes(`\`${f}`)), [], 'every flag in the flags table');
  const values = (parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as { controller: Record<string, unknown> }).controller;
  const keys = Object.entries(values).flatMap(([k, v]) =>
    k === 'leaderElection' ? Object.keys(v as object).map((sub) => `.${sub}`) : [`controller.${k}`]);
  assert.deepEqual(keys.filter((k) => !section.includes(k)), [], 'every controller value in the Helm table');
});
