// Numbers the docs quote from the manifests, held to both renders (kustomize's all overlay and the
// chart's defaults): a doc that says one thing while the manifests carry another fails here.
//
//   - docs/reliability.md's sizing note: the agent's memory request and limit;
//   - docs/install.md: minReadySeconds (the bullet, the values table, "Stopping and upgrading"),
//     and the liveness bound it must outlast, written out as a sum of the probe's settings;
//   - docs/runbooks.md: minReadySeconds where it says how long a rollout takes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { livenessKillBound, startupGraceSeconds, type AgentDaemonSetSpec } from './liveness-bound.ts';
import { helmRunner, only, REPO_ROOT, renderKustomize, type K8sObject } from './render.ts';

const kustomizeAll = renderKustomize('deploy/overlays/all');
const helm = helmRunner();
after(() => helm.close());
const helmDefault = helm.template([]);
const RENDERS: ReadonlyArray<[string, readonly K8sObject[]]> = [['kustomize', kustomizeAll], ['helm', helmDefault]];

function doc(name: string): string {
  // Lines are joined, so a sentence wrapped over two lines still matches.
  return readFileSync(join(REPO_ROOT, 'docs', name), 'utf8').replace(/\n\s*/g, ' ');
}

function one(text: string, pattern: RegExp, what: string): RegExpExecArray {
  const m = pattern.exec(text);
  assert.ok(m, `precondition: ${what} is where this test looks for it (${pattern})`);
  return m;
}

function daemonSetSpec(objects: readonly K8sObject[]): AgentDaemonSetSpec & { template: { spec: { containers: Array<{ resources: { requests: Record<string, string>; limits: Record<string, string> } }> } } } {
  return only(objects, 'DaemonSet')['spec'] as never;
}

test('docs/reliability.md gives the agent\'s memory request and limit as both renders carry them', () => {
  const m = one(doc('reliability.md'), /The DaemonSet requests (\d+) Mi of memory and limits it to (\d+) Mi/, 'the sizing note');
  for (const [name, objects] of RENDERS) {
    const resources = daemonSetSpec(objects).template.spec.containers[0]?.resources;
    assert.deepEqual([resources?.requests['memory'], resources?.limits['memory']], [`${m[1]}Mi`, `${m[2]}Mi`], name);
  }
});

test('docs/install.md and docs/runbooks.md give minReadySeconds, and the liveness bound it outlasts, as both renders carry them', () => {
  const install = doc('install.md');
  const bullet = one(install, /\*\*`minReadySeconds: (\d+)`\*\* on the DaemonSet .*? available only after (\d+) s ready\. .*? is killed at most ([^=]+= \d+ s) after it became ready/, 'the rollout bullet');
  const stopping = one(install, /each new pod ready for (\d+) s before the next/, '"Stopping and upgrading"');
  const table = one(install, /\| `minReadySeconds` \| `(\d+)` \|/, 'the chart\'s values table');
  const runbook = one(doc('runbooks.md'), /\(`minReadySeconds` (\d+)\)/, 'the rollout note of NodePulseControllerMarkingPaused');
  for (const [name, objects] of RENDERS) {
    const spec = daemonSetSpec(objects);
    const seconds = String(spec.minReadySeconds);
    assert.deepEqual([bullet[1], bullet[2], stopping[1], runbook[1]], [seconds, seconds, seconds, seconds], `${name}: minReadySeconds as the docs give it`);
    assert.equal(bullet[3], livenessKillBound(spec, startupGraceSeconds()).text, `${name}: the bound, from the rendered probe and the start-up grace`);
  }
  assert.equal(table[1], String(daemonSetSpec(helmDefault).minReadySeconds), 'the values table gives the chart\'s default');
});
