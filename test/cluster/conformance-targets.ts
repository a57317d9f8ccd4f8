// The two servers the conformance table runs against, behind one interface: the real API server
// of the test cluster, and the API stand-in (src/stand-ins/api-server/), started here over HTTPS.
//
// | what the table needs     | the real API server                          | the stand-in                                  |
// |--------------------------|----------------------------------------------|-----------------------------------------------|
// | the admin                | the cluster's admin client certificate       | a client certificate of its own CA, CN        |
// |                          | (CN kubernetes-admin, system:masters)        | kubernetes-admin, allowed everything          |
// | a user RBAC refuses      | a ServiceAccount `nobody` in the run's        | a bearer token of the same user name, which   |
// |                          | namespace, no bindings, a TokenRequest token | no rule allows                                |
// | a token nobody knows     | any string: 401                              | any string: 401                               |
// | the run's namespace      | created, deleted at the end                  | every namespace exists                        |
// | a Node, once created     | waited for until the controllers that act on | nothing to wait for: it runs no controllers   |
// |                          | every new Node are done (settle(), below)    |                                               |
// | the agent DaemonSet      | waited for until its controller has written  | its status written as that controller writes  |
// |                          | its status                                   | it, for the same DaemonSet (settle())         |
//
// Both are reached the same two ways: the product's own KubeClient (its request core, timeouts
// and error mapping; only the credentials are made here, through its KubeAuth seam), which the
// rows send the product's requests through; and a one-request helper (api-request.ts) for a
// row's setup. After each row, sweep() deletes what it left in the namespace.
//
// Failure modes: a setup step that fails is a failed precondition, with what it saw.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SystemClock } from '../../src/clock/clock.ts';
import type { KubeAuth } from '../../src/kube/auth/kube-auth.ts';
import { KubeClient } from '../../src/kube/kube-client.ts';
import { type ApiServerHandle, startApiServer } from '../../src/stand-ins/api-server/api-server.ts';
import { createTestPki } from '../../src/stand-ins/api-server/test-pki.ts';
import { apiRequest, type ApiAnswer, type Credentials } from './api-request.ts';
import type { SharedCluster } from './shared-cluster.ts';
import { waitFor } from './wait.ts';

/** Who sends a request: the admin, a user RBAC refuses, or a token no authenticator knows. */
export type Caller = 'admin' | 'nobody' | 'stranger';

export interface TableRequest {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** From the root, e.g. /api/v1/nodes/x; the query separately. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly contentType?: string;
  readonly as?: Caller;
  /** A watch is read to its end (timeoutSeconds): give it that long and more. */
  readonly timeoutMs?: number;
}

export interface Target {
  /** `kube-apiserver v1.34.4` or `stand-in`. */
  readonly name: string;
  readonly real: boolean;
  /** One request, answered as is (for a row's setup, and for what the product's client hides). */
  send(req: TableRequest): Promise<ApiAnswer>;
  /** The product's own API client, as `as`: the rows send the product's requests through it. */
  client(as?: Caller): KubeClient;
  /** Deletes what a row left in the run's namespace (leases, pods, DaemonSets), so the next starts empty. */
  sweep(): Promise<void>;
  /** Waits until what the server's own controllers do to a new object is done (see the header). */
  settle(kind: 'node' | 'daemonset', path: string): Promise<void>;
  close(): Promise<void>;
}

/** The account RBAC refuses, in the run's namespace. */
export const NOBODY = 'nobody';
const STRANGER_TOKEN = 'a-token-no-authenticator-knows';
const ADMIN_USER = 'kubernetes-admin';
/** A new Node on the real server is changed within a second or two by the controller manager. */
const SETTLE_MS = 60_000;

function url(server: string, req: TableRequest): string {
  const u = new URL(server + req.path);
  for (const [k, v] of Object.entries(req.query ?? {})) u.searchParams.set(k, v);
  return u.toString();
}

/** The real API server of the shared cluster; creates the run's namespace and the `nobody` account. */
export async function realTarget(cluster: SharedCluster, namespace: string): Promise<Target> {
  const created = await cluster.request('/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  assert.equal(created.status, 201, `precondition: namespace ${namespace} must be created: ${created.body}`);
  const account = await cluster.request(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
    method: 'POST', body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NOBODY } },
  });
  assert.equal(account.status, 201, `precondition: ServiceAccount ${namespace}/${NOBODY} must be created: ${account.body}`);
  const token = await cluster.request(`/api/v1/namespaces/${namespace}/serviceaccounts/${NOBODY}/token`, {
    method: 'POST', body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  assert.equal(token.status, 201, `precondition: a token of ${namespace}/${NOBODY} must be issued: ${token.body}`);
  const callers: Record<Caller, Credentials> = {
    admin: cluster.admin,
    nobody: { kind: 'token', token: (token.json as { status: { token: string } }).status.token },
    stranger: { kind: 'token', token: STRANGER_TOKEN },
  };
  const clock = new SystemClock();
  const clients = productClients(cluster.state.server, cluster.state.caPem, callers);
  const send = (req: TableRequest): Promise<ApiAnswer> => apiRequest({
    url: url(cluster.state.server, req),
    method: req.method ?? 'GET',
    credentials: callers[req.as ?? 'admin'],
    caPem: cluster.state.caPem,
    ...(req.body === undefined ? {} : { body: req.body }),
    ...(req.contentType === undefined ? {} : { contentType: req.contentType }),
    ...(req.timeoutMs === undefined ? {} : { timeoutMs: req.timeoutMs }),
  });
  return {
    name: `kube-apiserver ${cluster.state.versions.kubernetes}`,
    real: true,
    send,
    client: (as = 'admin') => clients[as],
    sweep: () => sweepNamespace(send, namespace),
    async settle(kind, path) {
      await waitFor(`${path} settles`, async () => {
        const a = await send({ path });
        if (a.status !== 200) return `${a.status} ${a.body.slice(0, 200)}`;
        return kind === 'node' ? nodeSettled(a.json as SettlingNode) : daemonSetSettled(a.json as SettlingDaemonSet);
      }, { clock, timeoutMs: SETTLE_MS, intervalMs: 100 });
    },
    async close() {
      for (const c of Object.values(clients)) c.close();
      await cluster.request(`/api/v1/namespaces/${namespace}`, { method: 'DELETE' });
    },
  };
}

/** The namespaced kinds the rows make; everything of them in the namespace is deleted. */
const SWEPT = [
  '/apis/coordination.k8s.io/v1/namespaces/{ns}/leases',
  '/api/v1/namespaces/{ns}/pods',
  '/apis/apps/v1/namespaces/{ns}/daemonsets',
];

async function sweepNamespace(send: (req: TableRequest) => Promise<ApiAnswer>, namespace: string): Promise<void> {
  for (const template of SWEPT) {
    const path = template.replace('{ns}', namespace);
    const list = await send({ path });
    assert.equal(list.status, 200, `sweeping ${path}: ${list.body}`);
    for (const item of (list.json as { items: Array<{ metadata: { name: string } }> }).items) {
      const gone = await send({ method: 'DELETE', path: `${path}/${item.metadata.name}`, query: { gracePeriodSeconds: '0' } });
      assert.ok(gone.status === 200 || gone.status === 202 || gone.status === 404, `deleting ${path}/${item.metadata.name}: ${gone.status} ${gone.body}`);
    }
  }
}

interface SettlingNode {
  readonly metadata: { readonly annotations?: Record<string, string> };
  readonly spec?: { readonly podCIDR?: string; readonly taints?: ReadonlyArray<{ key: string }> };
}

/**
 * A new Node is settled once the controller manager has done its three writes: the node IPAM
 * controller's podCIDR, the TTL controller's annotation, and the node lifecycle controller's
 * removal of the not-ready taint the TaintNodesByCondition admission plugin put on at create.
 */
function nodeSettled(node: SettlingNode): true | string {
  const missing: string[] = [];
  if (node.spec?.podCIDR === undefined) missing.push('no podCIDR yet');
  if (node.metadata.annotations?.['node.alpha.kubernetes.io/ttl'] === undefined) missing.push('no ttl annotation yet');
  if (node.spec?.taints?.some((t) => t.key === 'node.kubernetes.io/not-ready') === true) missing.push('still tainted not-ready');
  return missing.length === 0 ? true : missing.join(', ');
}

interface SettlingDaemonSet {
  readonly metadata: { readonly generation?: number };
  readonly status?: { readonly observedGeneration?: number };
}

function daemonSetSettled(ds: SettlingDaemonSet): true | string {
  const observed = ds.status?.observedGeneration;
  return observed !== undefined && observed === ds.metadata.generation ? true : `observedGeneration ${String(observed)}, generation ${String(ds.metadata.generation)}`;
}

/**
 * The stand-in, over HTTPS on loopback. Its history is 100 events, the real watch cache's
 * smallest capacity, so the table's "a version the server no longer keeps" takes as few writes
 * on both.
 */
export async function standInTarget(namespace: string): Promise<Target & { readonly server: ApiServerHandle }> {
  const pki = createTestPki();
  const dir = mkdtempSync(join(tmpdir(), 'np-conformance-'));
  const nobodyToken = 'nobody-token';
  const server: ApiServerHandle = await startApiServer({
    clock: new SystemClock(),
    tls: { ...pki.server, clientCa: pki.ca },
    tokens: { [nobodyToken]: `system:serviceaccount:${namespace}:${NOBODY}` },
    rules: [{ user: ADMIN_USER, verbs: ['*'], resources: ['*'] }],
    historySize: 100,
  });
  const admin = pki.clientCertificate(ADMIN_USER, ['system:masters']);
  writeFileSync(join(dir, 'admin.crt'), admin.cert);
  writeFileSync(join(dir, 'admin.key'), admin.key, { mode: 0o600 });
  const callers: Record<Caller, Credentials> = {
    admin: { kind: 'cert', cert: join(dir, 'admin.crt'), key: join(dir, 'admin.key') },
    nobody: { kind: 'token', token: nobodyToken },
    stranger: { kind: 'token', token: STRANGER_TOKEN },
  };
  const clients = productClients(server.url, pki.ca, callers);
  const send = (req: TableRequest): Promise<ApiAnswer> => apiRequest({
    url: url(server.url, req),
    method: req.method ?? 'GET',
    credentials: callers[req.as ?? 'admin'],
    caPem: pki.ca,
    ...(req.body === undefined ? {} : { body: req.body }),
    ...(req.contentType === undefined ? {} : { contentType: req.contentType }),
    ...(req.timeoutMs === undefined ? {} : { timeoutMs: req.timeoutMs }),
  });
  return {
    name: 'stand-in',
    real: false,
    send,
    client: (as = 'admin') => clients[as],
    sweep: () => sweepNamespace(send, namespace),
    server,
    async settle(kind, path) {
      if (kind === 'node') return;
      // The DaemonSet controller is not simulated: write what it writes for a DaemonSet whose
      // selector matches no Node (every count 0, the generation observed).
      const ds = await send({ path });
      assert.equal(ds.status, 200, `precondition: ${path} must exist: ${ds.body}`);
      const generation = (ds.json as SettlingDaemonSet).metadata.generation ?? 0;
      const status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0, observedGeneration: generation };
      const written = await send({ method: 'PATCH', path: `${path}/status`, contentType: 'application/merge-patch+json', body: { status } });
      assert.equal(written.status, 200, `precondition: ${path}/status must be written: ${written.body}`);
    },
    async close() {
      for (const c of Object.values(clients)) c.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The product's KubeClient for each caller, with credentials made here (a client certificate,
 * or a bearer token) through the client's KubeAuth seam; the request core, timeouts and error
 * mapping are the product's own.
 */
function productClients(server: string, caPem: string, callers: Record<Caller, Credentials>): Record<Caller, KubeClient> {
  const clock = new SystemClock();
  const make = (credentials: Credentials): KubeClient => {
    const tls = credentials.kind === 'cert' ? { cert: readFileSync(credentials.cert), key: readFileSync(credentials.key) } : {};
    const agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: caPem, ...tls });
    const headers: Record<string, string> = credentials.kind === 'token' ? { authorization: `Bearer ${credentials.token}` } : {};
    const auth: KubeAuth = {
      server,
      source: `conformance table, ${credentials.kind}`,
      prepare: () => Promise.resolve({ agent, headers }),
      unauthorized: () => Promise.resolve(undefined),
      close: () => agent.destroy(),
    };
    return new KubeClient({ clock, auth });
  };
  return { admin: make(callers.admin), nobody: make(callers.nobody), stranger: make(callers.stranger) };
}
