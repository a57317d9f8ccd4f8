// A real Prometheus (Debian's, on loopback) scrapes a running `nodepulse demo` with the shipped
// alert rules, and the test reads the story back through Prometheus' HTTP API:
//
// | demo (its own clock)          | nodepulse_runtime_healthy | NodePulseRuntimeUnhealthy      |
// |-------------------------------|---------------------------|--------------------------------|
// | 0–12 s healthy                | 1                         | silent (no alert at all fires) |
// | 12 s hang, ~22 s Unhealthy    | 0                         | pending, then firing           |
// | 34 s recovers                 | 1                         | resolved                       |
//
// The rule file is deploy/prometheus/prometheus-rules.yaml itself, with ONE change made here:
// NodePulseRuntimeUnhealthy's `for` is 2s instead of 1m, so it can fire within the ~12 s hang.
// The scrape job mirrors the PodMonitor (deploy/components/monitoring/pod-monitor.yaml): its
// relabelings are translated into relabel_configs and the Pod's node name is given as the
// `__meta_kubernetes_pod_node_name` label the Kubernetes discovery would set, so the series
// carry job="nodepulse" and node="demo-node" exactly as in a cluster.
//
// The same run checks issue 5's acceptance 4 against a LIVE /metrics: every metric name the
// dashboard, the alert rules and the rule unit tests use is one the running agent exposes (and
// that Prometheus stored), and the unit tests' input series carry the label names it exposes.
//
// Real time, on purpose: this measures a real demo and a real Prometheus (about 50 s, the
// demo's own length). Every wait is bounded by a named constant.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { SystemClock, wallMs } from '../../src/clock/clock.ts';
import { agentFamilyMismatch, labelSetsOf, queryableNames, sampleNamesOf } from '../deploy/agent-metric-names.ts';
import { alertMetricUses, dashboardMetricUses, ruleTestSeries, RULES_FILE, seriesOf, unexposedLabelSets, unknownNames, usesOf } from '../deploy/metric-uses.ts';
import { REPO_ROOT } from '../deploy/render.ts';
import { freeLoopbackPort, startPrometheus, type PrometheusAlert } from '../support/prometheus.ts';
import { requireExecutables } from '../support/require.ts';

const NODE_24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const POD_MONITOR = join(REPO_ROOT, 'deploy', 'components', 'monitoring', 'pod-monitor.yaml');
const DEMO_NODE = 'demo-node';
const ALERT = 'NodePulseRuntimeUnhealthy';
/** The test's `for` of ALERT: two evaluations at 1 s, well inside the demo's ~12 s Unhealthy window. */
const SHORT_FOR = '2s';
/** The demo ends at 48 s; room for a slow, shared CI machine. */
const DEMO_BOUND_MS = 120_000;
/** The demo's agent serves /metrics in about 0.3 s and judges the runtime Healthy by 1 s. */
const DEMO_HEALTHY_MS = 15_000;
/** One reading of Prometheus (the healthy series and the alerts) per scrape interval. */
const POLL_MS = 1_000;
/** A direct GET of the demo's /metrics answers from memory. */
const SCRAPE_TIMEOUT_MS = 2_000;
/** Demo output kept for failure messages. */
const OUTPUT_BYTES = 64 * 1024;
/** Time for the demo to exit after SIGTERM before it is SIGKILLed in cleanup. */
const DEMO_STOP_MS = 5_000;
const HEALTHY_QUERY = `nodepulse_runtime_healthy{job="nodepulse", node="${DEMO_NODE}"}`;

interface RuleFileShape {
  groups: Array<{ name: string; rules: Array<{ alert?: string; for?: string } & Record<string, unknown>> }>;
}

/** The shipped rule file with only ALERT's `for` replaced; throws unless exactly that one rule changed. */
function rulesWithShortFor(): string {
  const shipped = parse(readFileSync(RULES_FILE, 'utf8')) as RuleFileShape;
  const changed = structuredClone(shipped);
  const targets = changed.groups.flatMap((g) => g.rules).filter((r) => r.alert === ALERT);
  assert.equal(targets.length, 1, `precondition: ${RULES_FILE} has exactly one ${ALERT}`);
  const target = targets[0] as { for?: string };
  assert.equal(target.for, '1m', `precondition: ${ALERT} ships with for: 1m`);
  target.for = SHORT_FOR;
  const differing = changed.groups.flatMap((g, gi) => g.rules.filter((r, ri) => JSON.stringify(r) !== JSON.stringify(shipped.groups[gi]?.rules[ri])));
  assert.deepEqual(differing.map((r) => r.alert), [ALERT], 'precondition: only the one for: changes');
  return stringify(changed);
}

const RELABEL_FIELDS: Readonly<Record<string, string>> = {
  action: 'action',
  sourceLabels: 'source_labels',
  separator: 'separator',
  targetLabel: 'target_label',
  regex: 'regex',
  modulus: 'modulus',
  replacement: 'replacement',
};

/** The PodMonitor's first endpoint as a Prometheus scrape job against one loopback target. */
function podMonitorScrapeJob(target: string): Record<string, unknown> {
  const pm = parse(readFileSync(POD_MONITOR, 'utf8')) as {
    metadata: { name: string; namespace: string };
    spec: { podMetricsEndpoints: Array<{ path?: string; relabelings?: Array<Record<string, unknown>> }> };
  };
  const endpoint = pm.spec.podMetricsEndpoints[0];
  assert.ok(endpoint, 'precondition: the PodMonitor has an endpoint');
  const relabelConfigs = (endpoint.relabelings ?? []).map((r) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => {
      const field = RELABEL_FIELDS[k];
      if (field === undefined) throw new Error(`PodMonitor relabeling: field ${k} must be one this test translates`);
      return [field, v];
    })));
  return {
    // The job name the Prometheus Operator generates; the relabeling must rewrite it to nodepulse.
    job_name: `podMonitor/${pm.metadata.namespace}/${pm.metadata.name}/0`,
    metrics_path: endpoint.path ?? '/metrics',
    static_configs: [{ targets: [target], labels: { __meta_kubernetes_pod_node_name: DEMO_NODE } }],
    relabel_configs: relabelConfigs,
  };
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** Consecutive duplicates removed: [1,1,0,0,1] → [1,0,1]. */
function collapse<T>(values: readonly T[]): T[] {
  return values.filter((v, i) => i === 0 || v !== values[i - 1]);
}

interface Reading {
  /** ms since the demo started, on the test's clock */
  readonly atMs: number;
  /** nodepulse_runtime_healthy as Prometheus answers it now, or undefined when it has none */
  readonly healthy: string | undefined;
  /** state of ALERT for demo-node: inactive, pending or firing */
  readonly alertState: string;
  readonly firing: readonly PrometheusAlert[];
  /** whether the demo had printed its hang step when this reading was taken */
  readonly afterHang: boolean;
}

test('a real Prometheus scraping nodepulse demo sees runtime_healthy go 1 → 0 → 1 and NodePulseRuntimeUnhealthy fire during the hang; every name the dashboard and rules use is live', { timeout: DEMO_BOUND_MS + 60_000 }, async (t) => {
  const tools = requireExecutables(t, ['prometheus']);
  if (tools === undefined) return;
  assert.ok(existsSync(CLI), `precondition: ${CLI} is built (npm run build)`);
  const clock = new SystemClock();

  const demoPort = await freeLoopbackPort();
  const metricsUrl = `http://127.0.0.1:${demoPort}/metrics`;
  const startedMs = clock.monotonicMs();
  const demo = spawn(NODE_24, [CLI, 'demo', '--http-address', `127.0.0.1:${demoPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  demo.stdout.setEncoding('utf8').on('data', (c: string) => (out = (out + c).slice(-OUTPUT_BYTES)));
  demo.stderr.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-OUTPUT_BYTES)));
  const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
  const demoRunning = (): boolean => demo.exitCode === null && demo.signalCode === null;
  t.after(async () => {
    if (!demoRunning()) return;
    demo.kill('SIGTERM');
    const stopped = await Promise.race([exited.then(() => true), clock.sleep(DEMO_STOP_MS).then(() => false)]);
    if (!stopped) demo.kill('SIGKILL');
    await exited;
  });
  const context = (): string => `demo stdout:\n${out}\ndemo stderr:\n${err}`;

  // 1. The demo's agent is up and judges the runtime Healthy before Prometheus starts, so every
  //    sample Prometheus takes begins the 1 → 0 → 1 story at 1.
  const live: string[] = [];
  for (;;) {
    assert.ok(demoRunning(), `the demo exited before it was healthy\n${context()}`);
    assert.ok(clock.monotonicMs() - startedMs < DEMO_HEALTHY_MS, `the demo's runtime must be Healthy within ${DEMO_HEALTHY_MS} ms\n${context()}`);
    const body = await scrape(metricsUrl).catch(() => '');
    if (/^nodepulse_runtime_healthy 1$/m.test(body)) {
      live.push(body);
      break;
    }
    await clock.sleep(100);
  }

  const prom = await startPrometheus(t, {
    binary: tools['prometheus'] ?? 'prometheus',
    scrapeConfigs: [podMonitorScrapeJob(`127.0.0.1:${demoPort}`)],
    ruleFiles: [{ name: 'prometheus-rules.yaml', text: rulesWithShortFor() }],
    scrapeIntervalS: 1,
    evaluationIntervalS: 1,
    clock,
  });
  const promStartS = wallMs(clock) / 1000;

  // 2. One reading per second until the demo ends by itself.
  const readings: Reading[] = [];
  let hungBody: string | undefined;
  while (demoRunning()) {
    assert.ok(clock.monotonicMs() - startedMs < DEMO_BOUND_MS, `the demo must end within ${DEMO_BOUND_MS} ms\n${context()}`);
    const afterHang = out.includes('SCENARIO: the runtime hangs');
    const [healthy, alerts] = await Promise.all([prom.query(HEALTHY_QUERY), prom.alerts()]);
    const mine = alerts.filter((a) => a.labels['alertname'] === ALERT && a.labels['node'] === DEMO_NODE);
    readings.push({
      atMs: clock.monotonicMs() - startedMs,
      healthy: healthy[0]?.value[1],
      alertState: mine[0]?.state ?? 'inactive',
      firing: alerts.filter((a) => a.state === 'firing'),
      afterHang,
    });
    if (healthy[0]?.value[1] === '0' && hungBody === undefined) {
      hungBody = await scrape(metricsUrl).catch(() => undefined);
    }
    await clock.sleep(POLL_MS);
  }
  const code = await exited;
  assert.equal(code, 0, `the demo must see every step and exit 0\n${context()}`);
  const endS = wallMs(clock) / 1000;
  const trace = readings.map((r) => `${(r.atMs / 1000).toFixed(1)}s healthy=${r.healthy} ${ALERT}=${r.alertState}`).join('\n');

  // 3. nodepulse_runtime_healthy, read back from Prometheus' TSDB over the whole run, goes 1 → 0 → 1.
  const range = await prom.queryRange(HEALTHY_QUERY, { startS: promStartS, endS, stepS: 1 });
  assert.equal(range.length, 1, `one series for ${HEALTHY_QUERY}, got ${JSON.stringify(range.map((s) => s.metric))}`);
  assert.deepEqual(collapse(range[0]?.values.map(([, v]) => v) ?? []), ['1', '0', '1'], `query_range of ${HEALTHY_QUERY}:\n${JSON.stringify(range[0]?.values)}`);
  assert.equal(range[0]?.metric['job'], 'nodepulse', 'the PodMonitor relabeling names the job nodepulse');
  assert.deepEqual(collapse(readings.flatMap((r) => (r.healthy === undefined ? [] : [r.healthy]))), ['1', '0', '1'], `instant queries while the demo ran:\n${trace}`);

  // 4. The alert: silent while healthy, pending then firing during the hang, resolved after.
  const beforeHang = readings.filter((r) => !r.afterHang);
  assert.ok(beforeHang.length >= 3, `precondition: Prometheus was read while the demo was still healthy:\n${trace}`);
  assert.deepEqual(beforeHang.flatMap((r) => r.firing.map((a) => a.labels['alertname'])), [], `no alert fires while the demo is healthy:\n${trace}`);
  const firing = readings.filter((r) => r.alertState === 'firing');
  assert.ok(firing.length > 0, `${ALERT} must fire during the hang:\n${trace}`);
  assert.ok(firing.every((r) => r.afterHang), `${ALERT} fires only after the hang began:\n${trace}`);
  // Rules are evaluated on their own 1 s tick, so the alert may trail the series by one reading.
  const firstZero = readings.findIndex((r) => r.healthy === '0');
  const recovered = readings.findIndex((r, i) => i > firstZero && r.healthy === '1');
  assert.ok(firstZero >= 0 && recovered > firstZero, `precondition: Prometheus saw the runtime go 0 and back to 1:\n${trace}`);
  assert.deepEqual(readings.slice(recovered + 2).filter((r) => r.alertState !== 'inactive').map((r) => r.atMs), [],
    `${ALERT} is resolved once Prometheus holds runtime_healthy 1 again:\n${trace}`);
  const states = collapse(readings.map((r) => r.alertState));
  assert.deepEqual(states.slice(states.indexOf('firing')), ['firing', 'inactive'], `${ALERT} resolves once the runtime recovers:\n${trace}`);
  const firedAlert = readings.flatMap((r) => r.firing).find((a) => a.labels['alertname'] === ALERT);
  assert.deepEqual(firedAlert?.labels, { alertname: ALERT, job: 'nodepulse', node: DEMO_NODE, instance: `127.0.0.1:${demoPort}`, severity: 'warning' });
  assert.equal(firedAlert?.annotations['summary'], `The container runtime on ${DEMO_NODE} has not answered a relist within the relist threshold.`);

  // 5. Issue 5, acceptance 4: names checked against the live /metrics of the running demo.
  assert.ok(hungBody !== undefined, `precondition: the demo's /metrics was read during the hang:\n${trace}`);
  live.push(hungBody);
  const exposed = new Set(live.flatMap((body) => [...sampleNamesOf(body)]));
  for (const body of live) assert.deepEqual(agentFamilyMismatch(body), { missing: [], unlisted: [] }, 'the live agent exposes exactly the families of AGENT_METRIC_NAMES');
  const known = queryableNames(exposed);
  // The agent's names only: the controller's and kube-state-metrics' are checked in test/deploy.
  const dashboard = usesOf(dashboardMetricUses(), 'agent');
  const alertUses = usesOf(alertMetricUses(), 'agent');
  const series = seriesOf(ruleTestSeries(), 'agent');
  assert.ok(dashboard.length >= 20 && alertUses.length === 9 && series.length >= 20, 'precondition: the dashboard, rules and rule tests are read');
  assert.deepEqual(unknownNames(dashboard, known), [], 'every dashboard query uses only names the live /metrics exposes');
  assert.deepEqual(unknownNames(alertUses, known), [], 'every alert uses only names the live /metrics exposes');
  assert.deepEqual(unknownNames(series.map((s) => ({ where: s.where, names: new Set([s.name]) })), known), [], 'every rule test series is named as the live /metrics names it');
  const labelSets = new Map<string, Set<string>>();
  for (const body of live) for (const [name, sets] of labelSetsOf(body)) labelSets.set(name, new Set([...(labelSets.get(name) ?? []), ...sets]));
  assert.deepEqual(unexposedLabelSets(series, labelSets), [], 'every rule test series carries the label names the live /metrics gives it, plus target labels');
  const stored = new Set(await prom.labelValues('__name__'));
  const used = new Set([...dashboard, ...alertUses].flatMap((u) => [...u.names]));
  assert.deepEqual([...used].filter((n) => !stored.has(n)).sort(), [], 'Prometheus stored every name the dashboard and rules use');
});
