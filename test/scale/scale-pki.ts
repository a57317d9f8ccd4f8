// The scale control plane's PKI, made fresh by every `up` with Debian's openssl (Node's crypto
// makes keys but issues no certificates), laid out as kubeadm lays one out, for one address.
//
// test/cluster/pki.ts makes the same kind of PKI for the shared cluster's fixed address; this one
// takes the address, so the serving certificates of a loopback control plane name it.
//
// | file (under pki/)              | subject / SANs                         | for                           |
// |--------------------------------|----------------------------------------|-------------------------------|
// | ca.crt / ca.key                | np-scale-ca                            | signs the rest; client CA     |
// | apiserver.crt                  | kube-apiserver; the address, kubernetes| the API server's serving cert |
// | etcd-ca.crt, etcd-server.crt   | etcd; the address                      | etcd's own CA and serving cert|
// | apiserver-etcd-client.crt      | kube-apiserver-etcd-client             | API server → etcd             |
// | sa.key / sa.pub                | RSA 2048                               | service-account token signing |
// | <name>.crt from clientCert()   | CN = user, O = each group              | kubeconfigs and kubelets      |
//
// Keys are EC P-256 (fast), the service-account key RSA as kubeadm makes it.
//
// Failure modes: openssl missing or failing throws with the command and its stderr.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { escapeRdn, issue, makeCa, openssl } from '../cluster/pki.ts';

export interface ScalePki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly caPem: string;
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
  /** Writes `<name>.crt`/`<name>.key`, a client certificate of the cluster CA; returns their paths. */
  clientCert(name: string, user: string, groups?: readonly string[]): { cert: string; key: string };
}

/** Makes the PKI in `dir` for a control plane serving on `address`. */
export function createScalePki(dir: string, address: string): ScalePki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = (file: string): string => join(dir, file);
  makeCa(dir, 'ca', 'np-scale-ca');
  makeCa(dir, 'etcd-ca', 'np-scale-etcd-ca');
  const apiSans = ['DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster.local', `IP:${address}`];
  issue(dir, { name: 'apiserver', ca: 'ca', subject: '/CN=kube-apiserver', usage: 'serverAuth', sans: apiSans });
  issue(dir, { name: 'etcd-server', ca: 'etcd-ca', subject: '/CN=etcd', usage: 'serverAuth,clientAuth', sans: [`IP:${address}`] });
  issue(dir, { name: 'apiserver-etcd-client', ca: 'etcd-ca', subject: '/CN=kube-apiserver-etcd-client', usage: 'clientAuth' });
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key'], dir);
  openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return {
    dir,
    caCert: path('ca.crt'),
    caKey: path('ca.key'),
    caPem: readFileSync(path('ca.crt'), 'utf8'),
    serviceAccountKey: path('sa.key'),
    serviceAccountPub: path('sa.pub'),
    clientCert(name, user, groups = []) {
      const subject = [...groups.map((g) => `/O=${escapeRdn(g)}`), `/CN=${escapeRdn(user)}`].join('');
      issue(dir, { name, ca: 'ca', subject, usage: 'clientAuth' });
      return { cert: path(`${name}.crt`), key: path(`${name}.key`) };
    },
  };
}

