// The fault matrix's two runs, and the timings each one's windows are derived from:
//
// | run      | the agent's flags                        | the readers' flags | where                       |
// |----------|------------------------------------------|--------------------|-----------------------------|
// | ci       | threshold 6s, deadline 2s, lease 4s (renew | grace 15s, monitor | fault-matrix.test.ts, in    |
// |          | 1s), API timeout 4s                       | period 1s          | `npm test` (shared cluster) |
// | defaults | none: the shipped defaults                | none               | `npm run matrix:cluster`,   |
// |          |                                          |                    | recorded in docs/           |
//
// Each run's timings come from the agent's own config loader given its flags (so the defaults are
// the shipped ones, not a copy), the controller's and fleet's defaults, and the DaemonSet's
// liveness probe and termination grace as deploy/base ships them. The rest are the matrix's
// allowances on this machine: one API request (L), the slowest normal relist (d, from the
// relist-latency run, rounded up), a pod's restart and the agent's start, and the slack for
// watching through a poll on a loaded machine.
//
// Why the CI run's numbers: the threshold is the shortest that keeps five times the slowest relist
// measured here (1.14 s) below it; the grace is the shortest the runtime rows' rule allows (the
// agent's True must land before the lease reads stale: matrix-rows.ts refuses less); and only the
// rows listed in CI_READER_ROWS wait for fleet's Stale, so that the rest end once nodepulse spoke.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadAgentConfig } from '../../src/config/load-agent-config.ts';
import { parseDuration } from '../../src/clock/duration.ts';
import { DEFAULT_MONITOR_PERIOD_MS } from '../../src/controller/fleet-controller.ts';
import { DEFAULT_GRACE_MS } from '../../src/fleet/fleet-view.ts';
import { KUBELET_DEFAULTS } from './kubelet-model.ts';
import type { MatrixTimings, RowId } from './matrix-rows.ts';

export interface MatrixSettings {
  readonly name: 'ci' | 'defaults';
  readonly agentArgs: readonly string[];
  readonly controllerArgs: readonly string[];
  /** `nodepulse fleet --grace`, as the controller's. */
  readonly fleetGrace: string;
  readonly timings: MatrixTimings;
}

export const CI_AGENT_ARGS = ['--relist-threshold=6s', '--relist-deadline=2s', '--lease-duration=4s', '--api-timeout=4s'] as const;
export const CI_GRACE = '15s';
export const CI_MONITOR_PERIOD = '1s';
export const CI_READER_ROWS: readonly RowId[] = ['runtime-hangs', 'api-unreachable'];

/** The matrix's allowances on this machine (see the header). */
const ALLOWANCES = {
  apiLatencyMs: 1_500,
  slowestRelistMs: 1_500,
  agentStartMs: 8_000,
  podRestartMs: 20_000,
} as const;

const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** The shipped DaemonSet's liveness probe and termination grace. */
function probeOfDaemonSet(): Pick<MatrixTimings, 'livenessPeriodMs' | 'livenessTimeoutMs' | 'livenessFailures' | 'terminationGraceMs'> {
  const ds = parse(readFileSync(join(REPO_ROOT, 'deploy', 'base', 'daemonset.yaml'), 'utf8')) as {
    spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Array<{ livenessProbe: { periodSeconds: number; timeoutSeconds: number; failureThreshold: number } }> } } };
  };
  const pod = ds.spec.template.spec;
  const probe = pod.containers[0]?.livenessProbe;
  if (probe === undefined) throw new Error('deploy/base/daemonset.yaml: the agent must have a liveness probe');
  return { livenessPeriodMs: probe.periodSeconds * 1000, livenessTimeoutMs: probe.timeoutSeconds * 1000, livenessFailures: probe.failureThreshold, terminationGraceMs: pod.terminationGracePeriodSeconds * 1000 };
}

function agentConfig(args: readonly string[]): ReturnType<typeof loadAgentConfig> & { ok: true } {
  const loaded = loadAgentConfig({ argv: ['--node-name', 'matrix', ...args], env: {}, readFile: (path) => { throw new Error(`no config file: ${path}`); } });
  if (!loaded.ok) throw new Error(`the matrix's agent flags must load: ${loaded.error.lines.join('; ')}`);
  return loaded;
}

function ms(text: string): number {
  const value = parseDuration(text);
  if (value === undefined) throw new Error(`duration: ${text} must be a duration`);
  return value;
}

export function matrixSettings(name: 'ci' | 'defaults'): MatrixSettings {
  const ci = name === 'ci';
  const agentArgs = ci ? [...CI_AGENT_ARGS] : [];
  const { config } = agentConfig(agentArgs);
  const graceMs = ci ? ms(CI_GRACE) : DEFAULT_GRACE_MS;
  const timings: MatrixTimings = {
    relistPeriodMs: config.relistPeriodMs,
    relistThresholdMs: config.relistThresholdMs,
    relistDeadlineMs: config.relistDeadlineMs,
    renewIntervalMs: config.renewIntervalMs,
    leaseRecheckMs: config.leaseRecheckMs,
    apiTimeoutMs: config.apiTimeoutMs,
    conditionPeriodMs: config.relistPeriodMs,
    graceMs,
    monitorPeriodMs: ci ? ms(CI_MONITOR_PERIOD) : DEFAULT_MONITOR_PERIOD_MS,
    fleetTickMs: 1_000,
    ...probeOfDaemonSet(),
    kubelet: KUBELET_DEFAULTS,
    ...ALLOWANCES,
    slackMs: ci ? 4_000 : 5_000,
    kubeletInFull: !ci,
    ...(ci ? { readerRows: CI_READER_ROWS } : {}),
  };
  return {
    name,
    agentArgs,
    controllerArgs: ci ? [`--grace=${CI_GRACE}`, `--monitor-period=${CI_MONITOR_PERIOD}`] : [],
    fleetGrace: ci ? CI_GRACE : `${graceMs / 1000}s`,
    timings,
  };
}
