// A private Kubernetes control plane for the scale measurement: etcd, kube-apiserver and
// kube-controller-manager from the test cluster's binary cache (test/cluster/build-binaries.ts),
// on 127.0.88.1 (layout.ts), started and stopped as one thing.
//
// The flags are test/cluster/control-plane.ts's (kubeadm's defaults: Node and RBAC authorizers,
// NodeRestriction and the default admission chain, API Priority and Fairness on, bound
// service-account tokens, etcd over TLS with client certificates and --unsafe-no-fsync), with
// these departures, each for the measurement:
//
// | departure                                        | why                                        |
// |--------------------------------------------------|--------------------------------------------|
// | kube-controller-manager --controllers=*,         | 5,000 Node objects with no kubelet behind  |
// |   -node-lifecycle-controller,-node-ipam-controller| them must not be tainted, evicted or given |
// |                                                  | CIDRs: work no real cluster would do       |
// | no kube-scheduler, no kubelet, no DaemonSet      | nothing here runs a pod; the agent         |
// |                                                  | DaemonSet tolerates every taint and would  |
// |                                                  | schedule 5,000 pods                        |
// | kube-apiserver --endpoint-reconciler-type=none   | a loopback advertise address is not a valid|
// |                                                  | endpoint of the `kubernetes` Service       |
// | etcd --listen-metrics-urls (plain HTTP)          | kubeadm's own default: the write rate is   |
// |                                                  | read from etcd's metrics                   |
//
// Every daemon is placed in the cgroup /np-scale before it execs (test/cluster/daemon.ts), so
// down ends all of them without trusting a pid file, and the state file records each by pid and
// start time.
//
// Failure modes: up refuses while a state file or a process in the cgroup is left from an earlier
// up (run down); a daemon that dies or is not ready within its bound fails up with its log's
// tail, after which down clears what was started.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../../src/clock/clock.ts';
import { apiRequest, type Credentials } from '../cluster/api-request.ts';
import { pidsUnder, removeCgroupTree } from '../cluster/cgroups.ts';
import { isRunning, startDaemon, stopDaemon, type DaemonRecord } from '../cluster/daemon.ts';
import { writeKubeconfig } from '../cluster/kubeconfig.ts';
import { waitFor } from '../cluster/wait.ts';
import {
  API_PORT, API_SERVER_URL, CGROUP, CONTROLLER_MANAGER_PORT, ETCD_CLIENT_PORT, ETCD_METRICS_PORT, ETCD_PEER_PORT, SCALE_ADDRESS,
  scaleDir, SERVICE_CIDR, stateFile,
} from './layout.ts';
import { createScalePki } from './scale-pki.ts';

const ETCD_READY_MS = 60_000;
const API_READY_MS = 180_000;
const COMPONENT_READY_MS = 120_000;
const STOP_GRACE_MS = 5_000;
const SWEEP_ROUNDS = 20;
const SWEEP_PAUSE_MS = 100;

/** The controllers kube-controller-manager runs here: all by default but the two above. */
export const KCM_CONTROLLERS = '*,-node-lifecycle-controller,-node-ipam-controller';

export interface ScaleState {
  readonly dir: string;
  readonly server: string;
  readonly binDir: string;
  readonly pkiDir: string;
  /** The admin kubeconfig (system:masters). */
  readonly kubeconfig: string;
  readonly caPem: string;
  readonly admin: Credentials & { kind: 'cert' };
  readonly daemons: DaemonRecord[];
}

export function readScaleState(dir = scaleDir()): ScaleState | undefined {
  const path = stateFile(dir);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as ScaleState) : undefined;
}

function writeState(state: ScaleState): void {
  writeFileSync(stateFile(state.dir), `${JSON.stringify(state, null, 2)}\n`);
}

/** The daemon of a name in the state, or a thrown error saying it is not there. */
export function daemonOf(state: ScaleState, name: string): DaemonRecord {
  const found = state.daemons.find((d) => d.name === name);
  if (found === undefined) throw new Error(`scale control plane: no ${name} in ${stateFile(state.dir)}`);
  return found;
}

export async function scaleUp(options: { readonly binDir: string; readonly clock: Clock; readonly log: (line: string) => void }): Promise<ScaleState> {
  const { binDir, clock, log } = options;
  const dir = scaleDir();
  if (existsSync(stateFile(dir)) || pidsUnder(CGROUP).length > 0) {
    throw new Error(`scale control plane: one is up or left behind (${stateFile(dir)}, cgroup ${CGROUP}); run down first`);
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const pki = createScalePki(join(dir, 'pki'), SCALE_ADDRESS);
  const p = (file: string): string => join(pki.dir, file);
  const admin = pki.clientCert('admin', 'kubernetes-admin', ['system:masters']);
  const state: ScaleState = {
    dir,
    server: API_SERVER_URL,
    binDir,
    pkiDir: pki.dir,
    kubeconfig: writeKubeconfig({ path: join(dir, 'admin.kubeconfig'), server: API_SERVER_URL, caPem: pki.caPem, user: 'admin', ...admin }),
    caPem: pki.caPem,
    admin: { kind: 'cert', ...admin },
    daemons: [],
  };
  const start = (name: string, args: readonly string[]): DaemonRecord => {
    const daemon = startDaemon({ name, argv: [join(binDir, name), ...args], cgroup: CGROUP, log: join(dir, 'logs', `${name}.log`) });
    state.daemons.push(daemon);
    writeState(state);
    return daemon;
  };
  writeState(state);

  log(`starting etcd on ${SCALE_ADDRESS}:${ETCD_CLIENT_PORT}`);
  const etcdUrl = `https://${SCALE_ADDRESS}:${ETCD_CLIENT_PORT}`;
  const peerUrl = `https://${SCALE_ADDRESS}:${ETCD_PEER_PORT}`;
  const etcd = start('etcd', [
    '--name=np-scale', `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=np-scale=${peerUrl}`,
    `--listen-metrics-urls=http://${SCALE_ADDRESS}:${ETCD_METRICS_PORT}`,
    `--cert-file=${p('etcd-server.crt')}`, `--key-file=${p('etcd-server.key')}`, `--trusted-ca-file=${p('etcd-ca.crt')}`, '--client-cert-auth',
    `--peer-cert-file=${p('etcd-server.crt')}`, `--peer-key-file=${p('etcd-server.key')}`, `--peer-trusted-ca-file=${p('etcd-ca.crt')}`, '--peer-client-cert-auth',
    '--unsafe-no-fsync', '--log-level=warn',
  ]);
  await waitFor('etcd answers /health', async () => {
    const a = await fetch(`http://${SCALE_ADDRESS}:${ETCD_METRICS_PORT}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = await a.text();
    return a.status === 200 && body.includes('"health":"true"') ? true : `${a.status} ${body.trim()}`;
  }, { clock, timeoutMs: ETCD_READY_MS, daemon: etcd });

  log(`starting kube-apiserver on ${API_SERVER_URL}`);
  const apiserver = start('kube-apiserver', [
    `--advertise-address=${SCALE_ADDRESS}`, `--bind-address=${SCALE_ADDRESS}`, `--secure-port=${API_PORT}`,
    `--etcd-servers=${etcdUrl}`, `--etcd-cafile=${p('etcd-ca.crt')}`, `--etcd-certfile=${p('apiserver-etcd-client.crt')}`, `--etcd-keyfile=${p('apiserver-etcd-client.key')}`,
    `--tls-cert-file=${p('apiserver.crt')}`, `--tls-private-key-file=${p('apiserver.key')}`, `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', '--allow-privileged=true',
    '--enable-priority-and-fairness=true', '--endpoint-reconciler-type=none',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local', `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ]);
  await waitFor('kube-apiserver answers /readyz', async () => {
    const a = await apiRequest({ url: `${API_SERVER_URL}/readyz`, credentials: state.admin, caPem: pki.caPem, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${a.status} ${a.body.split('\n').filter((l) => l.startsWith('[-]')).join(' ') || a.body.trim()}`;
  }, { clock, timeoutMs: API_READY_MS, daemon: apiserver });
  // As control-plane.ts: the authorizer may not have seen the bootstrap policy when /readyz passes.
  await waitFor('RBAC allows system:kube-controller-manager to read extension-apiserver-authentication', async () => {
    const a = await apiRequest({
      url: `${API_SERVER_URL}/apis/authorization.k8s.io/v1/subjectaccessreviews`, method: 'POST', credentials: state.admin, caPem: pki.caPem, timeoutMs: 5_000,
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:kube-controller-manager', resourceAttributes: { namespace: 'kube-system', verb: 'get', resource: 'configmaps', name: 'extension-apiserver-authentication' } } },
    });
    return (a.json as { status?: { allowed?: boolean } } | undefined)?.status?.allowed === true ? true : `${a.status} ${a.body.slice(0, 200)}`;
  }, { clock, timeoutMs: COMPONENT_READY_MS, daemon: apiserver });

  log(`starting kube-controller-manager (--controllers=${KCM_CONTROLLERS})`);
  const kcmCert = pki.clientCert('controller-manager', 'system:kube-controller-manager');
  const kcmConfig = writeKubeconfig({ path: join(dir, 'controller-manager.kubeconfig'), server: API_SERVER_URL, caPem: pki.caPem, user: 'controller-manager', ...kcmCert });
  const kcm = start('kube-controller-manager', [
    `--kubeconfig=${kcmConfig}`, `--authentication-kubeconfig=${kcmConfig}`, `--authorization-kubeconfig=${kcmConfig}`,
    `--bind-address=${SCALE_ADDRESS}`, `--secure-port=${CONTROLLER_MANAGER_PORT}`,
    `--client-ca-file=${pki.caCert}`, `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`,
    `--service-account-private-key-file=${pki.serviceAccountKey}`, '--use-service-account-credentials=true',
    `--service-cluster-ip-range=${SERVICE_CIDR}`, '--leader-elect=true',
    `--controllers=${KCM_CONTROLLERS}`,
  ]);
  await waitFor('kube-controller-manager answers /healthz', async () => {
    const a = await apiRequest({ url: `https://${SCALE_ADDRESS}:${CONTROLLER_MANAGER_PORT}/healthz`, credentials: { kind: 'anonymous' }, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${a.status} ${a.body.trim()}`;
  }, { clock, timeoutMs: COMPONENT_READY_MS, daemon: kcm });
  await waitFor('the default ServiceAccount exists', async () => {
    const a = await apiRequest({ url: `${API_SERVER_URL}/api/v1/namespaces/default/serviceaccounts/default`, credentials: state.admin, caPem: pki.caPem, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${a.status}`;
  }, { clock, timeoutMs: COMPONENT_READY_MS, daemon: kcm });
  return state;
}

/** Stops every daemon, kills whatever is left in the cgroup, removes it and the folder; returns what stayed. */
export async function scaleDown(options: { readonly clock: Clock; readonly log: (line: string) => void; readonly keepDir?: boolean }): Promise<string[]> {
  const { clock, log } = options;
  const dir = scaleDir();
  const state = readScaleState(dir);
  for (const daemon of [...(state?.daemons ?? [])].reverse()) {
    if (!isRunning(daemon)) continue;
    log(`stopping ${daemon.name} (pid ${daemon.pid})`);
    try {
      await stopDaemon(daemon, clock, STOP_GRACE_MS);
    } catch (err) {
      log((err as Error).message);
    }
  }
  for (let round = 0; round < SWEEP_ROUNDS; round++) {
    const pids = pidsUnder(CGROUP);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await clock.sleep(SWEEP_PAUSE_MS);
  }
  const left = [...pidsUnder(CGROUP).map((pid) => `pid ${pid} in cgroup ${CGROUP}`), ...removeCgroupTree(CGROUP)];
  if (options.keepDir !== true) rmSync(dir, { recursive: true, force: true });
  else rmSync(stateFile(dir), { force: true });
  return left;
}
