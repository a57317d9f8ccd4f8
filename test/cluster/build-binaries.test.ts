// The parts of the build that decide the binaries' bytes and their cache folder: the versions
// read from go.mod, the stamping flags, and the key.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cacheKey, GO_MODULE_DIR, linkFlags, pinnedVersions } from './build-binaries.ts';

test('the pinned versions come from go.mod\'s require lines', () => {
  assert.deepEqual(pinnedVersions(readFileSync(join(GO_MODULE_DIR, 'go.mod'), 'utf8')), { kubernetes: 'v1.34.4', etcd: 'v3.6.4' });
  assert.deepEqual(pinnedVersions('require go.etcd.io/etcd/server/v3 v3.6.9\nrequire (\n\tk8s.io/kubernetes v1.35.0 // indirect\n)\n'), { kubernetes: 'v1.35.0', etcd: 'v3.6.9' });
  assert.throws(() => pinnedVersions('module x\n'), { message: 'test/cluster/k8s/go.mod: must require k8s.io/kubernetes at a version' });
});

test('the link flags strip the binaries and stamp the release into both version packages', () => {
  const flags = linkFlags('v1.34.4', '2026-02-10T12:53:36Z');
  assert.ok(flags.startsWith('-s -w '), flags);
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    for (const [name, value] of [['gitVersion', 'v1.34.4'], ['gitMajor', '1'], ['gitMinor', '34'], ['gitTreeState', 'clean'], ['buildDate', '2026-02-10T12:53:36Z']]) {
      assert.ok(flags.includes(`-X '${pkg}.${name}=${value}'`), `${pkg}.${name}=${value} in ${flags}`);
    }
  }
  assert.throws(() => linkFlags('v1.34.4-rc.1', 'x'), { message: 'k8s.io/kubernetes: v1.34.4-rc.1 must be a release version vMAJOR.MINOR.PATCH' });
});

test('the cache key names the versions and changes with every input', () => {
  const versions = { kubernetes: 'v1.34.4', etcd: 'v3.6.4' };
  const inputs = [Buffer.from('go.mod'), Buffer.from('go.sum'), Buffer.from('main.go')];
  const key = cacheKey(versions, 'go1.26.8', inputs);
  assert.match(key, /^k8s-v1\.34\.4-etcd-v3\.6\.4-go1\.26\.8-[0-9a-f]{12}$/);
  assert.equal(cacheKey(versions, 'go1.26.8', inputs), key, 'the same inputs give the same key');
  assert.notEqual(cacheKey(versions, 'go1.26.9', inputs), key, 'the Go version');
  assert.notEqual(cacheKey(versions, 'go1.26.8', [Buffer.from('go.mod'), Buffer.from('go.sum changed'), Buffer.from('main.go')]), key, 'go.sum');
  assert.notEqual(cacheKey(versions, 'go1.26.8', [Buffer.from('go.sum'), Buffer.from('go.mod'), Buffer.from('main.go')]), key, 'each input in its place');
});
