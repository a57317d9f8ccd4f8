// Bad flags, for every command: each exits 2 with its exact `key: value must be rule` lines on
// stderr, nothing on stdout, and starts nothing. A table per command covers a bad value for every
// flag its --help lists (a test below holds the tables to the help), unknown flags, missing
// values and positional arguments; then each command once through the built CLI, for the exit
// code as a user sees it.
//
// The commands run in process, with an already aborted signal and an empty environment: a row
// whose flags were wrongly accepted would then stop at once instead of serving.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runAgentCommand } from '../../src/cli/agent-command.ts';
import { runCheck } from '../../src/cli/check-command.ts';
import type { CommandIo } from '../../src/cli/command-io.ts';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { runCleanup } from '../../src/cli/cleanup-command.ts';
import { runController } from '../../src/cli/controller-command.ts';
import { runDemo } from '../../src/cli/demo-command.ts';
import { runFleet } from '../../src/cli/fleet-command.ts';
import { runBuiltCli } from '../support/run-cli.ts';

type Run = (argv: string[], io: CommandIo, signal: AbortSignal) => Promise<number>;

interface Row {
  readonly argv: readonly string[];
  readonly env?: Record<string, string>;
  readonly lines: readonly string[];
}

const DURATION = 'a duration such as 500ms, 10s or 3m';
const DNS_LABEL = "a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)";
const N = ['--node-name', 'n1'];
/** The two flags cleanup requires. */
const C = ['--agent-namespace', 'nodepulse', '--agent-selector', 'app.kubernetes.io/name=nodepulse'];

/** A bad value for each reader flag, the same lines from fleet and controller. */
function readerRows(command: string): Row[] {
  return [
    { argv: ['--kubeconfig='], lines: ['kubeconfig: "" must be a file path (from --kubeconfig)'] },
    { argv: ['--context', ''], lines: ['context: "" must be a context name (from --context)'] },
    { argv: ['--lease-namespace', 'Node_Leases'], lines: [`leaseNamespace: Node_Leases must be ${DNS_LABEL} (from --lease-namespace)`] },
    {
      argv: ['--node-selector', 'zone in ()'],
      lines: ['nodeSelector: "zone in ()" must be a label selector whose sets hold at least one value ("zone in ()" holds none) (from --node-selector)'],
    },
    { argv: ['--grace=0'], lines: ['grace: 0 must be longer than 0s (from --grace)'] },
    { argv: ['--grace', '50'], lines: [`grace: 50 must be ${DURATION} (from --grace)`] },
    { argv: ['--grace'], lines: ['flag: --grace must be followed by a value'] },
    { argv: ['--bogus', 'x'], lines: [`flag: --bogus must be a flag of ${command}`] },
    { argv: ['--node-selecter=a'], lines: [`flag: --node-selecter must be a flag of ${command} (did you mean --node-selector?)`] },
    { argv: ['-kubeconfig', '/k'], lines: [`flag: -kubeconfig must be a flag of ${command} (did you mean --kubeconfig?)`] },
    { argv: ['nodes'], lines: [`argument: nodes must be a flag (${command} takes no positional arguments)`] },
  ];
}

const COMMANDS: ReadonlyArray<{ name: string; run: Run; rows: readonly Row[] }> = [
  {
    name: 'agent',
    run: runAgentCommand,
    rows: [
      { argv: ['--node-name', 'Node_1'], lines: ["nodeName: Node_1 must be a DNS subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit) (from --node-name)"] },
      { argv: [...N, '--cri-endpoint', 'tcp://10.0.0.1:1'], lines: ['criEndpoint: tcp://10.0.0.1:1 must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from --cri-endpoint)'] },
      { argv: [...N, '--kubeconfig='], lines: ['kubeconfig: "" must be a file path (from --kubeconfig)'] },
      { argv: [...N, '--lease-namespace', 'kube-node-lease'], lines: ['leaseNamespace: kube-node-lease must be a namespace other than kube-node-lease (the kubelet owns the leases there) (from --lease-namespace)'] },
      { argv: [...N, '--lease-duration', '1500ms'], lines: ['leaseDuration: 1500ms must be a whole number of seconds (leaseDurationSeconds is an integer) (from --lease-duration)'] },
      { argv: [...N, '--renew-interval', 'soon'], lines: [`renewInterval: soon must be ${DURATION} (from --renew-interval)`] },
      { argv: [...N, '--lease-recheck', '0'], lines: ['leaseRecheck: 0 must be longer than 0s (from --lease-recheck)'] },
      { argv: [...N, '--relist-period', '1500us'], lines: ['relistPeriod: 1500us must be a whole number of milliseconds (from --relist-period)'] },
      { argv: [...N, '--relist-threshold', '25h'], lines: ['relistThreshold: 25h must be at most 24h0m0s (from --relist-threshold)'] },
      { argv: [...N, '--relist-deadline', '5m'], lines: ['relistDeadline: 5m must be shorter than relistThreshold (1m0s)'] },
      { argv: [...N, '--idle-window', '30'], lines: [`idleWindow: 30 must be ${DURATION} (from --idle-window)`] },
      { argv: [...N, '--stuck-window=-1s'], lines: [`stuckWindow: -1s must be ${DURATION} (from --stuck-window)`] },
      { argv: [...N, '--max-message-size', '16MB'], lines: ['maxMessageSize: 16MB must be a byte size such as 16777216 or 16Mi (from --max-message-size)'] },
      { argv: [...N, '--status-period', '30s'], lines: ['statusPeriod: 30s must be shorter than idleWindow (30s)'] },
      { argv: [...N, '--status-deadline', '1d'], lines: [`statusDeadline: 1d must be ${DURATION} (from --status-deadline)`] },
      { argv: [...N, '--api-timeout', '41s'], lines: ['apiTimeout: 41s must be no longer than leaseDuration (40s)'] },
      { argv: [...N, '--condition-refresh', '0s'], lines: ['conditionRefresh: 0s must be longer than 0s (from --condition-refresh)'] },
      { argv: [...N, '--node-condition=maybe'], lines: ['nodeCondition: maybe must be true or false (from --node-condition)'] },
      { argv: [...N, '--http-address', '9356'], lines: ['httpAddress: 9356 must be host:port such as :9356, 0.0.0.0:9356 or [::1]:9356 (from --http-address)'] },
      { argv: [...N, '--startup-grace', 'later'], lines: [`startupGrace: later must be ${DURATION} (from --startup-grace)`] },
      { argv: [...N, '--log-level', 'verbose'], lines: ['logLevel: verbose must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)'] },
      { argv: [...N, '--config='], lines: ['config: "" must be a file path (from --config)'] },
      { argv: [...N, '--print-config=yes'], lines: ['printConfig: yes must be true or false (from --print-config)'] },
      { argv: [...N, '--relist-period'], lines: ['flag: --relist-period must be followed by a value'] },
      { argv: [...N, '--relist-deadlin', '5m'], lines: ['flag: --relist-deadlin must be a flag of nodepulse agent (did you mean --relist-deadline?)'] },
      { argv: ['-node-name', 'n1'], lines: ['flag: -node-name must be a flag of nodepulse agent (did you mean --node-name?)'] },
      { argv: [...N, 'extra'], lines: ['argument: extra must be a flag (nodepulse agent takes no positional arguments)'] },
    ],
  },
  {
    name: 'fleet',
    run: runFleet,
    rows: [
      { argv: ['-o', 'yaml'], lines: ['output: yaml must be table or json (from -o)'] },
      { argv: ['--output=wide'], lines: ['output: wide must be table or json (from --output)'] },
      { argv: ['--watch=maybe'], lines: ['watch: maybe must be true or false (from --watch)'] },
      { argv: ['--observe', 'soon'], lines: [`observe: soon must be ${DURATION} (from --observe)`] },
      { argv: ['--observe', '10s'], lines: ['observe: 10s must be at least grace (50s): a shorter watch cannot tell a silent lease from a live one'] },
      { argv: ['--watch', '--observe', '1m'], lines: ['observe: 1m must be unset when --watch is given (--watch runs until interrupted, --observe ends after its window)'] },
      { argv: ['--observe', '--watch'], lines: ['flag: --observe must be followed by a value'] },
      { argv: ['-o'], lines: ['flag: -o must be followed by a value'] },
      ...readerRows('nodepulse fleet'),
    ],
  },
  {
    name: 'controller',
    run: runController,
    rows: [
      ...readerRows('nodepulse controller'),
      { argv: ['--namespace', 'Kube_System'], lines: [`namespace: Kube_System must be ${DNS_LABEL} (from --namespace)`] },
      { argv: [], env: { POD_NAMESPACE: 'Kube_System' }, lines: [`namespace: Kube_System must be ${DNS_LABEL} (from POD_NAMESPACE)`] },
      { argv: ['--identity='], lines: ['identity: "" must be non-empty (from --identity)'] },
      { argv: ['--monitor-period', '1m'], lines: ['monitorPeriod: 1m must be shorter than grace (50s)'] },
      { argv: ['--monitor-period', 'often'], lines: [`monitorPeriod: often must be ${DURATION} (from --monitor-period)`] },
      {
        argv: ['--leader-elect-lease-duration', '15500ms'],
        lines: ['leaderElectLeaseDuration: 15500ms must be a whole number of seconds (leaseDurationSeconds is an integer) (from --leader-elect-lease-duration)'],
      },
      { argv: ['--leader-elect-renew-deadline', '15s'], lines: ['leaderElectRenewDeadline: 15s must be shorter than leaderElectLeaseDuration (15s)'] },
      { argv: ['--leader-elect-retry-period', '9s'], lines: ['leaderElectRetryPeriod: 9s must be shorter than leaderElectRenewDeadline (10s) with 20% jitter added'] },
      { argv: ['--agent-daemonset', 'nodepulse'], lines: ['agentDaemonset: nodepulse must be NAMESPACE/NAME, such as nodepulse/nodepulse, or "" for none (from --agent-daemonset)'] },
      { argv: ['--agent-daemonset', 'a/b/c'], lines: ['agentDaemonset: a/b/c must be NAMESPACE/NAME, such as nodepulse/nodepulse, or "" for none (from --agent-daemonset)'] },
      { argv: ['--taint=on'], lines: ['taint: on must be true or false (from --taint)'] },
      { argv: ['--max-writes-per-second', '0'], lines: ['maxWritesPerSecond: 0 must be a number more than 0 (from --max-writes-per-second)'] },
      { argv: ['--max-writes-per-second', 'lots'], lines: ['maxWritesPerSecond: lots must be a number more than 0 (from --max-writes-per-second)'] },
      { argv: ['--http-address', '9357'], lines: ['httpAddress: 9357 must be host:port such as :9357 or 127.0.0.1:0 (from --http-address)'] },
      { argv: ['--log-level', 'loud'], lines: ['logLevel: loud must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)'] },
    ],
  },
  {
    name: 'cleanup',
    run: runCleanup,
    rows: [
      { argv: ['--agent-selector', 'app=x'], lines: ['agentNamespace: "" must be set (--agent-namespace)'] },
      { argv: ['--agent-namespace', 'Node_Pulse', '--agent-selector', 'app=x'], lines: [`agentNamespace: Node_Pulse must be ${DNS_LABEL} (from --agent-namespace)`] },
      { argv: ['--agent-namespace', 'nodepulse'], lines: ['agentSelector: "" must be set (--agent-selector)'] },
      {
        argv: ['--agent-namespace', 'nodepulse', '--agent-selector', ' '],
        lines: ['agentSelector: " " must be a label selector that is not empty (an empty one matches every pod of the namespace) (from --agent-selector)'],
      },
      {
        argv: ['--agent-namespace', 'nodepulse', '--agent-selector', 'zone in ()'],
        lines: ['agentSelector: "zone in ()" must be a label selector whose sets hold at least one value ("zone in ()" holds none) (from --agent-selector)'],
      },
      { argv: [...C, '--lease-namespace', 'Node_Leases'], lines: ['leaseNamespace: Node_Leases must be a DNS label (at most 63 lowercase letters, digits and \'-\', starting and ending with a letter or digit) (from --lease-namespace)'] },
      { argv: [...C, '--timeout', '0'], lines: ['timeout: 0 must be longer than 0s (from --timeout)'] },
      { argv: [...C, '--timeout', '5'], lines: [`timeout: 5 must be ${DURATION} (from --timeout)`] },
      { argv: [...C, '--dry-run=maybe'], lines: ['dryRun: maybe must be true or false (from --dry-run)'] },
      { argv: [...C, '--kubeconfig='], lines: ['kubeconfig: "" must be a file path (from --kubeconfig)'] },
      { argv: [...C, '--context', ''], lines: ['context: "" must be a context name (from --context)'] },
      { argv: [...C, '--timeout'], lines: ['flag: --timeout must be followed by a value'] },
      { argv: [...C, '--agent-selecter', 'a'], lines: ['flag: --agent-selecter must be a flag of nodepulse cleanup (did you mean --agent-selector?)'] },
      { argv: [...C, 'nodes'], lines: ['argument: nodes must be a flag (nodepulse cleanup takes no positional arguments)'] },
    ],
  },
  {
    name: 'check',
    run: (argv, io) => runCheck(argv, io),
    rows: [
      { argv: ['--cri-endpoint', 'tcp://10.0.0.1:1'], lines: ['criEndpoint: tcp://10.0.0.1:1 must be unix:///absolute/path or an absolute path (from --cri-endpoint)'] },
      { argv: ['-o', 'yaml'], lines: ['output: yaml must be text or json (from -o)'] },
      { argv: ['--deadline', '0'], lines: ['deadline: 0 must be longer than 0s (from --deadline)'] },
      { argv: ['--max-message-size', '2Gi'], lines: ['maxMessageSize: 2Gi must be between 1Ki and 2147483647 bytes (gRPC takes a 32-bit limit) (from --max-message-size)'] },
      { argv: ['--deadline'], lines: ['flag: --deadline must be followed by a value'] },
      { argv: ['--endpoint', 'x'], lines: ['flag: --endpoint must be a flag of nodepulse check'] },
      { argv: ['/run/containerd/containerd.sock'], lines: ['argument: /run/containerd/containerd.sock must be a flag (nodepulse check takes no positional arguments)'] },
    ],
  },
  {
    name: 'demo',
    run: runDemo,
    rows: [
      { argv: ['--forever=sometimes'], lines: ['forever: sometimes must be true or false (from --forever)'] },
      { argv: ['--http-address', 'localhost'], lines: ['httpAddress: localhost must be host:port such as 127.0.0.1:9356 (from --http-address)'] },
      { argv: ['--cri-endpoint', '/run/containerd/containerd.sock'], lines: ['criEndpoint: /run/containerd/containerd.sock must be a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock (from --cri-endpoint)'] },
      { argv: ['--log-level', 'loud'], lines: ['logLevel: loud must be one of fatal, error, warn, info, debug, trace, silent (from --log-level)'] },
      { argv: ['--log-level'], lines: ['flag: --log-level must be followed by a value'] },
      { argv: ['--speed', '2'], lines: ['flag: --speed must be a flag of nodepulse demo'] },
      { argv: ['scenario'], lines: ['argument: scenario must be a flag (nodepulse demo takes no positional arguments)'] },
    ],
  },
];

function sink(): { text: () => string; write: (chunk: string) => boolean } {
  let text = '';
  return { text: () => text, write: (chunk) => ((text += chunk), true) };
}

async function runInProcess(run: Run, argv: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = sink();
  const stderr = sink();
  const stopped = new AbortController();
  stopped.abort(new Error('a row whose flags were accepted must not run'));
  const code = await run([...argv], { stdout, stderr, env, clock: new ManualClock() }, stopped.signal);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

for (const command of COMMANDS) {
  describe(`nodepulse ${command.name}: bad flags exit 2 with their exact lines`, () => {
    for (const row of command.rows) {
      test(`${JSON.stringify(row.argv)}${row.env === undefined ? '' : ` with ${JSON.stringify(row.env)}`} → ${row.lines.join(' | ')}`, async () => {
        const run = await runInProcess(command.run, row.argv, row.env);
        assert.deepEqual({ code: run.code, stderr: run.stderr, stdout: run.stdout }, { code: 2, stderr: row.lines.map((l) => `${l}\n`).join(''), stdout: '' });
      });
    }

    test('the table has a bad value for every flag --help lists', async () => {
      const help = await runInProcess(command.run, ['--help']);
      assert.equal(help.code, 0, 'precondition: --help exits 0');
      const flags = [...new Set([...help.stdout.matchAll(/^ {2}(?:-[a-z], )? *(--[a-z-]+)/gm)].map((m) => m[1] ?? ''))];
      assert.ok(flags.length >= 4, `precondition: the help lists the flags, got ${flags.join(' ')}`);
      // A line's key is its flag in camelCase (--lease-namespace → leaseNamespace).
      const keys = new Set(command.rows.flatMap((r) => r.lines.map((l) => l.slice(0, l.indexOf(':')))));
      const key = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      assert.deepEqual(flags.filter((f) => !keys.has(key(f))), [], 'flags with no bad-value row');
      for (const kind of ['must be followed by a value', 'must be a flag of', 'takes no positional arguments']) {
        assert.ok(command.rows.some((r) => r.lines.some((l) => l.includes(kind))), `a row for: ${kind}`);
      }
    });
  });
}

test('every command through the built CLI: exit 2, the lines on stderr, nothing on stdout', { timeout: 60_000 }, async () => {
  const rows: ReadonlyArray<{ argv: readonly string[]; stderr: string }> = [
    { argv: ['agent', '--node-name', 'n1', '--relist-period=fast', '--bogus'], stderr: 'flag: --bogus must be a flag of nodepulse agent\n' },
    { argv: ['fleet', '-o', 'yaml', '--grace', '0'], stderr: 'output: yaml must be table or json (from -o)\ngrace: 0 must be longer than 0s (from --grace)\n' },
    { argv: ['controller', '--taint=on'], stderr: 'taint: on must be true or false (from --taint)\n' },
    { argv: ['cleanup', '--agent-namespace', 'nodepulse'], stderr: 'agentSelector: "" must be set (--agent-selector)\n' },
    { argv: ['check', '--deadline'], stderr: 'flag: --deadline must be followed by a value\n' },
    { argv: ['demo', '--forever=sometimes'], stderr: 'forever: sometimes must be true or false (from --forever)\n' },
  ];
  const runs = await Promise.all(rows.map((row) => runBuiltCli(row.argv)));
  rows.forEach((row, i) => assert.deepEqual(runs[i], { code: 2, stdout: '', stderr: row.stderr }, row.argv.join(' ')));
});
