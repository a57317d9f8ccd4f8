// The agent's config as it ships: every default, through the one schema the agent loads, for the
// tests that hold the defaults' consequences (the verdict-order inequality, the docs' timing
// budget, the dashboard's threshold) to the defaults themselves rather than to copies of them.
import type { AgentConfig } from '../../src/config/agent-config-schema.ts';
import { loadAgentConfig } from '../../src/config/load-agent-config.ts';
import type { NodepulseTimings } from './verdict-order.ts';

/** The defaults, with a node name (the one key without a default). */
export function shippedAgentConfig(): AgentConfig {
  const result = loadAgentConfig({
    argv: ['--node-name', 'defaults'],
    env: {},
    readFile: (path) => {
      throw new Error(`no file is read for the defaults: ${path}`);
    },
  });
  if (!result.ok) throw new Error(`the shipped defaults must load: ${result.error.lines.join('; ')}`);
  return result.config;
}

/** What verdict-order.ts reads of the shipped defaults. */
export function shippedTimings(config: AgentConfig = shippedAgentConfig()): NodepulseTimings {
  return { relistThresholdMs: config.relistThresholdMs, conditionPeriodMs: config.relistPeriodMs, apiTimeoutMs: config.apiTimeoutMs };
}
