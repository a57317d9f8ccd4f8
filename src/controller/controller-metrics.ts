// Every metric of the controller, on a Registry created by the command and injected, so tests
// read their own. Labels are bounded: verdict ∈ {fresh, stale, missing, not_judged},
// action ∈ {mark_stale, mark_healthy, taint_added, taint_removed}, reason ∈ {fleet_silent,
// agent_rollout}, resource ∈ {nodes/status, nodes, events}.
import { Counter, Gauge, type Registry } from 'prom-client';

export const VERDICT_LABELS = ['fresh', 'stale', 'missing', 'not_judged'] as const;
export type VerdictLabel = (typeof VERDICT_LABELS)[number];
export const ACTION_LABELS = ['mark_stale', 'mark_healthy', 'taint_added', 'taint_removed'] as const;
export type ActionLabel = (typeof ACTION_LABELS)[number];
export const PAUSE_REASONS = ['fleet_silent', 'agent_rollout'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];
export const WRITE_RESOURCES = ['nodes/status', 'nodes', 'events'] as const;
export type WriteResource = (typeof WRITE_RESOURCES)[number];

export interface ControllerMetrics {
  readonly leading: Gauge;
  readonly nodes: Gauge<'verdict'>;
  readonly marks: Counter<'action'>;
  readonly paused: Gauge<'reason'>;
  readonly writeErrors: Counter<'resource'>;
}

export function createControllerMetrics(registry: Registry): ControllerMetrics {
  const leading = new Gauge({
    name: 'nodepulse_controller_leading',
    help: '1 while this replica believes it leads (checked on its own clock), else 0.',
    registers: [registry],
  });
  const nodes = new Gauge({
    name: 'nodepulse_controller_nodes',
    help: "Nodes by their agent lease's verdict, as the leader last judged them.",
    labelNames: ['verdict'] as const,
    registers: [registry],
  });
  const marks = new Counter({
    name: 'nodepulse_controller_marks_total',
    help: 'Writes to Nodes by what they did.',
    labelNames: ['action'] as const,
    registers: [registry],
  });
  const paused = new Gauge({
    name: 'nodepulse_controller_marking_paused',
    help: '1 while marking is paused for this reason: fleet_silent (more than half the judged fleet is stale), agent_rollout (the agent DaemonSet is rolling out).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const writeErrors = new Counter({
    name: 'nodepulse_controller_write_errors_total',
    help: 'Writes to Nodes and Events that failed, by resource (conflicts and not-found excluded: the next pass judges the newer object).',
    labelNames: ['resource'] as const,
    registers: [registry],
  });
  leading.set(0);
  for (const r of PAUSE_REASONS) paused.set({ reason: r }, 0);
  for (const v of VERDICT_LABELS) nodes.set({ verdict: v }, 0);
  for (const a of ACTION_LABELS) marks.inc({ action: a }, 0);
  for (const r of WRITE_RESOURCES) writeErrors.inc({ resource: r }, 0);
  return { leading, nodes, marks, paused, writeErrors };
}
