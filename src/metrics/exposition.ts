// The /metrics body for a registry, in the format the scraper asked for: Prometheus text 0.0.4 by
// default, OpenMetrics 1.0 when the Accept header lists application/openmetrics-text (Prometheus
// itself asks for it first).
//
// Why OpenMetrics is rendered here and not by prom-client: prom-client picks the format per
// Registry, and its OpenMetrics path renames every counter object in place (it strips `_total`
// from metric.name), so one scrape in OpenMetrics would make every later Prometheus-text scrape of
// the same registry lose its `_total` suffixes. Rendering OpenMetrics from getMetricsAsJSON()
// leaves the registry untouched, and both formats can be served from one registry at once.
//
// OpenMetrics rules followed (openmetrics.io spec 1.0): a counter family is named without
// `_total` and its sample with it; histogram samples are `_bucket` (with `le`, ending at +Inf),
// `_sum` and `_count`; label values escape `\`, `"` and newline; HELP escapes `\`, `"` and
// newline; the body ends with `# EOF`.
import { Registry } from './prom-client.ts';

export const PROMETHEUS_TEXT_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;
export const OPENMETRICS_CONTENT_TYPE = Registry.OPENMETRICS_CONTENT_TYPE;

export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

/** True when an Accept header asks for OpenMetrics (with a q above 0). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (type !== 'application/openmetrics-text') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export async function exposition(registry: Registry, accept: string | undefined): Promise<Exposition> {
  if (wantsOpenMetrics(accept)) return { contentType: OPENMETRICS_CONTENT_TYPE, body: await renderOpenMetrics(registry) };
  return { contentType: PROMETHEUS_TEXT_CONTENT_TYPE, body: await registry.metrics() };
}

interface JsonValue {
  readonly value: number;
  readonly labels?: Readonly<Record<string, string | number>>;
  readonly metricName?: string;
}

interface JsonMetric {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly values: readonly JsonValue[];
}

export async function renderOpenMetrics(registry: Registry): Promise<string> {
  const metrics = (await registry.getMetricsAsJSON()) as unknown as readonly JsonMetric[];
  const lines: string[] = [];
  for (const metric of metrics) {
    const counter = metric.type === 'counter';
    const family = counter ? metric.name.replace(/_total$/, '') : metric.name;
    lines.push(`# TYPE ${family} ${metric.type}`, `# HELP ${family} ${escapeHelp(metric.help)}`);
    for (const v of metric.values) {
      const name = counter ? `${family}_total` : (v.metricName ?? metric.name);
      lines.push(`${name}${formatLabels(v.labels)} ${formatValue(v.value)}`);
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

function formatLabels(labels: Readonly<Record<string, string | number>> | undefined): string {
  if (labels === undefined) return '';
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(typeof v === 'number' ? formatValue(v) : v)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}

function escapeLabel(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
