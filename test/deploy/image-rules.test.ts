// What the manifests promise about the image, rendered by the real `kubectl kustomize` and
// `helm template`:
//   - the architecture rule: a required node affinity on kubernetes.io/arch that allows exactly
//     the architectures the image is built for (scripts/build-image.ts IMAGE_ARCHITECTURES, the
//     list the build iterates; the image tests check the built manifest list against it). In the
//     chart one value, image.architectures, holds that list, and the rule is rendered from it;
//   - the non-root uid the manifests run as is the one the image's /etc/passwd names
//     (scripts/runtime-base.ts NON_ROOT_UID);
//   - the controller judges exactly the Nodes the DaemonSet can run on: a Node left without an
//     agent by the rule has no lease, and must not be marked for it;
//   - the non-root mode: helm's nonRoot.* and the kustomize component with the gid patch that
//     its header documents render the same pod, a non-root uid with the socket's gid in
//     supplementalGroups, and helm refuses nonRoot without the gid.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { IMAGE_ARCHITECTURES } from '../../scripts/build-image.ts';
import { NON_ROOT_UID } from '../../scripts/runtime-base.ts';
import { matchesSelector, parseLabelSelector } from '../../src/fleet/label-selector.ts';
import { agentPodProjection, allowedArchitectures } from './agent-manifest-checks.ts';
import { CHART_DIR, HELM_ALL_COMPONENTS, helmRunner, only, renderKustomize, renderKustomizeOverlay, type K8sObject } from './render.ts';
import { schemaErrors } from './schema.ts';

const helm = helmRunner();
after(() => helm.close());
const GID = 4_321;

/** The overlay a kustomize user writes for the non-root mode (deploy/components/non-root's header). */
const SOCKET_GROUP_PATCH = {
  target: { group: 'apps', version: 'v1', kind: 'DaemonSet', name: 'nodepulse' },
  patch: `- op: add\n  path: /spec/template/spec/securityContext/supplementalGroups\n  value: [${GID}]\n`,
};

interface Pod {
  securityContext: Record<string, unknown>;
  containers: Array<{ securityContext: Record<string, unknown> }>;
}
function podOf(ds: K8sObject): Pod {
  return (ds['spec'] as { template: { spec: Pod } }).template.spec;
}

test('kustomize and helm render a required kubernetes.io/arch rule allowing exactly the image\'s architectures', () => {
  const image = [...IMAGE_ARCHITECTURES].sort();
  const renders: Array<[string, K8sObject[]]> = [
    ['kubectl kustomize deploy', renderKustomize('deploy')],
    ['kubectl kustomize deploy/overlays/all', renderKustomize('deploy/overlays/all')],
    ['helm template', helm.template([])],
    ['helm template, every component', helm.template(HELM_ALL_COMPONENTS)],
  ];
  for (const [what, objects] of renders) assert.deepEqual(allowedArchitectures(only(objects, 'DaemonSet')), image, what);
});

test('the chart\'s one list of architectures, image.architectures, is the build\'s by default, and the rule follows it', () => {
  const values = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as { image: { architectures: unknown } };
  assert.deepEqual(values.image.architectures, [...IMAGE_ARCHITECTURES], 'values.yaml image.architectures: the architectures scripts/build-image.ts builds');
  const amd64Only = helm.template(['image.architectures={amd64}']);
  assert.deepEqual(allowedArchitectures(only(amd64Only, 'DaemonSet')), ['amd64'], 'the DaemonSet\'s rule is rendered from image.architectures');
  const objects = helm.template(['controller.enabled=true', 'image.architectures={arm64}']);
  const args = (only(objects, 'Deployment')['spec'] as { template: { spec: { containers: Array<{ args?: string[] }> } } }).template.spec.containers[0]?.args ?? [];
  assert.ok(args.includes('--node-selector=kubernetes.io/os=linux,kubernetes.io/arch in (arm64)'), `the controller's default node selector follows it: ${args.join(' ')}`);
});

test('the architecture check fails on a missing rule, on a wider one, and on a second term without it', () => {
  const ds = only(renderKustomize('deploy'), 'DaemonSet');
  assert.ok(allowedArchitectures(ds) !== undefined, 'precondition: the rendered DaemonSet has the rule');
  const edit = (f: (pod: { affinity?: unknown }) => void): K8sObject => {
    const copy = structuredClone(ds);
    f((copy['spec'] as { template: { spec: { affinity?: unknown } } }).template.spec);
    return copy;
  };
  assert.equal(allowedArchitectures(edit((pod) => delete pod.affinity)), undefined);
  const wider = edit((pod) => {
    (pod.affinity as { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: Array<{ matchExpressions: Array<{ values: string[] }> }> } } })
      .nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]?.matchExpressions[0]?.values.push('s390x');
  });
  assert.notDeepEqual(allowedArchitectures(wider), [...IMAGE_ARCHITECTURES].sort());
  const open = edit((pod) => {
    (pod.affinity as { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } } })
      .nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.push({ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] });
  });
  assert.equal(allowedArchitectures(open), undefined);
});

/** Node labels of a mixed fleet, to compare where the agent runs with what the controller judges. */
const FLEET: ReadonlyArray<Record<string, string>> = [
  { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
  { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'arm64' },
  { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 's390x' },
  { 'kubernetes.io/os': 'windows', 'kubernetes.io/arch': 'amd64' },
  { 'kubernetes.io/os': 'linux' },
];

/** Whether the DaemonSet's pod may be scheduled on a Node with these labels (nodeSelector and the arch rule). */
function schedulable(ds: K8sObject, labels: Record<string, string>): boolean {
  const pod = (ds['spec'] as { template: { spec: { nodeSelector?: Record<string, string> } } }).template.spec;
  const selected = Object.entries(pod.nodeSelector ?? {}).every(([k, v]) => labels[k] === v);
  const archs = allowedArchitectures(ds);
  return selected && (archs === undefined || archs.includes(labels['kubernetes.io/arch'] ?? ''));
}

function judged(objects: readonly K8sObject[], labels: Record<string, string>): boolean {
  const args = (only(objects, 'Deployment')['spec'] as { template: { spec: { containers: Array<{ args?: string[] }> } } }).template.spec.containers[0]?.args ?? [];
  const flag = args.find((a) => a.startsWith('--node-selector='));
  assert.ok(flag, 'the controller is told which Nodes to judge');
  return matchesSelector(parseLabelSelector(flag.slice('--node-selector='.length)), labels);
}

test('the controller judges exactly the Nodes the agent DaemonSet can run on (kustomize, helm, helm with one architecture)', () => {
  const renders: Array<[string, K8sObject[]]> = [
    ['kustomize', renderKustomize('deploy/overlays/all')],
    ['helm', helm.template(HELM_ALL_COMPONENTS)],
    ['helm, amd64 only', helm.template([...HELM_ALL_COMPONENTS, 'image.architectures={amd64}'])],
  ];
  for (const [what, objects] of renders) {
    const ds = only(objects, 'DaemonSet');
    assert.ok(FLEET.some((n) => !schedulable(ds, n)), `precondition (${what}): some Node of the fleet has no agent`);
    for (const labels of FLEET) assert.equal(judged(objects, labels), schedulable(ds, labels), `${what}: ${JSON.stringify(labels)}`);
  }
});

test('helm with no architectures (null or an empty list) drops the rule, for a multi-architecture image', () => {
  assert.equal(allowedArchitectures(only(helm.template(['image.architectures=null']), 'DaemonSet')), undefined);
  assert.equal(allowedArchitectures(only(helm.template([{ json: 'image.architectures=[]' }]), 'DaemonSet')), undefined);
});

/** A Deployment's (or any pod owner's) required kubernetes.io/arch rule, read as the DaemonSet's is. */
function podArchitectures(o: K8sObject): string[] | undefined {
  return allowedArchitectures({ ...o, spec: { template: (o['spec'] as { template: unknown }).template } } as K8sObject);
}

test('the controller runs the image too: kustomize and helm give its pods the DaemonSet\'s architecture rule, from the same list', () => {
  const renders: Array<[string, K8sObject[]]> = [
    ['kustomize', renderKustomize('deploy/overlays/all')],
    ['helm', helm.template(HELM_ALL_COMPONENTS)],
    ['helm, amd64 only', helm.template([...HELM_ALL_COMPONENTS, 'image.architectures={amd64}'])],
  ];
  for (const [what, objects] of renders) {
    const daemonSet = allowedArchitectures(only(objects, 'DaemonSet'));
    assert.ok(daemonSet !== undefined, `precondition (${what}): the DaemonSet has the rule`);
    assert.deepEqual(podArchitectures(only(objects, 'Deployment')), daemonSet, what);
  }
});

test('non-root: helm nonRoot.* and the kustomize component plus its documented gid patch render the same pod, uid 65532 (the image\'s nonroot) with the socket\'s gid', () => {
  const viaHelm = only(helm.template(['nonRoot.enabled=true', `nonRoot.socketGid=${GID}`]), 'DaemonSet');
  const viaKustomize = only(renderKustomizeOverlay(['deploy/base'], ['deploy/components/non-root'], [SOCKET_GROUP_PATCH]), 'DaemonSet');
  for (const ds of [viaHelm, viaKustomize]) {
    const pod = podOf(ds);
    assert.deepEqual(pod.securityContext, { seccompProfile: { type: 'RuntimeDefault' }, supplementalGroups: [GID] });
    assert.deepEqual(pod.containers[0]?.securityContext, {
      runAsUser: NON_ROOT_UID,
      runAsGroup: NON_ROOT_UID,
      runAsNonRoot: true,
      privileged: false,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(schemaErrors(ds), []);
  }
  assert.deepEqual(agentPodProjection(viaHelm), agentPodProjection(viaKustomize));
});

test('non-root stays off by default: root where the socket is root:root', () => {
  for (const ds of [only(renderKustomize('deploy'), 'DaemonSet'), only(helm.template([]), 'DaemonSet')]) {
    assert.equal(podOf(ds).containers[0]?.securityContext['runAsUser'], 0);
    assert.equal(podOf(ds).securityContext['supplementalGroups'], undefined);
  }
});

test('helm nonRoot.enabled without nonRoot.socketGid fails, naming the value', () => {
  assert.throws(() => helm.template(['nonRoot.enabled=true']), /nonRoot\.socketGid: must be the gid that owns the CRI socket/);
});
