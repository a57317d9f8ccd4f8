import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { ZodError } from 'zod/v3';
import { backoffMs, retryDelayMs } from '../lease/backoff.ts';
import { RENEW_JITTER } from '../lease/node-lease.ts';
import { jittered } from '../loop/run-loop.ts';
import { AGENT_CONFIG_KEYS, AGENT_CONFIG_SPECS } from './agent-config-keys.ts';
import type { AgentConfig } from './agent-config-schema.ts';
import { loadAgentConfig, type LoadAgentConfigInput } from './load-agent-config.ts';
import { printableConfig } from './printable-config.ts';

const noFile = (path: string): string => {
  throw new Error(`ENOENT: no such file or directory, open '${path}'`);
};

function load(argv: readonly string[], env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const input: LoadAgentConfigInput = {
    argv,
    env,
    readFile: (path) => files[path] ?? noFile(path),
  };
  return loadAgentConfig(input);
}

function errorsOf(argv: readonly string[], env: Record<string, string> = {}, files: Record<string, string> = {}): readonly string[] {
  const result = load(argv, env, files);
  assert.equal(result.ok, false, `precondition: ${JSON.stringify(argv)} must be rejected`);
  return result.ok ? [] : result.error.lines;
}

function configOf(argv: readonly string[], env: Record<string, string> = {}, files: Record<string, string> = {}) {
  const result = load(argv, env, files);
  if (!result.ok) assert.fail(`expected a valid config, got:\n${result.error.lines.join('\n')}`);
  return result;
}

const N = ['--node-name', 'node-a'];

describe('loadAgentConfig: every rule has its exact error line', () => {
  const table: ReadonlyArray<{ argv: readonly string[]; env?: Record<string, string>; line: string }> = [
    // Required and single-key rules.
    { argv: [], line: 'nodeName: "" must be set (--node-name or NODE_NAME)' },
    { argv: ['--node-name='], line: 'nodeName: "" must be set (--node-name or NODE_NAME) (from --node-name)' },
    {
      argv: ['--node-name', 'Node_1'],
      line: "nodeName: Node_1 must be a DNS subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit) (from --node-name)",
    },
    {
      argv: [...N, '--cri-endpoint', '/run/containerd/containerd.sock'],
      line: 'criEndpoint: /run/containerd/containerd.sock must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from --cri-endpoint)',
    },
    {
      argv: [...N, '--cri-endpoint', `unix:///${'d'.repeat(120)}`],
      line: `criEndpoint: unix:///${'d'.repeat(71)}… must be a socket path of at most 107 bytes (the kernel's sun_path limit) (from --cri-endpoint)`,
    },
    { argv: [...N, '--kubeconfig='], line: 'kubeconfig: "" must be a file path (from --kubeconfig)' },
    {
      argv: [...N, '--lease-namespace', 'kube-node-lease'],
      line: 'leaseNamespace: kube-node-lease must be a namespace other than kube-node-lease (the kubelet owns the leases there) (from --lease-namespace)',
    },
    {
      argv: [...N, '--lease-namespace', 'a.b'],
      line: "leaseNamespace: a.b must be a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit) (from --lease-namespace)",
    },
    {
      argv: [...N, '--relist-period', 'fast'],
      line: 'relistPeriod: fast must be a duration such as 500ms, 10s or 3m (from --relist-period)',
    },
    { argv: [...N, '--relist-period', '0'], line: 'relistPeriod: 0 must be longer than 0s (from --relist-period)' },
    { argv: [...N, '--relist-period', '1500us'], line: 'relistPeriod: 1500us must be a whole number of milliseconds (from --relist-period)' },
    { argv: [...N, '--relist-threshold', '25h'], line: 'relistThreshold: 25h must be at most 24h0m0s (from --relist-threshold)' },
    // Two rules of one key broken at once: the line names the first (form before range).
    { argv: [...N, '--relist-threshold', '25h0m0.5ms'], line: 'relistThreshold: 25h0m0.5ms must be a whole number of milliseconds (from --relist-threshold)' },
    {
      argv: [...N, '--cri-endpoint', `tcp://${'d'.repeat(120)}`],
      line: `criEndpoint: tcp://${'d'.repeat(73)}… must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from --cri-endpoint)`,
    },
    {
      argv: [...N, '--lease-duration', '1500ms'],
      line: 'leaseDuration: 1500ms must be a whole number of seconds (leaseDurationSeconds is an integer) (from --lease-duration)',
    },
    {
      argv: [...N, '--max-message-size', '16MB'],
      line: 'maxMessageSize: 16MB must be a byte size such as 16777216 or 16Mi (from --max-message-size)',
    },
    {
      argv: [...N, '--max-message-size', '2Gi'],
      line: 'maxMessageSize: 2Gi must be between 1Ki and 2147483647 bytes (gRPC takes a 32-bit limit) (from --max-message-size)',
    },
    {
      argv: [...N, '--http-address', '::1:9356'],
      line: 'httpAddress: ::1:9356 must be host:port such as :9356, 0.0.0.0:9356 or [::1]:9356 (from --http-address)',
    },
    { argv: [...N, '--http-address', 'localhost:99999'], line: 'httpAddress: localhost:99999 must be host:port such as :9356, 0.0.0.0:9356 or [::1]:9356 (from --http-address)' },
    { argv: [...N, '--node-condition=maybe'], line: 'nodeCondition: maybe must be true or false (from --node-condition)' },
    { argv: [...N, '--log-level', 'verbose'], line: 'logLevel: verbose must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)' },
    { argv: [...N, '--lease-namespace='], line: 'leaseNamespace: "" must be set (--lease-namespace or POD_NAMESPACE) (from --lease-namespace)' },
    { argv: [...N, '--lease-duration', '0'], line: 'leaseDuration: 0 must be longer than 0s (from --lease-duration)' },
    { argv: [...N, '--condition-refresh', '24h0m0.001s'], line: 'conditionRefresh: 24h0m0.001s must be at most 24h0m0s (from --condition-refresh)' },
    {
      argv: [...N, '--max-message-size', '1023'],
      line: 'maxMessageSize: 1023 must be between 1Ki and 2147483647 bytes (gRPC takes a 32-bit limit) (from --max-message-size)',
    },
    {
      argv: [...N, '--max-message-size', '2147483648'],
      line: 'maxMessageSize: 2147483648 must be between 1Ki and 2147483647 bytes (gRPC takes a 32-bit limit) (from --max-message-size)',
    },
    // Cross-field rules.
    { argv: [...N, '--relist-deadline', '5m'], line: 'relistDeadline: 5m must be shorter than relistThreshold (1m0s)' },
    { argv: [...N, '--relist-deadline', '1m'], line: 'relistDeadline: 1m must be shorter than relistThreshold (1m0s)' },
    {
      argv: [...N, '--relist-period', '20s', '--relist-threshold', '20s', '--relist-deadline', '10s'],
      line: 'relistPeriod: 20s must be shorter than relistThreshold (20s)',
    },
    { argv: [...N, '--stuck-window', '20s'], line: 'stuckWindow: 20s must be longer than relistDeadline (20s)' },
    { argv: [...N, '--relist-period', '30s', '--idle-window', '30s'], line: 'idleWindow: 30s must be longer than relistPeriod (30s)' },
    { argv: [...N, '--renew-interval', '40s', '--idle-window', '50s'], line: 'renewInterval: 40s must be shorter than leaseDuration (40s)' },
    {
      argv: [...N, '--renew-interval', '29s'],
      line: 'renewInterval: 29s must be shorter than idleWindow (30s) with 4% jitter added, or the lease loop reads as stalled between renewals',
    },
    {
      argv: [...N, '--lease-duration', '2m'],
      line: 'renewInterval: 30s (leaseDuration × 0.25) must be shorter than idleWindow (30s) with 4% jitter added, or the lease loop reads as stalled between renewals',
    },
    { argv: [...N, '--lease-recheck', '30s'], line: 'leaseRecheck: 30s must be shorter than idleWindow (30s)' },
    { argv: [...N, '--status-period', '30s'], line: 'statusPeriod: 30s must be shorter than idleWindow (30s)' },
    { argv: [...N, '--status-deadline', '90s'], line: 'statusDeadline: 90s must be shorter than stuckWindow (50s (relistDeadline + 30s))' },
    { argv: [...N, '--api-timeout', '41s'], line: 'apiTimeout: 41s must be no longer than leaseDuration (40s)' },
    {
      argv: [...N, '--renew-interval', '28847ms'],
      line: 'renewInterval: 28847ms must be shorter than idleWindow (30s) with 4% jitter added, or the lease loop reads as stalled between renewals',
    },
    { argv: [...N, '--stuck-window', '1m1s', '--status-deadline', '1m1s'], line: 'statusDeadline: 1m1s must be shorter than stuckWindow (1m1s)' },
    {
      argv: [...N, '--idle-window', '7s', '--renew-interval', '5s'],
      line: "idleWindow: 7s must be longer than 7s, the Node condition loop's longest backoff after a failed write (or nodeCondition false)",
    },
    {
      argv: [...N, '--api-timeout', '2m', '--lease-duration', '3m', '--renew-interval', '10s'],
      line: 'apiTimeout: 2m must be shorter than stuckWindow (50s (relistDeadline + 30s))',
    },
    // Flags themselves.
    { argv: [...N, '--relist-deadlin', '5m'], line: 'flag: --relist-deadlin must be a flag of nodepulse agent (did you mean --relist-deadline?)' },
    { argv: [...N, 'extra'], line: 'argument: extra must be a flag (nodepulse agent takes no positional arguments)' },
    { argv: [...N, '--relist-period'], line: 'flag: --relist-period must be followed by a value' },
    { argv: [...N, '--print-config=yes'], line: 'printConfig: yes must be true or false (from --print-config)' },
    { argv: [...N, '-relist-deadline', '5m'], line: 'flag: -relist-deadline must be a flag of nodepulse agent (did you mean --relist-deadline?)' },
    { argv: [...N, '--config='], line: 'config: "" must be a file path (from --config)' },
    { argv: [...N, '--config', '/etc/nodepulse/missing.yaml'], line: "config: /etc/nodepulse/missing.yaml must be a readable file (ENOENT: no such file or directory, open '/etc/nodepulse/missing.yaml')" },
    // Env is named as the source.
    { argv: [], env: { NODE_NAME: 'x', NODEPULSE_RELIST_PERIOD: 'soon' }, line: 'relistPeriod: soon must be a duration such as 500ms, 10s or 3m (from NODEPULSE_RELIST_PERIOD)' },
  ];
  for (const row of table) {
    it(`${JSON.stringify(row.argv)}${row.env === undefined ? '' : ` with ${JSON.stringify(row.env)}`} → ${row.line}`, () => {
      assert.deepEqual(errorsOf(row.argv, row.env), [row.line]);
    });
  }

  it('reports one line per problem, every one of them', () => {
    assert.deepEqual(errorsOf(['--relist-period', 'x', '--log-level', 'loud']), [
      'nodeName: "" must be set (--node-name or NODE_NAME)',
      'relistPeriod: x must be a duration such as 500ms, 10s or 3m (from --relist-period)',
      'logLevel: loud must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)',
    ]);
  });

  it('reports every broken cross-field rule at once', () => {
    assert.deepEqual(errorsOf([...N, '--relist-deadline', '5m', '--idle-window', '1s']), [
      'relistDeadline: 5m must be shorter than relistThreshold (1m0s)',
      'idleWindow: 1s must be longer than relistPeriod (1s)',
      'renewInterval: 10s (leaseDuration × 0.25) must be shorter than idleWindow (1s) with 4% jitter added, or the lease loop reads as stalled between renewals',
      'leaseRecheck: 1s must be shorter than idleWindow (1s)',
      'statusPeriod: 5s must be shorter than idleWindow (1s)',
      "idleWindow: 1s must be longer than 7s, the Node condition loop's longest backoff after a failed write (or nodeCondition false)",
    ]);
  });

  it('runs the cross-field rules only once every single key is valid: one typo, one line', () => {
    assert.deepEqual(errorsOf([...N, '--relist-deadline', '5m', '--log-level', 'loud']), [
      'logLevel: loud must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)',
    ]);
  });

  it('a value from the file of the wrong type: its exact line', () => {
    const file = '/etc/nodepulse/config.yaml';
    const rows: ReadonlyArray<{ yaml: string; line: string }> = [
      { yaml: 'criEndpoint: 5\n', line: 'criEndpoint: 5 must be a string' },
      { yaml: 'kubeconfig: [a]\n', line: 'kubeconfig: ["a"] must be a string' },
      { yaml: 'leaseNamespace: ""\n', line: 'leaseNamespace: "" must be set (--lease-namespace or POD_NAMESPACE)' },
      { yaml: 'httpAddress: 9356\n', line: 'httpAddress: 9356 must be a string' },
      { yaml: 'relistPeriod: null\n', line: 'relistPeriod: null must be a duration such as 500ms, 10s or 3m' },
      { yaml: 'maxMessageSize: true\n', line: 'maxMessageSize: true must be a byte size such as 16777216 or 16Mi' },
      { yaml: 'nodeCondition: 1\n', line: 'nodeCondition: 1 must be true or false' },
    ];
    for (const row of rows) {
      assert.deepEqual(errorsOf([...N, '--config', file], {}, { [file]: row.yaml }), [`${row.line} (from config file ${file})`], row.yaml);
    }
  });

  it('a rejected value carries the ZodError as its cause; a rejected argv has none to carry', () => {
    const bad = load([...N, '--relist-deadline', '5m']);
    assert.ok(!bad.ok && bad.error.cause instanceof ZodError, 'a cross-field rule: the cause is a ZodError');
    assert.deepEqual(bad.error.cause.issues.map((i) => [i.path.join('.'), i.message]), [['relistDeadline', 'shorter than relistThreshold (1m0s)']]);
    const typo = load([...N, '--relist-period', 'soon']);
    assert.ok(!typo.ok && typo.error.cause instanceof ZodError, 'a single key: the cause is a ZodError');
    assert.equal(typo.error.code, 'config_invalid');
    assert.equal(typo.error.message, typo.error.lines.join('\n'));
    const file = load([...N, '--config', '/c.yaml'], {}, { '/c.yaml': 'colour: blue\n' });
    assert.ok(!file.ok && file.error.cause instanceof ZodError, "the file's shape: the cause is a ZodError");
    const argv = load([...N, '--colour']);
    assert.ok(!argv.ok && argv.error.cause === undefined, 'the grammar is not zod: no cause');
  });

  it("no zod message of its own reaches a line: every key, fed every kind of wrong value from a file, reads 'must be' and a rule", () => {
    const file = '/c.yaml';
    const wrong: readonly unknown[] = [7, -1.5, true, null, [], ['a'], {}, { a: 1 }, '', ' ', 'x'];
    let lines = 0;
    for (const key of AGENT_CONFIG_KEYS) {
      for (const value of wrong) {
        const result = load(key === 'nodeName' ? ['--config', file] : [...N, '--config', file], {}, { [file]: stringify({ [key]: value }) });
        if (result.ok) continue;
        for (const line of result.error.lines) {
          lines++;
          assert.match(line, new RegExp(`^${key}: .+ must be [a-z0-9(]`), `${key} = ${JSON.stringify(value)}`);
          assert.doesNotMatch(line, /Expected|Required|Invalid|received/, `${key} = ${JSON.stringify(value)}: zod's default wording`);
        }
      }
    }
    assert.ok(lines > AGENT_CONFIG_KEYS.length * 5, `precondition: most wrong values are rejected (${lines} lines)`);
  });

  it('accepts the edges of every range', () => {
    assert.equal(configOf([...N, '--startup-grace', '0']).config.startupGraceMs, 0, 'startupGrace may be 0');
    assert.equal(configOf([...N, '--startup-grace', '0s']).config.startupGraceMs, 0);
    assert.equal(configOf([...N, '--condition-refresh', '24h']).config.conditionRefreshMs, 86_400_000, 'at most 24h');
    assert.equal(configOf([...N, '--relist-period', '0.5s']).config.relistPeriodMs, 500);
    assert.equal(configOf([...N, '--max-message-size', '1Ki']).config.maxMessageSizeBytes, 1024);
    assert.equal(configOf([...N, '--max-message-size', '2147483647']).config.maxMessageSizeBytes, 2_147_483_647);
    assert.equal(configOf([...N, '--renew-interval', '28846ms']).config.renewIntervalMs, 28_846, '28846 × 1.04 < 30000');
    assert.equal(configOf([...N, '--stuck-window', '20.001s']).config.stuckWindowMs, 20_001, 'one ms past relistDeadline');
  });

  it("reads a boolean as Go's strconv.ParseBool does, and nothing else", () => {
    for (const text of ['1', 't', 'T', 'TRUE', 'true', 'True']) assert.equal(configOf([...N, `--node-condition=${text}`]).config.nodeCondition, true, text);
    for (const text of ['0', 'f', 'F', 'FALSE', 'false', 'False']) assert.equal(configOf([...N, `--node-condition=${text}`]).config.nodeCondition, false, text);
    assert.deepEqual(errorsOf([...N, '--node-condition=tRUE']), ['nodeCondition: tRUE must be true or false (from --node-condition)']);
  });

  it('the defaults alone, with a node name, pass every rule', () => {
    const { config } = configOf(N);
    assert.deepEqual(config, {
      nodeName: 'node-a',
      criEndpoint: undefined,
      kubeconfig: undefined,
      leaseNamespace: 'nodepulse',
      leaseDurationMs: 40_000,
      renewIntervalMs: 10_000,
      leaseRecheckMs: 1_000,
      relistPeriodMs: 1_000,
      relistThresholdMs: 60_000,
      relistDeadlineMs: 20_000,
      idleWindowMs: 30_000,
      stuckWindowMs: 50_000,
      maxMessageSizeBytes: 16_777_216,
      statusPeriodMs: 5_000,
      statusDeadlineMs: 10_000,
      apiTimeoutMs: 10_000,
      conditionRefreshMs: 300_000,
      nodeCondition: true,
      httpAddress: ':9356',
      httpHost: undefined,
      httpPort: 9356,
      startupGraceMs: 30_000,
      logLevel: 'info',
    });
  });

  it("the end-to-end test's short timings are valid, and derive renewInterval and stuckWindow", () => {
    const { config } = configOf([...N, '--relist-threshold', '5s', '--relist-deadline', '2s', '--lease-duration', '4s', '--renew-interval', '1s', '--api-timeout', '2s']);
    assert.equal(config.renewIntervalMs, 1_000);
    assert.equal(config.stuckWindowMs, 32_000);
    assert.equal(configOf([...N, '--lease-duration', '4s', '--api-timeout', '4s']).config.renewIntervalMs, 1_000);
  });
});

describe('loadAgentConfig: the idle window is longer than the longest wait any loop can choose', () => {
  /**
   * What each loop of the agent can choose to wait between two ticks, taken from the loops' own
   * code: a loop that waits as long as it chose must never read as Stalled.
   */
  function loopWaits(c: AgentConfig): Array<[string, number]> {
    const waits: Array<[string, number]> = [
      ['relister: its period', c.relistPeriodMs],
      ['lease: a renew interval with the most jitter', jittered(c.renewIntervalMs, RENEW_JITTER, () => 1)],
      ['lease: the recheck while withheld', c.leaseRecheckMs],
      ['lease: the wait after a failure, with any Retry-After', retryDelayMs(1_000_000, Number.POSITIVE_INFINITY, c.renewIntervalMs)],
      ['status: its period', c.statusPeriodMs],
    ];
    if (c.nodeCondition) waits.push(['condition: its period, the relist period', c.relistPeriodMs], ['condition: the backoff after a failed write', backoffMs(1_000_000)]);
    return waits;
  }

  it('holds for every valid config of a grid of timings around the edges', () => {
    let valid = 0;
    let refused = 0;
    for (const idle of ['2s', '5s', '7s', '7001ms', '30s'])
      for (const period of ['100ms', '1s', '5s'])
        for (const lease of ['4s', '12s', '40s'])
          for (const renew of [[], ['--renew-interval', '1s'], ['--renew-interval', '5s']])
            for (const recheck of ['500ms', '1s'])
              for (const status of ['1s', '5s'])
                for (const condition of ['true', 'false']) {
                  const argv = [...N, '--idle-window', idle, '--relist-period', period, '--lease-duration', lease, ...renew, '--lease-recheck', recheck,
                    '--status-period', status, `--node-condition=${condition}`, '--api-timeout', '2s'];
                  const result = load(argv);
                  if (!result.ok) {
                    refused++;
                    continue;
                  }
                  valid++;
                  for (const [what, ms] of loopWaits(result.config)) {
                    assert.ok(result.config.idleWindowMs > ms, `${argv.join(' ')}: the idle window (${result.config.idleWindowMs} ms) must be longer than ${what} (${ms} ms)`);
                  }
                }
    assert.ok(valid > 100 && refused > 100, `precondition: the grid holds valid and refused configs (${valid} valid, ${refused} refused)`);
  });

  it('a short idle window is valid without the Node condition, whose backoff is the only wait it does not cover', () => {
    const argv = [...N, '--idle-window', '2s', '--lease-duration', '4s', '--api-timeout', '2s', '--status-period', '1s'];
    assert.deepEqual(errorsOf(argv), [
      "idleWindow: 2s must be longer than 7s, the Node condition loop's longest backoff after a failed write (or nodeCondition false)",
    ]);
    assert.equal(configOf([...argv, '--node-condition=false']).config.idleWindowMs, 2_000);
  });
});

describe('loadAgentConfig: sources and precedence', () => {
  const file = '/etc/nodepulse/config.yaml';

  it('a flag beats NODEPULSE_*, which beats the well-known variable, which beats the file, which beats the default', () => {
    const files = { [file]: 'nodeName: from-file\nrelistPeriod: 4s\nidleWindow: 40s\nstatusPeriod: 3s\n' };
    const env = { NODEPULSE_NODE_NAME: 'from-nodepulse-env', NODE_NAME: 'from-node-name', NODEPULSE_RELIST_PERIOD: '3s', NODEPULSE_IDLE_WINDOW: '35s' };
    const result = configOf(['--config', file, '--relist-period', '2s'], env, files);
    assert.equal(result.config.relistPeriodMs, 2_000);
    assert.equal(result.config.nodeName, 'from-nodepulse-env');
    assert.equal(result.config.idleWindowMs, 35_000);
    assert.equal(result.config.statusPeriodMs, 3_000);
    assert.equal(result.config.relistDeadlineMs, 20_000);
    assert.equal(result.sources.relistPeriod, '--relist-period');
    assert.equal(result.sources.nodeName, 'NODEPULSE_NODE_NAME');
    assert.equal(result.sources.idleWindow, 'NODEPULSE_IDLE_WINDOW');
    assert.equal(result.sources.statusPeriod, `config file ${file}`);
    assert.equal(result.sources.relistDeadline, 'default');
  });

  it('reads NODE_NAME, POD_NAMESPACE, CONTAINER_RUNTIME_ENDPOINT and KUBECONFIG', () => {
    const { config } = configOf([], {
      NODE_NAME: 'worker-1.example',
      POD_NAMESPACE: 'ops',
      CONTAINER_RUNTIME_ENDPOINT: 'unix:///run/crio/crio.sock',
      KUBECONFIG: '/root/.kube/config',
    });
    assert.equal(config.nodeName, 'worker-1.example');
    assert.equal(config.leaseNamespace, 'ops');
    assert.equal(config.criEndpoint, 'unix:///run/crio/crio.sock');
    assert.equal(config.kubeconfig, '/root/.kube/config');
  });

  it('every key is read from its NODEPULSE_ variable', () => {
    for (const spec of AGENT_CONFIG_SPECS) assert.match(spec.env[0] ?? '', /^NODEPULSE_[A-Z_]+$/, spec.key);
    const { config } = configOf([], { NODEPULSE_NODE_NAME: 'n', NODEPULSE_NODE_CONDITION: 'false', NODEPULSE_MAX_MESSAGE_SIZE: '4194304', NODEPULSE_HTTP_ADDRESS: '[::1]:0' });
    assert.equal(config.nodeCondition, false);
    assert.equal(config.maxMessageSizeBytes, 4_194_304);
    assert.equal(config.httpHost, '::1');
    assert.equal(config.httpPort, 0);
  });

  it('an empty variable counts as unset, and unknown NODEPULSE_ variables (service links) are ignored', () => {
    const { config } = configOf(N, { POD_NAMESPACE: '', NODEPULSE_SERVICE_HOST: '10.0.0.1', NODEPULSE_PORT: 'tcp://10.0.0.1:9356' });
    assert.equal(config.leaseNamespace, 'nodepulse');
  });

  it('the config file can be named by NODEPULSE_CONFIG, and JSON is accepted', () => {
    const { config } = configOf(N, { NODEPULSE_CONFIG: '/c.json' }, { '/c.json': '{"relistDeadline": "30s", "maxMessageSize": 8388608, "nodeCondition": false}' });
    assert.equal(config.relistDeadlineMs, 30_000);
    assert.equal(config.maxMessageSizeBytes, 8_388_608);
    assert.equal(config.nodeCondition, false);
  });

  it('an unknown key in the file is an error, with a suggestion', () => {
    assert.deepEqual(errorsOf(['--config', file], {}, { [file]: 'nodeName: a\nrelist-deadline: 30s\ncolour: blue\n' }), [
      `relist-deadline: 30s must be a known key (in config file ${file}; did you mean relistDeadline?)`,
      `colour: blue must be a known key (in config file ${file})`,
    ]);
  });

  it('a duration in the file must be a string: a bare number has no unit', () => {
    assert.deepEqual(errorsOf(['--config', file], {}, { [file]: 'nodeName: a\nrelistPeriod: 5\n' }), [
      `relistPeriod: 5 must be a duration such as 500ms, 10s or 3m (a bare number has no unit) (from config file ${file})`,
    ]);
  });

  it('a file that is not a mapping, or not YAML, is one line', () => {
    assert.deepEqual(errorsOf(['--config', file], {}, { [file]: '- a\n- b\n' }), [`config: ${file} must hold a mapping of camelCase keys`]);
    const [line] = errorsOf(['--config', file], {}, { [file]: 'a: [1, 2\n' });
    assert.match(line ?? '', /^config: \/etc\/nodepulse\/config\.yaml must be valid YAML or JSON \(.+\)$/);
  });

  it('an empty file is an empty config', () => {
    assert.equal(configOf([...N, '--config', file], {}, { [file]: '' }).config.nodeName, 'node-a');
  });

  it('flags take --flag value and --flag=value; the last repeat wins; booleans need =', () => {
    const { config } = configOf(['--node-name', 'a', '--relist-period=2s', '--relist-period', '3s', '--node-condition=false']);
    assert.equal(config.nodeName, 'a');
    assert.equal(config.relistPeriodMs, 3_000);
    assert.equal(config.nodeCondition, false);
    assert.equal(configOf([...N, '--node-condition']).config.nodeCondition, true);
  });

  it('--print-config is reported, not treated as a key', () => {
    const result = configOf([...N, '--print-config']);
    assert.equal(result.printConfig, true);
    assert.equal(configOf(N).printConfig, false);
  });
});

describe('printableConfig', () => {
  it('shows durations as strings and every key', () => {
    const printable = printableConfig(configOf([...N, '--kubeconfig', '/k', '--cri-endpoint', 'unix:///run/crio/crio.sock']).config);
    assert.deepEqual(Object.keys(printable), [...AGENT_CONFIG_KEYS]);
    assert.equal(printable['relistThreshold'], '1m0s');
    assert.equal(printable['renewInterval'], '10s');
    assert.equal(printable['maxMessageSize'], '16Mi');
    assert.equal(printable['nodeCondition'], true);
  });

  it('is itself a config file that loads back to the same config', () => {
    const first = configOf([...N, '--relist-deadline', '45s', '--max-message-size', '12345678', '--node-condition=false', '--http-address', '[::]:9000']).config;
    const text = stringify(printableConfig(first));
    const again = configOf(['--config', '/printed.yaml'], {}, { '/printed.yaml': text }).config;
    assert.deepEqual(again, first);
  });
});
