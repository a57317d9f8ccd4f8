// The latest a liveness failure can kill an agent pod, counted from when the pod became ready,
// from the rendered DaemonSet's liveness probe and the agent's start-up grace: what
// minReadySeconds must outlast for a failing version to stop its rollout in the first batch.
//
// /livez answers 200 through the start-up grace (`startupGrace`, counted from when the loops
// start, which is before the first readiness probe can pass), and fails after it for a version
// whose loops never tick. The kubelet probes every periodSeconds, at a phase of its own, so the
// first probe after the grace comes within one period of its end; failureThreshold failures in a
// row kill the container, and the last of them may take the whole timeoutSeconds to fail:
//
//   bound = startupGrace + failureThreshold × periodSeconds + timeoutSeconds
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR } from './render.ts';

export interface AgentDaemonSetSpec {
  readonly minReadySeconds?: number;
  readonly template: { readonly spec: { readonly containers: ReadonlyArray<{ readonly livenessProbe?: { readonly periodSeconds?: number; readonly failureThreshold?: number; readonly timeoutSeconds?: number } }> } };
}

/** The agent's start-up grace the chart computes with (files/defaults.yaml, held to the agent's own default by test/deploy). */
export function startupGraceSeconds(): number {
  const grace = (parse(readFileSync(join(CHART_DIR, 'files', 'defaults.yaml'), 'utf8')) as { agent: { startupGrace: string } }).agent.startupGrace;
  const seconds = Number(/^(\d+)s$/.exec(grace)?.[1]);
  assert.ok(seconds > 0, `precondition: the start-up grace is whole seconds, got ${grace}`);
  return seconds;
}

/** The bound in seconds, and its sum written out as docs/install.md writes it: `30 s + 3 × 10 s + 5 s = 65 s`. */
export function livenessKillBound(spec: AgentDaemonSetSpec, graceS: number): { readonly seconds: number; readonly text: string } {
  const probe = spec.template.spec.containers[0]?.livenessProbe;
  assert.ok(probe, 'precondition: the agent has a liveness probe');
  // The Kubernetes defaults for fields a manifest leaves out.
  const period = probe.periodSeconds ?? 10;
  const failures = probe.failureThreshold ?? 3;
  const timeout = probe.timeoutSeconds ?? 1;
  const seconds = graceS + failures * period + timeout;
  return { seconds, text: `${graceS} s + ${failures} × ${period} s + ${timeout} s = ${seconds} s` };
}
