// The shipped ValidatingAdmissionPolicy, evaluated as the API server evaluates it:
// matchConstraints, matchConditions, variables, validations and failurePolicy
// (admission-policy-model.ts), its CEL run by a real CEL evaluator. Each case runs on every
// render the policy comes in: the kustomize base (real `kubectl kustomize`), and the chart
// (real `helm template`) under other names, where the policy must name the install's own
// agent account (another release, namespace, nameOverride or fullnameOverride).
//
// | who writes what                                          | the policy                              |
// |----------------------------------------------------------|-----------------------------------------|
// | the agent, its own node's Lease (CREATE, UPDATE) and     | admits                                  |
// | its own Node's status                                    |                                         |
// | the agent, another node's Lease or Node status           | denies: Forbidden, naming both nodes    |
// | the agent, with a bound token that has no node-name claim| denies: the claim is missing            |
// | the agent, a Lease with only generateName (no name)      | denies through failurePolicy: Fail (the |
// |                                                          | name check cannot be evaluated)         |
// | another user (the kubelet, the nodepulse controller, the | skips: its matchCondition is false      |
// | uninstall hook's cleanup, another install's agent)       |                                         |
// | the agent, an Event                                      | not in play (not in matchConstraints)   |
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admit, type AdmissionRequest, type PolicySpec, type Verdict } from './admission-policy-model.ts';
import { helmRunner, hookObjects, only, renderKustomize, type K8sObject } from './render.ts';

const NODE_CLAIM = 'authentication.kubernetes.io/node-name';

type User = AdmissionRequest['userInfo'];

/** What a bound pod token's user carries (Kubernetes >= 1.30), for a pod of `namespace/account` on node-a. */
function podUser(namespace: string, account: string, node = 'node-a'): User {
  return {
    username: `system:serviceaccount:${namespace}:${account}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
    extra: {
      'authentication.kubernetes.io/pod-name': [`${account}-x7k2q`],
      'authentication.kubernetes.io/pod-uid': ['2f1c3a52-8f1e-4e0b-9d6a-0c9a4b1e7d11'],
      [NODE_CLAIM]: [node],
      'authentication.kubernetes.io/node-uid': ['7b0e6f59-3c2d-4a8e-b1f4-5d6c7e8f9a0b'],
    },
  };
}

function accountOf(objects: readonly K8sObject[], kind: string): { namespace: string; name: string } {
  const o = only(objects, kind);
  const spec = o['spec'] as { template: { spec: { serviceAccountName: string } } };
  return { namespace: o.metadata.namespace ?? '', name: spec.template.spec.serviceAccountName };
}

interface Install {
  readonly what: string;
  readonly policy: PolicySpec;
  /** The agent's account, as the DaemonSet of the same render runs it. */
  readonly agent: { namespace: string; name: string };
  /** Other accounts of the same install, which the policy must not judge. */
  readonly others: ReadonlyArray<{ what: string; namespace: string; name: string }>;
}

function install(what: string, objects: readonly K8sObject[]): Install {
  const others = [{ what: 'the controller', ...accountOf(objects, 'Deployment') }];
  const cleanup = hookObjects(objects, 'post-delete').find((o) => o.kind === 'Job');
  if (cleanup !== undefined) others.push({ what: 'the uninstall hook\'s cleanup', ...accountOf([cleanup], 'Job') });
  return { what, policy: only(objects, 'ValidatingAdmissionPolicy')['spec'] as PolicySpec, agent: accountOf(objects, 'DaemonSet'), others };
}

const helm = helmRunner();
const INSTALLS: readonly Install[] = [
  install('kustomize overlays/all', renderKustomize('deploy/overlays/all')),
  install('helm release edge in node-health, nameOverride pulse', helm.template(['controller.enabled=true', 'nameOverride=pulse'], { release: 'edge', namespace: 'node-health' })),
  install('helm release np in ops, fullnameOverride watcher', helm.template(['controller.enabled=true', 'fullnameOverride=watcher'], { release: 'np', namespace: 'ops' })),
];
helm.close();

test('precondition: the renders under other names run the agent under other accounts, each judged by its own policy', () => {
  assert.deepEqual(INSTALLS.map((i) => `${i.agent.namespace}:${i.agent.name}`), ['nodepulse:nodepulse', 'node-health:edge-pulse', 'ops:watcher']);
  assert.deepEqual(INSTALLS.map((i) => i.others.map((o) => o.name)), [['nodepulse-controller'], ['edge-pulse-controller', 'edge-pulse-cleanup'], ['watcher-controller', 'watcher-cleanup']]);
});

function leaseWrite(user: User, node: string, operation: 'CREATE' | 'UPDATE' = 'UPDATE', metadata: Record<string, unknown> = { name: node }) {
  const request: AdmissionRequest = {
    operation,
    resource: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
    name: node,
    namespace: 'nodepulse',
    userInfo: user,
  };
  return { request, object: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace: 'nodepulse', ...metadata }, spec: { holderIdentity: node } } };
}

function nodeStatusWrite(user: User, node: string) {
  const request: AdmissionRequest = { operation: 'UPDATE', resource: { group: '', version: 'v1', resource: 'nodes' }, subResource: 'status', name: node, userInfo: user };
  const object = { apiVersion: 'v1', kind: 'Node', metadata: { name: node }, status: { conditions: [{ type: 'RuntimeRelistUnhealthy', status: 'False' }] } };
  return { request, object, oldObject: object };
}

function messages(verdict: Verdict): string[] {
  return verdict.outcome === 'denied' ? verdict.failures.map((f) => `${f.kind === 'invalid' ? f.reason : 'error'}: ${f.message}`) : [];
}

for (const { what, policy, agent, others } of INSTALLS) {
  const AGENT_ON_NODE_A = podUser(agent.namespace, agent.name);
  const extraOf = (u: User): Readonly<Record<string, readonly string[]>> => u.extra ?? {};

  test(`${what}: precondition: the model covers every input the policy reads, and the policy fails closed`, () => {
    const expressions = [...(policy.matchConditions ?? []), ...(policy.variables ?? []), ...policy.validations].flatMap((e) =>
      'name' in e ? [e.expression] : [e.expression, e.messageExpression ?? ''],
    );
    for (const e of expressions) assert.doesNotMatch(e, /\b(authorizer|params|namespaceObject)\b/, `the model does not evaluate ${e}`);
    assert.equal(policy.failurePolicy, 'Fail');
  });

  test(`${what}: the agent writing its own node: its Lease (created and renewed) and its Node status are admitted`, () => {
    assert.deepEqual(admit(policy, leaseWrite(AGENT_ON_NODE_A, 'node-a', 'CREATE')), { outcome: 'admitted' });
    assert.deepEqual(admit(policy, leaseWrite(AGENT_ON_NODE_A, 'node-a', 'UPDATE')), { outcome: 'admitted' });
    assert.deepEqual(admit(policy, nodeStatusWrite(AGENT_ON_NODE_A, 'node-a')), { outcome: 'admitted' });
  });

  test(`${what}: the agent writing another node: that node's Lease and Node status are denied, Forbidden, naming both nodes`, () => {
    assert.deepEqual(messages(admit(policy, leaseWrite(AGENT_ON_NODE_A, 'node-b'))), ['Forbidden: nodepulse on node node-a may not write leases/node-b']);
    assert.deepEqual(messages(admit(policy, leaseWrite(AGENT_ON_NODE_A, 'node-b', 'CREATE'))), ['Forbidden: nodepulse on node node-a may not write leases/node-b']);
    assert.deepEqual(messages(admit(policy, nodeStatusWrite(AGENT_ON_NODE_A, 'node-b'))), ['Forbidden: nodepulse on node node-a may not write nodes/node-b']);
  });

  test(`${what}: another user is not judged (its matchCondition is false): the kubelet, this install's other accounts, another install's agent`, () => {
    const kubelet: User = { username: 'system:node:node-b', groups: ['system:nodes', 'system:authenticated'] };
    const skipped = { outcome: 'skipped', why: 'matchCondition is-nodepulse-agent is false' };
    assert.deepEqual(admit(policy, nodeStatusWrite(kubelet, 'node-b')), skipped);
    for (const other of others) {
      const user = podUser(other.namespace, other.name);
      assert.deepEqual(admit(policy, nodeStatusWrite(user, 'node-b')), skipped, `${other.what} writes other nodes' status by design; a node-name claim changes nothing for it`);
      assert.deepEqual(admit(policy, leaseWrite(user, 'node-b')), skipped, other.what);
    }
    const elsewhere = agent.namespace === 'nodepulse' && agent.name === 'nodepulse' ? podUser('ops', 'watcher') : podUser('nodepulse', 'nodepulse');
    assert.deepEqual(admit(policy, nodeStatusWrite(elsewhere, 'node-b')), skipped, 'the policy names this install\'s agent only');
  });

  test(`${what}: the agent with a bound token that has no node-name claim (a cluster before 1.30) cannot write at all`, () => {
    const { [NODE_CLAIM]: _claim, ...extra } = extraOf(AGENT_ON_NODE_A);
    const verdict = admit(policy, leaseWrite({ ...AGENT_ON_NODE_A, extra }, 'node-a'));
    assert.deepEqual(messages(verdict), [
      "Forbidden: the nodepulse agent's token carries no node-name claim (needs Kubernetes >= 1.30 and a bound pod token)",
      'Forbidden: nodepulse on node  may not write leases/node-a',
    ]);
    const twoClaims = admit(policy, leaseWrite({ ...AGENT_ON_NODE_A, extra: { ...extra, [NODE_CLAIM]: ['node-a', 'node-b'] } }, 'node-a'));
    assert.equal(twoClaims.outcome, 'denied', 'a claim that names two nodes names none');
  });

  test(`${what}: failurePolicy Fail: a Lease with only generateName cannot be checked, and is denied; under Ignore it would pass`, () => {
    const unnamed = leaseWrite(AGENT_ON_NODE_A, 'node-a', 'CREATE', { generateName: 'node-a-' });
    const verdict = admit(policy, unnamed);
    assert.equal(verdict.outcome, 'denied');
    assert.match(messages(verdict).join('\n'), /^error: expression 'object\.metadata\.name == variables\.tokenNode' resulted in error: No such key: name$/);
    assert.deepEqual(admit({ ...policy, failurePolicy: 'Ignore' }, unnamed), { outcome: 'admitted' }, 'precondition: failurePolicy is what denies it');
  });

  test(`${what}: the agent's Events are not in the policy's matchConstraints`, () => {
    const request: AdmissionRequest = {
      operation: 'CREATE',
      resource: { group: 'events.k8s.io', version: 'v1', resource: 'events' },
      name: 'node-b.1',
      namespace: 'default',
      userInfo: AGENT_ON_NODE_A,
    };
    assert.deepEqual(admit(policy, { request, object: { metadata: { name: 'node-b.1' }, regarding: { kind: 'Node', name: 'node-b' } } }), { outcome: 'not-matched' });
  });
}
