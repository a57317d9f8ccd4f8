// The alert rules: promtool checks them and runs their unit tests (real promtool, from
// Debian's prometheus package); the PrometheusRule copies agree with the plain file; each
// alert the issues name exists at its severity, uses only metrics its exporter declares, and
// names its runbook; and the chart's thresholds and architecture list follow its values
// (promtool unit tests of the rendered rules).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { requireExecutables } from '../support/require.ts';
import { agentExposition, controllerExposition, declaredSeriesNamesOf, queryableNames } from './agent-metric-names.ts';
import { alertMetricUses, KUBE_STATE_METRICS_NAMES, ruleTestSeries, seriesOf, unknownNames, usesOf } from './metric-uses.ts';
import { allowedArchitectures } from './agent-manifest-checks.ts';
import { HELM_ALL_COMPONENTS, helmRunner, only, REPO_ROOT, renderKustomize, type K8sObject } from './render.ts';

const RULES_FILE = join(REPO_ROOT, 'deploy', 'prometheus', 'prometheus-rules.yaml');
const RULES_TESTS = join(REPO_ROOT, 'deploy', 'prometheus', 'rules.test.yaml');
const RUNBOOKS = join(REPO_ROOT, 'docs', 'runbooks.md');
const PROMTOOL_TIMEOUT_MS = 60_000;

const CHART_RULES_TESTS = join(REPO_ROOT, 'test', 'deploy', 'chart-rules.test.yaml');

const AGENT_ALERTS = [
  'NodePulseRuntimeUnhealthy',
  'NodePulseAgentCannotObserve',
  'NodePulseRuntimeNotReady',
  'NodePulseFleetRuntimeUnhealthy',
  'NodePulseRelistSlow',
  'NodePulseRelistHung',
  'NodePulseLeaseNotRenewing',
  'NodePulseAgentDown',
  'NodePulseAgentMissing',
  'NodePulseResponseTooLarge',
];
const CONTROLLER_ALERTS = ['NodePulseControllerNoLeader', 'NodePulseControllerMarkingPaused', 'NodePulseControllerWriteErrors'];
const ISSUE_ALERTS = [...AGENT_ALERTS, ...CONTROLLER_ALERTS];
/** One node's (or the controller's) trouble is a warning; only a share of the fleet pages. */
const CRITICAL_ALERTS = ['NodePulseFleetRuntimeUnhealthy'];
/** Alerts that read kube-state-metrics alone: no nodepulse job to key on. */
const KUBE_STATE_ONLY_ALERTS = ['NodePulseFleetRuntimeUnhealthy'];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleGroups {
  groups: Array<{ name: string; rules: Rule[] }>;
}

const plain = parse(readFileSync(RULES_FILE, 'utf8')) as RuleGroups;
const alerts = plain.groups.flatMap((g) => g.rules).filter((r): r is Rule & { alert: string } => r.alert !== undefined);

function promtool(path: string, args: readonly string[]): string {
  return execFileSync(path, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: PROMTOOL_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
}

test('promtool check rules passes on the plain rule file', (t) => {
  const tools = requireExecutables(t, ['promtool']);
  if (tools === undefined) return;
  assert.match(promtool(tools['promtool'] as string, ['check', 'rules', RULES_FILE]), new RegExp(`SUCCESS: ${ISSUE_ALERTS.length} rules found`));
});

test('promtool test rules passes: each alert fires on its series and stays silent on a healthy node', (t) => {
  const tools = requireExecutables(t, ['promtool']);
  if (tools === undefined) return;
  assert.match(promtool(tools['promtool'] as string, ['test', 'rules', RULES_TESTS]), /SUCCESS/);
});

test('the rule unit tests cover every alert, firing and silent', () => {
  const tests = (parse(readFileSync(RULES_TESTS, 'utf8')) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
  }).tests.flatMap((t) => t.alert_rule_test);
  for (const name of ISSUE_ALERTS) {
    assert.ok(tests.some((c) => c.alertname === name && c.exp_alerts.length > 0), `${name} must have a firing case`);
    assert.ok(tests.some((c) => c.alertname === name && c.exp_alerts.length === 0), `${name} must have a silent case`);
  }
});

test('the rule file holds exactly the alerts the issues name: the agent\'s in group nodepulse, the controller\'s in nodepulse-controller', () => {
  const byGroup = Object.fromEntries(plain.groups.map((g) => [g.name, g.rules.map((r) => r.alert).sort()]));
  assert.deepEqual(byGroup, { nodepulse: [...AGENT_ALERTS].sort(), 'nodepulse-controller': [...CONTROLLER_ALERTS].sort() });
});

test('the severities: every per-node and controller alert is a warning, and only the fleet alert is critical', () => {
  const bySeverity = (severity: string): string[] => alerts.filter((a) => a.labels?.['severity'] === severity).map((a) => a.alert).sort();
  assert.deepEqual(bySeverity('critical'), CRITICAL_ALERTS);
  assert.deepEqual(bySeverity('warning'), ISSUE_ALERTS.filter((a) => !CRITICAL_ALERTS.includes(a)).sort());
  assert.deepEqual(alerts.filter((a) => a.alert === 'NodePulseRuntimeUnhealthy' || a.alert === 'NodePulseRuntimeNotReady').map((a) => a.labels?.['severity']), ['warning', 'warning']);
});

test('every alert has a summary, and names its own section of docs/runbooks.md in `runbook`; the plain file writes no runbook_url (there is no public site to point at)', () => {
  const headings = new Set(
    readFileSync(RUNBOOKS, 'utf8').split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3).trim().toLowerCase()),
  );
  for (const a of alerts) {
    assert.ok(a.annotations?.['summary'], `${a.alert}: summary`);
    assert.equal(a.annotations?.['runbook'], `docs/runbooks.md#${a.alert.toLowerCase()}`);
    assert.equal(a.annotations?.['runbook_url'], undefined, `${a.alert}: no URL that leads nowhere`);
    assert.ok(headings.has(a.alert.toLowerCase()), `docs/runbooks.md must have a "## ${a.alert}" section`);
  }
});

test('every alert and every rule test series uses only metric names its exporter declares, and alerts key on their job', async () => {
  const agent = queryableNames(declaredSeriesNamesOf(await agentExposition()));
  const controller = declaredSeriesNamesOf(await controllerExposition());
  const uses = alertMetricUses();
  assert.deepEqual(unknownNames(usesOf(uses, 'agent'), agent), []);
  assert.deepEqual(unknownNames(usesOf(uses, 'controller'), controller), []);
  assert.deepEqual(unknownNames(usesOf(uses, 'kube-state-metrics'), new Set(KUBE_STATE_METRICS_NAMES)), []);
  assert.ok(usesOf(uses, 'controller').length === CONTROLLER_ALERTS.length && usesOf(uses, 'kube-state-metrics').length === 2,
    'precondition: the controller\'s alerts, NodePulseAgentMissing and NodePulseFleetRuntimeUnhealthy are read');
  const series = ruleTestSeries();
  assert.ok(series.length >= 20, `precondition: the rule tests' input series are read, found ${series.length}`);
  const named = (s: typeof series): Array<{ where: string; names: Set<string> }> => s.map((x) => ({ where: x.where, names: new Set([x.name]) }));
  assert.deepEqual(unknownNames(named(seriesOf(series, 'agent')), agent), []);
  assert.deepEqual(unknownNames(named(seriesOf(series, 'controller')), controller), []);
  for (const a of alerts) {
    if (KUBE_STATE_ONLY_ALERTS.includes(a.alert)) {
      assert.doesNotMatch(a.expr, /nodepulse_/, `${a.alert} reads kube-state-metrics only`);
      continue;
    }
    const job = CONTROLLER_ALERTS.includes(a.alert) ? 'nodepulse-controller' : 'nodepulse';
    assert.match(a.expr, new RegExp(`job="${job}"`), `${a.alert} must select job="${job}"`);
  }
});

/** The rule groups of every PrometheusRule in a render, in render order. */
function ruleGroupsOf(objects: readonly K8sObject[]): RuleGroups['groups'] {
  return objects.filter((o) => o.kind === 'PrometheusRule').flatMap((o) => (o['spec'] as RuleGroups).groups);
}

test('the kustomize and helm PrometheusRules carry exactly the plain file\'s groups, one PrometheusRule per group', () => {
  const helm = helmRunner();
  after(() => helm.close());
  const kustomize = renderKustomize('deploy/overlays/all');
  const rendered = helm.template(HELM_ALL_COMPONENTS);
  const byName = (groups: RuleGroups['groups']): Record<string, unknown> => Object.fromEntries(groups.map((g) => [g.name, g]));
  assert.deepEqual(byName(ruleGroupsOf(kustomize)), byName(plain.groups),
    'deploy/components/monitoring and controller-monitoring must carry the groups of deploy/prometheus/prometheus-rules.yaml verbatim');
  assert.deepEqual(byName(ruleGroupsOf(rendered)), byName(plain.groups), 'helm with the default values renders the plain file\'s numbers');
  for (const objects of [kustomize, rendered]) {
    assert.deepEqual(objects.filter((o) => o.kind === 'PrometheusRule').map((o) => (o['spec'] as RuleGroups).groups.length), [1, 1]);
  }
  assert.deepEqual(ruleGroupsOf(helm.template(['monitoring.enabled=true'])).map((g) => g.name), ['nodepulse'], 'the controller\'s alerts only with the controller');
});

test('helm adds a runbook_url to every alert from monitoring.prometheusRule.runbookURL, and none by default', () => {
  const helm = helmRunner();
  after(() => helm.close());
  const groups = ruleGroupsOf(helm.template([...HELM_ALL_COMPONENTS, 'monitoring.prometheusRule.runbookURL=https://wiki.example.org/nodepulse/runbooks.md']));
  const urls = groups.flatMap((g) => g.rules).map((r) => r.annotations?.['runbook_url']).sort();
  assert.deepEqual(urls, alerts.map((a) => `https://wiki.example.org/nodepulse/runbooks.md#${a.alert.toLowerCase()}`).sort());
  const byDefault = ruleGroupsOf(helm.template(HELM_ALL_COMPONENTS)).flatMap((g) => g.rules);
  assert.ok(byDefault.length === alerts.length, 'precondition: every alert is rendered');
  assert.deepEqual(byDefault.filter((r) => r.annotations?.['runbook_url'] !== undefined).map((r) => r.alert), []);
});

/** The alert expressions of a chart render, by alert name. */
function chartExprs(sets: readonly string[]): Record<string, string> {
  const helm = helmRunner();
  try {
    return Object.fromEntries(ruleGroupsOf(helm.template([...HELM_ALL_COMPONENTS, ...sets])).flatMap((g) => g.rules).map((r) => [r.alert ?? '', r.expr]));
  } finally {
    helm.close();
  }
}

/** The values chart-rules.test.yaml is written for. */
const CHART_RULES_VALUES = ['agent.relistDeadline=30s', 'controller.grace=30s', 'monitoring.prometheusRule.fleetUnhealthyPercent=25', 'image.architectures={amd64}'];

test('the chart\'s thresholds follow the values they depend on: the relist deadline, the readers\' grace, the fleet share and the image\'s architectures', () => {
  const defaults = chartExprs([]);
  const changed = chartExprs(CHART_RULES_VALUES);
  assert.match(defaults['NodePulseRelistHung'] ?? '', /_seconds\{job="nodepulse"\} > 10 /);
  assert.match(defaults['NodePulseRelistSlow'] ?? '', /\) > 3\.333 /);
  assert.match(changed['NodePulseRelistHung'] ?? '', /_seconds\{job="nodepulse"\} > 15 /);
  assert.match(changed['NodePulseRelistSlow'] ?? '', /\) > 5 /);
  assert.match(changed['NodePulseLeaseNotRenewing'] ?? '', /_seconds\{job="nodepulse"\} > 30 /);
  assert.match(defaults['NodePulseFleetRuntimeUnhealthy'] ?? '', /\n\s*> 10 /);
  assert.match(changed['NodePulseFleetRuntimeUnhealthy'] ?? '', /\n\s*> 25 /);
  assert.match(defaults['NodePulseAgentMissing'] ?? '', /kube_node_labels\{label_kubernetes_io_arch!~"amd64\|arm64\|"\}/);
  assert.match(changed['NodePulseAgentMissing'] ?? '', /kube_node_labels\{label_kubernetes_io_arch!~"amd64\|"\}/);
  const untouched = Object.keys(defaults).filter((a) => !['NodePulseRelistHung', 'NodePulseRelistSlow', 'NodePulseLeaseNotRenewing', 'NodePulseFleetRuntimeUnhealthy', 'NodePulseAgentMissing'].includes(a));
  assert.deepEqual(untouched.filter((a) => defaults[a] !== changed[a]), [], 'no other expression moves');
  assert.match(chartExprs(['agent.relistDeadline=50s'])['NodePulseRelistHung'] ?? '', / > 25 /);
  const anyArch = chartExprs(['image.architectures=null'])['NodePulseAgentMissing'] ?? '';
  assert.match(anyArch, /label_kubernetes_io_os/, 'precondition: the rest of the expression stays');
  assert.doesNotMatch(anyArch, /label_kubernetes_io_arch/, 'no architecture rule on the DaemonSet, no architecture clause in the alert');
});

test('NodePulseAgentMissing reads the list the DaemonSet\'s architecture rule is rendered from, in kustomize and in helm', () => {
  const archClause = (expr: string): string[] => /label_kubernetes_io_arch!~"([^"]*)"/.exec(expr)?.[1]?.split('|').filter((a) => a !== '').sort() ?? [];
  const helm = helmRunner();
  after(() => helm.close());
  for (const [what, objects] of [
    ['kustomize overlays/all', renderKustomize('deploy/overlays/all')],
    ['helm, every component', helm.template(HELM_ALL_COMPONENTS)],
    ['helm, amd64 alone', helm.template([...HELM_ALL_COMPONENTS, 'image.architectures={amd64}'])],
    ['helm, arm64 alone', helm.template([...HELM_ALL_COMPONENTS, 'image.architectures={arm64}'])],
  ] as const) {
    const expr = ruleGroupsOf(objects).flatMap((g) => g.rules).find((r) => r.alert === 'NodePulseAgentMissing')?.expr ?? '';
    const daemonSet = allowedArchitectures(only(objects, 'DaemonSet'));
    assert.ok(daemonSet !== undefined && daemonSet.length > 0, `precondition (${what}): the DaemonSet has the rule`);
    assert.deepEqual(archClause(expr), daemonSet, what);
  }
});

test('promtool test rules passes on the chart\'s rules rendered with non-default values (a 30s relist deadline, a 30s grace, a 25 % fleet share, amd64 alone)', (t) => {
  const tools = requireExecutables(t, ['promtool']);
  if (tools === undefined) return;
  const helm = helmRunner();
  const dir = mkdtempSync(join(tmpdir(), 'nodepulse-chart-rules-'));
  t.after(() => {
    helm.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const groups = ruleGroupsOf(helm.template([...HELM_ALL_COMPONENTS, ...CHART_RULES_VALUES]));
  writeFileSync(join(dir, 'chart-rules.yaml'), stringify({ groups }));
  copyFileSync(CHART_RULES_TESTS, join(dir, 'chart-rules.test.yaml'));
  assert.match(promtool(tools['promtool'] as string, ['test', 'rules', join(dir, 'chart-rules.test.yaml')]), /SUCCESS/);
  // The same tests against the defaults' numbers fail: they test the derived thresholds.
  copyFileSync(RULES_FILE, join(dir, 'chart-rules.yaml'));
  assert.throws(() => promtool(tools['promtool'] as string, ['test', 'rules', join(dir, 'chart-rules.test.yaml')]), /FAILED/,
    'precondition: the plain file, written for the defaults, fails these cases');
});
