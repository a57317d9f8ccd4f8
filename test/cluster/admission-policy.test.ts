// The shipped ValidatingAdmissionPolicy, enforced by the real API server (v1.34) against the
// agent's real service-account tokens (agent-identity.ts has how they are made without a kubelet).
//
// | the agent's token                     | writes                                  | the real API server                  |
// |---------------------------------------|-----------------------------------------|--------------------------------------|
// | bound to a pod on node A (node claim) | Node A's status (strategic-merge PATCH) | 200, the condition merged in         |
// |                                       | the Lease named A: create, then PATCH   | 201, then 200                        |
// | the same                              | Node B's status; the Lease named B      | 403 Forbidden, naming A and B        |
// | bound to nothing (no node claim)      | Node A's status; the Lease named A      | 403 Forbidden, saying the claim is   |
// |                                       |                                         | missing                              |
//
// Each refusal is asserted whole: status 403, reason Forbidden, and the API server's exact message
// (`<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding
// '<binding>' denied request: <the policy's message>`), where the policy's message is computed
// from the rendered policy by the CEL model test/deploy uses: the real server and the model must
// agree. The server reports only the first validation that failed, in the policy's order. RBAC alone would allow every one of these writes (a SubjectAccessReview asserts it), so
// each refusal is the policy's.
//
// The DaemonSet is left out of what is applied: it has no node to run on here, and its pods are
// the kubelet tests' business. Nothing else of the overlay is changed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import { admit, type PolicySpec } from '../deploy/admission-policy-model.ts';
import type { Credentials } from './api-request.ts';
import {
  agentAccount, apply, createNode, deleteNode, remove, renderOverlay, theOne, tokenBoundToPodOn, tokenClaims, unboundToken,
} from './agent-identity.ts';
import { sharedCluster, type SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const NODE_A = 'np-identity-a';
const NODE_B = 'np-identity-b';
const NODE_CLAIM = 'authentication.kubernetes.io/node-name';
/** The policy informer resyncs within a second or two of a change; a loaded machine gets margin. */
const POLICY_IN_FORCE_MS = 30_000;

interface Status {
  readonly kind?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
}

test('the real API server holds the agent\'s token to its own node, with the admission policy\'s messages', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined) return;
  const objects = await renderOverlay(cluster);
  const account = agentAccount(objects);
  const policy = theOne(objects, 'ValidatingAdmissionPolicy');
  const binding = theOne(objects, 'ValidatingAdmissionPolicyBinding');
  const image = (theOne(objects, 'DaemonSet') as unknown as { spec: { template: { spec: { containers: Array<{ image: string }> } } } }).spec.template.spec.containers[0]?.image ?? 'nodepulse';
  const installed = objects.filter((o) => o.kind !== 'DaemonSet');

  // One cleanup, in order: the Pod first (force: no kubelet will confirm it), then the Nodes, then
  // the install (its namespace cannot finish terminating while the Pod is there).
  const cleanups: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  await apply(cluster, installed);
  cleanups.push(() => remove(cluster, installed));
  for (const node of [NODE_A, NODE_B]) {
    await createNode(cluster, node);
    cleanups.push(() => deleteNode(cluster, node));
  }
  const bound = await tokenBoundToPodOn(cluster, account, NODE_A, image);
  cleanups.push(() => bound.cleanup());
  const claims = tokenClaims(bound.token) as { 'kubernetes.io'?: { node?: { name?: string } } };
  assert.equal(claims['kubernetes.io']?.node?.name, NODE_A, 'precondition: the pod-bound token carries its node');
  const agentOnA: Credentials = { kind: 'token', token: bound.token };
  const noClaim: Credentials = { kind: 'token', token: await unboundToken(cluster, account) };
  assert.equal((tokenClaims(noClaim.token) as { 'kubernetes.io'?: { node?: unknown } })['kubernetes.io']?.node, undefined, 'precondition: the unbound token carries no node');

  for (const node of [NODE_A, NODE_B]) {
    assert.equal(await rbacAllows(cluster, account.username, { verb: 'patch', resource: 'nodes', subresource: 'status', name: node }), true, `precondition: RBAC alone lets the agent patch ${node}'s status`);
    assert.equal(await rbacAllows(cluster, account.username, { verb: 'create', group: 'coordination.k8s.io', resource: 'leases', namespace: account.namespace, name: node }), true, `precondition: RBAC alone lets the agent create the lease ${node}`);
  }

  /** What the policy says to `extra` writing `name`, computed by the CEL model from the rendered policy. */
  const policyMessage = (extra: Record<string, string[]>, request: { group: string; resource: string; subResource?: string; namespace?: string; operation: 'CREATE' | 'UPDATE' }, name: string): string => {
    const verdict = admit(policy['spec'] as PolicySpec, {
      request: {
        operation: request.operation,
        resource: { group: request.group, version: 'v1', resource: request.resource },
        ...(request.subResource === undefined ? {} : { subResource: request.subResource }),
        name,
        ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
        userInfo: { username: account.username, extra },
      },
      object: { metadata: { name } },
    });
    assert.equal(verdict.outcome, 'denied', `precondition: the model denies ${request.resource}/${name} for ${JSON.stringify(extra)}`);
    // The API server reports the first failed validation only, in the policy's order
    // (apiserver's validating dispatcher returns deniedDecisions[0]); the model lists them all.
    return verdict.outcome === 'denied' ? (verdict.failures[0]?.message ?? '') : '';
  };
  const forbidden = (what: string, message: string): string =>
    `${what} is forbidden: ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}' denied request: ${message}`;
  const assertForbidden = (answer: { status: number; json: unknown; body: string }, message: string, label: string): void => {
    assert.equal(answer.status, 403, `${label}: ${answer.body}`);
    const status = answer.json as Status;
    assert.deepEqual({ kind: status.kind, code: status.code, reason: status.reason, message: status.message }, { kind: 'Status', code: 403, reason: 'Forbidden', message }, label);
  };

  const conditionPatch = (node: string) => ({
    status: { conditions: [{ type: 'RuntimeRelistUnhealthy', status: 'False', reason: 'RelistHealthy', message: `written by the admission test for ${node}`, lastHeartbeatTime: '2026-01-01T00:00:00Z', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
  });
  const patchStatus = (node: string, credentials: Credentials) =>
    cluster.request(`/api/v1/nodes/${node}/status`, { method: 'PATCH', contentType: 'application/strategic-merge-patch+json', body: conditionPatch(node), credentials });
  const createLease = (node: string, credentials: Credentials) =>
    cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${account.namespace}/leases`, {
      method: 'POST', credentials,
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: node, namespace: account.namespace }, spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' } },
    });

  // A policy takes effect when the API server's policy informer has seen it and its binding, a
  // moment after they are created. A dry run (admission runs, nothing is written) shows when: the
  // probe is a write that either validation alone refuses (no claim, and another node), so a
  // test below still sees each one's own behaviour.
  await waitFor('the admission policy is in force', async () => {
    const a = await cluster.request(`/api/v1/nodes/${NODE_B}/status?dryRun=All`, { method: 'PATCH', contentType: 'application/strategic-merge-patch+json', body: conditionPatch(NODE_B), credentials: noClaim });
    return a.status === 403 ? true : `dry-run patch of ${NODE_B}/status: ${a.status}`;
  }, { clock: new SystemClock(), timeoutMs: POLICY_IN_FORCE_MS });

  await t.test('its own node: the status patch and the lease are admitted', async () => {
    const patched = await patchStatus(NODE_A, agentOnA);
    assert.equal(patched.status, 200, patched.body);
    const conditions = (patched.json as { status: { conditions?: Array<{ type: string; status: string; reason: string }> } }).status.conditions ?? [];
    assert.deepEqual(conditions.filter((c) => c.type === 'RuntimeRelistUnhealthy').map((c) => [c.status, c.reason]), [['False', 'RelistHealthy']]);
    const created = await createLease(NODE_A, agentOnA);
    assert.equal(created.status, 201, created.body);
    const renewed = await cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${account.namespace}/leases/${NODE_A}`, {
      method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { renewTime: '2026-01-01T00:00:10.000001Z' } }, credentials: agentOnA,
    });
    assert.equal(renewed.status, 200, renewed.body);
  });

  await t.test('another node: refused by the policy, naming both nodes', async () => {
    const extra = { [NODE_CLAIM]: [NODE_A] };
    const message = policyMessage(extra, { group: '', resource: 'nodes', subResource: 'status', operation: 'UPDATE' }, NODE_B);
    assert.ok(message.includes(NODE_A) && message.includes(NODE_B), `the refusal names the token's node and the node written: ${message}`);
    assertForbidden(await patchStatus(NODE_B, agentOnA), forbidden(`nodes "${NODE_B}"`, message), `patch ${NODE_B}/status`);
    assertForbidden(await createLease(NODE_B, agentOnA),
      forbidden(`leases.coordination.k8s.io "${NODE_B}"`, policyMessage(extra, { group: 'coordination.k8s.io', resource: 'leases', namespace: account.namespace, operation: 'CREATE' }, NODE_B)), `create lease ${NODE_B}`);
  });

  await t.test('a token without the node claim: refused by the policy, saying the claim is missing', async () => {
    const message = policyMessage({}, { group: '', resource: 'nodes', subResource: 'status', operation: 'UPDATE' }, NODE_A);
    assert.match(message, /claim/, 'the refusal says the token has no node claim');
    assertForbidden(await patchStatus(NODE_A, noClaim), forbidden(`nodes "${NODE_A}"`, message), `patch ${NODE_A}/status without the claim`);
    const lease = await cluster.request(`/apis/coordination.k8s.io/v1/namespaces/${account.namespace}/leases/${NODE_A}`, {
      method: 'PATCH', contentType: 'application/merge-patch+json', body: { spec: { renewTime: '2026-01-01T00:00:20.000001Z' } }, credentials: noClaim,
    });
    assertForbidden(lease, forbidden(`leases.coordination.k8s.io "${NODE_A}"`, policyMessage({}, { group: 'coordination.k8s.io', resource: 'leases', namespace: account.namespace, operation: 'UPDATE' }, NODE_A)), `patch lease ${NODE_A} without the claim`);
  });
});

async function rbacAllows(cluster: SharedCluster, user: string, attributes: { verb: string; resource: string; group?: string; subresource?: string; namespace?: string; name: string }): Promise<boolean> {
  const a = await cluster.request('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    method: 'POST',
    body: {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview',
      spec: { user, groups: ['system:serviceaccounts', 'system:authenticated'], resourceAttributes: { group: '', ...attributes } },
    },
  });
  assert.equal(a.status, 201, `SubjectAccessReview: ${a.body}`);
  return (a.json as { status: { allowed: boolean } }).status.allowed;
}
