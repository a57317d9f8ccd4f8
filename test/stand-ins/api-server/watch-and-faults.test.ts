// Watches, fault injection, the request record and the 5,000-node fleet, over real HTTP.
// Timing (bookmarks, watch timeouts, injected delays) runs on a ManualClock.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/stand-ins/api-server/api-server.ts';
import { ManualClock } from '../../../src/clock/manual-clock.ts';

const NS = 'nodepulse';
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
let clock: ManualClock;
let server: ApiServerHandle;

/** Reads newline-delimited watch events until `count` have arrived (bounded by a deadline). */
interface WatchLine {
  type: string;
  object: Record<string, unknown>;
}

/** A watch answer's events, one JSON line each, read on demand: readUntil(n) returns once n have come or the body ends. */
function watchEvents(res: Response): { events: WatchLine[]; readUntil: (count: number) => Promise<void>; cancel: () => Promise<void> } {
  const events: WatchLine[] = [];
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const readUntil = async (count: number): Promise<void> => {
    while (reader !== undefined && events.length < count) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) events.push(JSON.parse(line) as WatchLine);
    }
  };
  return { events, readUntil, cancel: async () => reader?.cancel() };
}

async function watch(path: string, count: number, on: ApiServerHandle = server): Promise<{ status: number; events: WatchLine[] }> {
  const ac = new AbortController();
  const deadline = setTimeout(() => ac.abort(), 5000);
  try {
    const res = await fetch(`${on.url}${path}`, { signal: ac.signal });
    const stream = watchEvents(res);
    await stream.readUntil(count);
    ac.abort();
    return { status: res.status, events: stream.events };
  } finally {
    clearTimeout(deadline);
  }
}

function lease(name: string, labels: Record<string, string> = {}, holder = name): Record<string, unknown> {
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: NS, labels }, spec: { holderIdentity: holder, leaseDurationSeconds: 40 } };
}

async function patchRenew(name: string, renewTime: string): Promise<Response> {
  return fetch(`${server.url}${LEASES}/${name}`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/merge-patch+json' },
    body: JSON.stringify({ spec: { renewTime } }),
    signal: AbortSignal.timeout(5000),
  });
}

before(async () => {
  clock = new ManualClock();
  server = await startApiServer({ clock, historySize: 5, bookmarkIntervalMs: 1000 });
});
after(async () => {
  await server.close();
});

describe('watches', () => {
  it('a watch without a resourceVersion starts with ADDED for every current object, then streams changes', async () => {
    server.store.put(lease('w1', { role: 'a' }));
    const pending = watch(`${LEASES}?watch=1&labelSelector=role%3Da`, 2);
    for (let i = 0; i < 100 && server.store.watcherCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    server.store.put(lease('w1', { role: 'a' }, 'other'));
    const { status, events } = await pending;
    assert.equal(status, 200);
    assert.deepEqual(events.map((e) => [e.type, (e.object['spec'] as { holderIdentity: string }).holderIdentity]), [['ADDED', 'w1'], ['MODIFIED', 'other']]);
    assert.equal(events[1]?.object['kind'], 'Lease', 'watch objects carry kind, as the watch encoder sets it');
  });

  it('an object that stops matching the selector is sent as DELETED', async () => {
    server.store.put(lease('w2', { role: 'b' }));
    const rv = server.store.resourceVersion();
    const pending = watch(`${LEASES}?watch=true&resourceVersion=${rv}&labelSelector=role+in+(b)`, 1);
    for (let i = 0; i < 100 && server.store.watcherCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    server.store.put(lease('w2', { role: 'c' }));
    const { events } = await pending;
    assert.equal(events[0]?.type, 'DELETED');
    assert.equal((events[0]?.object['metadata'] as { resourceVersion: string }).resourceVersion, String(server.store.resourceVersion()));
  });

  it('a watch from a version older than the history is 200 then an ERROR carrying 410 Expired', async () => {
    // apiserver/pkg/storage/cacher/watch_cache.go: "too old resource version: %d (%d)" with oldest-1
    for (let i = 0; i < 8; i++) server.store.put(lease(`churn-${i}`));
    const oldest = server.store.oldestWatchableVersion();
    assert.notEqual(oldest, undefined, 'precondition: the history of 5 has evicted events');
    const { status, events } = await watch(`${LEASES}?watch=1&resourceVersion=2`, 1);
    assert.equal(status, 200);
    assert.deepEqual(events, [{
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: 2 (${String(oldest)})`, reason: 'Expired', code: 410 },
    }]);
  });

  it('allowWatchBookmarks sends a BOOKMARK with the latest resourceVersion each interval, once something newer than the watch has seen was written', async () => {
    server.store.put(lease('bm', { role: 'watched' }));
    const rv = server.store.resourceVersion();
    const pending = watch(`${LEASES}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&labelSelector=role%3Dwatched`, 1);
    for (let i = 0; i < 100 && server.store.watcherCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    server.store.put(lease('bm-other', { role: 'not-watched' }));
    await clock.advance(1000);
    const { events } = await pending;
    assert.deepEqual(events[0], {
      type: 'BOOKMARK',
      object: { kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', metadata: { resourceVersion: String(rv + 1) }, spec: {} },
    });
  });

  it('a streaming list: every matching object ADDED, a BOOKMARK annotated k8s.io/initial-events-end, then changes', async () => {
    server.store.put(lease('s1', { stream: 'yes' }));
    server.store.put(lease('s2', { stream: 'yes' }));
    const rv = server.store.resourceVersion();
    const res = await fetch(`${server.url}${LEASES}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=stream%3Dyes`, { signal: AbortSignal.timeout(5000) });
    assert.ok(res.body !== null, 'precondition: the watch has a body');
    const { events, readUntil, cancel } = watchEvents(res);
    await readUntil(3);
    server.store.put(lease('s1', { stream: 'yes' }, 'later'));
    await readUntil(4);
    await cancel();
    assert.deepEqual(events.map((e) => [e.type, (e.object['metadata'] as { name?: string }).name ?? '']), [['ADDED', 's1'], ['ADDED', 's2'], ['BOOKMARK', ''], ['MODIFIED', 's1']]);
    assert.deepEqual(events[2]?.object['metadata'], { resourceVersion: String(rv), annotations: { 'k8s.io/initial-events-end': 'true' } });
  });

  // apimachinery/pkg/apis/meta/internalversion/validation validateWatchOptions, answered by
  // handlers/get.go as errors.NewInvalid(ListOptions.meta.k8s.io, "", errs).
  const INVALID_WATCH: ReadonlyArray<readonly [string, string, boolean, string]> = [
    ['sendInitialEvents without resourceVersionMatch', 'sendInitialEvents=true', true,
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
    ['the WatchList gate off', 'sendInitialEvents=true&resourceVersionMatch=NotOlderThan', false,
      'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'],
    ['resourceVersionMatch without sendInitialEvents', 'resourceVersionMatch=Exact', true,
      'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]'],
  ];
  for (const [what, query, gate, message] of INVALID_WATCH) {
    it(`a watch with ${what} is 422 Invalid, with upstream's message`, async () => {
      const own = await startApiServer({ clock, watchList: gate });
      try {
        const res = await fetch(`${own.url}${LEASES}?watch=1&${query}`, { signal: AbortSignal.timeout(5000) });
        assert.equal(res.status, 422);
        const body = (await res.json()) as { reason: string; message: string; details: { group: string; kind: string } };
        assert.deepEqual([body.reason, body.message, body.details.group, body.details.kind], ['Invalid', message, 'meta.k8s.io', 'ListOptions']);
      } finally {
        await own.close();
      }
    });
  }

  it('a watch with nothing newer than what it replayed gets no BOOKMARK, as the cache sends none', async () => {
    server.store.put(lease('quiet', { role: 'quiet' }));
    const rv = server.store.resourceVersion();
    server.store.put(lease('quiet', { role: 'quiet' }, 'moved'));
    for (let i = 0; i < 100 && server.store.watcherCount() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.store.watcherCount(), 0, 'precondition: the earlier watches have ended');
    const pending = watch(`${LEASES}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3&labelSelector=role%3Dquiet`, 2);
    for (let i = 0; i < 100 && server.store.watcherCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await clock.advance(3000);
    const { events } = await pending;
    assert.deepEqual(events.map((e) => e.type), ['MODIFIED'], 'the replayed change, then the end at timeoutSeconds, and no bookmark');
  });

  it('a BOOKMARK comes 2 s before timeoutSeconds ends the watch, as the cache sends one to a watcher whose deadline is near', async () => {
    const own = new ManualClock();
    const quietServer = await startApiServer({ clock: own }); // bookmarks every 60 s: none due within this watch
    try {
      quietServer.store.put(lease('deadline'));
      const rv = quietServer.store.resourceVersion();
      const pending = watch(`${LEASES}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=5&labelSelector=role%3Dnone`, 2, quietServer);
      for (let i = 0; i < 100 && quietServer.store.watcherCount() === 0; i++) await new Promise((r) => setTimeout(r, 10));
      quietServer.store.put(lease('deadline', { role: 'other' }));
      await own.advance(5000);
      const { events } = await pending;
      assert.deepEqual(events.map((e) => [e.type, (e.object['metadata'] as { resourceVersion?: string }).resourceVersion]), [['BOOKMARK', String(rv + 1)]],
        'one bookmark (at 3 s), then the clean end at 5 s');
    } finally {
      await quietServer.close();
    }
  });
});

describe('faults and the request record', () => {
  it('the record shows one PATCH per renewal and no GET', async () => {
    server.store.put(lease('rec'));
    const from = server.requests.lastSeq();
    for (let i = 1; i <= 3; i++) assert.equal((await patchRenew('rec', `2026-01-02T03:04:0${i}.000000Z`)).status, 200);
    const seen = server.requests.since(from).map((r) => [r.method, r.verb, r.contentType, r.status]);
    assert.deepEqual(seen, Array(3).fill(['PATCH', 'patch', 'application/merge-patch+json', 200]));
    assert.deepEqual(server.requests.since(from)[0]?.parsed, { spec: { renewTime: '2026-01-02T03:04:01.000000Z' } });
  });

  it('a delayed request is answered only once the server clock has moved by the delay', async () => {
    server.store.put(lease('slow'));
    server.faults.delayNext(1, `PATCH ${LEASES}/slow`, 2000);
    let answered = false;
    const pending = patchRenew('slow', '2026-01-02T03:04:05.000000Z').then((r) => { answered = true; return r; });
    for (let i = 0; i < 100 && server.requests.filter({ path: `${LEASES}/slow` }).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    clock.advance(1999);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(answered, false);
    clock.advance(1);
    assert.equal((await pending).status, 200);
  });

  it('a reset fault drops the connection and a non-JSON fault answers HTML', async () => {
    server.faults.resetNext(1, `GET ${LEASES}/*`);
    await assert.rejects(fetch(`${server.url}${LEASES}/x`, { signal: AbortSignal.timeout(5000) }));
    server.faults.nonJsonNext(1, `GET ${LEASES}/*`);
    const r = await fetch(`${server.url}${LEASES}/x`, { signal: AbortSignal.timeout(5000) });
    assert.equal(r.headers.get('content-type'), 'text/html');
    assert.equal(server.faults.pending(), 0);
  });

  it('a hung request never answers until the server stops listening, and the port can be reopened', async () => {
    server.faults.hangNext(1, `GET ${LEASES}/hang`);
    const hung = new Promise<string>((resolve) => {
      const req = request(`${server.url}${LEASES}/hang`, (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? ''}`));
      req.end();
    });
    for (let i = 0; i < 100 && server.requests.filter({ path: `${LEASES}/hang` }).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await server.stopListening();
    assert.equal(await hung, 'error ECONNRESET');
    await assert.rejects(fetch(`${server.url}/version`, { signal: AbortSignal.timeout(2000) }));
    await server.startListening();
    assert.equal((await fetch(`${server.url}/version`, { signal: AbortSignal.timeout(2000) })).status, 200);
  });
});

describe('the fleet at scale', () => {
  it('serves 5,000 realistic nodes and 5,000 leases as a list and an initial watch', async () => {
    for (let i = 0; i < 5000; i++) {
      const name = `node-${String(i).padStart(4, '0')}`;
      server.store.put(realisticNode(name));
      server.store.put(lease(name, { 'nodepulse.io/role': 'node-lease' }));
    }
    const list = await fetch(`${server.url}/api/v1/nodes`, { signal: AbortSignal.timeout(10_000) });
    const body = (await list.json()) as { items: unknown[] };
    assert.equal(body.items.length, 5000);
    const leases = await fetch(`${server.url}/apis/coordination.k8s.io/v1/leases?labelSelector=nodepulse.io%2Frole%3Dnode-lease`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(((await leases.json()) as { items: unknown[] }).items.length, 5000);
    const { events } = await watch('/api/v1/nodes?watch=1', 5000);
    assert.equal(events.length, 5000);
  });
});

function realisticNode(name: string): Record<string, unknown> {
  const t = '2026-01-02T03:04:05Z';
  return {
    apiVersion: 'v1', kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name,
        'node.kubernetes.io/instance-type': 'm5.xlarge', 'topology.kubernetes.io/zone': 'eu-west-1a',
        'topology.kubernetes.io/region': 'eu-west-1',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: { podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24'], providerID: `aws:///eu-west-1a/i-${name}` },
    status: {
      capacity: { cpu: '4', 'ephemeral-storage': '83873772Ki', memory: '16069396Ki', pods: '110' },
      allocatable: { cpu: '3920m', 'ephemeral-storage': '76224326324', memory: '15379220Ki', pods: '110' },
      conditions: ['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
        type, status: 'False', lastHeartbeatTime: t, lastTransitionTime: t, reason: `KubeletHasNo${type}`, message: `kubelet has no ${type}`,
      })).concat([{ type: 'Ready', status: 'True', lastHeartbeatTime: t, lastTransitionTime: t, reason: 'KubeletReady', message: 'kubelet is posting ready status' }]),
      addresses: [{ type: 'InternalIP', address: '10.0.1.2' }, { type: 'Hostname', address: name }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: 'ec2a1b2c3d4e5f', systemUUID: 'ec2a1b2c-3d4e-5f60-7182-93a4b5c6d7e8', bootID: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
        kernelVersion: '6.1.0-18-cloud-amd64', osImage: 'Debian GNU/Linux 12 (bookworm)', containerRuntimeVersion: 'containerd://1.7.13',
        kubeletVersion: 'v1.31.9', kubeProxyVersion: 'v1.31.9', operatingSystem: 'linux', architecture: 'amd64',
      },
      images: Array.from({ length: 10 }, (_, i) => ({
        names: [`registry.k8s.io/image-${i}@sha256:${'a'.repeat(64)}`, `registry.k8s.io/image-${i}:v1.${i}.0`],
        sizeBytes: 10_000_000 + i,
      })),
    },
  };
}
