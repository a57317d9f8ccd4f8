// The NetworkPolicy that admits the agents' and the controller's port `metrics` only from the
// monitoring namespace: the kustomize component deploy/components/network-policy and the chart's
// networkPolicy values, rendered by the real tools. What it selects is judged against the pod
// templates the same renders hold, with label selectors evaluated as Kubernetes evaluates them.
//
// The policy governs only pods on the pod network; that neither the agent nor the controller
// uses hostNetwork is a precondition asserted here, since docs/security.md rests on it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { helmRunner, only, REPO_ROOT, renderKustomize, renderKustomizeOverlay, type HelmSet, type K8sObject } from './render.ts';
import { schemaErrors } from './schema.ts';

const NAME = 'nodepulse-metrics';
const MONITORING = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }];

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}
interface PolicySpec {
  podSelector: LabelSelector;
  policyTypes: string[];
  ingress: Array<{ ports: Array<{ port: string | number; protocol: string }>; from: unknown[] }>;
  egress?: unknown;
}
interface PodTemplateOwner {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { hostNetwork?: boolean; containers: Array<{ ports?: Array<{ name?: string; containerPort: number }> }> } } };
}

const helm = helmRunner();
after(() => helm.close());
const kustomizeAll = renderKustomize('deploy/overlays/all');
const helmAll = helm.template(['networkPolicy.enabled=true', 'controller.enabled=true']);

/** Whether a label selector selects these labels (matchLabels and matchExpressions ANDed, as the API server reads them). */
function selects(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  const labelsMatch = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return labelsMatch && (selector.matchExpressions ?? []).every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case 'In': return value !== undefined && (e.values ?? []).includes(value);
      case 'NotIn': return value === undefined || !(e.values ?? []).includes(value);
      case 'Exists': return value !== undefined;
      case 'DoesNotExist': return value === undefined;
      default: throw new Error(`selector operator ${e.operator} must be In, NotIn, Exists or DoesNotExist`);
    }
  });
}

function policy(objects: readonly K8sObject[]): PolicySpec {
  return only(objects, 'NetworkPolicy', NAME)['spec'] as PolicySpec;
}

function podTemplate(objects: readonly K8sObject[], kind: 'DaemonSet' | 'Deployment'): PodTemplateOwner['spec']['template'] {
  return (only(objects, kind) as unknown as PodTemplateOwner).spec.template;
}

test('the selector evaluator reads matchLabels and each operator as Kubernetes does', () => {
  const labels = { app: 'a', tier: 'web' };
  assert.equal(selects({ matchLabels: { app: 'a' } }, labels), true);
  assert.equal(selects({ matchLabels: { app: 'b' } }, labels), false);
  assert.equal(selects({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['web', 'db'] }] }, labels), true);
  assert.equal(selects({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['web'] }] }, labels), false);
  assert.equal(selects({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['x'] }] }, labels), true);
  assert.equal(selects({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels), false);
  assert.equal(selects({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels), true);
  assert.equal(selects({ matchLabels: { app: 'a' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] }, labels), false);
});

test('in both renders the policy selects the agent and the controller pods, which are on the pod network, and nothing else of the release', () => {
  for (const [what, objects] of [['kustomize all', kustomizeAll], ['helm', helmAll]] as const) {
    const selector = policy(objects).podSelector;
    for (const kind of ['DaemonSet', 'Deployment'] as const) {
      const template = podTemplate(objects, kind);
      assert.equal(template.spec.hostNetwork ?? false, false, `precondition (${what}): the ${kind}'s pods use the pod network, where NetworkPolicy applies`);
      assert.equal(selects(selector, template.metadata.labels), true, `${what}: the policy must select the ${kind}'s pods`);
    }
    const agentLabels = podTemplate(objects, 'DaemonSet').metadata.labels;
    assert.equal(selects(selector, { ...agentLabels, 'app.kubernetes.io/component': 'debug' }), false, `${what}: another nodepulse component is not selected`);
    assert.equal(selects(selector, { ...agentLabels, 'app.kubernetes.io/name': 'other' }), false, `${what}: another app is not selected`);
  }
});

test('in both renders one ingress rule admits TCP to the port named metrics, 9356 on an agent and 9357 on a controller, from the monitoring namespace only', () => {
  for (const [what, objects] of [['kustomize all', kustomizeAll], ['helm', helmAll]] as const) {
    const spec = policy(objects);
    assert.deepEqual(spec.policyTypes, ['Ingress'], `${what}: ingress only; egress is left alone`);
    assert.equal(spec.egress, undefined, what);
    assert.equal(spec.ingress.length, 1, `${what}: one rule`);
    assert.deepEqual(spec.ingress[0]?.ports, [{ port: 'metrics', protocol: 'TCP' }], what);
    assert.deepEqual(spec.ingress[0]?.from, MONITORING, what);
    const portOf = (kind: 'DaemonSet' | 'Deployment'): number | undefined =>
      podTemplate(objects, kind).spec.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === 'metrics')?.containerPort;
    assert.deepEqual([portOf('DaemonSet'), portOf('Deployment')], [9356, 9357], `${what}: the named port resolves to each pod's HTTP port`);
    assert.equal(only(objects, 'NetworkPolicy', NAME).metadata.namespace, 'nodepulse', what);
  }
});

test('the policy validates against its schema in the component alone and in helm, and helm renders none unless enabled', () => {
  const alone = renderKustomizeOverlay(['deploy/base'], ['deploy/components/network-policy']);
  assert.deepEqual(policy(alone), policy(kustomizeAll), 'the component alone renders the same policy as the all overlay');
  assert.deepEqual([...alone, ...helmAll].flatMap(schemaErrors), []);
  const broken = structuredClone(only(alone, 'NetworkPolicy'));
  (broken['spec'] as { ingress: unknown }).ingress = { from: MONITORING };
  assert.equal(schemaErrors(broken).length, 1, 'a malformed policy fails the schema check');
  assert.equal(helm.template(['controller.enabled=true']).some((o) => o.kind === 'NetworkPolicy'), false);
});

const PROMETHEUS_PODS = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } };
const NODES = { ipBlock: { cidr: '10.0.0.0/16' } };

test('helm networkPolicy values move the namespace, add peers, and with no namespace admit the peers alone', () => {
  const cases: ReadonlyArray<{ sets: readonly HelmSet[]; from: unknown[] }> = [
    { sets: ['networkPolicy.monitoringNamespace=prometheus'], from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'prometheus' } } }] },
    { sets: [{ json: `networkPolicy.extraFrom=${JSON.stringify([NODES])}` }], from: [...MONITORING, NODES] },
    { sets: ['networkPolicy.monitoringNamespace=', { json: `networkPolicy.extraFrom=${JSON.stringify([PROMETHEUS_PODS])}` }], from: [PROMETHEUS_PODS] },
  ];
  for (const c of cases) {
    const objects = helm.template(['networkPolicy.enabled=true', ...c.sets]);
    assert.deepEqual(policy(objects).ingress[0]?.from, c.from, JSON.stringify(c.sets));
    assert.deepEqual(objects.flatMap(schemaErrors), []);
  }
});

test('helm refuses a rule with no source, an ipBlock beside a selector, an empty peer and a peer with none of its three fields, naming the value', () => {
  const cases: ReadonlyArray<{ sets: readonly HelmSet[]; says: RegExp }> = [
    { sets: ['networkPolicy.monitoringNamespace='], says: /^networkPolicy\.monitoringNamespace: "" must name a namespace when networkPolicy\.extraFrom is empty \(a rule with no source admits every source\)$/m },
    { sets: [{ json: `networkPolicy.extraFrom=${JSON.stringify([NODES, { ...NODES, podSelector: {} }])}` }], says: /^networkPolicy\.extraFrom\[1\]: \{ipBlock, podSelector\} must be an ipBlock alone or selectors alone/m },
    { sets: [{ json: 'networkPolicy.extraFrom=[{}]' }], says: /- networkPolicy\.extraFrom\.0: Must have at least 1 properties/ },
    // A peer is a Kubernetes type passed through: fields the schema does not name are accepted
    // (a newer Kubernetes may add one), but it must hold one of the three it knows.
    { sets: [{ json: 'networkPolicy.extraFrom=[{"podSelecter":{}}]' }], says: /- networkPolicy\.extraFrom\.0: Must validate at least one schema \(anyOf\)/ },
    { sets: ['networkPolicy.monitoringNamespace=Monitoring'], says: /- networkPolicy\.monitoringNamespace: Does not match pattern/ },
  ];
  for (const c of cases) {
    const failure = helm.templateError(['networkPolicy.enabled=true', ...c.sets]);
    assert.ok(failure !== undefined, `helm template must fail for ${JSON.stringify(c.sets)}`);
    assert.match(failure, c.says);
  }
  assert.equal(helm.templateError(['networkPolicy.monitoringNamespace=']), undefined, 'a disabled policy needs no source');
});

test('the kustomize patch docs/install.md shows moves the namespace and adds an ipBlock', () => {
  const install = readFileSync(join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
  const block = /<!-- network-policy patch -->\s*```yaml\n([\s\S]*?)```/.exec(install)?.[1];
  assert.ok(block !== undefined, 'precondition: docs/install.md holds the network-policy patch after its marker');
  const overlay = parse(block) as { components: string[]; patches: object[] };
  assert.deepEqual(overlay.components, ['../deploy/components/network-policy']);
  const objects = renderKustomizeOverlay(['deploy/base'], ['deploy/components/network-policy'], overlay.patches);
  assert.deepEqual(policy(objects).ingress[0]?.from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'prometheus' } } }, NODES]);
  assert.deepEqual(objects.flatMap(schemaErrors), []);
});
