// The chart under other names: another release, another namespace, nameOverride and
// fullnameOverride, rendered by the real `helm template`. Every reference between objects must
// follow the install's real names, or the safe defaults quietly stop applying: the FlowSchema's
// subjects, the RBAC bindings, the selectors the hooks and the controller use, and the priority
// level the FlowSchema names. (The admission policy's match condition is evaluated on these same
// renders in admission-policy-cel.test.ts.)
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { matchesSelector, parseLabelSelector } from '../../src/fleet/label-selector.ts';
import { grantsOf } from './agent-manifest-checks.ts';
import { HELM_ALL_COMPONENTS, helmRunner, hookObjects, only, withoutHooks, type K8sObject } from './render.ts';
import { schemaErrors } from './schema.ts';

const helm = helmRunner();
after(() => helm.close());

interface Case {
  readonly what: string;
  readonly release: string;
  readonly namespace: string;
  readonly sets: readonly string[];
  /** The base name every object should carry, and the app.kubernetes.io/name label. */
  readonly fullname: string;
  readonly name: string;
}

const CASES: readonly Case[] = [
  { what: 'the defaults', release: 'nodepulse', namespace: 'nodepulse', sets: [], fullname: 'nodepulse', name: 'nodepulse' },
  { what: 'release edge in node-health', release: 'edge', namespace: 'node-health', sets: [], fullname: 'edge-nodepulse', name: 'nodepulse' },
  { what: 'nameOverride pulse', release: 'edge', namespace: 'node-health', sets: ['nameOverride=pulse'], fullname: 'edge-pulse', name: 'pulse' },
  { what: 'fullnameOverride watcher', release: 'np', namespace: 'ops', sets: ['fullnameOverride=watcher'], fullname: 'watcher', name: 'nodepulse' },
  { what: 'a lease namespace of its own', release: 'np', namespace: 'ops', sets: ['leaseNamespace=node-leases'], fullname: 'np-nodepulse', name: 'nodepulse' },
];

function podSpec(o: K8sObject): { serviceAccountName: string; containers: Array<{ args?: string[] }> } {
  const spec = o['spec'] as { template?: { spec: unknown } };
  return (spec.template?.spec ?? spec) as { serviceAccountName: string; containers: Array<{ args?: string[] }> };
}

function podLabels(o: K8sObject): Record<string, string> {
  return (o['spec'] as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
}

/** Whether a label selector, read by the parser nodepulse's commands use, selects these labels. */
function selects(selector: string, labels: Record<string, string>): boolean {
  return matchesSelector(parseLabelSelector(selector), labels);
}

function flag(args: readonly string[] | undefined, name: string): string | undefined {
  return args?.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

for (const c of CASES) {
  test(`chart under ${c.what}: every reference follows the install's names`, () => {
    const all = helm.template([...HELM_ALL_COMPONENTS, ...c.sets], { release: c.release, namespace: c.namespace });
    const objects = withoutHooks(all);
    const leaseNs = c.sets.includes('leaseNamespace=node-leases') ? 'node-leases' : c.namespace;
    assert.deepEqual(all.flatMap(schemaErrors), []);

    const ds = only(objects, 'DaemonSet');
    const deployment = only(objects, 'Deployment');
    assert.equal(ds.metadata.name, c.fullname);
    assert.equal(deployment.metadata.name, `${c.fullname}-controller`);
    const agentSa = { namespace: c.namespace, name: podSpec(ds).serviceAccountName };
    const controllerSa = { namespace: c.namespace, name: podSpec(deployment).serviceAccountName };
    assert.deepEqual([agentSa.name, controllerSa.name], [c.fullname, `${c.fullname}-controller`]);
    for (const o of objects) assert.equal(o.metadata.labels?.['app.kubernetes.io/name'], c.name, `${o.kind}/${o.metadata.name}: app.kubernetes.io/name`);

    // The service accounts the pods run as exist, and the grants reach them.
    for (const sa of [agentSa, controllerSa]) {
      assert.ok(objects.some((o) => o.kind === 'ServiceAccount' && o.metadata.name === sa.name && o.metadata.namespace === sa.namespace), `ServiceAccount ${sa.namespace}/${sa.name} is rendered`);
    }
    assert.ok(grantsOf(objects, agentSa).includes(`Role ${leaseNs} coordination.k8s.io leases patch`), 'the agent may renew in the lease namespace');
    assert.ok(grantsOf(objects, controllerSa).includes('ClusterRole - core nodes/status patch'), 'the controller may mark nodes');

    // The FlowSchema classifies these two accounts, into the level the chart ships.
    const fs = only(objects, 'FlowSchema')['spec'] as { priorityLevelConfiguration: { name: string }; rules: Array<{ subjects: Array<{ serviceAccount: { name: string; namespace: string } }> }> };
    assert.deepEqual(fs.rules.flatMap((r) => r.subjects.map((s) => s.serviceAccount)), [agentSa, controllerSa]);
    assert.equal(fs.priorityLevelConfiguration.name, only(objects, 'PriorityLevelConfiguration').metadata.name);

    // The admission policy names the agent's account, and its binding the policy.
    const vap = only(objects, 'ValidatingAdmissionPolicy');
    const condition = (vap['spec'] as { matchConditions: Array<{ expression: string }> }).matchConditions[0]?.expression;
    assert.equal(condition, `request.userInfo.username == 'system:serviceaccount:${agentSa.namespace}:${agentSa.name}'`);
    assert.equal((only(objects, 'ValidatingAdmissionPolicyBinding')['spec'] as { policyName: string }).policyName, vap.metadata.name);

    // The controller watches this DaemonSet's rollout and this lease namespace.
    const controllerArgs = podSpec(deployment).containers[0]?.args;
    assert.equal(flag(controllerArgs, 'agent-daemonset'), `${c.namespace}/${c.fullname}`);
    assert.equal(flag(controllerArgs, 'lease-namespace'), leaseNs);

    // The hooks find this install's pods: verify the agents alone; cleanup the agents and the
    // controller (both write to the Nodes), never the hooks' own pods, which match until deleted.
    const job = hookObjects(all, 'post-delete').find((o) => o.kind === 'Job');
    const testPod = hookObjects(all, 'test').find((o) => o.kind === 'Pod');
    assert.ok(job && testPod, 'precondition: both hooks are rendered');
    const pods = { agent: podLabels(ds), controller: podLabels(deployment), cleanup: podLabels(job), test: testPod.metadata.labels ?? {} };
    const selected = (args: readonly string[] | undefined): string[] => Object.entries(pods).filter(([, labels]) => selects(flag(args, 'agent-selector') ?? '', labels)).map(([what]) => what);
    assert.deepEqual(selected(podSpec(job).containers[0]?.args), ['agent', 'controller'], 'cleanup waits for the writers only');
    assert.deepEqual(selected(podSpec(testPod).containers[0]?.args), ['agent'], 'verify checks an agent');
    for (const args of [podSpec(job).containers[0]?.args, podSpec(testPod).containers[0]?.args]) assert.equal(flag(args, 'agent-namespace'), c.namespace);
    assert.equal(flag(podSpec(testPod).containers[0]?.args, 'lease-namespace'), leaseNs);
  });
}

test('helm refuses a name override that is not a DNS label, naming the value', () => {
  assert.match(helm.templateError(['nameOverride=Node_Pulse']) ?? '', /- nameOverride: Does not match pattern/);
  assert.match(helm.templateError(['fullnameOverride=-x']) ?? '', /- fullnameOverride: Does not match pattern/);
});
