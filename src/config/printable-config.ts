// The effective config as a person reads it (`nodepulse agent --print-config`): every key in
// camelCase, durations as Go-style strings, the message size as a quantity. The result is also a
// valid --config file: feeding it back yields the same AgentConfig (tested), so an operator can
// print a running agent's config, edit it, and start from it.
import type { AgentConfig } from './agent-config-schema.ts';
import { formatByteSize } from './byte-size.ts';
import { formatDuration } from '../clock/duration.ts';

export type PrintableConfig = Readonly<Record<string, string | boolean>>;

export function printableConfig(config: AgentConfig): PrintableConfig {
  const d = formatDuration;
  return {
    nodeName: config.nodeName,
    ...(config.criEndpoint === undefined ? {} : { criEndpoint: config.criEndpoint }),
    ...(config.kubeconfig === undefined ? {} : { kubeconfig: config.kubeconfig }),
    leaseNamespace: config.leaseNamespace,
    leaseDuration: d(config.leaseDurationMs),
    renewInterval: d(config.renewIntervalMs),
    leaseRecheck: d(config.leaseRecheckMs),
    relistPeriod: d(config.relistPeriodMs),
    relistThreshold: d(config.relistThresholdMs),
    relistDeadline: d(config.relistDeadlineMs),
    idleWindow: d(config.idleWindowMs),
    stuckWindow: d(config.stuckWindowMs),
    maxMessageSize: formatByteSize(config.maxMessageSizeBytes),
    statusPeriod: d(config.statusPeriodMs),
    statusDeadline: d(config.statusDeadlineMs),
    apiTimeout: d(config.apiTimeoutMs),
    conditionRefresh: d(config.conditionRefreshMs),
    nodeCondition: config.nodeCondition,
    httpAddress: config.httpAddress,
    startupGrace: d(config.startupGraceMs),
    logLevel: config.logLevel,
  };
}
