// A throw-away certificate authority for the API stand-in: a CA, a serving certificate for
// loopback, and client certificates on demand, made with the openssl command-line tool (Node's
// crypto can verify X.509 but cannot issue it).
//
// Why: the exec plugin, client certificates and CA files only matter over HTTPS (client-go
// applies a kubeconfig's credentials only to a TLS server), so the stand-in must speak TLS for
// the tests that exercise them, and real kubectl must trust it.
//
// What each certificate carries, as kubeadm's do:
// - the CA: basicConstraints CA:TRUE, keyUsage keyCertSign;
// - the server: subjectAltName for 127.0.0.1, ::1 and localhost (Go checks SANs only, never the
//   CN), extendedKeyUsage serverAuth;
// - a client: CN = user name, one O per group (the API server's x509 authenticator reads them
//   so), extendedKeyUsage clientAuth.
// Keys are ECDSA P-256 (fast to make); everything is valid for two days from now.
//
// Failure modes: openssl missing or failing throws an Error naming the command and its stderr.
// Keys exist on disk only for the moment openssl needs them, in a private temporary folder.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  /** PEM. */
  readonly cert: string;
  /** PEM (PKCS#8). */
  readonly key: string;
}

export interface TestPki {
  /** The CA certificate, PEM: what a kubeconfig's certificate-authority-data holds (base64). */
  readonly ca: string;
  /** The serving certificate for loopback, signed by the CA. */
  readonly server: KeyPair;
  /** A client certificate for `user` (CN) in `groups` (O), signed by the CA. */
  clientCertificate(user: string, groups?: readonly string[]): KeyPair;
}

const VALID_DAYS = '2';
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: readonly string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = String((err as { stderr?: Buffer }).stderr ?? '').trim();
    throw new Error(`openssl ${args[0] ?? ''} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
}

/** One subject component per value, escaped for openssl's -subj syntax. */
function subject(parts: ReadonlyArray<readonly [string, string]>): string {
  return parts.map(([k, v]) => `/${k}=${v.replace(/[/\\=+]/g, (c) => `\\${c}`)}`).join('');
}

/** Makes a CA and a loopback serving certificate. */
export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-pki-'));
  try {
    openssl(['req', '-x509', ...EC_KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', VALID_DAYS, '-subj', '/CN=nodepulse-stand-in-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
    const ca = { cert: readFileSync(join(dir, 'ca.crt'), 'utf8'), key: readFileSync(join(dir, 'ca.key'), 'utf8') };
    const server = issue(ca, subject([['CN', 'kube-apiserver']]), [
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost',
      'extendedKeyUsage=serverAuth',
    ]);
    return {
      ca: ca.cert,
      server,
      clientCertificate: (user, groups = []) =>
        issue(ca, subject([...groups.map((g) => ['O', g] as const), ['CN', user]]), ['extendedKeyUsage=clientAuth']),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function issue(ca: KeyPair, subj: string, extensions: readonly string[]): KeyPair {
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-pki-'));
  try {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key, { mode: 0o600 });
    writeFileSync(join(dir, 'ext.cnf'), ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature', ...extensions, ''].join('\n'));
    openssl(['req', ...EC_KEY, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', subj], dir);
    openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', `0x${randomBytes(8).toString('hex')}`,
      '-days', VALID_DAYS, '-extfile', 'ext.cnf', '-out', 'leaf.crt'], dir);
    return { cert: readFileSync(join(dir, 'leaf.crt'), 'utf8'), key: readFileSync(join(dir, 'leaf.key'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
