// The alert rules: promtool checks them and runs their unit tests (real promtool, from
// Debian's prometheus package); the PrometheusRule copies agree with the plain file; each
// alert the issue names exists, uses only metrics the agent exports, and links its runbook.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { requireExecutables } from '../support/require.ts';
import { agentExposition, declaredSeriesNamesOf, queryableNames } from './agent-metric-names.ts';
import { alertMetricUses, ruleTestSeries, unknownNames } from './metric-uses.ts';
import { HELM_ALL_COMPONENTS, helmRunner, only, REPO_ROOT, renderKustomize } from './render.ts';

const RULES_FILE = join(REPO_ROOT, 'deploy', 'prometheus', 'prometheus-rules.yaml');
const RULES_TESTS = join(REPO_ROOT, 'deploy', 'prometheus', 'rules.test.yaml');
const RUNBOOKS = join(REPO_ROOT, 'docs', 'runbooks.md');
const PROMTOOL_TIMEOUT_MS = 60_000;

const ISSUE_ALERTS = [
  'NodePulseRuntimeUnhealthy',
  'NodePulseRuntimeNotReady',
  'NodePulseRelistSlow',
  'NodePulseRelistHung',
  'NodePulseLeaseNotRenewing',
  'NodePulseAgentDown',
  'NodePulseResponseTooLarge',
];

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
  assert.match(promtool(tools['promtool'] as string, ['check', 'rules', RULES_FILE]), /SUCCESS: 7 rules found/);
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

test('the rule file holds exactly the alerts the issue names', () => {
  assert.deepEqual(alerts.map((a) => a.alert).sort(), [...ISSUE_ALERTS].sort());
});

test('every alert has a severity, a summary, and a runbook_url that points at its own section of docs/runbooks.md', () => {
  const headings = new Set(
    readFileSync(RUNBOOKS, 'utf8').split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3).trim().toLowerCase()),
  );
  for (const a of alerts) {
    assert.match(a.labels?.['severity'] ?? '', /^(warning|critical)$/, `${a.alert}: severity`);
    assert.ok(a.annotations?.['summary'], `${a.alert}: summary`);
    assert.equal(a.annotations?.['runbook_url'], `https://github.com/nodepulse/nodepulse/blob/main/docs/runbooks.md#${a.alert.toLowerCase()}`);
    assert.ok(headings.has(a.alert.toLowerCase()), `docs/runbooks.md must have a "## ${a.alert}" section`);
  }
});

test('every alert and every rule test series uses only metric names the agent\'s metrics module declares, and alerts key on job="nodepulse"', async () => {
  const known = queryableNames(declaredSeriesNamesOf(await agentExposition()));
  assert.deepEqual(unknownNames(alertMetricUses(), known), []);
  const series = ruleTestSeries();
  assert.ok(series.length >= 20, `precondition: the rule tests' input series are read, found ${series.length}`);
  assert.deepEqual(unknownNames(series.map((s) => ({ where: s.where, names: new Set([s.name]) })), known), []);
  for (const a of alerts) assert.match(a.expr, /job="nodepulse"/, `${a.alert} must select job="nodepulse"`);
});

test('the kustomize and helm PrometheusRules carry exactly the plain file\'s groups', () => {
  const helm = helmRunner();
  after(() => helm.close());
  const fromKustomize = only(renderKustomize('deploy/overlays/all'), 'PrometheusRule')['spec'];
  const fromHelm = only(helm.template(HELM_ALL_COMPONENTS), 'PrometheusRule')['spec'];
  assert.deepEqual(fromKustomize, { groups: plain.groups },
    'deploy/components/monitoring/prometheus-rule.yaml must carry the groups of deploy/prometheus/prometheus-rules.yaml verbatim');
  assert.deepEqual(fromHelm, { groups: plain.groups });
});

test('helm rewrites every runbook_url to the configured base', () => {
  const helm = helmRunner();
  after(() => helm.close());
  const spec = only(helm.template([...HELM_ALL_COMPONENTS, 'monitoring.prometheusRule.runbookURL=https://wiki.example.org/nodepulse']), 'PrometheusRule')['spec'] as RuleGroups;
  const urls = spec.groups.flatMap((g) => g.rules).map((r) => r.annotations?.['runbook_url']);
  assert.deepEqual(urls, alerts.map((a) => `https://wiki.example.org/nodepulse#${a.alert.toLowerCase()}`));
});
