// Where the scale measurement's control plane lives: a private one, on a loopback address of its
// own, so that 5,000 Node objects and thousands of lease writes never touch the shared test
// cluster (198.18.0.0/15, test/cluster/layout.ts) or anything else on the machine.
//
// | what                          | where                                   |
// |-------------------------------|-----------------------------------------|
// | every daemon                  | 127.0.88.1 (loopback: 127.0.0.0/8 is lo)|
// | etcd client / peer / metrics  | 28379 / 28380 / 28381 (plain HTTP)      |
// | kube-apiserver                | 28443                                   |
// | kube-controller-manager       | 28257                                   |
// | the folder (PKI, data, logs)  | /tmp/np-scale (NODEPULSE_SCALE_DIR)     |
// | the cgroup (pids hierarchy)   | /np-scale                               |
//
// No scheduler and no kubelet: nothing here runs a pod. Pods made here only carry the agents'
// bound service-account tokens.
import { join } from 'node:path';

export const SCALE_ADDRESS = '127.0.88.1';
export const API_PORT = 28443;
export const ETCD_CLIENT_PORT = 28379;
export const ETCD_PEER_PORT = 28380;
export const ETCD_METRICS_PORT = 28381;
export const CONTROLLER_MANAGER_PORT = 28257;
export const API_SERVER_URL = `https://${SCALE_ADDRESS}:${API_PORT}`;
export const ETCD_METRICS_URL = `http://${SCALE_ADDRESS}:${ETCD_METRICS_PORT}/metrics`;
/** Only stored in Services; nothing routes it (no kube-proxy). */
export const SERVICE_CIDR = '198.18.128.0/20';
export const CGROUP = '/np-scale';

/** The folder of everything the control plane writes. */
export function scaleDir(): string {
  return process.env['NODEPULSE_SCALE_DIR'] ?? '/tmp/np-scale';
}

export function stateFile(dir = scaleDir()): string {
  return join(dir, 'state.json');
}
