// A private control plane on loopback, for working on the conformance table without the shared
// test cluster: etcd, kube-apiserver and kube-controller-manager from the cluster's binary cache,
// set up as test/cluster/control-plane.ts sets them up (the Node and RBAC authorizers,
// NodeRestriction and the default admission chain with ValidatingAdmissionPolicy, API Priority
// and Fairness, bound service-account tokens), on 127.0.77.1 and ports of its own, in
// /tmp/np-conformance. A development tool only: no test and no CI run uses it.
//
//   node test/conformance/private-control-plane.ts up     # last line: NODEPULSE_CLUSTER_DIR=/tmp/np-conformance
//   NODEPULSE_CLUSTER_DIR=/tmp/np-conformance node --test test/cluster/conformance.test.ts
//   node test/conformance/private-control-plane.ts down
//
// It writes a state.json in the shared cluster's shape, so `sharedCluster(t)` hands it out when
// NODEPULSE_CLUSTER_DIR points at its folder.
//
// Where it departs from control-plane.ts, and why:
//   - loopback addresses, so nothing of the shared cluster's bridge or addresses is touched;
//   - `--endpoint-reconciler-type=none`: the `kubernetes` Service's endpoint would be the
//     advertise address, and Endpoints may not hold a loopback address;
//   - no scheduler: the conformance table binds nothing;
//   - `--etcd-compaction-interval` is given on the command line (COMPACTION), so a run can also
//     see what the server answers once etcd has compacted.
//
// Every process is recorded by pid in state.json; `down` ends those pids and removes the folder.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SystemClock } from '../../src/clock/clock.ts';
import { apiRequest, type Credentials } from '../cluster/api-request.ts';
import { buildBinaries } from '../cluster/build-binaries.ts';
import { readState, writeState, type ClusterState } from '../cluster/cluster.ts';
import { SERVICE_ACCOUNT_ISSUER } from '../cluster/control-plane.ts';
import { stopDaemon, type DaemonRecord } from '../cluster/daemon.ts';
import { writeKubeconfig } from '../cluster/kubeconfig.ts';
import { CLUSTER_CIDR, NODE_CIDR_MASK_SIZE, SERVICE_CIDR } from '../cluster/layout.ts';
import { createClusterPki } from '../cluster/pki.ts';
import { waitFor } from '../cluster/wait.ts';

const DIR = '/tmp/np-conformance';
const ADDRESS = '127.0.77.1';
const ETCD_CLIENT_PORT = 23791;
const ETCD_PEER_PORT = 23801;
const API_PORT = 26443;
const CONTROLLER_MANAGER_PORT = 20257;
const COMPACTION = process.env['NP_CONFORMANCE_COMPACTION'] ?? '5m';

const clock = new SystemClock();

function start(name: string, argv: readonly string[], logs: string): DaemonRecord {
  const log = join(logs, `${name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(argv[0] ?? '', argv.slice(1), { detached: true, stdio: ['ignore', fd, fd] });
    child.unref();
    if (child.pid === undefined) throw new Error(`${name}: did not start`);
    return { name, pid: child.pid, startTicks: 0, argv, cgroup: '', log };
  } finally {
    closeSync(fd);
  }
}

async function up(): Promise<void> {
  if (existsSync(DIR)) throw new Error(`${DIR} exists: run down first`);
  const binaries = await buildBinaries({ clock });
  const logs = join(DIR, 'logs');
  mkdirSync(logs, { recursive: true });
  const pki = createClusterPki(join(DIR, 'pki'), ADDRESS);
  const p = (file: string): string => join(pki.dir, file);
  const server = `https://${ADDRESS}:${API_PORT}`;
  const admin = pki.clientCert('admin', 'kubernetes-admin', ['system:masters']);
  const kubeconfig = writeKubeconfig({ path: join(DIR, 'admin.kubeconfig'), server, caPem: pki.caPem, user: 'admin', ...admin });
  const state: ClusterState = {
    dir: DIR, server, kubeconfig, binDir: binaries.dir, versions: binaries.versions, pkiDir: pki.dir, caPem: pki.caPem, daemons: [], nodes: [],
  };
  const bin = (name: string): string => join(binaries.dir, name);
  const etcdUrl = `https://${ADDRESS}:${ETCD_CLIENT_PORT}`;
  const peerUrl = `https://${ADDRESS}:${ETCD_PEER_PORT}`;
  const etcd = start('etcd', [
    bin('etcd'), '--name=np-conformance', `--data-dir=${join(DIR, 'etcd')}`,
    `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=np-conformance=${peerUrl}`,
    `--cert-file=${p('etcd-server.crt')}`, `--key-file=${p('etcd-server.key')}`, `--trusted-ca-file=${p('etcd-ca.crt')}`, '--client-cert-auth',
    `--peer-cert-file=${p('etcd-server.crt')}`, `--peer-key-file=${p('etcd-server.key')}`, `--peer-trusted-ca-file=${p('etcd-ca.crt')}`, '--peer-client-cert-auth',
    '--unsafe-no-fsync', '--log-level=warn',
  ], logs);
  state.daemons.push(etcd);
  writeState(state);
  const apiserver = start('kube-apiserver', [
    bin('kube-apiserver'),
    `--advertise-address=${ADDRESS}`, `--bind-address=${ADDRESS}`, `--secure-port=${API_PORT}`,
    `--etcd-servers=${etcdUrl}`, `--etcd-cafile=${p('etcd-ca.crt')}`, `--etcd-certfile=${p('apiserver-etcd-client.crt')}`, `--etcd-keyfile=${p('apiserver-etcd-client.key')}`,
    `--etcd-compaction-interval=${COMPACTION}`,
    `--tls-cert-file=${p('apiserver.crt')}`, `--tls-private-key-file=${p('apiserver.key')}`, `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', '--allow-privileged=true',
    '--enable-priority-and-fairness=true', '--endpoint-reconciler-type=none',
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`, `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ], logs);
  state.daemons.push(apiserver);
  writeState(state);
  const adminCredentials: Credentials = { kind: 'cert', ...admin };
  await waitFor('kube-apiserver answers /readyz', async () => {
    const a = await apiRequest({ url: `${server}/readyz`, credentials: adminCredentials, caPem: pki.caPem, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${a.status}`;
  }, { clock, timeoutMs: 180_000, daemon: apiserver });
  const kcm = pki.clientCert('controller-manager', 'system:kube-controller-manager');
  const kcmConfig = writeKubeconfig({ path: join(DIR, 'controller-manager.kubeconfig'), server, caPem: pki.caPem, user: 'controller-manager', ...kcm });
  await waitFor('RBAC allows the controller manager to read extension-apiserver-authentication', async () => {
    const a = await apiRequest({
      url: `${server}/apis/authorization.k8s.io/v1/subjectaccessreviews`, method: 'POST', credentials: adminCredentials, caPem: pki.caPem, timeoutMs: 5_000,
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: 'system:kube-controller-manager', resourceAttributes: { namespace: 'kube-system', verb: 'get', resource: 'configmaps', name: 'extension-apiserver-authentication' } } },
    });
    return (a.json as { status?: { allowed?: boolean } } | undefined)?.status?.allowed === true ? true : `${a.status}`;
  }, { clock, timeoutMs: 120_000, daemon: apiserver });
  const controllerManager = start('kube-controller-manager', [
    bin('kube-controller-manager'),
    `--kubeconfig=${kcmConfig}`, `--authentication-kubeconfig=${kcmConfig}`, `--authorization-kubeconfig=${kcmConfig}`,
    `--bind-address=${ADDRESS}`, `--secure-port=${CONTROLLER_MANAGER_PORT}`,
    `--client-ca-file=${pki.caCert}`, `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`,
    `--service-account-private-key-file=${pki.serviceAccountKey}`, '--use-service-account-credentials=true',
    '--allocate-node-cidrs=true', `--cluster-cidr=${CLUSTER_CIDR}`, `--node-cidr-mask-size=${NODE_CIDR_MASK_SIZE}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`, '--leader-elect=true',
  ], logs);
  state.daemons.push(controllerManager);
  writeState(state);
  await waitFor('kube-controller-manager answers /healthz', async () => {
    const a = await apiRequest({ url: `https://${ADDRESS}:${CONTROLLER_MANAGER_PORT}/healthz`, credentials: { kind: 'anonymous' }, timeoutMs: 5_000 });
    return a.status === 200 ? true : `${a.status}`;
  }, { clock, timeoutMs: 120_000, daemon: controllerManager });
  process.stdout.write(`NODEPULSE_CLUSTER_DIR=${DIR}\n`);
}

async function down(): Promise<void> {
  const state = readState(DIR);
  for (const daemon of [...(state?.daemons ?? [])].reverse()) await stopDaemon(daemon, clock, 5_000);
  rmSync(DIR, { recursive: true, force: true });
}

const command = process.argv[2];
if (command === 'up') await up();
else if (command === 'down') await down();
else {
  process.stderr.write('usage: node test/conformance/private-control-plane.ts up|down\n');
  process.exitCode = 2;
}
