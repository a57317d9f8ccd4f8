// apps/v1 DaemonSet on the stand-in, held to the real registry's strategy (generation, status
// subresource, immutable selector, defaults) and read by a real kubectl: `kubectl create -f`
// and `kubectl rollout status`, whose messages come from kubectl's own DaemonSet status viewer.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { writeKubeconfig } from '../../../src/stand-ins/api-server/kubeconfig.ts';
import { k8sTools } from '../../support/k8s-tools.ts';
import { runTool, type ToolRun } from '../../support/run-tool.ts';
import { SystemClock } from '../../../src/clock/clock.ts';

const NS = 'nodepulse';
const PATH = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
let server: ApiServerHandle;
let dir: string;

type Json = Record<string, unknown>;

function daemonSet(over: { labels?: Record<string, string>; image?: string; minReadySeconds?: number } = {}): Json {
  const labels = over.labels ?? { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'agent' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'nodepulse', namespace: NS },
    spec: {
      selector: { matchLabels: { 'app.kubernetes.io/name': 'nodepulse', 'app.kubernetes.io/component': 'agent' } },
      ...(over.minReadySeconds === undefined ? {} : { minReadySeconds: over.minReadySeconds }),
      template: { metadata: { labels }, spec: { containers: [{ name: 'agent', image: over.image ?? 'nodepulse:0.1.0' }] } },
    },
    status: { desiredNumberScheduled: 99 },
  };
}

async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: Json }> {
  const res = await fetch(server.url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

function meta(obj: Json): { generation?: number; annotations?: Record<string, string>; resourceVersion?: string } {
  return obj['metadata'] as { generation?: number; annotations?: Record<string, string> };
}

function kubectl(args: readonly string[]): Promise<ToolRun> {
  return runTool(k8sTools().kubectl, args, { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir, KUBECACHEDIR: join(dir, 'cache') });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodepulse-ds-'));
  server = await startApiServer({ clock: new SystemClock() });
  writeKubeconfig(join(dir, 'kubeconfig'), { server: server.url, namespace: NS });
});

after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a created DaemonSet gets generation 1, template generation 1, cleared status and the apps/v1 defaults', async () => {
  const created = await call('POST', PATH, daemonSet());
  assert.equal(created.status, 201);
  assert.equal(meta(created.body).generation, 1);
  assert.equal(meta(created.body).annotations?.['deprecated.daemonset.template.generation'], '1');
  assert.deepEqual(created.body['status'], { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
  const spec = created.body['spec'] as { updateStrategy: unknown; revisionHistoryLimit: number; template: { spec: { restartPolicy: string } } };
  assert.deepEqual(spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  assert.equal(spec.revisionHistoryLimit, 10);
  assert.equal(spec.template.spec.restartPolicy, 'Always');
});

test('an update bumps generation only when the spec changes, and the template generation only when the template does', async () => {
  const same = await call('PUT', `${PATH}/nodepulse`, daemonSet());
  assert.equal(same.status, 200);
  assert.equal(meta(same.body).generation, 1, 'the same spec (after defaults) is no change');
  const minReady = await call('PUT', `${PATH}/nodepulse`, daemonSet({ minReadySeconds: 30 }));
  assert.equal(meta(minReady.body).generation, 2);
  assert.equal(meta(minReady.body).annotations?.['deprecated.daemonset.template.generation'], '1', 'minReadySeconds is not the template');
  const image = await call('PUT', `${PATH}/nodepulse`, daemonSet({ minReadySeconds: 30, image: 'nodepulse:0.2.0' }));
  assert.equal(meta(image.body).generation, 3);
  assert.equal(meta(image.body).annotations?.['deprecated.daemonset.template.generation'], '2');
});

test('the status subresource keeps the spec and generation, and refuses a negative count', async () => {
  const current = (await call('GET', `${PATH}/nodepulse`)).body;
  const status = { observedGeneration: 3, desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 1, numberAvailable: 3, numberMisscheduled: 0 };
  const written = await call('PUT', `${PATH}/nodepulse/status`, { ...current, spec: { nonsense: true }, status });
  assert.equal(written.status, 200);
  assert.deepEqual(written.body['status'], status);
  assert.deepEqual(written.body['spec'], current['spec']);
  assert.equal(meta(written.body).generation, 3);
  const negative = await call('PATCH', `${PATH}/nodepulse/status`, { status: { numberAvailable: -1 } }, 'application/merge-patch+json');
  assert.equal(negative.status, 422);
  assert.match(String(negative.body['message']), /status\.numberAvailable: Invalid value: -1: must be greater than or equal to 0/);
  const unchanged = await call('PATCH', `${PATH}/nodepulse`, { status: { numberAvailable: 0 } }, 'application/merge-patch+json');
  assert.equal((unchanged.body['status'] as { numberAvailable: number }).numberAvailable, 3, 'the main resource never writes status');
});

test('a selector that misses the template labels, an empty selector and a changed selector are 422 Invalid', async () => {
  const miss = await call('POST', PATH, { ...daemonSet({ labels: { app: 'other' } }), metadata: { name: 'miss' } });
  assert.equal(miss.status, 422);
  assert.match(String(miss.body['message']), /spec\.template\.metadata\.labels: Invalid value: map\[string\]string\{"app":"other"\}: `selector` does not match template `labels`/);
  const empty = daemonSet();
  (empty['spec'] as { selector: unknown }).selector = { matchLabels: {} };
  const emptied = await call('POST', PATH, { ...empty, metadata: { name: 'empty' } });
  assert.equal(emptied.status, 422);
  assert.match(String(emptied.body['message']), /spec\.selector: Invalid value: v1\.LabelSelector\{MatchLabels:map\[string\]string\{\}, .*: empty selector is invalid for daemonset/);
  const changed = daemonSet();
  (changed['spec'] as { selector: unknown }).selector = { matchLabels: { 'app.kubernetes.io/name': 'nodepulse' } };
  const immutable = await call('PUT', `${PATH}/nodepulse`, changed);
  assert.equal(immutable.status, 422);
  assert.match(String(immutable.body['message']), /spec\.selector: Invalid value: .*: field is immutable/);
  const badSurge = daemonSet();
  (badSurge['spec'] as Json)['updateStrategy'] = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 1 } };
  const both = await call('POST', PATH, { ...badSurge, metadata: { name: 'both' } });
  assert.equal(both.status, 422);
  assert.match(String(both.body['message']), /spec\.updateStrategy\.rollingUpdate\.maxSurge: Invalid value: .*: may not be set when maxUnavailable is non-zero/);
});

test('discovery lists daemonsets and daemonsets/status, and a field selector finds one by name', async () => {
  const resources = (await call('GET', '/apis/apps/v1')).body['resources'] as Array<{ name: string; shortNames?: string[] }>;
  assert.deepEqual(resources.map((r) => r.name), ['daemonsets', 'daemonsets/status']);
  assert.deepEqual(resources[0]?.shortNames, ['ds']);
  const list = (await call('GET', `${PATH}?fieldSelector=metadata.name%3Dnodepulse`)).body['items'] as Json[];
  assert.deepEqual(list.map((i) => (i['metadata'] as { name: string }).name), ['nodepulse']);
});

test('a real kubectl creates a DaemonSet and reads its rollout from the status the stand-in keeps', async () => {
  writeFileSync(join(dir, 'ds.json'), JSON.stringify({ ...daemonSet(), metadata: { name: 'agent', namespace: NS } }));
  // The stand-in serves no OpenAPI document, which kubectl's client-side validation downloads.
  const created = await kubectl(['create', '--validate=false', '-f', join(dir, 'ds.json')]);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, /daemonset\.apps\/agent created/);
  const obj = (await call('GET', `${PATH}/agent`)).body;
  const rolling = { observedGeneration: 1, desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 1, numberAvailable: 2, numberMisscheduled: 0 };
  assert.equal((await call('PUT', `${PATH}/agent/status`, { ...obj, status: rolling })).status, 200);
  const waiting = await kubectl(['rollout', 'status', 'ds/agent', '--watch=false']);
  assert.equal(waiting.code, 0, waiting.stderr);
  assert.match(waiting.stdout, /Waiting for daemon set "agent" rollout to finish: 1 out of 3 new pods have been updated/);
  const done = { ...rolling, numberReady: 3, updatedNumberScheduled: 3, numberAvailable: 3 };
  assert.equal((await call('PATCH', `${PATH}/agent/status`, { status: done }, 'application/merge-patch+json')).status, 200);
  const finished = await kubectl(['rollout', 'status', 'ds/agent', '--watch=false']);
  assert.equal(finished.code, 0, finished.stderr);
  assert.match(finished.stdout, /daemon set "agent" successfully rolled out/);
});
