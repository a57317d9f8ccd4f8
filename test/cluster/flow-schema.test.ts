// The shipped FlowSchema, as the real API server's Priority and Fairness classifies the agent's
// requests, made with the agent's real token (a TokenRequest bound to a Pod on a Node object, as
// in admission-policy.test.ts).
//
// | request, with the agent's token              | classified by                      | seen in                            |
// |----------------------------------------------|------------------------------------|------------------------------------|
// | its lease: create, patch (renewals), get;    | the shipped FlowSchema, into the   | X-Kubernetes-PF-FlowSchema-UID and |
// | its Node (GET)                               | priority level it ships            | -PriorityLevel-UID on each answer; |
// |                                              |                                    | apiserver_flowcontrol_dispatched_  |
// |                                              |                                    | requests_total for that schema     |
// | an Event (POST), outside the schema's rules  | some other FlowSchema              | the same header                    |
// | the admin, the same lease                    | some other FlowSchema              | the same header                    |
//
// The metric is read before and after, and must have grown by exactly the number of requests the
// test made with the agent's token inside the schema's rules: nothing else on this cluster uses
// that account.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SystemClock } from '../../src/clock/clock.ts';
import type { ApiAnswer, Credentials } from './api-request.ts';
import { agentAccount, apply, createNode, deleteNode, remove, renderOverlay, theOne, tokenBoundToPodOn } from './agent-identity.ts';
import { sharedCluster, type SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

const NODE = 'np-flow-a';
/** The API server's flow-control config controller applies a new FlowSchema within a second or so. */
const SCHEMA_IN_FORCE_MS = 30_000;
const RENEWALS = 3;

test('the real API server classifies the agent\'s lease requests by the shipped FlowSchema', async (t) => {
  const cluster = await sharedCluster(t);
  if (cluster === undefined) return;
  const objects = await renderOverlay(cluster);
  const account = agentAccount(objects);
  const schema = theOne(objects, 'FlowSchema') as ReturnType<typeof theOne> & { spec: { priorityLevelConfiguration: { name: string } } };
  const image = (theOne(objects, 'DaemonSet') as unknown as { spec: { template: { spec: { containers: Array<{ image: string }> } } } }).spec.template.spec.containers[0]?.image ?? 'nodepulse';
  const installed = objects.filter((o) => o.kind !== 'DaemonSet');

  const cleanups: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  await apply(cluster, installed);
  cleanups.push(() => remove(cluster, installed));
  await createNode(cluster, NODE);
  cleanups.push(() => deleteNode(cluster, NODE));
  const bound = await tokenBoundToPodOn(cluster, account, NODE, image);
  cleanups.push(() => bound.cleanup());
  const agent: Credentials = { kind: 'token', token: bound.token };

  const schemaUid = await uidOf(cluster, `/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/${schema.metadata.name}`);
  const levelUid = await uidOf(cluster, `/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/${schema.spec.priorityLevelConfiguration.name}`);
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${account.namespace}/leases`;
  const classified = (a: ApiAnswer): { schema: unknown; level: unknown } => ({ schema: a.headers['x-kubernetes-pf-flowschema-uid'], level: a.headers['x-kubernetes-pf-prioritylevel-uid'] });
  const ours = { schema: schemaUid, level: levelUid };

  // A new FlowSchema is used once the API server's flow-control controller has read it. A GET of
  // a lease that does not exist (404, nothing written) shows when; these probes are counted too.
  let agentRequests = 0;
  await waitFor('the FlowSchema classifies the agent\'s lease requests', async () => {
    agentRequests++;
    const a = await cluster.request(`${leases}/${NODE}`, { credentials: agent });
    return classified(a).schema === schemaUid ? true : `GET lease: ${a.status}, flow schema uid ${String(classified(a).schema)}`;
  }, { clock: new SystemClock(), timeoutMs: SCHEMA_IN_FORCE_MS });

  const before = await dispatched(cluster, schema.metadata.name);
  agentRequests = 0;

  await t.test('the lease create, its renewals, a get, and a GET of its Node: the shipped schema and its priority level', async () => {
    const created = await cluster.request(leases, {
      method: 'POST', credentials: agent,
      body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: NODE }, spec: { holderIdentity: NODE, leaseDurationSeconds: 40, renewTime: '2026-01-01T00:00:00.000000Z' } },
    });
    agentRequests++;
    assert.equal(created.status, 201, created.body);
    assert.deepEqual(classified(created), ours, 'create');
    for (let i = 1; i <= RENEWALS; i++) {
      const renewed = await cluster.request(`${leases}/${NODE}`, {
        method: 'PATCH', credentials: agent, contentType: 'application/merge-patch+json', body: { spec: { renewTime: `2026-01-01T00:00:${String(i * 10).padStart(2, '0')}.000000Z` } },
      });
      agentRequests++;
      assert.equal(renewed.status, 200, renewed.body);
      assert.deepEqual(classified(renewed), ours, `renewal ${i}`);
    }
    const got = await cluster.request(`${leases}/${NODE}`, { credentials: agent });
    agentRequests++;
    assert.equal(got.status, 200, got.body);
    assert.deepEqual(classified(got), ours, 'get');
    const node = await cluster.request(`/api/v1/nodes/${NODE}`, { credentials: agent });
    agentRequests++;
    assert.equal(node.status, 200, node.body);
    assert.deepEqual(classified(node), ours, 'the agent\'s Node GET (the endpoint probe, the condition\'s refresh)');
  });

  await t.test('outside the schema\'s rules, or another user: classified elsewhere', async () => {
    // The agent's Events are notices, left out of the schema so a flood of them cannot take the
    // renewals' seats: one, as the agent writes it, in `default`.
    const event = await cluster.request('/apis/events.k8s.io/v1/namespaces/default/events', {
      method: 'POST', credentials: agent,
      body: {
        apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { generateName: `${NODE}-` },
        eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'nodepulse.io/agent', reportingInstance: `nodepulse-${NODE}`,
        action: 'SetCondition', reason: 'RelistHealthy', type: 'Normal', note: 'written by the flow-schema test',
        regarding: { apiVersion: 'v1', kind: 'Node', name: NODE },
      },
    });
    agentRequests++;
    assert.equal(event.status, 201, event.body);
    assert.equal(typeof classified(event).schema, 'string', 'every answer names its flow schema');
    assert.notEqual(classified(event).schema, schemaUid, 'the agent\'s Event');
    const admin = await cluster.request(`${leases}/${NODE}`);
    assert.equal(admin.status, 200, admin.body);
    assert.notEqual(classified(admin).schema, schemaUid, 'the admin\'s lease GET');
  });

  await t.test('the API server\'s metric counts exactly the agent\'s lease requests under the schema', async () => {
    const after = await dispatched(cluster, schema.metadata.name);
    // The Event above went elsewhere: every other request of the agent's counts.
    assert.equal(after - before, agentRequests - 1, `apiserver_flowcontrol_dispatched_requests_total{flow_schema="${schema.metadata.name}"}`);
  });
});

async function uidOf(cluster: SharedCluster, path: string): Promise<string> {
  const a = await cluster.request(path);
  assert.equal(a.status, 200, `precondition: ${path} must exist: ${a.body}`);
  return (a.json as { metadata: { uid: string } }).metadata.uid;
}

/** The sum of apiserver_flowcontrol_dispatched_requests_total over the schema's series. */
async function dispatched(cluster: SharedCluster, flowSchema: string): Promise<number> {
  const a = await cluster.request('/metrics');
  assert.equal(a.status, 200, `GET /metrics: ${a.status}`);
  let sum = 0;
  for (const line of a.body.split('\n')) {
    if (!line.startsWith('apiserver_flowcontrol_dispatched_requests_total{')) continue;
    if (!line.includes(`flow_schema="${flowSchema}"`)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
