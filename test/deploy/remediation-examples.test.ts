// The remediation examples in the docs, held to what they must say:
//
// | example                              | must                                                           |
// |--------------------------------------|----------------------------------------------------------------|
// | every YAML block in README.md and    | act on RuntimeRelistUnhealthy only with status "True" (the     |
// | docs/*.md that names the condition   | runtime-caused verdicts), never Unknown (the agent's own, or   |
// | among unhealthy conditions           | the controller's: no remediation acts on them)                 |
// | NodeHealthCheck                      | remediation.medik8s.io/v1alpha1, its own field names; keep the |
// |                                      | kubelet's Ready False and Unknown beside ours (a list replaces |
// |                                      | NodeHealthCheck's default, which is those two)                 |
// | MachineHealthCheck                   | cluster.x-k8s.io/v1beta2 with v1beta2's field names only       |
// |                                      | (spec.checks.unhealthyNodeConditions[].timeoutSeconds,         |
// |                                      | spec.remediation.triggerIf), none of v1beta1's; Ready beside   |
// |                                      | ours, as for NodeHealthCheck                                   |
//
// The v1beta2 field names are cluster-api's api/core/v1beta2/machinehealthcheck_types.go.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { REPO_ROOT } from './render.ts';

interface Block {
  readonly file: string;
  readonly doc: Record<string, unknown>;
}

type Condition = Record<string, unknown>;

/** Every ```yaml block of the docs that parses to a mapping. */
function yamlBlocks(): Block[] {
  const files = ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
  const out: Block[] = [];
  for (const file of files) {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const m of text.matchAll(/^( *)```yaml\n([\s\S]*?)^\1```$/gm)) {
      const indent = (m[1] ?? '').length;
      const body = (m[2] ?? '').split('\n').map((l) => l.slice(indent)).join('\n');
      try {
        const doc: unknown = parse(body);
        if (doc !== null && typeof doc === 'object' && !Array.isArray(doc)) out.push({ file, doc: doc as Record<string, unknown> });
      } catch {
        // a block that is not one YAML document (a fragment with comments only) names nothing here
      }
    }
  }
  return out;
}

const blocks = yamlBlocks();
const of = (kind: string): Block[] => blocks.filter((b) => b.doc['kind'] === kind);

function spec(b: Block): Record<string, unknown> {
  return (b.doc['spec'] ?? {}) as Record<string, unknown>;
}

function keysWithin(what: string, value: unknown, allowed: readonly string[]): void {
  const keys = Object.keys((value ?? {}) as object);
  assert.deepEqual(keys.filter((k) => !allowed.includes(k)), [], `${what}: only ${allowed.join(', ')}`);
}

test('precondition: the docs hold one NodeHealthCheck and one MachineHealthCheck example', () => {
  assert.equal(of('NodeHealthCheck').length, 1, 'NodeHealthCheck examples');
  assert.equal(of('MachineHealthCheck').length, 1, 'MachineHealthCheck examples');
});

test('no example acts on RuntimeRelistUnhealthy unless it is True', () => {
  let seen = 0;
  const visit = (where: string, value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(where, item);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    const c = value as Condition;
    if (c['type'] === 'RuntimeRelistUnhealthy' && 'status' in c) {
      seen++;
      assert.equal(c['status'], 'True', `${where}: a remediation acts on RuntimeRelistUnhealthy only when True, never ${String(c['status'])}`);
    }
    for (const v of Object.values(c)) visit(where, v);
  };
  for (const b of blocks) visit(b.file, b.doc);
  assert.ok(seen >= 2, `precondition: the examples name the condition (${seen})`);
});

test('NodeHealthCheck: its v1alpha1 fields, the kubelet\'s Ready checks kept beside ours', () => {
  const [nhc] = of('NodeHealthCheck');
  assert.ok(nhc !== undefined);
  assert.equal(nhc.doc['apiVersion'], 'remediation.medik8s.io/v1alpha1');
  keysWithin('NodeHealthCheck spec', spec(nhc), ['selector', 'unhealthyConditions', 'minHealthy', 'maxUnhealthy', 'remediationTemplate', 'escalatingRemediations', 'pauseRequests', 'healthyDelay', 'stormRecoveryThreshold']);
  const conditions = spec(nhc)['unhealthyConditions'] as Condition[];
  for (const c of conditions) keysWithin('an unhealthyCondition', c, ['type', 'status', 'duration']);
  const pairs = conditions.map((c) => `${String(c['type'])}=${String(c['status'])}`);
  for (const kept of ['Ready=False', 'Ready=Unknown', 'RuntimeRelistUnhealthy=True']) assert.ok(pairs.includes(kept), `${kept} among ${pairs.join(', ')}`);
});

test('MachineHealthCheck: cluster.x-k8s.io/v1beta2 and its field names, none of v1beta1\'s', () => {
  const [mhc] = of('MachineHealthCheck');
  assert.ok(mhc !== undefined);
  assert.equal(mhc.doc['apiVersion'], 'cluster.x-k8s.io/v1beta2');
  const s = spec(mhc);
  keysWithin('MachineHealthCheck spec', s, ['clusterName', 'selector', 'checks', 'remediation']);
  keysWithin('spec.checks', s['checks'], ['nodeStartupTimeoutSeconds', 'unhealthyNodeConditions', 'unhealthyMachineConditions']);
  keysWithin('spec.remediation', s['remediation'], ['triggerIf', 'templateRef']);
  keysWithin('spec.remediation.triggerIf', (s['remediation'] as Record<string, unknown> | undefined)?.['triggerIf'], ['unhealthyLessThanOrEqualTo', 'unhealthyInRange']);
  const conditions = ((s['checks'] as Record<string, unknown>)['unhealthyNodeConditions'] ?? []) as Condition[];
  for (const c of conditions) {
    keysWithin('an unhealthyNodeCondition', c, ['type', 'status', 'timeoutSeconds']);
    assert.ok(Number.isInteger(c['timeoutSeconds']), `timeoutSeconds: ${String(c['timeoutSeconds'])} must be a whole number of seconds`);
  }
  const pairs = conditions.map((c) => `${String(c['type'])}=${String(c['status'])}`);
  for (const kept of ['Ready=False', 'Ready=Unknown', 'RuntimeRelistUnhealthy=True']) assert.ok(pairs.includes(kept), `${kept} among ${pairs.join(', ')}`);
});
