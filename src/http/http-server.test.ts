import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { Registry } from 'prom-client';
import type { Liveness } from '../liveness/liveness.ts';
import { createAgentMetrics } from '../metrics/metrics.ts';
import { OPENMETRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE } from '../metrics/exposition.ts';
import { readyzChecks, type HealthCheck } from './health-report.ts';
import { createHttpServer, type HttpDeps } from './http-server.ts';
import { STATUS_FIELDS, type StatusSnapshot } from './status-snapshot.ts';

interface World {
  loops: Liveness[];
  grace: boolean;
  ready: HealthCheck[];
  checks: HealthCheck[];
  status: StatusSnapshot;
  throwOnStatus: boolean;
}

const alive = (name: string): Liveness => ({ name, state: 'Alive', reason: 'last tick ended 0s ago' });

function deadRuntimeStatus(): StatusSnapshot {
  return {
    node: 'node-a',
    criEndpoint: {
      endpoint: 'unix:///run/containerd/containerd.sock',
      rule: 'configured',
      reason: 'given by --cri-endpoint; used as given, never probed',
      held: true,
      nodeRuntime: null,
      probed: [],
    },
    runtime: {
      state: 'Unhealthy',
      why: 'failing',
      lastSuccessBegan: '2026-01-02T03:04:05.123Z',
      lastFault: { code: 'unavailable', message: 'connection refused', cause: 'runtime-error' },
      message: 'relist was last seen active 3m5s ago; threshold is 3m0s',
    },
    runtimeConditions: [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' },
    ],
    loops: [alive('relister'), alive('lease'), alive('status-poller')],
    lease: { namespace: 'nodepulse', name: 'node-a', renewing: false, lastRenewTime: '2026-01-02T03:04:05.123456Z', lastError: null },
    counts: {
      pods: 1,
      podsReady: 1,
      podsByState: { SANDBOX_READY: 1, SANDBOX_NOTREADY: 0 },
      containers: 1,
      containersByState: { CONTAINER_CREATED: 0, CONTAINER_RUNNING: 1, CONTAINER_EXITED: 0, CONTAINER_UNKNOWN: 0 },
    },
    recentEvents: [
      { type: 'ContainerStarted', kind: 'container', time: '2026-01-02T03:04:00.000Z' },
    ],
  };
}

/** A world whose runtime is dead while every loop is alive. */
function deadRuntimeWorld(): World {
  return {
    loops: [alive('relister'), alive('lease'), alive('status-poller')],
    grace: false,
    ready: readyzChecks({ ready: true, reason: 'serving' }, { state: 'Unhealthy', message: 'relist was last seen active 3m5s ago; threshold is 3m0s' }),
    checks: [
      { name: 'relister', ok: true, reason: '' },
      { name: 'lease', ok: true, reason: '' },
      { name: 'status-poller', ok: true, reason: '' },
      { name: 'runtime', ok: false, reason: 'relist was last seen active 3m5s ago; threshold is 3m0s' },
      { name: 'lease-renewing', ok: false, reason: 'withheld: the runtime is Unhealthy' },
    ],
    status: deadRuntimeStatus(),
    throwOnStatus: false,
  };
}

async function start(t: TestContext, world: World, errors: unknown[] = []): Promise<string> {
  const registry = new Registry();
  const metrics = createAgentMetrics(registry, { relistDeadlineMs: 60_000, version: '0.1.0-test', defaultMetrics: false });
  metrics.relistFailures.inc({ reason: 'unavailable' });
  const deps: HttpDeps = {
    loops: () => world.loops,
    withinStartupGrace: () => world.grace,
    ready: () => world.ready,
    checks: () => world.checks,
    status: () => {
      if (world.throwOnStatus) throw new Error('snapshot failed');
      return world.status;
    },
    registry,
    onError: (err) => errors.push(err),
  };
  const server = createHttpServer(deps);
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function request(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('createHttpServer on a real port', () => {
  it('/livez stays 200 while the runtime is dead, and /healthz?verbose shows the runtime failing', async (t) => {
    const base = await start(t, deadRuntimeWorld());
    const livez = await request(`${base}/livez`);
    assert.equal(livez.status, 200);
    assert.equal(livez.body, 'ok\n');
    assert.equal(livez.headers['content-type'], 'text/plain; charset=utf-8');

    const healthz = await request(`${base}/healthz?verbose`);
    assert.equal(healthz.status, 503);
    assert.equal(
      healthz.body,
      [
        '[+]relister ok',
        '[+]lease ok',
        '[+]status-poller ok',
        '[-]runtime failed: relist was last seen active 3m5s ago; threshold is 3m0s',
        '[-]lease-renewing failed: withheld: the runtime is Unhealthy',
        'healthz check failed',
        '',
      ].join('\n'),
    );
  });

  it('/livez turns 503 when any loop stalls, naming the loop and its reason', async (t) => {
    const world = deadRuntimeWorld();
    const base = await start(t, world);
    world.loops = [alive('relister'), { name: 'lease', state: 'Stalled', reason: 'last tick ended 31s ago; idle window is 30s' }, alive('status-poller')];
    const livez = await request(`${base}/livez`);
    assert.equal(livez.status, 503);
    assert.equal(livez.body, '[-]lease failed: Stalled: last tick ended 31s ago; idle window is 30s\nlivez check failed\n');
    const verbose = await request(`${base}/livez?verbose`);
    assert.equal(verbose.body, '[+]relister ok\n[-]lease failed: Stalled: last tick ended 31s ago; idle window is 30s\n[+]status-poller ok\nlivez check failed\n');
  });

  it('/livez accepts a loop that has not ticked within the start-up grace, and not after it', async (t) => {
    const world = deadRuntimeWorld();
    world.loops = [alive('relister'), { name: 'lease', state: 'Unknown', reason: 'no tick has begun yet' }];
    world.grace = true;
    const base = await start(t, world);
    assert.equal((await request(`${base}/livez`)).status, 200);
    world.grace = false;
    const after = await request(`${base}/livez`);
    assert.equal(after.status, 503);
    assert.equal(after.body, '[-]lease failed: Unknown after the start-up grace: no tick has begun yet\nlivez check failed\n');
  });

  it('/livez is 503 for a dead loop even within the grace', async (t) => {
    const world = deadRuntimeWorld();
    world.grace = true;
    world.loops = [{ name: 'relister', state: 'Dead', reason: 'loop ended: task rejected' }];
    const base = await start(t, world);
    assert.equal((await request(`${base}/livez`)).status, 503);
  });

  it('/readyz is 200 with a dead runtime once serving, 503 with the reason before, and 503 while the agent cannot observe', async (t) => {
    const world = deadRuntimeWorld();
    const base = await start(t, world);
    const ready = await request(`${base}/readyz`);
    assert.deepEqual([ready.status, ready.body], [200, 'ok\n']);
    world.ready = readyzChecks({ ready: false, reason: 'loops not started yet' }, { state: 'NotYetObserved', message: '' });
    const notReady = await request(`${base}/readyz`);
    assert.deepEqual([notReady.status, notReady.body], [503, '[-]started failed: loops not started yet\nreadyz check failed\n']);
    world.ready = readyzChecks({ ready: true, reason: 'serving' }, { state: 'CannotObserve', message: 'the agent cannot observe the runtime (no-socket): …' });
    const blind = await request(`${base}/readyz`);
    assert.deepEqual([blind.status, blind.body], [503, '[-]runtime-observable failed: the agent cannot observe the runtime (no-socket): …\nreadyz check failed\n']);
    assert.equal((await request(`${base}/livez`)).status, 200, '/livez does not follow it');
  });

  it('/healthz is `ok` when every check passes', async (t) => {
    const world = deadRuntimeWorld();
    world.checks = world.checks.map((c) => ({ ...c, ok: true }));
    const base = await start(t, world);
    assert.deepEqual(await request(`${base}/healthz`).then((r) => [r.status, r.body]), [200, 'ok\n']);
    assert.equal((await request(`${base}/healthz?verbose`)).body.split('\n').at(-2), 'healthz check passed');
  });

  it('/status carries every field issue 4 names, absent ones as null', async (t) => {
    const world = deadRuntimeWorld();
    const base = await start(t, world);
    const reply = await request(`${base}/status`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    const body = JSON.parse(reply.body) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(body), [...STATUS_FIELDS]);
    assert.deepEqual(Object.keys(body['runtime'] ?? {}), ['state', 'why', 'lastSuccessBegan', 'lastFault', 'message']);
    assert.deepEqual(Object.keys(body['lease'] ?? {}), ['namespace', 'name', 'renewing', 'lastRenewTime', 'lastError']);
    assert.equal(body['lease']?.['lastError'], null);
    assert.deepEqual(body, JSON.parse(JSON.stringify(world.status)));
  });

  it('/metrics is Prometheus text by default and OpenMetrics when Accept asks', async (t) => {
    const base = await start(t, deadRuntimeWorld());
    const text = await request(`${base}/metrics`);
    assert.equal(text.status, 200);
    assert.equal(text.headers['content-type'], PROMETHEUS_TEXT_CONTENT_TYPE);
    assert.match(text.body, /^nodepulse_relist_failures_total\{reason="unavailable"\} 1$/m);

    const om = await request(`${base}/metrics`, {
      headers: { Accept: 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' },
    });
    assert.equal(om.headers['content-type'], OPENMETRICS_CONTENT_TYPE);
    assert.match(om.body, /^# TYPE nodepulse_relist_failures counter$/m);
    assert.match(om.body, /^nodepulse_relist_failures_total\{reason="unavailable"\} 1$/m);
    assert.ok(om.body.endsWith('# EOF\n'), 'OpenMetrics ends with # EOF');

    const again = await request(`${base}/metrics`);
    assert.match(again.body, /^# TYPE nodepulse_relist_failures_total counter$/m, 'an OpenMetrics scrape leaves the text format intact');
  });

  it('HEAD answers the headers of GET without a body', async (t) => {
    const base = await start(t, deadRuntimeWorld());
    const head = await request(`${base}/livez`, { method: 'HEAD' });
    assert.deepEqual([head.status, head.body, head.headers['content-length']], [200, '', '3']);
  });

  it('an unknown path is 404', async (t) => {
    const base = await start(t, deadRuntimeWorld());
    for (const path of ['/', '/livez/', '/metricsx', '/status/extra']) {
      const reply = await request(`${base}${path}`);
      assert.deepEqual([reply.status, reply.body], [404, `${path} not found\n`], path);
    }
  });

  it('a method other than GET or HEAD is 405 with Allow', async (t) => {
    const base = await start(t, deadRuntimeWorld());
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const reply = await request(`${base}/livez`, { method });
      assert.equal(reply.status, 405, method);
      assert.equal(reply.headers['allow'], 'GET, HEAD', method);
    }
  });

  it('a request body over 1 KiB is 413, declared or streamed; a small one is ignored', async (t) => {
    const base = await start(t, deadRuntimeWorld());
    const declared = await request(`${base}/livez`, { method: 'POST', body: Buffer.alloc(2048, 'a') });
    assert.equal(declared.status, 413);
    assert.equal(declared.headers['connection'], 'close');
    const streamed = await request(`${base}/livez`, { headers: { 'Transfer-Encoding': 'chunked' }, body: Buffer.alloc(4096, 'b') });
    assert.equal(streamed.status, 413);
    const small = await request(`${base}/livez`, { headers: { 'Content-Length': '100' }, body: Buffer.alloc(100, 'c') });
    assert.equal(small.status, 200);
  });

  it('a dependency that throws gives a 500 and is reported, and the server keeps serving', async (t) => {
    const world = deadRuntimeWorld();
    world.throwOnStatus = true;
    const errors: unknown[] = [];
    const base = await start(t, world, errors);
    const reply = await request(`${base}/status`);
    assert.deepEqual([reply.status, reply.body], [500, 'internal error: snapshot failed\n']);
    assert.equal(errors.length, 1);
    assert.equal((await request(`${base}/livez`)).status, 200);
  });
});

describe('createHttpServer bounds', () => {
  it('sets header and request timeouts, and guards connections instead of refusing past a cap', () => {
    const server = createHttpServer({
      loops: () => [],
      withinStartupGrace: () => false,
      ready: () => [],
      checks: () => [],
      status: () => deadRuntimeStatus(),
      registry: new Registry(),
    });
    assert.equal(server.headersTimeout, 10_000);
    assert.equal(server.requestTimeout, 15_000);
    assert.equal(server.keepAliveTimeout, 5_000);
    assert.equal(server.maxConnections, undefined, "net.Server's cap refuses newcomers; connection-guard.ts chooses what to close instead");
    assert.equal(Reflect.get(server, 'connectionsCheckingInterval'), 1_000, 'header and request timeouts are enforced within a second');
    assert.equal(server.listening, false, 'the caller listens');
  });
});
