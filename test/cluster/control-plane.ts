// The control plane: etcd, kube-apiserver, kube-controller-manager and kube-scheduler, each a
// daemon of the cluster's (daemon.ts) in the root network namespace, on the bridge's address.
//
// Set up as a managed cluster has it, each choice a kubeadm default unless it says otherwise:
//   - etcd over TLS with client-certificate auth, its own CA; `--unsafe-no-fsync` (not kubeadm's:
//     the cluster lives for one test run, and fsync on a shared disk only adds latency);
//   - kube-apiserver with the Node and RBAC authorizers, NodeRestriction, and the default
//     admission chain (ValidatingAdmissionPolicy is in it and GA since 1.30), API Priority and
//     Fairness on (its default), bound service-account tokens signed by sa.key with the issuer
//     https://kubernetes.default.svc.cluster.local; the `kubernetes` Service's endpoint is the
//     advertise address 198.18.0.1;
//   - kube-controller-manager with node CIDR allocation (a /24 per node from 198.19.0.0/16,
//     which the nodes' bridge plugin uses), per-controller service-account credentials, and
//     ca.crt published in each namespace's kube-root-ca.crt (projected service-account volumes
//     carry it);
//   - kube-scheduler, leader-elected as in production (one candidate, so it leads at once).
//
// up waits, each step bounded, for: etcd's /health; the API server's /readyz; the controller
// manager's and the scheduler's /healthz; then the `default` ServiceAccount and the
// kube-root-ca.crt ConfigMap in `default` (made by the controller manager), which every pod needs.
//
// Failure modes: a daemon that exits during its wait fails up at once with its log's tail; a
// wait past its bound fails with what it last saw. The caller tears down what was started.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import { apiRequest, type Credentials } from './api-request.ts';
import { startDaemon, type DaemonRecord } from './daemon.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import {
  API_PORT, API_SERVER_URL, BRIDGE_ADDRESS, CGROUP_ROOT, CLUSTER_CIDR, CONTROLLER_MANAGER_PORT, ETCD_CLIENT_PORT, ETCD_PEER_PORT,
  NODE_CIDR_MASK_SIZE, SCHEDULER_PORT, SERVICE_CIDR,
} from './layout.ts';
import type { ClusterPki } from './pki.ts';
import { waitFor } from './wait.ts';

/** etcd answers in a second or two here; a loaded CI machine gets ample margin. */
const ETCD_READY_MS = 60_000;
/** The API server's /readyz: ~10 s on an idle machine (its post-start hooks, APF bootstrap). */
const API_READY_MS = 180_000;
const COMPONENT_READY_MS = 120_000;
/** The service-account and root-CA controllers act within seconds of the controller manager leading. */
const DEFAULT_NAMESPACE_READY_MS = 120_000;

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface ControlPlane {
  readonly daemons: readonly DaemonRecord[];
  /** The admin kubeconfig (system:masters). */
  readonly adminKubeconfig: string;
  readonly adminCredentials: Credentials & { kind: 'cert' };
}

export interface ControlPlaneOptions {
  readonly dir: string;
  readonly binDir: string;
  readonly pki: ClusterPki;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** Called with each daemon as soon as it is started, so a failed start can still be torn down. */
  readonly started: (daemon: DaemonRecord) => void;
}

export const CONTROL_PLANE_CGROUP = `${CGROUP_ROOT}/control-plane`;

export async function startControlPlane(options: ControlPlaneOptions): Promise<ControlPlane> {
  const { dir, binDir, pki, clock, log } = options;
  const bin = (name: string): string => join(binDir, name);
  const logs = join(dir, 'logs');
  const p = (file: string): string => join(pki.dir, file);
  const start = (name: string, args: readonly string[]): DaemonRecord => {
    const daemon = startDaemon({ name, argv: [bin(name), ...args], cgroup: CONTROL_PLANE_CGROUP, log: join(logs, `${name}.log`) });
    options.started(daemon);
    return daemon;
  };

  const admin = pki.clientCert('admin', 'kubernetes-admin', ['system:masters']);
  const adminKubeconfig = writeKubeconfig({ path: join(dir, 'admin.kubeconfig'), server: API_SERVER_URL, caPem: pki.caPem, user: 'admin', ...admin });
  const adminCredentials = { kind: 'cert' as const, ...admin };
  const componentKubeconfig = (name: string, user: string): string => {
    const cert = pki.clientCert(name, user);
    return writeKubeconfig({ path: join(dir, `${name}.kubeconfig`), server: API_SERVER_URL, caPem: pki.caPem, user: name, ...cert });
  };

  log('starting etcd');
  const etcdUrl = `https://${BRIDGE_ADDRESS}:${ETCD_CLIENT_PORT}`;
  const peerUrl = `https://${BRIDGE_ADDRESS}:${ETCD_PEER_PORT}`;
  const etcd = start('etcd', [
    '--name=nodepulse-cluster', `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=nodepulse-cluster=${peerUrl}`,
    `--cert-file=${p('etcd-server.crt')}`, `--key-file=${p('etcd-server.key')}`, `--trusted-ca-file=${p('etcd-ca.crt')}`, '--client-cert-auth',
    `--peer-cert-file=${p('etcd-server.crt')}`, `--peer-key-file=${p('etcd-server.key')}`, `--peer-trusted-ca-file=${p('etcd-ca.crt')}`, '--peer-client-cert-auth',
    '--unsafe-no-fsync', '--log-level=warn',
  ]);
  const etcdClient: Credentials = { kind: 'cert', cert: p('apiserver-etcd-client.crt'), key: p('apiserver-etcd-client.key') };
  await waitFor('etcd answers /health', async () => {
    const a = await apiRequest({ url: `${etcdUrl}/health`, credentials: etcdClient, caPem: readFileSync(p('etcd-ca.crt'), 'utf8'), timeoutMs: 5_000 });
    return a.status === 200 && (a.json as { health?: string } | undefined)?.health === 'true' ? true : `${a.status} ${a.body.trim()}`;
  }, { clock, timeoutMs: ETCD_READY_MS, daemon: etcd });

  log('starting kube-apiserver');
  const apiserver = start('kube-apiserver', [
    `--advertise-address=${BRIDGE_ADDRESS}`, `--bind-address=${BRIDGE_ADDRESS}`, `--secure-port=${API_PORT}`,
    `--etcd-servers=${etcdUrl}`, `--etcd-cafile=${p('etcd-ca.crt')}`, `--etcd-certfile=${p('apiserver-etcd-client.crt')}`, `--etcd-keyfile=${p('apiserver-etcd-client.key')}`,
    `--tls-cert-file=${p('apiserver.crt')}`, `--tls-private-key-file=${p('apiserver.key')}`, `--client-ca-file=${pki.caCert}`,
    `--kubelet-client-certificate=${p('apiserver-kubelet-client.crt')}`, `--kubelet-client-key=${p('apiserver-kubelet-client.key')}`,
    '--kubelet-preferred-address-types=InternalIP',
    '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', '--allow-privileged=true',
    '--enable-priority-and-fairness=true',
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`, `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ]);
  await waitFor('kube-apiserver answers /readyz', async () => {
    const a = await apiRequest({ url: `${API_SERVER_URL}/readyz`, credentials: adminCredentials, caPem: pki.caPem, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${a.status} ${a.body.split('\n').filter((l) => l.startsWith('[-]')).join(' ') || a.body.trim()}`;
  }, { clock, timeoutMs: API_READY_MS, daemon: apiserver });

  // /readyz passes once the RBAC bootstrap policy is written, but the authorizer serves from an
  // informer that may not have seen it yet; a controller manager refused its first read of the
  // request-header CA exits (a kubelet would restart its static pod). So wait until the
  // authorizer itself allows that read, for both components.
  for (const user of ['system:kube-controller-manager', 'system:kube-scheduler']) {
    await waitFor(`RBAC allows ${user} to read extension-apiserver-authentication`, async () => {
      const a = await apiRequest({
        url: `${API_SERVER_URL}/apis/authorization.k8s.io/v1/subjectaccessreviews`, method: 'POST', credentials: adminCredentials, caPem: pki.caPem, timeoutMs: 5_000,
        body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, resourceAttributes: { namespace: 'kube-system', verb: 'get', resource: 'configmaps', name: 'extension-apiserver-authentication' } } },
      });
      return (a.json as { status?: { allowed?: boolean } } | undefined)?.status?.allowed === true ? true : `${a.status} ${a.body.slice(0, 200)}`;
    }, { clock, timeoutMs: COMPONENT_READY_MS, daemon: apiserver });
  }

  log('starting kube-controller-manager and kube-scheduler');
  const kcmConfig = componentKubeconfig('controller-manager', 'system:kube-controller-manager');
  const controllerManager = start('kube-controller-manager', [
    `--kubeconfig=${kcmConfig}`, `--authentication-kubeconfig=${kcmConfig}`, `--authorization-kubeconfig=${kcmConfig}`,
    `--bind-address=${BRIDGE_ADDRESS}`, `--secure-port=${CONTROLLER_MANAGER_PORT}`,
    `--client-ca-file=${pki.caCert}`, `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`,
    `--service-account-private-key-file=${pki.serviceAccountKey}`, '--use-service-account-credentials=true',
    '--allocate-node-cidrs=true', `--cluster-cidr=${CLUSTER_CIDR}`, `--node-cidr-mask-size=${NODE_CIDR_MASK_SIZE}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`, '--leader-elect=true',
  ]);
  const schedulerConfig = componentKubeconfig('scheduler', 'system:kube-scheduler');
  const scheduler = start('kube-scheduler', [
    `--kubeconfig=${schedulerConfig}`, `--authentication-kubeconfig=${schedulerConfig}`, `--authorization-kubeconfig=${schedulerConfig}`,
    `--bind-address=${BRIDGE_ADDRESS}`, `--secure-port=${SCHEDULER_PORT}`, '--leader-elect=true',
  ]);
  for (const [daemon, port] of [[controllerManager, CONTROLLER_MANAGER_PORT], [scheduler, SCHEDULER_PORT]] as const) {
    await waitFor(`${daemon.name} answers /healthz`, async () => {
      const a = await apiRequest({ url: `https://${BRIDGE_ADDRESS}:${port}/healthz`, credentials: { kind: 'anonymous' }, timeoutMs: 5_000 });
      return a.status === 200 ? true : `${a.status} ${a.body.trim()}`;
    }, { clock, timeoutMs: COMPONENT_READY_MS, daemon });
  }

  const get = async (path: string): Promise<true | string> => {
    const a = await apiRequest({ url: `${API_SERVER_URL}${path}`, credentials: adminCredentials, caPem: pki.caPem, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${path}: ${a.status}`;
  };
  await waitFor('the default ServiceAccount and kube-root-ca.crt exist', async () => {
    const sa = await get('/api/v1/namespaces/default/serviceaccounts/default');
    const ca = await get('/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
    return sa === true && ca === true ? true : [sa, ca].filter((x) => x !== true).join(', ');
  }, { clock, timeoutMs: DEFAULT_NAMESPACE_READY_MS, daemon: controllerManager });

  return { daemons: [etcd, apiserver, controllerManager, scheduler], adminKubeconfig, adminCredentials };
}
