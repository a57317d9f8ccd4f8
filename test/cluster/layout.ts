// Where the test cluster lives on this machine: its folder, its names, and every address it uses.
//
// Every address comes from 198.18.0.0/15 (RFC 2544's benchmarking block, which no real network
// routes), never from the machine's own interface:
//
// | what                                   | address                 | where                          |
// |----------------------------------------|-------------------------|--------------------------------|
// | the bridge in the root network ns      | 198.18.0.1/24           | etcd, kube-apiserver (advertise |
// |                                        |                         | and bind), controller-manager, |
// |                                        |                         | scheduler                      |
// | node i (1-based), on a veth            | 198.18.0.(10+i)/24      | its own network namespace      |
// | Services (--service-cluster-ip-range)  | 198.18.128.0/20         | `kubernetes` is 198.18.128.1   |
// | pods (--cluster-cidr, a /24 per node)  | 198.19.0.0/16           | the node's own bridge          |
//
// The whole block is also an `unreachable` route in the root namespace: an address of it that no
// more specific route names (a Service IP from the host, a pod of a node that is gone) fails at
// once instead of leaving through the default route. Nothing forwards in the root namespace.
//
// Names carry `nodepulse-cluster` (or `np-cluster` where Linux allows 15 characters), so nothing here
// collides with another user of the machine, and `down` finds what `up` made by name alone.
import { join } from 'node:path';

/** The cluster's folder (state, PKI, kubeconfigs, logs, data); NODEPULSE_CLUSTER_DIR moves it. */
export function clusterDir(): string {
  return process.env['NODEPULSE_CLUSTER_DIR'] ?? '/tmp/nodepulse-cluster';
}

export const BLOCK = '198.18.0.0/15';
export const BRIDGE = 'np-cluster0';
export const BRIDGE_ADDRESS = '198.18.0.1';
export const NODE_PREFIX_LENGTH = 24;
export const API_PORT = 6443;
export const ETCD_CLIENT_PORT = 2379;
export const ETCD_PEER_PORT = 2380;
export const CONTROLLER_MANAGER_PORT = 10257;
export const SCHEDULER_PORT = 10259;
export const SERVICE_CIDR = '198.18.128.0/20';
/** The first address of the Service range: the API server's own `kubernetes` Service. */
export const API_SERVICE_ADDRESS = '198.18.128.1';
export const CLUSTER_CIDR = '198.19.0.0/16';
export const NODE_CIDR_MASK_SIZE = 24;
export const API_SERVER_URL = `https://${BRIDGE_ADDRESS}:${API_PORT}`;
/** The cgroup (in every hierarchy) that holds every process of the cluster, and nothing else. */
export const CGROUP_ROOT = '/nodepulse-cluster';
/**
 * `up`'s arguments for the shared cluster that test/run.ts brings up for the cluster tests and
 * `npm run soak:cluster` brings up when none is: three nodes (so every test sees more than one, and
 * the rollout test has a first node and two others) and containerd's socket root:64321 0660.
 */
export const SHARED_CLUSTER_ARGS: readonly string[] = ['--nodes', '3', '--socket-gid', '64321'];
/** At most this many nodes: their addresses 198.18.0.11–.18 and veth names stay unique. */
export const MAX_NODES = 8;

/** The name of node i (1-based): `np-node-1`. */
export function nodeName(index: number): string {
  checkIndex(index);
  return `np-node-${index}`;
}

/** Node i's address on the cluster bridge. */
export function nodeAddress(index: number): string {
  checkIndex(index);
  return `198.18.0.${10 + index}`;
}

/** The host end of node i's veth (the node's end is named eth0 inside its namespace). */
export function nodeVeth(index: number): string {
  checkIndex(index);
  return `np-cluster-n${index}`;
}

/** Node i's cgroup: the kubelet's cgroupRoot, and the parent of its daemons' cgroups. */
export function nodeCgroup(index: number): string {
  checkIndex(index);
  return `${CGROUP_ROOT}/${nodeName(index)}`;
}

/** Node i's folder under the cluster's. */
export function nodeDir(dir: string, index: number): string {
  return join(dir, 'nodes', nodeName(index));
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 1 || index > MAX_NODES) throw new Error(`node index: ${index} must be an integer from 1 to ${MAX_NODES}`);
}
