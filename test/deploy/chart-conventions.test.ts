// The chart's Helm conventions, rendered by the real `helm template`: an image by digest, the
// agent's SELinux options, extra env, volumes and mounts, the DaemonSet's maxSurge, the
// controller's pod labels, annotations, affinity and topology spread; and the schema's escape
// hatches: where a value is a Kubernetes type passed through, the schema types what it names
// and accepts what it does not (a field of a newer Kubernetes), never `additionalProperties:
// false` anywhere inside.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { CHART_DIR, helmRunner, hookObjects, only, withoutHooks, type HelmSet, type K8sObject } from './render.ts';
import { schemaErrors } from './schema.ts';

const helm = helmRunner();
after(() => helm.close());

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

interface Container {
  image: string;
  env?: Array<{ name: string; value?: string }>;
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
  securityContext?: Record<string, unknown>;
}
interface Pod {
  affinity?: Record<string, unknown>;
  topologySpreadConstraints?: unknown[];
  volumes?: Array<{ name: string }>;
  containers: Container[];
}
function podOf(o: K8sObject): Pod {
  const spec = o['spec'] as { template?: { spec: Pod } } & Pod;
  return spec.template?.spec ?? spec;
}
function templateMeta(o: K8sObject): { labels: Record<string, string>; annotations?: Record<string, string> } {
  return (o['spec'] as { template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> } } }).template.metadata;
}

/** Every container that runs the image in a render: the agent, the controller, the hooks. */
function imagesOf(objects: readonly K8sObject[]): Record<string, string> {
  return Object.fromEntries(objects.filter((o) => ['DaemonSet', 'Deployment', 'Job', 'Pod'].includes(o.kind)).map((o) => [`${o.kind}/${o.metadata.name}`, podOf(o).containers[0]?.image ?? '']));
}

test('helm template accepts image.digest: every pod that runs the image pulls it by digest, with the tag beside it when one is given', () => {
  const byDigest = helm.template(['controller.enabled=true', `image.digest=${DIGEST}`, 'image.repository=registry.example.com/nodepulse']);
  assert.deepEqual(byDigest.flatMap(schemaErrors), []);
  assert.deepEqual(imagesOf(byDigest), {
    'DaemonSet/nodepulse': `registry.example.com/nodepulse@${DIGEST}`,
    'Deployment/nodepulse-controller': `registry.example.com/nodepulse@${DIGEST}`,
    'Job/nodepulse-cleanup': `registry.example.com/nodepulse@${DIGEST}`,
    'Pod/nodepulse-test': `registry.example.com/nodepulse@${DIGEST}`,
  });
  const both = imagesOf(helm.template([`image.digest=${DIGEST}`, 'image.tag=0.1.0']));
  assert.equal(both['DaemonSet/nodepulse'], `nodepulse:0.1.0@${DIGEST}`);
  assert.equal(imagesOf(helm.template([]))['DaemonSet/nodepulse'], 'nodepulse:0.1.0', 'without a digest: the tag, by default the appVersion');
});

test('helm template accepts agent.seLinuxOptions, a field the schema does not name included, and puts them on the agent container only', () => {
  const objects = helm.template([{ json: 'agent.seLinuxOptions={"type":"spc_t","level":"s0","futureField":"x"}' }]);
  assert.deepEqual(objects.filter((o) => o.kind !== 'DaemonSet').flatMap(schemaErrors), []);
  const ds = only(objects, 'DaemonSet');
  assert.deepEqual(podOf(ds).containers[0]?.securityContext?.['seLinuxOptions'], { type: 'spc_t', level: 's0', futureField: 'x' });
  const plain = only(helm.template([{ json: 'agent.seLinuxOptions={"type":"spc_t"}' }]), 'DaemonSet');
  assert.deepEqual(schemaErrors(plain), []);
  assert.equal(podOf(only(helm.template([]), 'DaemonSet')).containers[0]?.securityContext?.['seLinuxOptions'], undefined, 'none by default');
});

test('extra env, volumes and mounts reach the agent after the chart\'s own; a volume name the chart uses is refused', () => {
  const sets: HelmSet[] = [
    { json: 'agent.extraEnv=[{"name":"NODE_EXTRA_CA_CERTS","value":"/etc/pki/ca.pem"}]' },
    { json: 'agent.extraVolumes=[{"name":"pki","configMap":{"name":"corp-ca"}}]' },
    { json: 'agent.extraVolumeMounts=[{"name":"pki","mountPath":"/etc/pki","readOnly":true}]' },
  ];
  const ds = only(helm.template(sets), 'DaemonSet');
  assert.deepEqual(schemaErrors(ds), []);
  const pod = podOf(ds);
  assert.deepEqual(pod.containers[0]?.env?.map((e) => e.name), ['NODE_NAME', 'POD_NAMESPACE', 'NODE_EXTRA_CA_CERTS']);
  assert.deepEqual(pod.volumes?.map((v) => v.name), ['run-containerd', 'run-crio', 'run-k3s-containerd', 'tmp', 'pki']);
  assert.deepEqual(pod.containers[0]?.volumeMounts?.at(-1), { name: 'pki', mountPath: '/etc/pki', readOnly: true });
  assert.match(helm.templateError([{ json: 'agent.extraVolumes=[{"name":"run-crio","emptyDir":{}}]' }]) ?? '', /^agent\.extraVolumes: run-crio must be a name the chart does not use \(tmp, run-containerd, run-crio, run-k3s-containerd\)$/m);
});

test('updateStrategy.maxSurge reaches the DaemonSet, and with it maxUnavailable may be 0', () => {
  const ds = only(helm.template(['updateStrategy.maxSurge=10%', 'updateStrategy.maxUnavailable=0']), 'DaemonSet');
  assert.deepEqual((ds['spec'] as { updateStrategy: unknown }).updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '10%' } });
  assert.deepEqual(schemaErrors(ds), []);
});

test('the controller\'s pod labels, annotations, affinity and topology spread come from its values', () => {
  const objects = withoutHooks(helm.template([
    'controller.enabled=true',
    'controller.podLabels.team=platform',
    'controller.podAnnotations.example\\.com/owner=sre',
    { json: 'controller.topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}]' },
  ]));
  const deployment = only(objects, 'Deployment');
  assert.deepEqual(schemaErrors(deployment), []);
  const meta = templateMeta(deployment);
  assert.equal(meta.labels['team'], 'platform');
  assert.deepEqual(meta.annotations, { 'example.com/owner': 'sre' });
  assert.deepEqual(podOf(deployment).topologySpreadConstraints, [{
    maxSkew: 1,
    topologyKey: 'topology.kubernetes.io/zone',
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'controller' } },
  }], 'a constraint without a labelSelector gets the controller\'s own');
  const selector = (deployment['spec'] as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
  assert.deepEqual(selector, { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'controller' }, 'pod labels never reach the selector');

  const defaults = podOf(only(withoutHooks(helm.template(['controller.enabled=true'])), 'Deployment')).affinity ?? {};
  assert.deepEqual(Object.keys(defaults).sort(), ['nodeAffinity', 'podAntiAffinity'], 'by default: spread over nodes, on the image\'s architectures');
  const custom = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'node-role.kubernetes.io/infra', operator: 'Exists' }] }] } } };
  const replaced = only(withoutHooks(helm.template(['controller.enabled=true', { json: `controller.affinity=${JSON.stringify(custom)}` }])), 'Deployment');
  assert.deepEqual(podOf(replaced).affinity, custom, 'a given affinity replaces the default whole');
});

/** Every schema node under a JSON pointer-ish path (a.b.c), with its path. */
function schemaNodes(node: unknown, path: string, out: Array<{ path: string; node: Record<string, unknown> }> = []): Array<{ path: string; node: Record<string, unknown> }> {
  if (typeof node !== 'object' || node === null) return out;
  out.push({ path, node: node as Record<string, unknown> });
  for (const [k, v] of Object.entries(node)) schemaNodes(v, `${path}/${k}`, out);
  return out;
}

/** The values that pass a Kubernetes type through. */
const PASS_THROUGH = [
  'imagePullSecrets', 'resources', 'nodeSelector', 'tolerations',
  'agent.extraEnv', 'agent.extraVolumes', 'agent.extraVolumeMounts', 'agent.seLinuxOptions',
  'networkPolicy.extraFrom',
  'controller.resources', 'controller.nodeSelector', 'controller.tolerations', 'controller.affinity', 'controller.topologySpreadConstraints',
  'cleanup.resources', 'tests.resources',
];

test('values.schema.json has no additionalProperties: false inside any value that passes a Kubernetes type through', () => {
  const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as { properties: Record<string, unknown>; definitions: Record<string, unknown> };
  const at = (dotted: string): unknown => dotted.split('.').reduce<unknown>((node, key) => (node as { properties?: Record<string, unknown> } | undefined)?.properties?.[key], schema);
  const closed: string[] = [];
  for (const value of PASS_THROUGH) {
    const node = at(value);
    assert.ok(node !== undefined, `precondition: the schema has ${value}`);
    for (const n of schemaNodes(node, value)) if (n.node['additionalProperties'] === false) closed.push(n.path);
    for (const n of schemaNodes(node, value)) {
      const ref = n.node['$ref'];
      if (typeof ref === 'string') for (const d of schemaNodes(schema.definitions[ref.replace('#/definitions/', '')], ref)) if (d.node['additionalProperties'] === false) closed.push(d.path);
    }
  }
  assert.deepEqual(closed, []);
});

test('helm template accepts fields of passed-through Kubernetes types that the schema does not name', () => {
  const objects = helm.template([
    { json: 'tolerations=[{"operator":"Exists","futureField":true}]' },
    { json: 'resources={"requests":{"cpu":"25m","memory":"128Mi"},"limits":{"memory":"256Mi"},"claims":[{"name":"gpu"}]}' },
    { json: 'imagePullSecrets=[{"name":"regcred","futureField":"x"}]' },
    'networkPolicy.enabled=true',
    { json: 'networkPolicy.extraFrom=[{"podSelector":{"matchLabels":{"app":"prometheus"}},"futureField":1}]' },
  ]);
  const pod = podOf(only(objects, 'DaemonSet')) as Pod & { tolerations: unknown; imagePullSecrets: unknown };
  assert.deepEqual(pod.tolerations, [{ operator: 'Exists', futureField: true }]);
  assert.deepEqual(pod.imagePullSecrets, [{ name: 'regcred', futureField: 'x' }]);
  assert.deepEqual((pod.containers[0] as Container & { resources: { claims: unknown } }).resources.claims, [{ name: 'gpu' }]);
  assert.deepEqual(hookObjects(objects, 'test').map((o) => o.kind).includes('NetworkPolicy'), true, 'precondition: the network policy is on');
});
