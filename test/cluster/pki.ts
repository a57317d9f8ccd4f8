// The test cluster's PKI, made fresh by every `up`, as kubeadm lays one out: a cluster CA that
// signs every serving and client certificate of the control plane and the nodes, an etcd CA of
// its own, and the key pair that signs service-account tokens.
//
// Made with Debian's openssl command-line tool, not Node's crypto: Node can make key pairs but
// cannot issue an X.509 certificate, and writing a DER encoder of our own would be more code to
// trust than the tool every cluster guide uses. openssl 3 copies the request's extensions
// (subjectAltName, extendedKeyUsage) into the certificate with `-copy_extensions copy`.
//
// | file (under pki/)                  | subject                                   | for                              |
// |------------------------------------|-------------------------------------------|----------------------------------|
// | ca.crt / ca.key                    | nodepulse-cluster-ca                      | signs the rest; --client-ca-file |
// | apiserver.crt                      | kube-apiserver, SANs: bridge + Service IP | the API server's serving cert    |
// | apiserver-kubelet-client.crt       | O=system:masters                          | API server → kubelet (logs)      |
// | etcd-ca.crt / etcd-ca.key          | nodepulse-cluster-etcd-ca                 | etcd's client and peer CA        |
// | etcd-server.crt                    | etcd, SAN 198.18.0.1                      | etcd's serving and peer cert     |
// | apiserver-etcd-client.crt          | kube-apiserver-etcd-client                | API server → etcd                |
// | sa.key / sa.pub                    | RSA 2048                                  | service-account token signing    |
// | <user>.crt, from clientCert()      | CN = user, O = each group                 | kubeconfigs (admin, components,  |
// |                                    |                                           | each kubelet, kube-proxy)        |
// | <name>.crt, from servingCert()     | CN = the node, SANs: its name and address | each kubelet's serving cert      |
//
// Keys are EC P-256 (fast to make: the whole PKI takes well under a second), except the
// service-account key, RSA as kubeadm makes it. Everything is valid for VALID_DAYS and lives
// only as long as the cluster's folder.
//
// Failure modes: openssl missing or failing throws with the command and its stderr.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_SERVICE_ADDRESS, BRIDGE_ADDRESS } from './layout.ts';

/** Longer than any test run; a cluster is made fresh by every `up`. */
const VALID_DAYS = '30';
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export interface ClusterPki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly etcdCaCert: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
  /** The PEM of ca.crt, for kubeconfigs and clients. */
  readonly caPem: string;
  /** Writes `<name>.crt`/`<name>.key`, a client certificate of the cluster CA; returns their paths. */
  clientCert(name: string, user: string, groups?: readonly string[]): { cert: string; key: string };
  /** Writes `<name>.crt`/`<name>.key`, a serving certificate of the cluster CA for `sans` (`IP:…`, `DNS:…`). */
  servingCert(name: string, cn: string, sans: readonly string[]): { cert: string; key: string };
}

/**
 * Makes the PKI in `dir` (created). `address` is the control plane's: the API server's and etcd's
 * certificates name it (the bridge's by default; a private control plane on loopback passes its own).
 */
export function createClusterPki(dir: string, address: string = BRIDGE_ADDRESS): ClusterPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = (file: string): string => join(dir, file);
  makeCa(dir, 'ca', 'nodepulse-cluster-ca');
  makeCa(dir, 'etcd-ca', 'nodepulse-cluster-etcd-ca');

  const apiSans = [
    'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local',
    `IP:${address}`, `IP:${API_SERVICE_ADDRESS}`,
  ];
  issue(dir, { name: 'apiserver', ca: 'ca', subject: '/CN=kube-apiserver', usage: 'serverAuth', sans: apiSans });
  issue(dir, { name: 'apiserver-kubelet-client', ca: 'ca', subject: '/O=system:masters/CN=kube-apiserver-kubelet-client', usage: 'clientAuth' });
  issue(dir, { name: 'etcd-server', ca: 'etcd-ca', subject: '/CN=etcd', usage: 'serverAuth,clientAuth', sans: [`IP:${address}`] });
  issue(dir, { name: 'apiserver-etcd-client', ca: 'etcd-ca', subject: '/CN=kube-apiserver-etcd-client', usage: 'clientAuth' });
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key'], dir);
  openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);

  return {
    dir,
    caCert: path('ca.crt'),
    caKey: path('ca.key'),
    etcdCaCert: path('etcd-ca.crt'),
    serviceAccountKey: path('sa.key'),
    serviceAccountPub: path('sa.pub'),
    caPem: readFileSync(path('ca.crt'), 'utf8'),
    clientCert(name, user, groups = []) {
      const subject = [...groups.map((g) => `/O=${escapeRdn(g)}`), `/CN=${escapeRdn(user)}`].join('');
      issue(dir, { name, ca: 'ca', subject, usage: 'clientAuth' });
      return { cert: path(`${name}.crt`), key: path(`${name}.key`) };
    },
    servingCert(name, cn, sans) {
      issue(dir, { name, ca: 'ca', subject: `/CN=${escapeRdn(cn)}`, usage: 'serverAuth', sans });
      return { cert: path(`${name}.crt`), key: path(`${name}.key`) };
    },
  };
}

export function makeCa(dir: string, name: string, cn: string): void {
  openssl(['req', '-x509', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', VALID_DAYS, '-subj', `/CN=${cn}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'], dir);
}

export interface Leaf {
  readonly name: string;
  readonly ca: string;
  readonly subject: string;
  readonly usage: string;
  readonly sans?: readonly string[];
}

export function issue(dir: string, leaf: Leaf): void {
  const extensions = ['-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment', '-addext', `extendedKeyUsage=${leaf.usage}`];
  if (leaf.sans !== undefined) extensions.push('-addext', `subjectAltName=${leaf.sans.join(',')}`);
  openssl(['req', ...EC_KEY, '-keyout', `${leaf.name}.key`, '-out', `${leaf.name}.csr`, '-subj', leaf.subject, ...extensions], dir);
  openssl(['x509', '-req', '-in', `${leaf.name}.csr`, '-CA', `${leaf.ca}.crt`, '-CAkey', `${leaf.ca}.key`, '-CAcreateserial',
    '-days', VALID_DAYS, '-copy_extensions', 'copy', '-out', `${leaf.name}.crt`], dir);
}

export function openssl(args: readonly string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim() ?? '';
    throw new Error(`openssl ${args.slice(0, 2).join(' ')} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

/** openssl's -subj syntax: `/` and `=` and `+` inside a value are escaped with a backslash. */
export function escapeRdn(value: string): string {
  return value.replace(/[\\/=+]/g, (c) => `\\${c}`);
}
