import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configuredCriEndpoint, DEFAULT_CRI_ENDPOINTS, InvalidCriEndpointError, KNOWN_ENDPOINT_RUNTIMES, NoCriEndpointError, parseCriEndpoint } from './endpoint.ts';

describe('DEFAULT_CRI_ENDPOINTS', () => {
  test('probes containerd, then CRI-O, then k3s/RKE2 containerd, then cri-dockerd at its own default path', () => {
    assert.deepEqual(DEFAULT_CRI_ENDPOINTS, [
      'unix:///run/containerd/containerd.sock',
      'unix:///run/crio/crio.sock',
      'unix:///run/k3s/containerd/containerd.sock',
      'unix:///var/run/cri-dockerd.sock',
    ]);
  });

  test('each names the runtime it belongs to, as the Node\'s containerRuntimeVersion names it', () => {
    assert.deepEqual(DEFAULT_CRI_ENDPOINTS.map((e) => KNOWN_ENDPOINT_RUNTIMES[e]), ['containerd', 'cri-o', 'containerd', 'docker']);
    assert.deepEqual(Object.keys(KNOWN_ENDPOINT_RUNTIMES).sort(), [...DEFAULT_CRI_ENDPOINTS].sort(), 'no other path is named');
  });
});

describe('configuredCriEndpoint', () => {
  const table: Array<{ name: string; flag?: string; env: Record<string, string>; want: ReturnType<typeof configuredCriEndpoint> }> = [
    {
      name: 'the flag wins over the environment',
      flag: 'unix:///custom/cri.sock',
      env: { CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock' },
      want: { endpoint: 'unix:///custom/cri.sock', path: '/custom/cri.sock', source: '--cri-endpoint' },
    },
    {
      name: 'a bare absolute path is turned into the unix:// form',
      flag: '/run/k3s/containerd/containerd.sock',
      env: {},
      want: { endpoint: 'unix:///run/k3s/containerd/containerd.sock', path: '/run/k3s/containerd/containerd.sock', source: '--cri-endpoint' },
    },
    {
      name: 'the environment is used without a flag',
      env: { CONTAINER_RUNTIME_ENDPOINT: 'unix:///run/cri-dockerd.sock' },
      want: { endpoint: 'unix:///run/cri-dockerd.sock', path: '/run/cri-dockerd.sock', source: 'CONTAINER_RUNTIME_ENDPOINT' },
    },
    { name: 'an empty flag and an empty environment variable count as unset: probe', flag: '', env: { CONTAINER_RUNTIME_ENDPOINT: '' }, want: undefined },
    { name: 'neither set: probe', env: {}, want: undefined },
  ];
  for (const row of table) {
    test(row.name, () => {
      assert.deepEqual(configuredCriEndpoint({ flag: row.flag, env: row.env }), row.want);
    });
  }

  test('refuses endpoints that are not unix sockets, naming the key and the value', () => {
    for (const bad of ['tcp://127.0.0.1:1234', 'relative/path.sock', 'unix://relative.sock', 'unix://', 'npipe:////./pipe/x']) {
      assert.throws(() => configuredCriEndpoint({ flag: bad, env: {} }), InvalidCriEndpointError, bad);
      assert.throws(() => parseCriEndpoint(bad), /must be unix:\/\/\/absolute\/path or an absolute path/, bad);
    }
    assert.throws(
      () => configuredCriEndpoint({ env: { CONTAINER_RUNTIME_ENDPOINT: 'tcp://x:1' } }),
      /^InvalidCriEndpointError: CONTAINER_RUNTIME_ENDPOINT: "tcp:\/\/x:1" must be/,
    );
  });
});

test('NoCriEndpointError names every path tried, why none was chosen, and what to set', () => {
  const err = new NoCriEndpointError(DEFAULT_CRI_ENDPOINTS, 'no socket answered CRI Version (…)');
  assert.equal(err.code, 'no_cri_endpoint');
  assert.deepEqual(err.tried, DEFAULT_CRI_ENDPOINTS);
  for (const candidate of DEFAULT_CRI_ENDPOINTS) assert.ok(err.message.includes(candidate), `message names ${candidate}: ${err.message}`);
  assert.match(err.message, /no socket answered CRI Version \(…\); set --cri-endpoint or CONTAINER_RUNTIME_ENDPOINT/);
});
