// THE schema of `nodepulse agent`'s config: one zod schema over every key of
// agent-config-keys.ts, its cross-field rules, and the AgentConfig it yields.
//
// Input: one raw value per key, as the loader merged it from flags, env, file and defaults.
// Output: AgentConfig, every duration in milliseconds under a name ending in `Ms`, the message
// size in bytes. The rules of a single key are the schemas of singleKeys (value-schemas.ts says
// what each accepts); the rules that span keys are CROSS_FIELD_RULES, each with its reason beside
// it. renewInterval and stuckWindow may be unset: they are then derived (resolve()) before the
// cross-field rules run, and a broken rule's line shows how.
//
// What the cross-field rules keep together: the idle window above the longest wait any loop can
// choose between two ticks, and the stuck window above the longest honest tick, so a loop that
// waits or works as long as it chose never reads as Stalled (or /livez gets a healthy agent
// restarted). statusDeadline is deliberately not bounded by statusPeriod: the poller's period is
// sliding (it counts from the end of the previous poll), so polls never overlap.
//
// Failure modes: a bad value is a zod issue at its key, rendered `key: value must be rule`
// (parse-settings.ts), in key order (agent-config-keys.ts), then in CROSS_FIELD_RULES' order. The
// cross-field rules sit behind a zod pipe, so they run only once every key alone is valid: one
// typo yields one line, not a cascade.
import { z } from 'zod/v3';
import { MAX_BACKOFF_MS } from '../lease/backoff.ts';
import type { LogLevel } from '../log/logger.ts';
import { checkCrossFieldRules, longer, shorter, type CrossFieldRule } from './cross-field-rules.ts';
import { formatDuration } from '../clock/duration.ts';
import type { AgentConfigKey } from './agent-config-keys.ts';
import { address, byteSize, dnsLabel, dnsSubdomain, duration, filePath, goBool, logLevel, text, unixSocketUrl, type Timed } from './value-schemas.ts';

export interface AgentConfig {
  readonly nodeName: string;
  /** unix:// URL of the CRI socket; undefined: probe the usual sockets (cri/endpoint.ts). */
  readonly criEndpoint: string | undefined;
  /** kubeconfig path; undefined means KUBECONFIG-less defaults (in-cluster). */
  readonly kubeconfig: string | undefined;
  readonly leaseNamespace: string;
  /** Whole seconds, in ms; leaseDurationSeconds = leaseDurationMs / 1000. */
  readonly leaseDurationMs: number;
  readonly renewIntervalMs: number;
  readonly leaseRecheckMs: number;
  readonly relistPeriodMs: number;
  readonly relistThresholdMs: number;
  readonly relistDeadlineMs: number;
  readonly idleWindowMs: number;
  readonly stuckWindowMs: number;
  readonly maxMessageSizeBytes: number;
  readonly statusPeriodMs: number;
  readonly statusDeadlineMs: number;
  readonly apiTimeoutMs: number;
  readonly conditionRefreshMs: number;
  readonly nodeCondition: boolean;
  /** As given, e.g. `:9356` (the default) or `127.0.0.1:9356`. */
  readonly httpAddress: string;
  /** The host part; undefined means every interface (`:9356`). */
  readonly httpHost: string | undefined;
  readonly httpPort: number;
  readonly startupGraceMs: number;
  readonly logLevel: LogLevel;
}

/** The renew jitter the lease loop adds (0–4 %, upstream); the idle-window rule allows for it. */
export const RENEW_JITTER_FRACTION = 0.04;
/** Upstream: renew interval = lease duration × 0.25. */
export const RENEW_INTERVAL_FRACTION = 0.25;
/** Stuck window = relist deadline + this. */
export const STUCK_WINDOW_SLACK_MS = 30_000;
/** gRPC takes its receive limit as a 32-bit int. */
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;
const MIN_MESSAGE_BYTES = 1024;

const NODE_NAME_UNSET = 'set (--node-name or NODE_NAME)';
const NAMESPACE_UNSET = 'set (--lease-namespace or POD_NAMESPACE)';

/** Every key alone: the first stage, whose issues are a value's own. */
const singleKeys = z
  .object({
    nodeName: text(NODE_NAME_UNSET).min(1, NODE_NAME_UNSET).pipe(dnsSubdomain),
    criEndpoint: unixSocketUrl.optional(),
    kubeconfig: filePath.optional(),
    leaseNamespace: text(NAMESPACE_UNSET)
      .min(1, NAMESPACE_UNSET)
      .pipe(dnsLabel)
      .refine((ns) => ns !== 'kube-node-lease', 'a namespace other than kube-node-lease (the kubelet owns the leases there)'),
    leaseDuration: duration({ wholeSeconds: true }),
    renewInterval: duration().optional(),
    leaseRecheck: duration(),
    relistPeriod: duration(),
    relistThreshold: duration(),
    relistDeadline: duration(),
    idleWindow: duration(),
    stuckWindow: duration().optional(),
    maxMessageSize: byteSize(MIN_MESSAGE_BYTES, MAX_MESSAGE_BYTES, '(gRPC takes a 32-bit limit)'),
    statusPeriod: duration(),
    statusDeadline: duration(),
    apiTimeout: duration(),
    conditionRefresh: duration(),
    nodeCondition: goBool,
    httpAddress: address(':9356, 0.0.0.0:9356 or [::1]:9356'),
    startupGrace: duration({ allowZero: true }),
    logLevel,
  } satisfies Record<AgentConfigKey, z.ZodTypeAny>)
  .strict();

type SingleKeys = z.output<typeof singleKeys>;

/** Every key valid, with the derived defaults filled in: what the cross-field rules read. */
export interface ResolvedAgentConfig extends Omit<SingleKeys, 'renewInterval' | 'stuckWindow'> {
  readonly renewInterval: Timed;
  readonly stuckWindow: Timed;
}

/** A cross-field rule of the agent's config: one entry of CROSS_FIELD_RULES. */
export type AgentCrossFieldRule = CrossFieldRule<ResolvedAgentConfig>;

const shorterThan = shorter<ResolvedAgentConfig>;
const longerThan = longer<ResolvedAgentConfig>;

/** The rules between keys, each with why it holds. leaseDuration's whole seconds is its own key's rule. */
export const CROSS_FIELD_RULES: readonly AgentCrossFieldRule[] = [
  // A relist that hangs must end before the runtime ages out.
  shorterThan('relistDeadline', 'relistThreshold'),
  // Otherwise every gap between relists reads as Unhealthy.
  shorterThan('relistPeriod', 'relistThreshold'),
  // The deadline ends every honest relist before its tick reads as stuck.
  longerThan('stuckWindow', 'relistDeadline'),
  // The relister idles one period between ticks.
  longerThan('idleWindow', 'relistPeriod'),
  // A lease must be renewed before it expires.
  shorterThan('renewInterval', 'leaseDuration'),
  // The lease loop idles one jittered interval between renewals.
  {
    key: 'renewInterval',
    holds: (c) => c.renewInterval.ms * (1 + RENEW_JITTER_FRACTION) < c.idleWindow.ms,
    rule: (c) =>
      `shorter than idleWindow (${c.idleWindow.text}) with ${RENEW_JITTER_FRACTION * 100}% jitter added, or the lease loop reads as stalled between renewals`,
    shown: (c) => c.renewInterval.text,
  },
  // A withheld lease loop idles one recheck between looks.
  shorterThan('leaseRecheck', 'idleWindow'),
  // The Status poller idles one period between polls.
  shorterThan('statusPeriod', 'idleWindow'),
  // An honest Status poll ends before its loop reads as stuck.
  shorterThan('statusDeadline', 'stuckWindow'),
  // One API request ends before the lease loop reads as stuck.
  shorterThan('apiTimeout', 'stuckWindow'),
  // The kubelet caps its heartbeat client's timeout at the lease duration: a renewal answered
  // later is already worthless.
  {
    key: 'apiTimeout',
    holds: (c) => c.apiTimeout.ms <= c.leaseDuration.ms,
    rule: (c) => `no longer than leaseDuration (${c.leaseDuration.text})`,
    shown: (c) => c.apiTimeout.text,
  },
  // The Node condition loop backs off up to 7 s after a failed write (conditionBackoffRule).
  {
    key: 'idleWindow',
    holds: (c) => conditionBackoffRule(c.idleWindow.ms, c.nodeCondition) === undefined,
    rule: (c) => conditionBackoffRule(c.idleWindow.ms, c.nodeCondition) ?? '',
    shown: (c) => c.idleWindow.text,
  },
];

function resolve(p: SingleKeys): ResolvedAgentConfig {
  const renewMs = Math.round(p.leaseDuration.ms * RENEW_INTERVAL_FRACTION);
  const stuckMs = p.relistDeadline.ms + STUCK_WINDOW_SLACK_MS;
  return {
    ...p,
    renewInterval: p.renewInterval ?? { ms: renewMs, text: `${formatDuration(renewMs)} (leaseDuration × ${RENEW_INTERVAL_FRACTION})` },
    stuckWindow: p.stuckWindow ?? { ms: stuckMs, text: `${formatDuration(stuckMs)} (relistDeadline + ${formatDuration(STUCK_WINDOW_SLACK_MS)})` },
  };
}

/**
 * The one wait no other rule bounds: the Node condition loop retries a failed write after a
 * backoff of up to MAX_BACKOFF_MS (7 s, upstream's), so with the condition on, the idle window
 * must be longer. Returns the rule the idle window breaks, or undefined when it holds.
 */
export function conditionBackoffRule(idleWindowMs: number, nodeCondition: boolean): string | undefined {
  if (!nodeCondition || idleWindowMs > MAX_BACKOFF_MS) return undefined;
  return `longer than ${formatDuration(MAX_BACKOFF_MS)}, the Node condition loop's longest backoff after a failed write (or nodeCondition false)`;
}

function toAgentConfig(c: ResolvedAgentConfig): AgentConfig {
  return {
    nodeName: c.nodeName,
    criEndpoint: c.criEndpoint,
    kubeconfig: c.kubeconfig,
    leaseNamespace: c.leaseNamespace,
    leaseDurationMs: c.leaseDuration.ms,
    renewIntervalMs: c.renewInterval.ms,
    leaseRecheckMs: c.leaseRecheck.ms,
    relistPeriodMs: c.relistPeriod.ms,
    relistThresholdMs: c.relistThreshold.ms,
    relistDeadlineMs: c.relistDeadline.ms,
    idleWindowMs: c.idleWindow.ms,
    stuckWindowMs: c.stuckWindow.ms,
    maxMessageSizeBytes: c.maxMessageSize,
    statusPeriodMs: c.statusPeriod.ms,
    statusDeadlineMs: c.statusDeadline.ms,
    apiTimeoutMs: c.apiTimeout.ms,
    conditionRefreshMs: c.conditionRefresh.ms,
    nodeCondition: c.nodeCondition,
    httpAddress: c.httpAddress.text,
    httpHost: c.httpAddress.host,
    httpPort: c.httpAddress.port,
    startupGraceMs: c.startupGrace.ms,
    logLevel: c.logLevel,
  };
}

/**
 * Raw merged values in (every key present, unset ones as undefined); AgentConfig out. The pipe
 * holds the cross-field stage back until every key has passed its own rules.
 */
export const agentConfigSchema = singleKeys.pipe(z.custom<SingleKeys>().transform(resolve).superRefine(checkCrossFieldRules(CROSS_FIELD_RULES)).transform(toAgentConfig));
