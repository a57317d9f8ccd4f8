// Kustomize and Helm render the same objects under the same names, with the same selectors:
// the real `kubectl kustomize deploy/overlays/all` against the real `helm template` of a release
// named `nodepulse` in namespace `nodepulse` with every component on. A selector cannot change in
// place (the API server refuses it on a DaemonSet or a Deployment), so an install that moves from
// one path to the other must find the same selectors, and the same names to adopt.
//
// The one difference on purpose: kustomize creates the Namespace, Helm installs into one
// (--create-namespace, or one created beforehand: docs/install.md).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { HELM_ALL_COMPONENTS, helmRunner, renderKustomize, type K8sObject, withoutHooks } from './render.ts';

const helm = helmRunner();
after(() => helm.close());
const kustomize = renderKustomize('deploy/overlays/all');
// The release's own objects; the chart's hooks (uninstall, test) have no kustomize counterpart.
const rendered = withoutHooks(helm.template(HELM_ALL_COMPONENTS));

function id(o: K8sObject): string {
  return `${o.kind}/${o.metadata.namespace ?? '-'}/${o.metadata.name}`;
}

/** Every selector in an object, by its path: spec.selector, Service selectors, affinity, PodMonitor and NetworkPolicy label selectors. */
function selectorsOf(value: unknown, path = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Array.isArray(value)) {
    value.forEach((v, i) => Object.assign(out, selectorsOf(v, `${path}[${i}]`)));
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const at = path === '' ? k : `${path}.${k}`;
      if (/^(selector|labelSelector|namespaceSelector|podSelector)$/.test(k)) out[at] = v;
      else Object.assign(out, selectorsOf(v, at));
    }
  }
  return out;
}

/** JSON with every object's keys sorted: maps compare by content, not by the order a tool wrote them. */
function canonical(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v);
}

/** Lines that differ between two maps: `+ key value` only in b, `- key value` only in a. */
function diff(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const lines: string[] = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const [x, y] = [canonical(a[k]), canonical(b[k])];
    if (x === y) continue;
    if (x !== undefined) lines.push(`- ${k} ${x}`);
    if (y !== undefined) lines.push(`+ ${k} ${y}`);
  }
  return lines.sort();
}

test('kustomize and helm render the same objects under the same names (the Namespace apart)', () => {
  assert.ok(kustomize.length >= 25, `precondition: the all overlay renders every component, got ${kustomize.length}`);
  const names = (objects: readonly K8sObject[]): Record<string, true> => Object.fromEntries(objects.map((o) => [id(o), true]));
  assert.deepEqual(diff(names(kustomize), names(rendered)), ['- Namespace/-/nodepulse true']);
});

test('kustomize and helm render the same selectors in every object', () => {
  const selectors = (objects: readonly K8sObject[]): Record<string, unknown> =>
    Object.fromEntries(objects.flatMap((o) => Object.entries(selectorsOf(o)).map(([path, s]) => [`${id(o)} ${path}`, s])));
  const fromKustomize = selectors(kustomize);
  assert.ok(Object.keys(fromKustomize).length >= 8, `precondition: the selectors are found, got ${Object.keys(fromKustomize).join(', ')}`);
  for (const path of ['spec.podSelector', 'spec.ingress[0].from[0].namespaceSelector']) {
    assert.ok(`NetworkPolicy/nodepulse/nodepulse-metrics ${path}` in fromKustomize, `precondition: the NetworkPolicy's ${path} is compared`);
  }
  assert.deepEqual(diff(fromKustomize, selectors(rendered)), []);
});

test('the selector diff reports a changed selector, so the test can fail', () => {
  const changed = structuredClone(rendered).map((o) =>
    o.kind === 'DaemonSet' ? { ...o, spec: { ...(o['spec'] as object), selector: { matchLabels: { 'app.kubernetes.io/instance': 'nodepulse' } } } } : o);
  const path = 'DaemonSet/nodepulse/nodepulse spec.selector';
  const one = (objects: readonly K8sObject[]): Record<string, unknown> => ({ [path]: selectorsOf(objects.find((o) => o.kind === 'DaemonSet'))['spec.selector'] });
  assert.equal(diff(one(rendered), one(changed)).length, 2);
});
