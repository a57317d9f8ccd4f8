// `npm run cluster -- up` and `down`, run as a person runs them, then the machine looked at.
//
// | step | what must hold                                                                         |
// |------|----------------------------------------------------------------------------------------|
// | up   | exit 0; the last line of stdout is KUBECONFIG=<path>; the built kubectl with that file |
// |      | sees server v1.34.4 and /readyz passes                                                 |
// |      | every socket a cluster process listens on is on 198.18.0.0/15 (never the machine's own |
// |      | interface, never a wildcard)                                                           |
// |      | an address of the block that no route names is unreachable: it never goes out through |
// |      | the default route                                                                      |
// | down | exit 0; then no process in the cluster's cgroup, and none of the pids up started; no   |
// |      | cgroup, no mount under the folder, no bridge or veth, no route for the block; the      |
// |      | folder gone                                                                            |
//
// It needs the machine's one cluster slot (the addresses are fixed), so it runs before the shared
// cluster comes up (test/run.ts, phase 2). A cluster that is already up fails it under CI=true and
// skips it otherwise.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { NODE_24 } from '../support/agent-process.ts';
import { cgroupsUnder, pidsUnder } from './cgroups.ts';
import { leftovers, readState } from './cluster.ts';
import { isRunning } from './daemon.ts';
import { BLOCK, BRIDGE, CGROUP_ROOT, clusterDir } from './layout.ts';
import { linkExists } from './network.ts';
import { missingForCluster } from './requirements.ts';

const CLI = join(import.meta.dirname, 'cli.ts');
/** A cold `up` builds the binaries first (about 10 minutes); warm, it takes seconds. */
const UP_TIMEOUT_MS = 60 * 60_000;
const DOWN_TIMEOUT_MS = 120_000;

test('up brings up a control plane on the block\'s addresses only; down leaves nothing behind', async (t) => {
  const missing = missingForCluster();
  const busy = leftovers();
  const why = missing.length > 0 ? `needs ${missing.join('; ')}` : busy.length > 0 ? `the machine's cluster slot is taken: ${busy.join('; ')}` : undefined;
  if (why !== undefined) {
    if (process.env['CI'] === 'true') throw new Error(`precondition: ${why}`);
    t.skip(why);
    return;
  }

  const up = spawnSync(NODE_24, [CLI, 'up', '--control-plane-only'], { encoding: 'utf8', timeout: UP_TIMEOUT_MS });
  const state = readState();
  t.after(() => {
    if (readState() !== undefined) spawnSync(NODE_24, [CLI, 'down'], { timeout: DOWN_TIMEOUT_MS });
  });
  assert.equal(up.status, 0, `up: exit ${up.status}\n${up.stderr}`);
  assert.ok(state !== undefined, 'up leaves its state file');
  const lastLine = up.stdout.trimEnd().split('\n').pop();
  assert.equal(lastLine, `KUBECONFIG=${join(clusterDir(), 'admin.kubeconfig')}`, 'the last line of stdout');
  const kubeconfig = (lastLine ?? '').slice('KUBECONFIG='.length);

  const kubectl = (args: string[]): string => execFileSync(join(state.binDir, 'kubectl'), args, { encoding: 'utf8', env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 30_000 });
  const version = JSON.parse(kubectl(['version', '-o', 'json'])) as { clientVersion: { gitVersion: string }; serverVersion: { gitVersion: string; major: string; minor: string } };
  assert.deepEqual(
    [version.clientVersion.gitVersion, version.serverVersion.gitVersion, version.serverVersion.major, version.serverVersion.minor],
    ['v1.34.4', 'v1.34.4', '1', '34'],
    'kubectl and the API server report the pinned release',
  );
  assert.equal(kubectl(['get', '--raw', '/readyz']).trim(), 'ok');

  const daemons = state.daemons;
  assert.deepEqual(daemons.map((d) => d.name), ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
  const listening = listeningAddresses(pidsUnder(CGROUP_ROOT));
  assert.ok(listening.length >= 5, `precondition: the control plane listens (found ${listening.join(', ')})`);
  assert.deepEqual(listening.filter((a) => !a.startsWith('198.18.')), [], 'every listening socket is on the block');
  assert.deepEqual(
    [...new Set(listening.map((a) => a.split(':')[0]))],
    ['198.18.0.1'],
    'the control plane listens on the bridge address alone',
  );
  for (const unrouted of ['198.18.128.1', '198.19.0.5', '198.18.200.9']) {
    const r = spawnSync('ip', ['route', 'get', unrouted], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, `ip route get ${unrouted} must fail, not go out: ${r.stdout}`);
    assert.match(r.stderr, /unreachable|No route/i, `ip route get ${unrouted}`);
  }

  const down = spawnSync(NODE_24, [CLI, 'down'], { encoding: 'utf8', timeout: DOWN_TIMEOUT_MS });
  assert.equal(down.status, 0, `down: exit ${down.status}\n${down.stderr}`);
  assert.deepEqual(daemons.filter((d) => isRunning(d)).map((d) => `${d.name} ${d.pid}`), [], 'every daemon up started is gone');
  assert.deepEqual(pidsUnder(CGROUP_ROOT), [], 'no process in the cluster\'s cgroup');
  assert.deepEqual(cgroupsUnder(CGROUP_ROOT), [], 'no cgroup of the cluster\'s, in any hierarchy');
  assert.equal(linkExists(BRIDGE), false, 'the bridge is gone');
  assert.deepEqual(readdirSync('/sys/class/net').filter((l) => l.startsWith('np-cluster')), [], 'no network device of the cluster\'s');
  assert.equal(execFileSync('ip', ['route', 'show', 'type', 'unreachable', BLOCK], { encoding: 'utf8' }).trim(), '', 'the block\'s route is gone');
  assert.equal(readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => l.includes(clusterDir())).length, 0, 'no mount under the cluster\'s folder');
  assert.equal(existsSync(clusterDir()), false, 'the folder is gone');
  assert.deepEqual(leftovers(), [], 'down\'s own look finds nothing');
});

/** `address:port` of every listening TCP socket the pids hold (IPv4 and IPv6, from /proc/net). */
function listeningAddresses(pids: readonly number[]): string[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const m = /^socket:\[(\d+)\]$/.exec(safeReadlink(`/proc/${pid}/fd/${fd}`));
        if (m?.[1] !== undefined) inodes.add(m[1]);
      }
    } catch {
      // exited meanwhile
    }
  }
  const found: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] !== '0A' || f[9] === undefined || !inodes.has(f[9])) continue; // 0A: LISTEN
      found.push(decodeAddress(f[1] ?? ''));
    }
  }
  return found.sort();
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

/** /proc/net/tcp's `0100A8C6:192B` (little-endian IPv4) or a 32-hex-digit IPv6, to `198.168.0.1:6443`. */
function decodeAddress(field: string): string {
  const [hex = '', portHex = ''] = field.split(':');
  const port = parseInt(portHex, 16);
  if (hex.length === 8) {
    const bytes = hex.match(/../g)?.map((b) => parseInt(b, 16)).reverse() ?? [];
    return `${bytes.join('.')}:${port}`;
  }
  // IPv6: four little-endian 32-bit words; an IPv4-mapped address shows as ::ffff:a.b.c.d.
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) => (w.match(/../g) ?? []).map((b) => parseInt(b, 16)).reverse());
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) return `${bytes.slice(12).join('.')}:${port}`;
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return `[${groups.join(':')}]:${port}`;
}
