// The built agent (dist/, by `npm run build`, which `npm test` runs first) as a rendered
// DaemonSet would start it: the container's args, and its env with the downward-API fields
// filled in for one node. Used to show that what the chart renders is what the agent accepts.
//
// Failure modes: a missing dist/ throws a precondition error naming the build step; every run
// has a timeout, so a wedged agent fails the test instead of hanging it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AGENT_MAIN, NODE_24 } from '../support/agent-process.ts';
import { REPO_ROOT, type K8sObject } from './render.ts';

const RUN_TIMEOUT_MS = 30_000;

export interface AgentRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

/** The agent container's args and env, as its pod on `node` in `namespace` would get them. */
export function agentInvocation(daemonSet: K8sObject, where: { node: string; namespace: string }): { args: string[]; env: Record<string, string> } {
  const spec = daemonSet['spec'] as { template: { spec: { containers: Array<{ name: string; args?: string[]; env?: EnvVar[] }> } } };
  const container = spec.template.spec.containers.find((c) => c.name === 'agent');
  if (container === undefined) throw new Error('precondition: the DaemonSet has a container named agent');
  const fields: Record<string, string> = { 'spec.nodeName': where.node, 'metadata.namespace': where.namespace };
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const path = e.valueFrom?.fieldRef?.fieldPath;
    const value = path === undefined ? e.value : fields[path];
    if (value === undefined) throw new Error(`precondition: env ${e.name} must be a value or a known fieldRef, got ${JSON.stringify(e)}`);
    env[e.name] = value;
  }
  return { args: container.args ?? [], env };
}

/** `node dist/src/cli/main.js agent ARGS` with exactly `env` (and PATH). */
export function runBuiltAgent(args: readonly string[], env: Record<string, string>): AgentRun {
  if (!existsSync(AGENT_MAIN)) throw new Error(`precondition: the built agent ${AGENT_MAIN} must exist (npm run build)`);
  const r = spawnSync(NODE_24, [AGENT_MAIN, 'agent', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env },
    encoding: 'utf8',
    timeout: RUN_TIMEOUT_MS,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The agent's --print-config for those args and env; throws with its stderr when it refuses. */
export function printConfig(args: readonly string[], env: Record<string, string>): Record<string, string | boolean> {
  const r = runBuiltAgent([...args, '--print-config'], env);
  if (r.code !== 0) throw new Error(`the agent must accept ${JSON.stringify(args)}: exit ${r.code}\n${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, string | boolean>;
}
