// `npm run cluster -- up --nodes 2` and `down`, run as a person runs them, then the machine
// looked at.
//
// | step | what must hold                                                                         |
// |------|----------------------------------------------------------------------------------------|
// | up   | exit 0; the last line of stdout is KUBECONFIG=<path>; the built kubectl with that file |
// |      | sees server v1.34.4, /readyz passes, and both nodes are Ready                          |
// |      | each node is a machine of its own: its own network, mount and UTS namespaces (hostname |
// |      | = node name), its address, containerd at /run/containerd/containerd.sock inside it    |
// |      | only, its own cgroup root                                                              |
// |      | every socket a cluster process listens on in the root namespace is on 198.18.0.1;     |
// |      | inside a node, on the node's address or its own loopback                               |
// |      | an address of the block that no route names is unreachable: it never goes out through |
// |      | the default route; the root namespace's iptables rules and forwarding are untouched   |
// | down | exit 0; then no process in the cluster's cgroup, and none of the pids up started; no   |
// |      | cgroup, no mount under the folder, no bridge or veth, no route for the block; the      |
// |      | folder gone; the root namespace's iptables rules as before                             |
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

const NODES = 2;

test('up brings up a control plane and two nodes on the block\'s addresses only; down leaves nothing behind', async (t) => {
  const missing = missingForCluster();
  const busy = leftovers();
  const why = missing.length > 0 ? `needs ${missing.join('; ')}` : busy.length > 0 ? `the machine's cluster slot is taken: ${busy.join('; ')}` : undefined;
  if (why !== undefined) {
    if (process.env['CI'] === 'true') throw new Error(`precondition: ${why}`);
    t.skip(why);
    return;
  }

  const rootRules = iptablesRules();
  const rootForwarding = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8');
  const up = spawnSync(NODE_24, [CLI, 'up', '--nodes', String(NODES)], { encoding: 'utf8', timeout: UP_TIMEOUT_MS });
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
  assert.deepEqual(daemons.map((d) => d.name), [
    'etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler',
    ...Array.from({ length: NODES }, (_, i) => ['anchor', 'containerd', 'kubelet', 'kube-proxy'].map((c) => `np-node-${i + 1}/${c}`)).flat(),
  ]);
  const nodes = JSON.parse(kubectl(['get', 'nodes', '-o', 'json'])) as { items: Array<{ metadata: { name: string }; status: { addresses: Array<{ type: string; address: string }>; conditions: Array<{ type: string; status: string }> } }> };
  assert.deepEqual(
    nodes.items.map((n) => [n.metadata.name, n.status.addresses.find((a) => a.type === 'InternalIP')?.address, n.status.conditions.find((c) => c.type === 'Ready')?.status]),
    state.nodes.map((n) => [n.name, n.address, 'True']),
    'each node registered with its address, and Ready',
  );

  const rootNet = readlinkSync('/proc/self/ns/net');
  const rootMnt = readlinkSync('/proc/self/ns/mnt');
  const seen = { net: new Set<string>(), mnt: new Set<string>() };
  for (const node of state.nodes) {
    const inNode = (args: string[]): string => execFileSync('nsenter', ['-t', String(node.anchorPid), '-m', '-n', '-u', '--', ...args], { encoding: 'utf8', timeout: 10_000 }).trim();
    const net = readlinkSync(`/proc/${node.anchorPid}/ns/net`);
    const mnt = readlinkSync(`/proc/${node.anchorPid}/ns/mnt`);
    assert.ok(net !== rootNet && !seen.net.has(net), `${node.name} has a network namespace of its own`);
    assert.ok(mnt !== rootMnt && !seen.mnt.has(mnt), `${node.name} has a mount namespace of its own`);
    seen.net.add(net);
    seen.mnt.add(mnt);
    assert.equal(inNode(['hostname']), node.name, `${node.name}'s hostname`);
    assert.match(inNode(['ip', '-4', '-o', 'addr', 'show', 'eth0']), new RegExp(`inet ${node.address.replaceAll('.', '\\.')}/24`), `${node.name}'s address`);
    assert.equal(inNode(['sh', '-c', 'test -S /run/containerd/containerd.sock && echo socket']), 'socket', `${node.name}'s containerd at the default path`);
    for (const d of daemons.filter((x) => x.name.startsWith(`${node.name}/`))) {
      assert.equal(readlinkSync(`/proc/${d.pid}/ns/net`), net, `${d.name} runs in its node's network namespace`);
      assert.equal(readlinkSync(`/proc/${d.pid}/ns/mnt`), mnt, `${d.name} runs in its node's mount namespace`);
    }
  }
  assert.equal(existsSync('/run/containerd/containerd.sock') && readFileSync('/proc/net/unix', 'utf8').includes(' /run/containerd/containerd.sock'), false, 'no node\'s socket shows at the host\'s default path');

  const listening = listeningAddresses(pidsUnder(CGROUP_ROOT), rootNet);
  assert.ok(listening.root.length >= 5, `precondition: the control plane listens (found ${listening.root.join(', ')})`);
  assert.deepEqual([...new Set(listening.root.map((a) => a.split(':')[0]))], ['198.18.0.1'], 'in the root namespace, only the bridge address is listened on');
  const nodeAddresses = new Set(state.nodes.map((n) => n.address));
  assert.ok(listening.node.length >= 4 * NODES, `precondition: the nodes' daemons listen (found ${listening.node.join(', ')})`);
  assert.deepEqual(listening.node.filter((a) => !nodeAddresses.has(a.split(':')[0] ?? '') && !a.startsWith('127.')), [], 'inside the nodes, only a node address or loopback is listened on');
  for (const unrouted of ['198.18.128.1', '198.19.200.5', '198.18.200.9']) {
    const r = spawnSync('ip', ['route', 'get', unrouted], { encoding: 'utf8' });
    assert.notEqual(r.status, 0, `ip route get ${unrouted} must fail, not go out: ${r.stdout}`);
    assert.match(r.stderr, /unreachable|No route/i, `ip route get ${unrouted}`);
  }

  assert.equal(readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8'), rootForwarding, 'the root namespace forwards as before');
  assert.deepEqual(iptablesRules(), rootRules, 'the root namespace\'s iptables rules are untouched while up');

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
  assert.deepEqual(iptablesRules(), rootRules, 'the root namespace\'s iptables rules as before');
});

/** The root namespace's nat and filter rules (iptables-save without counters and comments). */
function iptablesRules(): string[] {
  return execFileSync('iptables-save', [], { encoding: 'utf8' }).split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.replace(/\[\d+:\d+\]/, '[0:0]'));
}

/**
 * `address:port` of every listening TCP socket the pids hold, split by where: in the root network
 * namespace, or in another (a node's). Each process's own view of /proc/net is read.
 */
function listeningAddresses(pids: readonly number[], rootNet: string): { root: string[]; node: string[] } {
  // Lists, not sets: the same address:port in two nodes' namespaces is two sockets.
  const found = { root: [] as string[], node: [] as string[] };
  for (const pid of pids) {
    try {
      const inodes = new Set<string>();
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const m = /^socket:\[(\d+)\]$/.exec(safeReadlink(`/proc/${pid}/fd/${fd}`));
        if (m?.[1] !== undefined) inodes.add(m[1]);
      }
      const where = safeReadlink(`/proc/${pid}/ns/net`) === rootNet ? found.root : found.node;
      for (const table of ['tcp', 'tcp6']) {
        for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
          const f = line.trim().split(/\s+/);
          if (f[3] === '0A' && f[9] !== undefined && inodes.has(f[9])) where.push(decodeAddress(f[1] ?? '')); // 0A: LISTEN
        }
      }
    } catch {
      // exited meanwhile
    }
  }
  return { root: found.root.sort(), node: found.node.sort() };
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
