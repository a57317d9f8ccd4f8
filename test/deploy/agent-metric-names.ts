// The metric names the agent exports, in ONE place, and a helper that finds the metric names a
// PromQL expression uses. The dashboard and the alert rules may use only these (plus `up`,
// which Prometheus itself writes per target).
//
// Assumption: this list is copied from the agent's metrics contract (issue 4) while the agent
// is being built. Once `nodepulse demo` runs, replace AGENT_METRIC_NAMES with the names read
// from a live /metrics scrape; nothing else here needs to change.

/** Families of nodepulse's own metrics. Histograms are listed by family name. */
export const NODEPULSE_METRIC_NAMES: readonly string[] = [
  'nodepulse_relist_duration_seconds',
  'nodepulse_relist_interval_seconds',
  'nodepulse_relist_last_success_timestamp_seconds',
  'nodepulse_relist_in_flight_seconds',
  'nodepulse_relist_failures_total',
  'nodepulse_runtime_healthy',
  'nodepulse_runtime_condition',
  'nodepulse_pods',
  'nodepulse_containers',
  'nodepulse_lifecycle_events_total',
  'nodepulse_lifecycle_events_dropped_total',
  'nodepulse_agent_alive',
  'nodepulse_lease_renewing',
  'nodepulse_lease_renewals_total',
  'nodepulse_lease_conflicts_total',
  'nodepulse_lease_last_renew_timestamp_seconds',
  'nodepulse_build_info',
];

/** prom-client's default process and Node.js metrics that the dashboard uses. */
export const DEFAULT_METRIC_NAMES: readonly string[] = [
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'process_start_time_seconds',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_heap_size_used_bytes',
];

export const HISTOGRAM_FAMILIES: readonly string[] = ['nodepulse_relist_duration_seconds', 'nodepulse_relist_interval_seconds'];

/** Series Prometheus writes itself for every target. */
export const PROMETHEUS_SYNTHETIC_NAMES: readonly string[] = ['up'];

/** Every series name a query may select: families, histogram series, and `up`. */
export const AGENT_METRIC_NAMES: ReadonlySet<string> = new Set([
  ...NODEPULSE_METRIC_NAMES,
  ...DEFAULT_METRIC_NAMES,
  ...HISTOGRAM_FAMILIES.flatMap((f) => [`${f}_bucket`, `${f}_sum`, `${f}_count`]),
  ...PROMETHEUS_SYNTHETIC_NAMES,
]);

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
 * The metric names an expression selects. Strings, label matchers `{...}`, label lists after
 * by/without/on/ignoring/group_left/group_right, range and offset durations, numbers and
 * Grafana variables ($node, $__rate_interval) are removed before identifiers are read.
 */
export function metricNamesIn(expr: string): Set<string> {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
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
