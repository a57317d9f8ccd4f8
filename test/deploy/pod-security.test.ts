// The namespace admits its pods: the agent needs the privileged Pod Security level (its
// runtime socket directory is a hostPath, which baseline forbids), so the namespace says
// `enforce: privileged`; the controller, which shares the namespace, meets even the restricted
// level, so sharing it lifts no check the controller needs.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { baselineViolations, restrictedViolations, type PodSpecShape } from './pod-security.ts';
import { HELM_ALL_COMPONENTS, helmRunner, only, renderKustomize, type K8sObject } from './render.ts';

const helm = helmRunner();
after(() => helm.close());
const kustomizeAll = renderKustomize('deploy/overlays/all');
const helmAll = helm.template(HELM_ALL_COMPONENTS);

function podOf(workload: K8sObject): PodSpecShape {
  return (workload['spec'] as { template: { spec: PodSpecShape } }).template.spec;
}

test('the namespace enforces the privileged Pod Security level, and only that label', () => {
  const ns = only(renderKustomize('deploy'), 'Namespace');
  const podSecurity = Object.entries(ns.metadata.labels ?? {}).filter(([k]) => k.startsWith('pod-security.kubernetes.io/'));
  assert.deepEqual(podSecurity, [['pod-security.kubernetes.io/enforce', 'privileged']]);
});

test('the agent pod breaks the baseline level only by its hostPath socket directories: that is why the namespace is privileged', () => {
  for (const [what, objects] of [['kustomize', kustomizeAll], ['helm', helmAll]] as const) {
    const violations = baselineViolations(podOf(only(objects, 'DaemonSet')));
    assert.ok(violations.length > 0, `${what}: precondition: the agent needs more than baseline`);
    assert.deepEqual(violations.filter((v) => !/^volume \S+: hostPath$/.test(v)), [], `${what}: nothing but hostPath`);
  }
});

test('the controller pod meets the restricted level, so sharing the privileged namespace lifts nothing it relies on', () => {
  for (const [what, objects] of [['kustomize', kustomizeAll], ['helm', helmAll]] as const) {
    assert.deepEqual(restrictedViolations(podOf(only(objects, 'Deployment'))), [], what);
  }
});

test('the Pod Security checks report what they should, so they can fail', () => {
  const agent = podOf(only(kustomizeAll, 'DaemonSet'));
  assert.ok(restrictedViolations(agent).includes('agent: runAsNonRoot must be true'), 'the agent runs as root');
  const controller = structuredClone(podOf(only(kustomizeAll, 'Deployment')));
  const container = controller.containers[0];
  assert.ok(container?.securityContext, 'precondition: the controller container has a securityContext');
  container.securityContext.allowPrivilegeEscalation = true;
  controller.hostNetwork = true;
  assert.deepEqual(restrictedViolations(controller), ['hostNetwork: true', 'controller: allowPrivilegeEscalation must be false']);
});
