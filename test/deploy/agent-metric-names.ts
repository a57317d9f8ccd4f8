// The metric names the agent exports, read from what it actually exposes, and a helper that
// finds the metric names a PromQL expression uses. The dashboard, the alert rules and the rule
// unit tests may use only these (plus `up`, which Prometheus itself writes per target).
//
// Two sources, one rule:
// - a live /metrics body (the running demo's, in test/prometheus/demo-scrape.test.ts): the
//   SAMPLE names it carries, which are exactly the series Prometheus stores from it;
// - the agent's own metrics module, in process (agentExposition): the series names its registry
//   DECLARES (sample names plus the names its `# TYPE` lines imply), so a family that has no
//   sample until the runtime reports something (nodepulse_runtime_condition{type}) still counts.
// Both are checked against AGENT_METRIC_NAMES from src/metrics/metrics.ts, the agent's own list
// of its families (agentFamilyMismatch), so the list, the registry and the live agent agree.
//
// Assumption: bodies are in the Prometheus text format 0.0.4 (what /metrics answers to a plain
// GET), where a counter's TYPE line already carries its `_total`. An OpenMetrics body would name
// counter families without it; nothing here reads one.
import { Registry } from 'prom-client';
import { ManualClock } from '../../src/clock/manual-clock.ts';
import { createControllerMetrics } from '../../src/controller/controller-metrics.ts';
import { AGENT_METRIC_NAMES, createAgentMetrics } from '../../src/metrics/metrics.ts';

/** Series Prometheus writes itself for every target. */
export const PROMETHEUS_SYNTHETIC_NAMES: readonly string[] = ['up'];

const SAMPLE_LINE = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+\S+/;
const TYPE_LINE = /^# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) (counter|gauge|histogram|summary|untyped)\s*$/;
const LABEL_PAIR = /([A-Za-z_][A-Za-z0-9_]*)="(?:[^"\\]|\\.)*"/g;

/** The names of the samples in an exposition body: the series a scrape of it yields. */
export function sampleNamesOf(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const m = line.startsWith('#') ? null : SAMPLE_LINE.exec(line);
    if (m?.[1] !== undefined) names.add(m[1]);
  }
  return names;
}

/** Sample names plus the series every `# TYPE` line declares (a histogram's _bucket/_sum/_count…). */
export function declaredSeriesNamesOf(text: string): Set<string> {
  const names = sampleNamesOf(text);
  for (const line of text.split('\n')) {
    const m = TYPE_LINE.exec(line);
    if (m === null) continue;
    const [, family = '', type] = m;
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${family}${s}`);
    else if (type === 'summary') for (const s of ['', '_sum', '_count']) names.add(`${family}${s}`);
    else names.add(family);
  }
  return names;
}

/** Per sample name, every distinct set of label names its samples carry (sorted, comma-joined). */
export function labelSetsOf(text: string): Map<string, Set<string>> {
  const sets = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const m = line.startsWith('#') ? null : SAMPLE_LINE.exec(line);
    if (m?.[1] === undefined) continue;
    const labels = [...(m[2] ?? '').matchAll(LABEL_PAIR)].map((p) => p[1] ?? '').sort().join(',');
    const known = sets.get(m[1]) ?? new Set<string>();
    known.add(labels);
    sets.set(m[1], known);
  }
  return sets;
}

/** The nodepulse_ families AGENT_METRIC_NAMES lists but the body lacks, and those it has but the list lacks. */
export function agentFamilyMismatch(text: string): { missing: string[]; unlisted: string[] } {
  const families = new Set<string>();
  for (const line of text.split('\n')) {
    const family = TYPE_LINE.exec(line)?.[1];
    if (family?.startsWith('nodepulse_') === true) families.add(family);
  }
  const listed = new Set<string>(AGENT_METRIC_NAMES);
  return {
    missing: [...listed].filter((f) => !families.has(f)).sort(),
    unlisted: [...families].filter((f) => !listed.has(f)).sort(),
  };
}

/**
 * The exposition of the agent's own metrics module on a fresh registry, with every metric the
 * agent creates (its families and prom-client's default process and Node.js metrics), before any
 * relist: what the agent's /metrics declares at start.
 */
export async function agentExposition(): Promise<string> {
  const registry = new Registry();
  createAgentMetrics(registry, { relistDeadlineMs: 60_000, version: '0.0.0-names', clock: new ManualClock() });
  return registry.metrics();
}

/**
 * The series names the controller's metrics module declares (its own registry, as
 * `nodepulse controller` serves them on /metrics).
 */
export async function controllerExposition(): Promise<string> {
  const registry = new Registry();
  createControllerMetrics(registry);
  return registry.metrics();
}

/** Every name a query may select, given the series names a /metrics body offers. */
export function queryableNames(seriesNames: Iterable<string>): Set<string> {
  return new Set([...seriesNames, ...PROMETHEUS_SYNTHETIC_NAMES]);
}

// PromQL words that are not metric names: functions, aggregations, keywords and set operators.
const PROMQL_WORDS = new Set([
  'abs', 'absent', 'absent_over_time', 'avg', 'avg_over_time', 'bool', 'bottomk', 'by', 'ceil',
  'changes', 'clamp', 'clamp_max', 'clamp_min', 'count', 'count_over_time', 'count_values', 'delta',
  'deriv', 'floor', 'group', 'group_left', 'group_right', 'histogram_quantile', 'idelta', 'ignoring',
  'increase', 'irate', 'label_join', 'label_replace', 'last_over_time', 'max', 'max_over_time', 'min',
  'min_over_time', 'offset', 'on', 'or', 'and', 'unless', 'predict_linear', 'quantile',
  'quantile_over_time', 'rate', 'resets', 'round', 'scalar', 'sort', 'sort_desc', 'stddev', 'stdvar',
  'sum', 'sum_over_time', 'time', 'timestamp', 'topk', 'vector', 'without', 'inf', 'nan',
]);

/**
 * The metric names an expression selects. Strings, `#` comments, label matchers `{...}`, label lists after
 * by/without/on/ignoring/group_left/group_right, range and offset durations, numbers and
 * Grafana variables ($node, $__rate_interval) are removed before identifiers are read.
 */
export function metricNamesIn(expr: string): Set<string> {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/#[^\n]*/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, ' ')
    .replace(/\b\d+(\.\d+)?(e[+-]?\d+)?[smhdwy]?\b/gi, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    if (!PROMQL_WORDS.has(word.toLowerCase())) names.add(word);
  }
  return names;
}
