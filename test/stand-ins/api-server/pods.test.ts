// v1 Pod on the stand-in, held to what the real registry does for a reader of pods: a created
// pod starts Pending whatever status it was sent, a pod without containers is 422 Invalid, the
// list filters by label and by the field selectors pod/strategy.go allows (and refuses others
// with 400), discovery lists pods and pods/status; and a real kubectl reads them by selector
// (`kubectl get pods -l … -o name`) and deletes one, as `nodepulse cleanup` waits for.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { SystemClock } from '../../../src/clock/clock.ts';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../../src/stand-ins/api-server/kubeconfig.ts';
import { k8sTools } from '../../support/k8s-tools.ts';
import { runTool, type ToolRun } from '../../support/run-tool.ts';

const NS = 'nodepulse';
const PATH = `/api/v1/namespaces/${NS}/pods`;
let server: ApiServerHandle;
let dir: string;

type Json = Record<string, unknown>;

function pod(name: string, labels: Record<string, string>, nodeName: string, containers: unknown[] = [{ name: 'agent', image: 'nodepulse' }]): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels }, spec: { nodeName, containers }, status: { phase: 'Running' } };
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

function names(list: Json): string[] {
  return (list['items'] as Json[]).map((i) => (i['metadata'] as { name: string }).name);
}

function kubectl(args: readonly string[]): Promise<ToolRun> {
  return runTool(k8sTools().kubectl, args, { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir, KUBECACHEDIR: join(dir, 'cache') });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodepulse-pods-'));
  server = await startApiServer({ clock: new SystemClock() });
  writeKubeconfig(join(dir, 'kubeconfig'), { server: server.url, namespace: NS });
});

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a created pod starts Pending; one without containers is 422; lists filter by label and by the allowed field selectors', async () => {
  const agent = { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'agent' };
  const created = await call('POST', PATH, pod('agent-a', agent, 'node-1'));
  assert.equal(created.status, 201);
  assert.deepEqual(created.body['status'], { phase: 'Pending' }, 'the status sent is replaced, as PrepareForCreate does');
  assert.equal((await call('POST', PATH, pod('agent-b', agent, 'node-2'))).status, 201);
  assert.equal((await call('POST', PATH, pod('web', { 'app.kubernetes.io/name': 'web' }, 'node-1'))).status, 201);
  const empty = await call('POST', PATH, pod('no-containers', agent, 'node-1', []));
  assert.equal(empty.status, 422);
  assert.deepEqual((empty.body['details'] as { causes: Json[] }).causes, [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' }]);

  assert.deepEqual(names((await call('GET', `${PATH}?labelSelector=${encodeURIComponent('app.kubernetes.io/name=nodepulse')}`)).body), ['agent-a', 'agent-b']);
  assert.deepEqual(names((await call('GET', `${PATH}?fieldSelector=${encodeURIComponent('spec.nodeName=node-1')}`)).body), ['agent-a', 'web']);
  assert.deepEqual(names((await call('GET', `/api/v1/pods?labelSelector=${encodeURIComponent('app.kubernetes.io/component=agent')}`)).body), ['agent-a', 'agent-b'], 'across namespaces');
  const refused = await call('GET', `${PATH}?fieldSelector=${encodeURIComponent('spec.containers=x')}`);
  assert.equal(refused.status, 400);
  assert.equal(refused.body['message'], 'field label not supported: spec.containers');

  const resources = (await call('GET', '/api/v1')).body['resources'] as Array<{ name: string; shortNames?: string[] }>;
  assert.ok(resources.some((r) => r.name === 'pods' && r.shortNames?.includes('po')), 'discovery lists pods');
  assert.ok(resources.some((r) => r.name === 'pods/status'), 'discovery lists pods/status');
});

test('a real kubectl lists pods by selector and deletes one', async () => {
  const listed = await kubectl(['get', 'pods', '-l', 'app.kubernetes.io/name=nodepulse', '-o', 'name']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stdout, 'pod/agent-a\npod/agent-b\n');
  const deleted = await kubectl(['delete', 'pod', 'agent-a', '--wait=false']);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /pod "agent-a" deleted/);
  assert.equal((await call('GET', `${PATH}/agent-a`)).status, 404, 'gone at once: no kubelet here to finish a graceful deletion');
});
