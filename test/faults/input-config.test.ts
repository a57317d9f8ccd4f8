// Bad input at start: config values, flags, environment, config files and kubeconfigs. Each has
// its exact error line (`key: value must be rule`, naming where the value came from), and the
// built CLI exits 2 having started nothing: no log line, no listener, no request.
//
// The bulk goes through loadAgentConfig (the CLI prints its lines verbatim); a handful, and every
// kubeconfig case, run the built CLI as a user would, to pin the exit code, the stream and the
// reads the CLI does itself (the config file's size, a directory, a kubeconfig on disk). The rows
// here are the hostile and odd ones; src/config/load-agent-config.test.ts covers each rule once.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadAgentConfig } from '../../src/config/load-agent-config.ts';
import { AGENT_MAIN } from '../support/agent-process.ts';
import { runBuiltCli, type CliRun } from '../support/run-cli.ts';

const N = ['--node-name', 'n1'];
const FILE = '/etc/nodepulse/config.yaml';

function errorsOf(argv: readonly string[], env: Record<string, string> = {}, file?: string): readonly string[] {
  const result = loadAgentConfig({
    argv,
    env,
    readFile: (path) => {
      if (file === undefined || path !== FILE) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return file;
    },
  });
  assert.equal(result.ok, false, `precondition: ${JSON.stringify(argv)} must be rejected`);
  return result.ok ? [] : result.error.lines;
}

const DNS_SUBDOMAIN_RULE = "a DNS subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)";
const DURATION_RULE = 'a duration such as 500ms, 10s or 3m';

describe('bad config: values, flags, env and files, each with its exact line', () => {
  const rows: ReadonlyArray<{ what: string; argv?: readonly string[]; env?: Record<string, string>; file?: string; lines: readonly string[] }> = [
    // Files: wrong types, wrong shapes, hostile YAML.
    { what: 'a bare number for a duration', argv: [...N, '--config', FILE], file: 'relistPeriod: 5\n', lines: [`relistPeriod: 5 must be ${DURATION_RULE} (a bare number has no unit) (from config file ${FILE})`] },
    { what: 'a boolean for the node name', argv: ['--config', FILE], file: 'nodeName: true\n', lines: [`nodeName: true must be a string (from config file ${FILE})`] },
    { what: 'a list for the node name', argv: ['--config', FILE], file: 'nodeName: [a, b]\n', lines: [`nodeName: ["a","b"] must be a string (from config file ${FILE})`] },
    { what: 'a mapping for a duration', argv: [...N, '--config', FILE], file: 'relistPeriod: {a: 1}\n', lines: [`relistPeriod: {"a":1} must be ${DURATION_RULE} (from config file ${FILE})`] },
    { what: 'a key in the wrong case', argv: [...N, '--config', FILE], file: 'relistperiod: 1s\n', lines: [`relistperiod: 1s must be a known key (in config file ${FILE}; did you mean relistPeriod?)`] },
    { what: 'a YAML list', argv: [...N, '--config', FILE], file: '- a\n- b\n', lines: [`config: ${FILE} must hold a mapping of camelCase keys`] },
    { what: 'a YAML scalar', argv: [...N, '--config', FILE], file: '42\n', lines: [`config: ${FILE} must hold a mapping of camelCase keys`] },
    { what: 'binary garbage', argv: [...N, '--config', FILE], file: '\u0000\u0001\u0002\u00ff binary', lines: [`config: ${FILE} must hold a mapping of camelCase keys`] },
    {
      what: 'broken YAML, as one line',
      argv: [...N, '--config', FILE],
      file: 'relistPeriod: [1s\n',
      lines: [`config: ${FILE} must be valid YAML or JSON (Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1:)`],
    },
    {
      what: 'an alias bomb (a billion laughs)',
      argv: [...N, '--config', FILE],
      file: ['a: &a [x,x,x,x,x,x,x,x,x,x]', 'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]', 'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]', 'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]', 'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]', ''].join('\n'),
      lines: [`config: ${FILE} must be valid YAML or JSON (Excessive alias count indicates a resource exhaustion attack)`],
    },
    { what: 'a fractional byte size (JSON)', argv: [...N, '--config', FILE], file: '{"maxMessageSize": 1.5}', lines: [`maxMessageSize: 1.5 must be a byte size such as 16777216 or 16Mi (from config file ${FILE})`] },
    { what: 'a negative byte size (JSON)', argv: [...N, '--config', FILE], file: '{"maxMessageSize": -5}', lines: [`maxMessageSize: -5 must be a byte size such as 16777216 or 16Mi (from config file ${FILE})`] },
    { what: 'a number for the log level', argv: [...N, '--config', FILE], file: '{"logLevel": 3}', lines: [`logLevel: 3 must be one of fatal, error, warn, info, debug, trace, silent (from config file ${FILE})`] },
    // Flags: odd and hostile values.
    { what: 'a NUL byte in the node name', argv: ['--node-name', 'n\u00001'], lines: [`nodeName: "n\\u00001" must be ${DNS_SUBDOMAIN_RULE} (from --node-name)`] },
    { what: 'a non-ASCII node name', argv: ['--node-name', 'nöde'], lines: [`nodeName: "nöde" must be ${DNS_SUBDOMAIN_RULE} (from --node-name)`] },
    { what: 'a 300-character value, cut at 80', argv: ['--node-name', 'x'.repeat(300)], lines: [`nodeName: ${'x'.repeat(79)}… must be ${DNS_SUBDOMAIN_RULE} (from --node-name)`] },
    { what: 'a negative duration', argv: [...N, '--relist-period=-1s'], lines: [`relistPeriod: -1s must be ${DURATION_RULE} (from --relist-period)`] },
    { what: 'NaN', argv: [...N, '--relist-period', 'NaN'], lines: [`relistPeriod: NaN must be ${DURATION_RULE} (from --relist-period)`] },
    { what: 'an exponent', argv: [...N, '--relist-period', '1e3ms'], lines: [`relistPeriod: 1e3ms must be ${DURATION_RULE} (from --relist-period)`] },
    { what: 'a leading space', argv: [...N, '--relist-period', ' 1s'], lines: [`relistPeriod: " 1s" must be ${DURATION_RULE} (from --relist-period)`] },
    { what: 'a zero lease duration', argv: [...N, '--lease-duration', '0s'], lines: ['leaseDuration: 0s must be longer than 0s (from --lease-duration)'] },
    { what: 'a negative port', argv: [...N, '--http-address', '127.0.0.1:-1'], lines: ['httpAddress: 127.0.0.1:-1 must be host:port such as :9356, 0.0.0.0:9356 or [::1]:9356 (from --http-address)'] },
    { what: 'a host without a port', argv: [...N, '--http-address', '10.0.0.1'], lines: ['httpAddress: 10.0.0.1 must be host:port such as :9356, 0.0.0.0:9356 or [::1]:9356 (from --http-address)'] },
    {
      what: 'a TCP runtime endpoint',
      argv: [...N, '--cri-endpoint', 'tcp://127.0.0.1:1234'],
      lines: ['criEndpoint: tcp://127.0.0.1:1234 must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from --cri-endpoint)'],
    },
    {
      what: 'a relative socket',
      argv: [...N, '--cri-endpoint', 'unix://relative.sock'],
      lines: ['criEndpoint: unix://relative.sock must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from --cri-endpoint)'],
    },
    {
      what: 'a deadline and a period both past the threshold: every broken rule at once',
      argv: [...N, '--relist-threshold', '1s', '--relist-deadline', '2s', '--relist-period', '3s'],
      lines: ['relistDeadline: 2s must be shorter than relistThreshold (1s)', 'relistPeriod: 3s must be shorter than relistThreshold (1s)'],
    },
    { what: 'an unknown flag with a value', argv: [...N, '--bogus=1'], lines: ['flag: --bogus must be a flag of nodepulse agent'] },
    { what: 'an argument after --, which ends the flags', argv: [...N, '--', 'x'], lines: ['argument: x must be a flag (nodepulse agent takes no positional arguments)'] },
    { what: "Go's single-dash long flag", argv: ['-node-name', 'n1'], lines: ['flag: -node-name must be a flag of nodepulse agent (did you mean --node-name?)'] },
    // Environment.
    { what: 'a yes for a boolean', env: { NODE_NAME: 'n1', NODEPULSE_NODE_CONDITION: 'yes' }, lines: ['nodeCondition: yes must be true or false (from NODEPULSE_NODE_CONDITION)'] },
    {
      what: 'a message limit below 1Ki',
      env: { NODE_NAME: 'n1', NODEPULSE_MAX_MESSAGE_SIZE: '100' },
      lines: ['maxMessageSize: 100 must be between 1Ki and 2147483647 bytes (gRPC takes a 32-bit limit) (from NODEPULSE_MAX_MESSAGE_SIZE)'],
    },
    {
      what: 'a downward-API namespace that is not a DNS label',
      env: { NODE_NAME: 'n1', POD_NAMESPACE: 'Kube_System' },
      lines: ["leaseNamespace: Kube_System must be a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit) (from POD_NAMESPACE)"],
    },
    { what: 'a config file named by env that is missing', env: { NODE_NAME: 'n1', NODEPULSE_CONFIG: '/missing.yaml' }, lines: ["config: /missing.yaml must be a readable file (ENOENT: no such file or directory, open '/missing.yaml')"] },
    { what: 'a level in capitals', env: { NODE_NAME: 'n1', NODEPULSE_LOG_LEVEL: 'DEBUG' }, lines: ['logLevel: DEBUG must be one of fatal, error, warn, info, debug, trace, silent (from NODEPULSE_LOG_LEVEL)'] },
    {
      what: "crictl's endpoint as a bare path",
      env: { NODE_NAME: 'n1', CONTAINER_RUNTIME_ENDPOINT: '/run/containerd/containerd.sock' },
      lines: ['criEndpoint: /run/containerd/containerd.sock must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from CONTAINER_RUNTIME_ENDPOINT)'],
    },
  ];
  for (const row of rows) {
    test(`${row.what} → ${row.lines.join(' | ')}`, () => {
      assert.deepEqual(errorsOf(row.argv ?? [], row.env, row.file), row.lines);
    });
  }
});

function runCli(argv: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return runBuiltCli(['agent', ...argv], { env });
}

describe('bad input through the built CLI: exit 2, one line per problem on stderr, nothing started', () => {
  const dir = mkdtempSync(join(tmpdir(), 'np-input-'));
  const sock = `unix://${join(dir, 'none.sock')}`;
  const base = [...N, '--cri-endpoint', sock, '--http-address', '127.0.0.1:0'];
  const write = (name: string, text: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const kubeconfig = (cluster: string, user: string): string =>
    `current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: ${cluster}}]\nusers: [${user}]\n`;
  const big = write('big.yaml', `# ${'x'.repeat(1 << 20)}\n`);
  mkdirSync(join(dir, 'a-directory'));

  const rows: ReadonlyArray<{ what: string; argv: readonly string[]; env?: Record<string, string>; stderr: string }> = [
    { what: 'nothing set', argv: [], stderr: 'nodeName: "" must be set (--node-name or NODE_NAME)\n' },
    { what: 'a bad variable', argv: [], env: { NODE_NAME: 'n1', NODEPULSE_RELIST_PERIOD: 'soon' }, stderr: `relistPeriod: soon must be ${DURATION_RULE} (from NODEPULSE_RELIST_PERIOD)\n` },
    {
      what: 'two problems',
      argv: ['--relist-period', 'x', '--log-level', 'loud'],
      stderr: ['nodeName: "" must be set (--node-name or NODE_NAME)', `relistPeriod: x must be ${DURATION_RULE} (from --relist-period)`, 'logLevel: loud must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)', ''].join('\n'),
    },
    { what: 'a config file over 1 MiB', argv: [...base, '--config', big], stderr: `config: ${big} must be a readable file (1048579 bytes is larger than 1048576)\n` },
    { what: 'a directory as the config file', argv: [...base, '--config', join(dir, 'a-directory')], stderr: `config: ${join(dir, 'a-directory')} must be a readable file (EISDIR: illegal operation on a directory, read)\n` },
    { what: 'a cross-field rule from a file', argv: [...base, '--config', write('deadline.yaml', 'relistDeadline: 5m\n')], stderr: 'relistDeadline: 5m must be shorter than relistThreshold (1m0s)\n' },
    // Malformed kubeconfigs.
    { what: 'a missing kubeconfig', argv: [...base, '--kubeconfig', join(dir, 'nope')], stderr: `kubeconfig: ${join(dir, 'nope')} must be a readable file (ENOENT: no such file or directory, stat '${join(dir, 'nope')}')\n` },
    {
      what: 'a kubeconfig that is not YAML, as one line',
      argv: [...base, '--kubeconfig', write('kc-yaml', 'apiVersion: v1\nclusters: [\n')],
      stderr: `kubeconfig: ${join(dir, 'kc-yaml')} must be YAML (Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1:)\n`,
    },
    { what: 'random bytes', argv: [...base, '--kubeconfig', write('kc-random', Buffer.from([0x00, 0x9f, 0x92, 0x96, 0xff, 0x10]))], stderr: `kubeconfig: ${join(dir, 'kc-random')} must hold a YAML mapping\n` },
    { what: 'no current-context', argv: [...base, '--kubeconfig', write('kc-ctx', 'apiVersion: v1\nkind: Config\nclusters: []\n')], stderr: `kubeconfig: ${join(dir, 'kc-ctx')} must define a cluster and a context (it defines none)\n` },
    { what: 'a server that is not a URL', argv: [...base, '--kubeconfig', write('kc-url', kubeconfig('{server: "not a url"}', '{name: u, user: {token: t}}'))], stderr: 'kubeconfig: cluster "k" server "not a url" must be an http:// or https:// URL\n' },
    { what: 'an ftp server', argv: [...base, '--kubeconfig', write('kc-ftp', kubeconfig('{server: "ftp://x"}', '{name: u, user: {token: t}}'))], stderr: 'kubeconfig: cluster "k" server "ftp://x" must be an http:// or https:// URL\n' },
    {
      what: 'a v1 exec plugin without interactiveMode',
      argv: [...base, '--kubeconfig', write('kc-exec', kubeconfig('{server: "http://127.0.0.1:1"}', '{name: u, user: {exec: {command: /bin/sh, apiVersion: client.authentication.k8s.io/v1}}}'))],
      stderr: 'kubeconfig: user "u" exec: interactiveMode "" must be Never or IfAvailable (nodepulse has no terminal to give the plugin)\n',
    },
    { what: 'a user that is not defined', argv: [...base, '--kubeconfig', write('kc-user', kubeconfig('{server: "http://127.0.0.1:1"}', ''))], stderr: `kubeconfig: user "u" of context "c" must be defined in ${join(dir, 'kc-user')}\n` },
    {
      what: 'a CA file that is missing',
      argv: [...base, '--kubeconfig', write('kc-ca', kubeconfig('{server: "https://127.0.0.1:1", certificate-authority: /nonexistent/ca.crt}', '{name: u, user: {token: t}}'))],
      stderr: "kubeconfig: cluster \"k\" certificate-authority /nonexistent/ca.crt must be readable (ENOENT: no such file or directory, open '/nonexistent/ca.crt')\n",
    },
  ];

  test('every row: exit 2, its exact stderr, nothing on stdout', { timeout: 60_000 }, async (t) => {
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    assert.ok(AGENT_MAIN.length > 0);
    const runs = await Promise.all(rows.map((row) => runCli(row.argv, row.env)));
    rows.forEach((row, i) => {
      const run = runs[i];
      assert.ok(run !== undefined);
      assert.equal(run.code, 2, `${row.what}: exit code (stderr: ${run.stderr})`);
      assert.equal(run.stderr, row.stderr, row.what);
      assert.equal(run.stdout, '', `${row.what}: nothing started, so nothing logged`);
    });
  });
});
