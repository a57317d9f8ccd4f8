import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DEFAULT_CRI_ENDPOINTS,
  InvalidCriEndpointError,
  NoCriEndpointError,
  parseCriEndpoint,
  resolveCriEndpoint,
  type ResolveCriEndpointOptions,
} from './endpoint.ts';

const CANDIDATES = ['unix:///run/containerd/containerd.sock', 'unix:///run/crio/crio.sock', 'unix:///var/run/cri-dockerd.sock'];

describe('resolveCriEndpoint', () => {
  test('probes containerd, then CRI-O, then cri-dockerd by default', () => {
    assert.deepEqual(DEFAULT_CRI_ENDPOINTS, CANDIDATES);
  });

  const table: Array<{ name: string; options: Omit<ResolveCriEndpointOptions, 'exists' | 'candidates'>; existing: string[]; want: { endpoint: string; path: string; source: string } }> = [
    {
      name: 'the flag wins over the environment and the defaults',
      options: { flag: 'unix:///custom/cri.sock', env: { CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock' } },
      existing: ['/run/containerd/containerd.sock'],
      want: { endpoint: 'unix:///custom/cri.sock', path: '/custom/cri.sock', source: 'flag' },
    },
    {
      name: 'a flag naming a socket that does not exist yet is used as given',
      options: { flag: 'unix:///not/yet.sock', env: {} },
      existing: [],
      want: { endpoint: 'unix:///not/yet.sock', path: '/not/yet.sock', source: 'flag' },
    },
    {
      name: 'a bare absolute path is turned into the unix:// form',
      options: { flag: '/run/k3s/containerd/containerd.sock', env: {} },
      existing: [],
      want: { endpoint: 'unix:///run/k3s/containerd/containerd.sock', path: '/run/k3s/containerd/containerd.sock', source: 'flag' },
    },
    {
      name: 'the environment wins over the defaults',
      options: { env: { CONTAINER_RUNTIME_ENDPOINT: 'unix:///env.sock' } },
      existing: ['/run/containerd/containerd.sock'],
      want: { endpoint: 'unix:///env.sock', path: '/env.sock', source: 'env' },
    },
    {
      name: 'an empty flag and an empty environment variable count as unset',
      options: { flag: '', env: { CONTAINER_RUNTIME_ENDPOINT: '' } },
      existing: ['/run/crio/crio.sock'],
      want: { endpoint: 'unix:///run/crio/crio.sock', path: '/run/crio/crio.sock', source: 'default' },
    },
    {
      name: 'containerd is taken when several runtimes exist',
      options: { env: {} },
      existing: ['/var/run/cri-dockerd.sock', '/run/crio/crio.sock', '/run/containerd/containerd.sock'],
      want: { endpoint: 'unix:///run/containerd/containerd.sock', path: '/run/containerd/containerd.sock', source: 'default' },
    },
    {
      name: 'cri-dockerd is taken when it is the only one',
      options: { env: {} },
      existing: ['/var/run/cri-dockerd.sock'],
      want: { endpoint: 'unix:///var/run/cri-dockerd.sock', path: '/var/run/cri-dockerd.sock', source: 'default' },
    },
  ];
  for (const row of table) {
    test(row.name, () => {
      const probed: string[] = [];
      const got = resolveCriEndpoint({
        ...row.options,
        candidates: CANDIDATES,
        exists: (path) => {
          probed.push(path);
          return row.existing.includes(path);
        },
      });
      assert.deepEqual(got, row.want);
      if (row.want.source !== 'default') assert.deepEqual(probed, [], 'a configured endpoint is not probed');
    });
  }

  test('with no socket anywhere, fails and lists every path tried', () => {
    const err = (() => {
      try {
        resolveCriEndpoint({ env: {}, candidates: CANDIDATES, exists: () => false });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(err instanceof NoCriEndpointError);
    assert.equal(err.code, 'no_cri_endpoint');
    assert.deepEqual(err.tried, CANDIDATES);
    for (const candidate of CANDIDATES) assert.ok(err.message.includes(candidate), `message names ${candidate}: ${err.message}`);
  });

  test('probes injected candidates in their order', () => {
    const probed: string[] = [];
    const got = resolveCriEndpoint({
      env: {},
      candidates: ['unix:///a.sock', '/b.sock', 'unix:///c.sock'],
      exists: (path) => {
        probed.push(path);
        return path === '/b.sock';
      },
    });
    assert.deepEqual(probed, ['/a.sock', '/b.sock']);
    assert.equal(got.endpoint, 'unix:///b.sock');
  });

  test('refuses endpoints that are not unix sockets', () => {
    for (const bad of ['tcp://127.0.0.1:1234', 'relative/path.sock', 'unix://relative.sock', 'unix://', 'npipe:////./pipe/x']) {
      assert.throws(() => resolveCriEndpoint({ flag: bad }), InvalidCriEndpointError, bad);
      assert.throws(() => parseCriEndpoint(bad), /must be unix:\/\/\/absolute\/path or an absolute path/, bad);
    }
    assert.throws(() => resolveCriEndpoint({ env: { CONTAINER_RUNTIME_ENDPOINT: 'tcp://x:1' } }), /^InvalidCriEndpointError: CONTAINER_RUNTIME_ENDPOINT: /);
  });
});
