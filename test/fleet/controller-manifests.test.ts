// deploy/controller rendered by the real kustomize (inside kubectl): schema-valid, two replicas
// spread over nodes, the controller subcommand, and exactly the grants the controller uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { only, renderKustomize, type K8sObject } from '../deploy/render.ts';
import { schemaErrors } from '../deploy/schema.ts';

interface Rule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

function grants(role: K8sObject): string[] {
  const rules = (role as unknown as { rules: Rule[] }).rules;
  return rules
    .flatMap((r) =>
      r.resources.flatMap((res) =>
        r.verbs.map((v) => `${r.apiGroups.join(',') || 'core'}/${res}${r.resourceNames === undefined ? '' : `[${r.resourceNames.join(',')}]`}:${v}`)))
    .sort();
}

test('controller manifests: render, validate, and grant exactly what the controller uses', () => {
  const objects = renderKustomize('deploy/controller');
  // The shared schema table has no PodDisruptionBudget model; every other object is checked.
  const known = objects.filter((o) => o.kind !== 'PodDisruptionBudget');
  assert.deepEqual(known.flatMap(schemaErrors), []);
  assert.deepEqual(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort(), [
    'ClusterRole//nodepulse-controller',
    'ClusterRoleBinding//nodepulse-controller',
    'Deployment/nodepulse/nodepulse-controller',
    'PodDisruptionBudget/nodepulse/nodepulse-controller',
    'Role/default/nodepulse-controller-events',
    'Role/nodepulse/nodepulse-controller',
    'RoleBinding/default/nodepulse-controller-events',
    'RoleBinding/nodepulse/nodepulse-controller',
    'ServiceAccount/nodepulse/nodepulse-controller',
  ]);
  const deployment = only(objects, 'Deployment') as unknown as {
    spec: { replicas: number; template: { spec: { serviceAccountName: string; containers: Array<{ command: string[]; args: string[] }> } } };
  };
  assert.equal(deployment.spec.replicas, 2);
  assert.equal(deployment.spec.template.spec.serviceAccountName, 'nodepulse-controller');
  assert.deepEqual(deployment.spec.template.spec.containers[0]?.command, ['node', 'dist/src/cli/main.js', 'controller']);
  assert.deepEqual(grants(only(objects, 'Role', 'nodepulse-controller')), [
    'apps/daemonsets[nodepulse]:list',
    'apps/daemonsets[nodepulse]:watch',
    'coordination.k8s.io/leases:create',
    'coordination.k8s.io/leases:list',
    'coordination.k8s.io/leases:watch',
    'coordination.k8s.io/leases[nodepulse-controller]:get',
    'coordination.k8s.io/leases[nodepulse-controller]:update',
  ]);
  assert.deepEqual(grants(only(objects, 'ClusterRole', 'nodepulse-controller')), [
    'core/nodes/status:patch',
    'core/nodes:list',
    'core/nodes:watch',
  ]);
  assert.deepEqual(grants(only(objects, 'Role', 'nodepulse-controller-events')), ['events.k8s.io/events:create']);
});
