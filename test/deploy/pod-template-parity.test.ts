// The pods kustomize and Helm run are the same pods: the real `kubectl kustomize` and the real
// `helm template` (a release named `nodepulse` in namespace `nodepulse`) render the same agent
// DaemonSet spec and the same controller Deployment spec, pod template included, field for
// field. A change to a pod template restarts every pod, so moving an install from one path to
// the other restarts nothing, and neither does a chart upgrade that changes only the chart.
//
// What legitimately differs, and is left out of the comparison: each object's own metadata
// labels (Helm adds app.kubernetes.io/instance, version and managed-by, and helm.sh/chart; they
// describe the release, and a change there restarts nothing), and the Namespace, which kustomize
// creates and Helm installs into. Inside the specs nothing is normalised: with the defaults the
// two paths agree exactly. Under another release name or namespace the names follow (the
// service account, the controller's --agent-daemonset), which chart-names.test.ts covers.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { after, test } from 'node:test';
import { CHART_DIR, HELM_ALL_COMPONENTS, helmRunner, only, renderKustomize, renderKustomizeOverlay, withoutHooks, type K8sObject } from './render.ts';

const helm = helmRunner();
after(() => helm.close());

/** Paths (a.b[0].c) where two JSON values differ, for a failure message that says where. */
function differences(a: unknown, b: unknown, path = 'spec'): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return [`${path}: ${JSON.stringify(a)} ≠ ${JSON.stringify(b)}`];
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`));
}

function specOf(objects: readonly K8sObject[], kind: string): unknown {
  return only(objects, kind)['spec'];
}

const PAIRS: ReadonlyArray<{ what: string; kind: string; kustomize: () => K8sObject[]; helm: () => K8sObject[] }> = [
  { what: 'the agent, defaults (kustomize deploy, helm defaults)', kind: 'DaemonSet', kustomize: () => renderKustomize('deploy'), helm: () => helm.template([]) },
  { what: 'the agent, every component (kustomize overlays/all, helm with every component)', kind: 'DaemonSet', kustomize: () => renderKustomize('deploy/overlays/all'), helm: () => helm.template(HELM_ALL_COMPONENTS) },
  { what: 'the controller (kustomize component, helm controller.enabled)', kind: 'Deployment', kustomize: () => renderKustomizeOverlay(['deploy/base'], ['deploy/components/controller']), helm: () => helm.template(['controller.enabled=true']) },
  {
    what: 'the controller with --taint (controller-taint, controller.taint)',
    kind: 'Deployment',
    kustomize: () => renderKustomizeOverlay(['deploy/base'], ['deploy/components/controller', 'deploy/components/controller-taint']),
    helm: () => helm.template(['controller.enabled=true', 'controller.taint=true']),
  },
];

for (const pair of PAIRS) {
  test(`kustomize and helm render the same spec and pod template: ${pair.what}`, () => {
    const fromKustomize = specOf(pair.kustomize(), pair.kind);
    const fromHelm = specOf(withoutHooks(pair.helm()), pair.kind);
    assert.ok(JSON.stringify(fromKustomize).includes('"template"'), 'precondition: the spec holds the pod template');
    assert.deepEqual(differences(fromKustomize, fromHelm), []);
  });
}

test('the comparison reports a changed volume name and a changed pod label, so it can fail', () => {
  const spec = specOf(renderKustomize('deploy'), 'DaemonSet') as { template: { metadata: { labels: Record<string, string> }; spec: { volumes: Array<{ name: string }> } } };
  const changed = structuredClone(spec);
  const volume = changed.template.spec.volumes[0];
  assert.ok(volume, 'precondition: the agent has volumes');
  volume.name = 'runtime-0';
  changed.template.metadata.labels['helm.sh/chart'] = 'nodepulse-0.3.0';
  assert.deepEqual(differences(spec, changed), [
    'spec.template.metadata.labels.helm.sh/chart: undefined ≠ "nodepulse-0.3.0"',
    'spec.template.spec.volumes[0].name: "run-containerd" ≠ "runtime-0"',
  ]);
});

test('no pod template of the chart carries a label that changes with the chart, the release or the tool', () => {
  const objects = helm.template([...HELM_ALL_COMPONENTS, 'tests.enabled=true', 'cleanup.enabled=true']);
  const templates = objects.flatMap((o) => {
    const spec = o['spec'] as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined;
    if (o.kind === 'Pod') return [{ what: `Pod/${o.metadata.name}`, labels: o.metadata.labels ?? {} }];
    return spec?.template === undefined ? [] : [{ what: `${o.kind}/${o.metadata.name}`, labels: spec.template.metadata?.labels ?? {} }];
  });
  assert.deepEqual(templates.map((t) => t.what).sort(), ['DaemonSet/nodepulse', 'Deployment/nodepulse-controller', 'Job/nodepulse-cleanup', 'Pod/nodepulse-test'], 'precondition: every pod template is looked at');
  for (const t of templates.filter((x) => x.what !== 'Pod/nodepulse-test')) {
    assert.deepEqual(Object.keys(t.labels).filter((k) => ['helm.sh/chart', 'app.kubernetes.io/version', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by'].includes(k)), [], t.what);
  }
});

test('a chart whose version moves renders the same pod templates: an upgrade of the chart alone restarts no pod', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chart-bumped-'));
  try {
    const copy = join(dir, 'nodepulse');
    cpSync(CHART_DIR, copy, { recursive: true, dereference: true });
    const chartYaml = join(copy, 'Chart.yaml');
    const bumped = readFileSync(chartYaml, 'utf8').replace(/^version: .*$/m, 'version: 99.0.0');
    assert.match(bumped, /^version: 99\.0\.0$/m, 'precondition: the copy\'s version moved');
    writeFileSync(chartYaml, bumped);
    const sets = [...HELM_ALL_COMPONENTS];
    const before = withoutHooks(helm.template(sets));
    const after = withoutHooks(helm.template(sets, { chart: copy }));
    assert.notDeepEqual(only(before, 'DaemonSet').metadata.labels, only(after, 'DaemonSet').metadata.labels, 'precondition: the objects\' own labels name the chart version');
    for (const kind of ['DaemonSet', 'Deployment']) assert.deepEqual(specOf(after, kind), specOf(before, kind), kind);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
