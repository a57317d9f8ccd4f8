// The chart refuses bad values: the real `helm template` (and `helm lint --strict`) fails with a
// message that names the value, for values.schema.json's types, patterns and ranges and for the
// agent's and the controller's own rules, cross-field ones included (templates/_validate.tpl).
// Every case that is an agent flag is also given to the built agent, which must refuse it too,
// breaking the same rule: the chart mirrors the agent, and does not invent rules of its own
// (the one chart-level rule, a renewal within the lease readers' grace, is named as such).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { runBuiltAgent } from './built-agent.ts';
import { helmRunner } from './render.ts';

const helm = helmRunner();
after(() => helm.close());

interface Case {
  /** `--set` values. */
  readonly set: readonly string[];
  /** What the failure must say: the value's name and the rule. */
  readonly says: RegExp;
  /** The same value as agent flags: the built agent must refuse them too. */
  readonly agent?: readonly string[];
}

const CASES: readonly Case[] = [
  // The issue's own examples.
  { set: ['agent.relistThreshold=-5s'], says: /- agent\.relistThreshold: Does not match pattern/, agent: ['--relist-threshold=-5s'] },
  { set: ['controller.replicas=two'], says: /- controller\.replicas: Invalid type\. Expected: integer, given: string/ },
  { set: ['updateStrategy.maxUnavailable=-3'], says: /- updateStrategy\.maxUnavailable: Must be greater than or equal to 0/ },
  { set: ['agent.relistDeadline=5m'], says: /^agent\.relistDeadline: 5m must be shorter than agent\.relistThreshold \(1m0s\)$/m, agent: ['--relist-deadline=5m'] },
  // values.schema.json: types, enums, patterns, ranges, unknown values.
  { set: ['agent.relistDeadline=5'], says: /- agent\.relistDeadline: Invalid type\. Expected: string, given: integer/, agent: ['--relist-deadline=5'] },
  { set: ['agent.logLevel=loud'], says: /- agent\.logLevel: agent\.logLevel must be one of the following: "", "fatal"/, agent: ['--log-level=loud'] },
  { set: ['updateStrategy.maxUnavailable=101%'], says: /- updateStrategy\.maxUnavailable: Does not match pattern/ },
  { set: ['updateStrategy.maxUnavailable=0%'], says: /^updateStrategy\.maxUnavailable: 0% must be more than 0 when updateStrategy\.maxSurge is 0 \(the rollout could replace no pod\)$/m },
  { set: ['updateStrategy.maxSurge=-1'], says: /- updateStrategy\.maxSurge: Must be greater than or equal to 0/ },
  { set: ['image.digest=sha256:abc'], says: /- image\.digest: Does not match pattern/ },
  { set: ['monitoring.prometheusRule.fleetUnhealthyPercent=0'], says: /- monitoring\.prometheusRule\.fleetUnhealthyPercent: Must be greater than 0/ },
  { set: ['monitoring.prometheusRule.runbookURL=https://wiki.example.org/runbooks#top'], says: /- monitoring\.prometheusRule\.runbookURL: Does not match pattern/ },
  { set: ['flowControl.lendablePercent=101'], says: /- flowControl\.lendablePercent: Must be less than or equal to 100/ },
  { set: ['agent.extraVolumes[0].name=tmp', 'agent.extraVolumes[0].emptyDir.medium=Memory'], says: /^agent\.extraVolumes: tmp must be a name the chart does not use/m },
  { set: ['controler.enabled=true'], says: /- \(root\): Additional property controler is not allowed/ },
  { set: ['image.pullPolicy=Sometimes'], says: /- image\.pullPolicy: image\.pullPolicy must be one of the following: "Always", "IfNotPresent", "Never"/ },
  { set: ['monitoring.podMonitor.interval=15'], says: /- monitoring\.podMonitor\.interval: Invalid type\. Expected: string, given: integer/ },
  { set: ['flowControl.matchingPrecedence=0'], says: /- flowControl\.matchingPrecedence: Must be greater than or equal to 1/ },
  { set: ['flowSchema.enabled=true'], says: /- \(root\): Additional property flowSchema is not allowed/ },
  { set: ['runtime.socketDir=/run/crio'], says: /- runtime: Additional property socketDir is not allowed/ },
  { set: ['nonRoot.enabled=true', 'nonRoot.socketGid=1001', 'nonRoot.uid=0'], says: /- nonRoot\.uid: Must be greater than or equal to 1/ },
  { set: ['image.architectures={x86_64}'], says: /- image\.architectures\.0: image\.architectures\.0 must be one of the following: "amd64"/ },
  { set: ['architectures={amd64}'], says: /- \(root\): Additional property architectures is not allowed/ },
  { set: ['agent.idleWindow=5s', 'agent.renewInterval=1s', 'agent.statusPeriod=1s'], says: /^agent\.idleWindow: 5s must be longer than 7s, the Node condition loop's longest backoff after a failed write \(or nodeCondition false\)$/m, agent: ['--idle-window=5s', '--renew-interval=1s', '--status-period=1s'] },
  { set: ['runtime.endpoint=/run/containerd/containerd.sock'], says: /- runtime\.endpoint: Does not match pattern/, agent: ['--cri-endpoint=/run/containerd/containerd.sock'] },
  // The agent's rules of one value.
  { set: ['agent.relistPeriod=0s'], says: /^agent\.relistPeriod: 0s must be longer than 0s$/m, agent: ['--relist-period=0s'] },
  { set: ['agent.relistThreshold=25h'], says: /^agent\.relistThreshold: 25h must be at most 24h0m0s$/m, agent: ['--relist-threshold=25h'] },
  { set: ['agent.leaseDuration=1500ms'], says: /^agent\.leaseDuration: 1500ms must be a whole number of seconds/m, agent: ['--lease-duration=1500ms'] },
  { set: ['agent.maxMessageSize=0.5Ki'], says: /^agent\.maxMessageSize: 0\.5Ki must be between 1Ki and 2147483647 bytes/m, agent: ['--max-message-size=0.5Ki'] },
  { set: ['agent.maxMessageSize=512'], says: /- agent\.maxMessageSize: Must be greater than or equal to 1024/, agent: ['--max-message-size=512'] },
  { set: ['leaseNamespace=kube-node-lease'], says: /^leaseNamespace: kube-node-lease must be a namespace other than kube-node-lease/m, agent: ['--lease-namespace=kube-node-lease'] },
  // The agent's cross-field rules.
  { set: ['agent.relistPeriod=5m'], says: /^agent\.relistPeriod: 5m must be shorter than agent\.relistThreshold \(1m0s\)$/m, agent: ['--relist-period=5m'] },
  { set: ['agent.stuckWindow=15s'], says: /^agent\.stuckWindow: 15s must be longer than agent\.relistDeadline \(20s\)$/m, agent: ['--stuck-window=15s'] },
  { set: ['agent.idleWindow=4s'], says: /^agent\.statusPeriod: 5s must be shorter than agent\.idleWindow \(4s\)$/m, agent: ['--idle-window=4s'] },
  { set: ['agent.leaseDuration=200s'], says: /^agent\.renewInterval: 50s \(agent\.leaseDuration × 0\.25\) must be shorter than agent\.idleWindow \(30s\) with 4% jitter added/m, agent: ['--lease-duration=200s'] },
  { set: ['agent.renewInterval=45s', 'agent.idleWindow=1m', 'controller.grace=2m'], says: /^agent\.renewInterval: 45s must be shorter than agent\.leaseDuration \(40s\)$/m, agent: ['--renew-interval=45s', '--idle-window=1m'] },
  { set: ['agent.leaseRecheck=30s'], says: /^agent\.leaseRecheck: 30s must be shorter than agent\.idleWindow \(30s\)$/m, agent: ['--lease-recheck=30s'] },
  { set: ['agent.statusDeadline=2m'], says: /^agent\.statusDeadline: 2m must be shorter than agent\.stuckWindow \(50s \(agent\.relistDeadline \+ 30s\)\)$/m, agent: ['--status-deadline=2m'] },
  { set: ['agent.apiTimeout=45s'], says: /^agent\.apiTimeout: 45s must be no longer than agent\.leaseDuration \(40s\)$/m, agent: ['--api-timeout=45s'] },
  // The controller's rules, and the one rule across the agent and its lease readers.
  { set: ['controller.grace=5s'], says: /^controller\.monitorPeriod: 5s must be shorter than controller\.grace \(5s\)$/m },
  { set: ['agent.renewInterval=30s', 'agent.idleWindow=1m', 'agent.leaseDuration=60s', 'controller.grace=30s'], says: /^agent\.renewInterval: 30s must be shorter than controller\.grace \(30s\) with 4% jitter added, or lease readers judge every node stale between renewals$/m },
  { set: ['controller.leaderElection.renewDeadline=15s'], says: /^controller\.leaderElection\.renewDeadline: 15s must be shorter than controller\.leaderElection\.leaseDuration \(15s\)$/m },
  { set: ['controller.leaderElection.retryPeriod=9s'], says: /^controller\.leaderElection\.retryPeriod: 9s must be shorter than controller\.leaderElection\.renewDeadline \(10s\) with 20% jitter added$/m },
  { set: ['controller.leaderElection.leaseDuration=15500ms'], says: /^controller\.leaderElection\.leaseDuration: 15500ms must be a whole number of seconds/m },
  { set: ['controller.maxWritesPerSecond=0'], says: /- controller\.maxWritesPerSecond: Must be greater than 0/ },
  { set: ['monitoring.podMonitor.scrapeTimeout=30s'], says: /^monitoring\.podMonitor\.scrapeTimeout: 30s must be no longer than monitoring\.podMonitor\.interval \(15s\)$/m },
];

/** The problem lines of a chart failure that the agent would also say (its own keys only). */
function chartAgentLines(failure: string): string[] {
  return failure.split('\n').filter((l) => /^agent\.\w+: .* must be /.test(l) && !l.includes('controller.')).map((l) => l.replaceAll('agent.', ''));
}

/** A problem line reduced to what it is about: `key: value`, and the other keys its rule names. */
function shape(line: string): string {
  const [subject = '', rule = ''] = line.replace(/ \(from --[a-z-]+\)$/, '').split(' must be ');
  return `${subject} | ${[...rule.matchAll(/\b[a-z]+[A-Z][A-Za-z]*\b/g)].map((m) => m[0]).join(',')}`;
}

test(`helm template refuses each of ${CASES.length} bad values, naming the value`, () => {
  assert.ok(CASES.length >= 14, 'precondition: the issue\'s four cases and at least ten more');
  for (const c of CASES) {
    const failure = helm.templateError(c.set);
    assert.ok(failure !== undefined, `helm template must fail for ${c.set.join(' ')}`);
    assert.match(failure, c.says, `helm template ${c.set.join(' ')}`);
  }
});

test('every bad value that is an agent flag is refused by the built agent too, for the same rule', () => {
  const env = { NODE_NAME: 'node-a', POD_NAMESPACE: 'nodepulse' };
  for (const c of CASES.filter((x) => x.agent !== undefined)) {
    const r = runBuiltAgent([...(c.agent ?? []), '--print-config'], env);
    assert.equal(r.code, 2, `the agent must refuse ${c.agent?.join(' ')} with exit 2: ${r.stdout}${r.stderr}`);
    const chart = chartAgentLines(helm.templateError(c.set) ?? '');
    if (chart.length === 0) continue; // a schema failure: its wording is the schema's, the key is what matters
    assert.deepEqual(chart.map(shape).sort(), r.stderr.trim().split('\n').map(shape).sort(), `chart and agent on ${c.set.join(' ')}`);
  }
});

test('helm lint --strict fails on a value the schema refuses, and reports a broken cross-field rule', () => {
  const typed = helm.lintOutcome(['controller.replicas=two']);
  assert.equal(typed.passed, false, typed.output);
  assert.match(typed.output, /controller\.replicas: Invalid type/);
  // Helm's lint renders templates leniently: a template `fail` is logged as [INFO], not an error.
  // helm template, install and upgrade do fail on it (the first test).
  const crossField = helm.lintOutcome(['agent.relistDeadline=5m']);
  assert.match(crossField.output, /\[INFO\] Fail: \nagent\.relistDeadline: 5m must be shorter than agent\.relistThreshold \(1m0s\)/);
});

test('values that meet every rule render, the edge cases included', () => {
  for (const set of [
    [],
    ['agent.startupGrace=0s'],
    ['agent.relistDeadline=59s'],
    ['agent.apiTimeout=40s'],
    ['agent.maxMessageSize=1Ki'],
    ['agent.maxMessageSize=2147483647'],
    ['updateStrategy.maxUnavailable=100%'],
    ['updateStrategy.maxUnavailable=1'],
    ['updateStrategy.maxUnavailable=0', 'updateStrategy.maxSurge=1'],
    ['updateStrategy.maxUnavailable=0%', 'updateStrategy.maxSurge=10%'],
    ['controller.maxWritesPerSecond=0.5'],
    ['monitoring.podMonitor.scrapeTimeout=15s'],
  ]) {
    assert.equal(helm.templateError(set), undefined, `helm template must render ${set.join(' ')}`);
  }
});
