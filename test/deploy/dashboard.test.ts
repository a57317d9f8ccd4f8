// The Grafana dashboard: it parses, every query uses only metric names its exporter declares
// (the agent's and the controller's metrics modules, agent-metric-names.ts;
// test/prometheus/demo-scrape.test.ts checks the agent's against a live /metrics), and it has
// the panels the issues ask for.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { agentExposition, controllerExposition, declaredSeriesNamesOf, queryableNames } from './agent-metric-names.ts';
import { DASHBOARD_FILE, dashboardMetricUses, unknownNames, usesOf } from './metric-uses.ts';
import { HELM_ALL_COMPONENTS, helmRunner, only, renderKustomize } from './render.ts';
import { shippedAgentConfig } from '../matrix/shipped-defaults.ts';

interface Target {
  expr?: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  type: string;
  definition?: string;
  query?: unknown;
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, expr: t.expr ?? '' })));

test('the dashboard parses, with a uid, unique panel ids and a grid position for every panel', () => {
  assert.equal(dashboard.uid, 'nodepulse');
  assert.equal(new Set(panels.map((p) => p.id)).size, panels.length);
  for (const p of panels) assert.ok(p.gridPos, `${p.title}: gridPos`);
  assert.ok(queries.length >= 20, `precondition: the dashboard has its queries, found ${queries.length}`);
});

test('every dashboard query uses only metric names its exporter\'s metrics module declares', async () => {
  const known = queryableNames(declaredSeriesNamesOf(await agentExposition()));
  const uses = dashboardMetricUses();
  assert.ok(uses.length >= queries.length + 1, 'precondition: every panel query and the $node variable are read');
  assert.deepEqual(unknownNames(usesOf(uses, 'agent'), known), []);
  assert.deepEqual(unknownNames(usesOf(uses, 'controller'), declaredSeriesNamesOf(await controllerExposition())), []);
  assert.deepEqual(usesOf(uses, 'kube-state-metrics'), [], 'the dashboard needs nothing but nodepulse\'s own metrics');
  assert.deepEqual(unknownNames([{ where: 'a made-up panel', names: new Set(['nodepulse_made_up_seconds']) }], known), ['a made-up panel: nodepulse_made_up_seconds'],
    'an unknown name is reported, so the check can fail');
});

test('a node template variable drives the per-node drill-down', () => {
  const node = dashboard.templating.list.find((v) => v.name === 'node');
  assert.ok(node, 'a `node` variable must exist');
  assert.match(node.definition ?? '', /label_values\(nodepulse_build_info\{job="nodepulse"\}, node\)/);
  const drillDown = queries.filter(({ panel }) => panel.gridPos !== undefined && panel.gridPos.y > 13);
  assert.ok(drillDown.length > 0, 'precondition: panels below the fleet row exist');
  for (const { panel, expr } of drillDown) {
    if (panel.title === 'Agent versions' || expr.includes('job="nodepulse-controller"')) continue;
    assert.match(expr, /node=~"\$node"/, `${panel.title} must filter by $node`);
  }
});

test('the fleet row shows nodes renewing and withheld and agents that cannot observe; the relist rows show the heatmap, failures by reason and containers by state', () => {
  const byTitle = new Map(panels.map((p) => [p.title, p]));
  const expr = (title: string): string => byTitle.get(title)?.targets?.map((t) => t.expr).join('\n') ?? '';
  assert.match(expr('Nodes renewing'), /nodepulse_lease_renewing/);
  assert.match(expr('Nodes withheld'), /nodepulse_lease_renewing\{[^}]*\} == 0/);
  // An agent that cannot observe its runtime is the agent's or its install's fault, counted apart
  // from runtimes judged unhealthy, and shown per node beside the lease and the runtime.
  assert.match(expr('Agents that cannot observe'), /^count\(nodepulse_runtime_observable\{job="nodepulse"\} == 0\) or vector\(0\)$/);
  assert.match(expr('Lease renewing, agent alive, runtime healthy and runtime observable'), /max by \(node\) \(nodepulse_runtime_observable\{job="nodepulse", node=~"\$node"\}\)/);
  const fleetRow = panels.filter((p) => p.type !== 'row' && p.gridPos?.y === 1).sort((a, b) => (a.gridPos?.x ?? 0) - (b.gridPos?.x ?? 0));
  assert.equal(fleetRow.length, 7, 'precondition: the fleet row\'s stats');
  let x = 0;
  for (const p of fleetRow) {
    assert.equal(p.gridPos?.x, x, `${p.title} starts where the stat before it ends`);
    x += p.gridPos?.w ?? 0;
  }
  assert.equal(x, 24, 'the fleet row fills the dashboard\'s width');
  assert.equal(byTitle.get('Relist duration')?.type, 'heatmap');
  assert.match(expr('Relist duration'), /nodepulse_relist_duration_seconds_bucket/);
  assert.match(expr('Relist failures by reason'), /sum by \(reason\) \(rate\(nodepulse_relist_failures_total/);
  assert.match(expr('Containers by state'), /sum by \(state\) \(nodepulse_containers/);
});

test('the controller row shows the leader, the pauses by reason, the verdicts, the marks and the write errors', () => {
  const row = dashboard.panels.find((p) => p.type === 'row' && p.title === 'Controller');
  assert.ok(row?.gridPos, 'a Controller row must exist');
  const below = panels.filter((p) => p.type !== 'row' && (p.gridPos?.y ?? 0) > (row.gridPos?.y ?? 0));
  const exprs = below.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
  for (const metric of ['nodepulse_controller_leading', 'nodepulse_controller_marking_paused', 'nodepulse_controller_nodes', 'nodepulse_controller_marks_total', 'nodepulse_controller_write_errors_total']) {
    assert.ok(exprs.some((e) => e.includes(metric) && e.includes('job="nodepulse-controller"')), `a controller panel must query ${metric}`);
  }
  assert.ok(exprs.some((e) => /max by \(reason\) \(nodepulse_controller_marking_paused/.test(e)), 'pauses are shown by reason');
});

test('kustomize (grafana-dashboard) and helm (grafanaDashboard.enabled) ship the dashboard as the same ConfigMap, labelled for Grafana\'s sidecar', () => {
  const helm = helmRunner();
  after(() => helm.close());
  const text = readFileSync(DASHBOARD_FILE, 'utf8');
  for (const [what, objects] of [['kustomize all', renderKustomize('deploy/overlays/all')], ['helm', helm.template(HELM_ALL_COMPONENTS)]] as const) {
    const cm = only(objects, 'ConfigMap', 'nodepulse-dashboard') as { metadata: { namespace?: string; labels?: Record<string, string> }; data?: Record<string, string> };
    assert.equal(cm.metadata.namespace, 'nodepulse', what);
    assert.equal(cm.metadata.labels?.['grafana_dashboard'], '1', `${what}: the sidecar's default label`);
    assert.deepEqual(Object.keys(cm.data ?? {}), ['nodepulse.json'], what);
    assert.equal(cm.data?.['nodepulse.json'], text, `${what}: the dashboard file, byte for byte`);
  }
  assert.equal(helm.template([]).some((o) => o.kind === 'ConfigMap'), false, 'helm ships it only when asked');
  const relabelled = only(helm.template(['grafanaDashboard.enabled=true', 'grafanaDashboard.labels.dashboards=nodepulse', 'grafanaDashboard.annotations.grafana_folder=Nodes']), 'ConfigMap');
  assert.equal(relabelled.metadata.labels?.['dashboards'], 'nodepulse');
  assert.deepEqual(relabelled['metadata'] as unknown as { annotations: unknown }, { ...(relabelled['metadata'] as object), annotations: { grafana_folder: 'Nodes' } });
});

test("the time-since-last-relist panel turns red at the agent's default relist threshold", () => {
  const panel = panels.find((p) => p.title === 'Time since last successful relist') as (Panel & { description?: string; fieldConfig?: { defaults?: { thresholds?: { steps?: Array<{ color: string; value: number | null }> } } } }) | undefined;
  assert.ok(panel !== undefined, 'precondition: the panel is there');
  const red = panel.fieldConfig?.defaults?.thresholds?.steps?.find((s) => s.color === 'red')?.value;
  const thresholdS = shippedAgentConfig().relistThresholdMs / 1000;
  assert.equal(red, thresholdS, 'the red step is the threshold, in seconds');
  assert.match(panel.description ?? '', new RegExp(`\\(${thresholdS / 60}m by default\\)`), 'the description names it');
});
