// A node of the test cluster: a separate machine in every way the agent can see, on this one.
//
// | what                | how                                                                          |
// |---------------------|------------------------------------------------------------------------------|
// | namespaces          | an anchor process (`unshare --net --mount --uts`, then `sleep infinity`)     |
// |                     | holds the node's network, mount and UTS namespaces; every daemon of the node |
// |                     | enters all three (daemon.ts). Its hostname is the node's name.               |
// | network             | a veth: eth0 inside with the node's address (layout.ts), the other end on    |
// |                     | the cluster bridge; default route to 198.18.0.1; IPv6 off; forwarding on     |
// | /sys                | a sysfs of the node's own network namespace, with the host's cgroup tree     |
// |                     | moved under it (the kubelet reads both)                                      |
// | /run                | a tmpfs of the node's own; /run/containerd is a bind of the node's folder    |
// |                     | run-containerd/, so the runtime's socket sits at the default path inside and |
// |                     | is reachable from the host for `ctr images import`                           |
// | containerd          | Debian's 1.6, its own root, state /run/containerd, socket                    |
// |                     | /run/containerd/containerd.sock; CNI from /usr/lib/cni with a conf_template  |
// |                     | it renders when the kubelet sends the node's pod CIDR                        |
// | kubelet             | cgroupfs driver, cgroupRoot /nodepulse-cluster/<node>, its own root dir and  |
// |                     | pod-log dir; client and serving certificates from the cluster CA             |
// | kube-proxy          | iptables mode (iptables-nft, the kernel's nf_tables), in the node's netns    |
// | routes              | once the controller manager gives the node its pod CIDR: that /24 via the    |
// |                     | node's address, in the root namespace and in every other node's              |
//
// Every daemon of the node is in the cgroup /nodepulse-cluster/<node>/… (pids hierarchy), and the
// kubelet puts every pod under /nodepulse-cluster/<node>/kubepods, so `down` ends all of it. The
// node's mounts exist only in its own mount namespace (private propagation): they go when its
// last process exits.
//
// Failure modes: a step that fails throws with the command and its output; a daemon that exits
// during a wait fails at once with its log's tail (wait.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { Clock } from '../../src/clock/clock.ts';
import { busyboxImage, TEST_IMAGE } from '../fixtures/busybox-image.ts';
import { apiRequest, type Credentials } from './api-request.ts';
import { isRunning, startDaemon, type DaemonRecord } from './daemon.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import {
  API_SERVER_URL, BRIDGE, BRIDGE_ADDRESS, CLUSTER_CIDR, NODE_PREFIX_LENGTH, nodeAddress, nodeCgroup, nodeDir, nodeName, nodeVeth,
} from './layout.ts';
import { ip } from './network.ts';
import type { ClusterPki } from './pki.ts';
import { CNI_BIN_DIR } from './requirements.ts';
import { waitFor } from './wait.ts';

/** The sandbox image: the busybox image under the name the kubelet of 1.34 expects (pause:3.10). */
export const SANDBOX_IMAGE = 'registry.k8s.io/pause:3.10';
/** Where the runtime's socket is inside a node, as on any containerd node. */
export const CONTAINERD_SOCKET = '/run/containerd/containerd.sock';
/** The folder bound at /run/containerd inside the node. */
export const RUN_CONTAINERD = 'run-containerd';

/** The anchor's setup takes milliseconds; a loaded machine gets margin. */
const ANCHOR_READY_MS = 20_000;
/** containerd serves in about a second here. */
const CONTAINERD_READY_MS = 60_000;
/** Registration, the pod CIDR, the CNI config and the first Ready status: ~10-20 s here. */
const NODE_READY_MS = 180_000;
const IMPORT_TIMEOUT_MS = 300_000;

export interface NodeHandle {
  readonly index: number;
  readonly name: string;
  readonly address: string;
  readonly dir: string;
  readonly anchor: DaemonRecord;
  readonly containerd: DaemonRecord;
  readonly kubelet: DaemonRecord;
  readonly kubeProxy: DaemonRecord;
  /** The runtime's socket as the host reaches it. */
  readonly hostSocket: string;
}

export interface NodeOptions {
  readonly index: number;
  readonly clusterDir: string;
  readonly binDir: string;
  readonly pki: ClusterPki;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  readonly started: (daemon: DaemonRecord) => void;
  /** containerd's `[grpc] gid`: the socket root:<gid> 0660 instead of root:root. */
  readonly socketGid?: number;
}

/** Starts node `index` up to a Ready Node object; routes are the caller's (routePodCidrs). */
export async function startNode(options: NodeOptions): Promise<NodeHandle> {
  const { index, pki, clock, log } = options;
  const name = nodeName(index);
  const address = nodeAddress(index);
  const dir = nodeDir(options.clusterDir, index);
  const cgroup = nodeCgroup(index);
  const logs = join(options.clusterDir, 'logs');
  const path = (...parts: string[]): string => join(dir, ...parts);
  for (const sub of [RUN_CONTAINERD, 'containerd', 'kubelet', 'pod-logs', 'cni/conf', 'cni/ipam', '.cgroup-hold']) mkdirSync(path(sub), { recursive: true });

  log(`${name}: namespaces and network (${address})`);
  const anchor = startDaemon({
    name: `${name}/anchor`,
    argv: ['unshare', '--net', '--mount', '--uts', '--propagation', 'private', '--', 'sh', '-c', anchorScript(name, dir), 'sh'],
    cgroup: `${cgroup}/anchor`,
    log: join(logs, `${name}-anchor.log`),
  });
  options.started(anchor);
  await waitFor(`${name}: the anchor holds its namespaces`, () => {
    const exe = safeReadlink(`/proc/${anchor.pid}/exe`);
    return exe.endsWith('/sleep') ? true : `exe ${exe}`;
  }, { clock, timeoutMs: ANCHOR_READY_MS, daemon: anchor });

  const veth = nodeVeth(index);
  ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', String(anchor.pid)]);
  writeFileSync(`/proc/sys/net/ipv6/conf/${veth}/disable_ipv6`, '1');
  ip(['link', 'set', veth, 'master', BRIDGE, 'up']);
  ip(['addr', 'add', `${address}/${NODE_PREFIX_LENGTH}`, 'dev', 'eth0'], anchor.pid);
  ip(['link', 'set', 'eth0', 'up'], anchor.pid);
  ip(['route', 'add', 'default', 'via', BRIDGE_ADDRESS], anchor.pid);

  const start = (component: string, argv: readonly string[]): DaemonRecord => {
    const daemon = startDaemon({ name: `${name}/${component}`, argv, cgroup: `${cgroup}/${component}`, log: join(logs, `${name}-${component}.log`), anchorPid: anchor.pid });
    options.started(daemon);
    return daemon;
  };

  log(`${name}: containerd`);
  writeFileSync(path('cni', 'template.json'), cniTemplate(path('cni', 'ipam')));
  writeContainerdConfig(dir, { ...(options.socketGid === undefined ? {} : { socketGid: options.socketGid }), address: CONTAINERD_SOCKET });
  const containerd = start('containerd', ['containerd', '--config', path('containerd', 'config.toml'), '--log-level', 'warn']);
  const hostSocket = path(RUN_CONTAINERD, 'containerd.sock');
  const ctr = (args: readonly string[], timeoutMs = 10_000): string =>
    execFileSync('ctr', ['-a', hostSocket, '-n', 'k8s.io', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
  await waitFor(`${name}: containerd answers`, () => {
    ctr(['version']);
    return true;
  }, { clock, timeoutMs: CONTAINERD_READY_MS, daemon: containerd });
  ctr(['images', 'import', busyboxImage({ tags: [TEST_IMAGE, SANDBOX_IMAGE] })], IMPORT_TIMEOUT_MS);

  log(`${name}: kubelet and kube-proxy`);
  const kubeletClient = pki.clientCert(`kubelet-${name}`, `system:node:${name}`, ['system:nodes']);
  const kubeletServing = pki.servingCert(`kubelet-${name}-serving`, name, [`IP:${address}`, `DNS:${name}`]);
  writeKubeconfig({ path: path('kubelet.kubeconfig'), server: API_SERVER_URL, caPem: pki.caPem, user: `node-${name}`, ...kubeletClient });
  writeFileSync(path('kubelet-config.yaml'), stringify(kubeletConfig({ dir, name, address, cgroup, caFile: pki.caCert, serving: kubeletServing })));
  const kubelet = start('kubelet', [
    join(options.binDir, 'kubelet'), `--config=${path('kubelet-config.yaml')}`, `--kubeconfig=${path('kubelet.kubeconfig')}`,
    `--root-dir=${path('kubelet')}`, `--cert-dir=${path('kubelet', 'pki')}`, `--hostname-override=${name}`, `--node-ip=${address}`,
  ]);
  const proxyClient = pki.clientCert(`kube-proxy-${name}`, 'system:kube-proxy');
  writeKubeconfig({ path: path('kube-proxy.kubeconfig'), server: API_SERVER_URL, caPem: pki.caPem, user: `kube-proxy-${name}`, ...proxyClient });
  writeFileSync(path('kube-proxy-config.yaml'), stringify(kubeProxyConfig({ dir, name, address })));
  const kubeProxy = start('kube-proxy', [join(options.binDir, 'kube-proxy'), `--config=${path('kube-proxy-config.yaml')}`]);

  return { index, name, address, dir, anchor, containerd, kubelet, kubeProxy, hostSocket };
}

/** Waits until the Node is Ready as its kubelet reports it; returns its pod CIDR. */
export async function waitNodeReady(node: NodeHandle, admin: Credentials, caPem: string, clock: Clock): Promise<string> {
  let podCidr = '';
  await waitFor(`${node.name}: the Node is Ready`, async () => {
    for (const d of [node.containerd, node.kubeProxy]) if (!isRunning(d)) return `${d.name} exited`;
    const a = await apiRequest({ url: `${API_SERVER_URL}/api/v1/nodes/${node.name}`, credentials: admin, caPem, timeoutMs: 5_000 });
    if (a.status !== 200) return `GET node: ${a.status}`;
    const n = a.json as { spec?: { podCIDR?: string }; status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> } };
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    podCidr = n.spec?.podCIDR ?? '';
    if (podCidr === '') return 'no pod CIDR yet';
    return ready?.status === 'True' ? true : `Ready=${ready?.status ?? 'none'} ${ready?.reason ?? ''}: ${ready?.message ?? ''}`;
  }, { clock, timeoutMs: NODE_READY_MS, daemon: node.kubelet });
  return podCidr;
}

/** Each node's pod CIDR routed via its address: in the root namespace and in every other node. */
export function routePodCidrs(nodes: ReadonlyArray<{ index: number; anchorPid: number; podCidr: string }>): void {
  for (const target of nodes) {
    const via = nodeAddress(target.index);
    ip(['route', 'replace', target.podCidr, 'via', via]);
    for (const other of nodes) {
      if (other.index !== target.index) ip(['route', 'replace', target.podCidr, 'via', via], other.anchorPid);
    }
  }
}

/**
 * The anchor's script: UTS name, the node's own sysfs with the host's cgroup tree under it, a
 * private /run with /run/containerd bound to the node's folder, loopback up, IPv6 off, forwarding
 * on; then it sleeps, holding the namespaces. Paths are the cluster's own (no spaces).
 */
function anchorScript(name: string, dir: string): string {
  const hold = join(dir, '.cgroup-hold');
  return [
    'set -eu',
    `hostname ${name}`,
    `mount --rbind /sys/fs/cgroup ${hold}`,
    'mount -t sysfs sysfs /sys',
    `mount --move ${hold} /sys/fs/cgroup`,
    `mount -t tmpfs -o mode=0755,size=64m nodepulse-cluster-${name}-run /run`,
    'mkdir -p /run/containerd',
    `mount --bind ${join(dir, RUN_CONTAINERD)} /run/containerd`,
    'ip link set lo up',
    'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6',
    'echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6',
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
    'echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables',
    'exec sleep infinity',
  ].join('\n');
}

/** Writes the node's containerd config.toml: its socket at `address` (a path inside the node, under /run/containerd). */
export function writeContainerdConfig(dir: string, o: { socketGid?: number; address: string }): void {
  writeFileSync(join(dir, 'containerd', 'config.toml'), containerdConfig(dir, o.socketGid, o.address));
}

function containerdConfig(dir: string, socketGid: number | undefined, address: string): string {
  const q = (s: string): string => JSON.stringify(s);
  return [
    'version = 2',
    `root = ${q(join(dir, 'containerd', 'root'))}`,
    'state = "/run/containerd"',
    '',
    '[grpc]',
    `  address = ${q(address)}`,
    ...(socketGid === undefined ? [] : [`  gid = ${socketGid}`]),
    '',
    '[plugins."io.containerd.grpc.v1.cri"]',
    `  sandbox_image = ${q(SANDBOX_IMAGE)}`,
    '  restrict_oom_score_adj = true',
    '',
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '  runtime_type = "io.containerd.runc.v2"',
    '',
    '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    '  SystemdCgroup = false',
    '',
    '[plugins."io.containerd.grpc.v1.cri".cni]',
    `  bin_dir = ${q(CNI_BIN_DIR)}`,
    `  conf_dir = ${q(join(dir, 'cni', 'conf'))}`,
    `  conf_template = ${q(join(dir, 'cni', 'template.json'))}`,
    '',
  ].join('\n');
}

/** containerd renders this (Go template) into conf_dir once the kubelet sends the pod CIDR. */
function cniTemplate(ipamDir: string): string {
  return `${JSON.stringify({
    cniVersion: '1.0.0',
    name: 'nodepulse-cluster',
    plugins: [{
      type: 'bridge',
      bridge: 'cni0',
      isGateway: true,
      ipMasq: false,
      hairpinMode: true,
      ipam: { type: 'host-local', ranges: [[{ subnet: '{{.PodCIDR}}' }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: ipamDir },
    }],
  }, null, 2)}\n`;
}

function kubeletConfig(o: { dir: string; name: string; address: string; cgroup: string; caFile: string; serving: { cert: string; key: string } }): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: o.address,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    tlsCertFile: o.serving.cert,
    tlsPrivateKeyFile: o.serving.key,
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: o.caFile } },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${CONTAINERD_SOCKET}`,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: o.cgroup,
    cgroupsPerQOS: true,
    failCgroupV1: false,
    podLogsDir: join(o.dir, 'pod-logs'),
    // No cluster DNS here (no CoreDNS), and no resolv.conf handed to pods: a pod's lookup goes nowhere.
    clusterDomain: 'cluster.local',
    resolvConf: '',
    // This machine withholds CAP_SYS_RESOURCE: a process may not lower its oom_score_adj.
    oomScoreAdj: 0,
    rotateCertificates: false,
    serverTLSBootstrap: false,
    registerNode: true,
  };
}

function kubeProxyConfig(o: { dir: string; name: string; address: string }): Record<string, unknown> {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: join(o.dir, 'kube-proxy.kubeconfig') },
    mode: 'iptables',
    clusterCIDR: CLUSTER_CIDR,
    hostnameOverride: o.name,
    healthzBindAddress: `${o.address}:10256`,
    metricsBindAddress: '127.0.0.1:10249',
    // As the kubelet: oom_score_adj may not be lowered here.
    oomScoreAdj: 0,
    // Leave the conntrack table's size and timeouts as they are: nf_conntrack_max is one value for
    // the whole machine, not the node's to change.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
  };
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}
