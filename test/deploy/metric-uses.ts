// Where the shipped monitoring artefacts name metrics: every query of the Grafana dashboard
// (panels and template variables), every alert expression of deploy/prometheus/
// prometheus-rules.yaml, and every input series of its promtool unit tests. Each use carries
// where it comes from, so a failure names the panel, alert or test case.
//
// unknownNames and unexposedLabelSets compare those uses with what an agent exposes (see
// agent-metric-names.ts): the first by name, the second by the label names a rule test's series
// carries beyond the target labels the scrape adds.
//
// Failure modes: a file that does not parse throws (JSON or YAML error); a rule test series that
// is not `name{label="value", …}` throws with the series text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { metricNamesIn } from './agent-metric-names.ts';
import { REPO_ROOT } from './render.ts';

export const DASHBOARD_FILE = join(REPO_ROOT, 'deploy', 'components', 'grafana-dashboard', 'nodepulse.json');
export const RULES_FILE = join(REPO_ROOT, 'deploy', 'prometheus', 'prometheus-rules.yaml');
export const RULES_TESTS_FILE = join(REPO_ROOT, 'deploy', 'prometheus', 'rules.test.yaml');

/**
 * Labels a scrape adds to every series of a target: job and instance (Prometheus), node (the
 * PodMonitor's relabeling, or the plain scrape config in docs/install.md), namespace, pod,
 * container and endpoint (the Prometheus Operator's PodMonitor).
 */
export const TARGET_LABELS: ReadonlySet<string> = new Set(['job', 'instance', 'node', 'namespace', 'pod', 'container', 'endpoint']);

/**
 * Names the shipped rules read from kube-state-metrics (NodePulseAgentMissing,
 * NodePulseFleetRuntimeUnhealthy), as its docs name them; no kube-state-metrics runs here, so
 * this list is the contract.
 */
export const KUBE_STATE_METRICS_NAMES: readonly string[] = ['kube_node_info', 'kube_node_labels', 'kube_node_status_condition'];

/** Which exporter writes a metric name: the agent (and Prometheus' own `up`), the controller, or kube-state-metrics. */
export function exporterOf(name: string): 'agent' | 'controller' | 'kube-state-metrics' {
  if (name.startsWith('nodepulse_controller_')) return 'controller';
  if (KUBE_STATE_METRICS_NAMES.includes(name)) return 'kube-state-metrics';
  return 'agent';
}

/** The uses restricted to the names one exporter writes; uses left with no name are dropped. */
export function usesOf(uses: readonly MetricUse[], exporter: ReturnType<typeof exporterOf>): MetricUse[] {
  return uses
    .map((u) => ({ where: u.where, names: new Set([...u.names].filter((n) => exporterOf(n) === exporter)) }))
    .filter((u) => u.names.size > 0);
}

/** The series of the rule tests that one exporter writes. */
export function seriesOf(series: readonly SeriesUse[], exporter: ReturnType<typeof exporterOf>): SeriesUse[] {
  return series.filter((s) => exporterOf(s.name) === exporter);
}

export interface MetricUse {
  /** e.g. `dashboard panel "Relist duration"`, `alert NodePulseRelistSlow` */
  readonly where: string;
  readonly names: ReadonlySet<string>;
}

export interface SeriesUse {
  readonly where: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

interface Panel {
  title: string;
  targets?: Array<{ expr?: string }>;
  panels?: Panel[];
}

/** Every dashboard query and `label_values(...)` variable, with the names it selects. */
export function dashboardMetricUses(): MetricUse[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: Panel[]; templating: { list: Array<{ name: string; definition?: string }> } };
  const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
  const queries = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `dashboard panel "${p.title}"`, names: metricNamesIn(t.expr ?? '') })));
  const variables = dashboard.templating.list.flatMap((v) => {
    if (v.definition === undefined) return [];
    const inner = /label_values\((.*),\s*\w+\)/.exec(v.definition)?.[1] ?? '';
    return [{ where: `dashboard variable $${v.name}`, names: metricNamesIn(inner) }];
  });
  return [...queries, ...variables];
}

/** The rule groups of the plain rule file, parsed. */
export function ruleGroups(): Array<{ name: string; rules: Array<{ alert?: string; record?: string; expr: string; for?: string }> }> {
  return (parse(readFileSync(RULES_FILE, 'utf8')) as { groups: ReturnType<typeof ruleGroups> }).groups;
}

/** Every alert (and recording rule) expression, with the names it selects. */
export function alertMetricUses(): MetricUse[] {
  return ruleGroups().flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert ?? r.record ?? '?'}`, names: metricNamesIn(r.expr) })));
}

const SERIES = /^\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*\{(.*)\}\s*$/;
const SERIES_LABEL = /\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)/gy;

/** Parses `name{a="x", b="y"}` (the form promtool's input_series take). */
export function parseSeries(text: string): { name: string; labels: Record<string, string> } {
  const m = SERIES.exec(text);
  if (m === null) throw new Error(`series: ${JSON.stringify(text)} must be name{label="value", ...}`);
  const labels: Record<string, string> = {};
  const body = m[2] ?? '';
  let consumed = 0;
  for (const pair of body.matchAll(SERIES_LABEL)) {
    labels[pair[1] ?? ''] = pair[2] ?? '';
    consumed = (pair.index ?? 0) + pair[0].length;
  }
  if (body.slice(consumed).trim() !== '') throw new Error(`series: ${JSON.stringify(text)} must be name{label="value", ...}`);
  return { name: m[1] ?? '', labels };
}

/** Every input series of the promtool unit tests. */
export function ruleTestSeries(): SeriesUse[] {
  const tests = (parse(readFileSync(RULES_TESTS_FILE, 'utf8')) as { tests: Array<{ name?: string; input_series?: Array<{ series: string }> }> }).tests;
  return tests.flatMap((t, i) => (t.input_series ?? []).map((s) => ({ where: `rule test "${t.name ?? `#${i}`}"`, ...parseSeries(s.series) })));
}

/** `where: name` for every used name not in `known`; empty when all are known. */
export function unknownNames(uses: readonly MetricUse[], known: ReadonlySet<string>): string[] {
  return uses.flatMap((u) => [...u.names].filter((n) => !known.has(n)).map((n) => `${u.where}: ${n}`));
}

/**
 * `where: series` for every rule test series whose own labels (those beyond TARGET_LABELS) are
 * not a label set the exposition gives that name (`labelSets` from labelSetsOf). Series named by
 * Prometheus itself (`up`) carry target labels only.
 */
export function unexposedLabelSets(series: readonly SeriesUse[], labelSets: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  return series.flatMap((s) => {
    const own = Object.keys(s.labels).filter((l) => !TARGET_LABELS.has(l)).sort().join(',');
    const known = s.name === 'up' ? new Set(['']) : (labelSets.get(s.name) ?? new Set<string>());
    return known.has(own) ? [] : [`${s.where}: ${s.name}{${own}} (exposed: ${[...known].map((k) => `{${k}}`).join(' ') || 'none'})`];
  });
}
