// THE schema of `nodepulse agent`'s config: one zod object over every key of
// agent-config-keys.ts, its cross-field rules, and the parsed AgentConfig it yields.
//
// Input: one raw value per key, as the loader merged it from flags, env, file and defaults
// (strings from flags and env; strings, numbers or booleans from a file; undefined when unset).
// Output: AgentConfig, in which every duration is milliseconds under a name ending in `Ms`
// (relistDeadline → relistDeadlineMs) and the message size is bytes (maxMessageSizeBytes).
//
// Rules that span keys, and why each holds (DESIGN.md "Defaults"):
//
// | rule                                      | why                                                        |
// |-------------------------------------------|------------------------------------------------------------|
// | relistDeadline < relistThreshold          | a relist that hangs must end before the runtime ages out   |
// | relistPeriod < relistThreshold            | otherwise every gap between relists reads as Unhealthy     |
// | stuckWindow > relistDeadline              | the deadline ends every honest tick before it reads stuck  |
// | idleWindow > relistPeriod                 | the relister idles one period between ticks                |
// | renewInterval < leaseDuration             | a lease must be renewed before it expires                  |
// | renewInterval × 1.04 < idleWindow         | the lease loop idles one jittered interval between renewals|
// | leaseRecheck < idleWindow                 | a withheld lease loop idles one recheck between looks      |
// | statusPeriod < idleWindow                 | the Status poller idles one period between polls           |
// | statusDeadline < stuckWindow              | an honest Status poll ends before its loop reads stuck     |
// | apiTimeout < stuckWindow                  | one API request ends before the lease loop reads stuck     |
// | apiTimeout ≤ leaseDuration                | kubelet caps its heartbeat client's timeout at the lease   |
// |                                           | duration: a renewal answered later is already worthless    |
// | leaseDuration is whole seconds            | the Lease field is leaseDurationSeconds, an integer        |
//
// statusDeadline is deliberately NOT bounded by statusPeriod: the poller's period is sliding (it
// counts from the end of the previous poll), so polls never overlap, and kubelet itself polls
// Status every 5 s with a far longer request timeout. What a long Status deadline can break is
// the poller's own liveness, hence statusDeadline < stuckWindow.
//
// Failure modes: a bad value becomes a zod issue whose message is the rule ("shorter than
// relistThreshold (3m0s)"); the loader renders it as `key: value must be rule`. Cross-field rules
// run only once every single key is valid, so one typo yields one line, not a cascade.
import { z } from 'zod';
import { LOG_LEVELS, type LogLevel } from '../log/logger.ts';
import { parseByteSize, formatByteSize } from './byte-size.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { parseHostPort } from './host-port.ts';

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
  /** As given, e.g. `0.0.0.0:9356`. */
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
/** Longest duration accepted: node timers overflow past 2^31 - 1 ms (24.8 days) and fire at once. */
export const MAX_DURATION_MS = 24 * 3_600_000;
/** gRPC takes its receive limit as a 32-bit int. */
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;
const MIN_MESSAGE_BYTES = 1024;
/** sun_path is 108 bytes on Linux, one of which is the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GO_TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'];
const GO_FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'];

/** A duration as parsed: milliseconds, and the text to show in a message. */
interface Timed {
  readonly ms: number;
  readonly text: string;
}

/** Zod issue params: `shown` replaces the raw value in the rendered line (cross-field rules). */
export interface AgentConfigIssueParams {
  readonly shown: string;
}

type Ctx = z.core.$RefinementCtx;

function fail(ctx: Ctx, rule: string): never {
  ctx.addIssue({ code: 'custom', message: rule });
  return z.NEVER;
}

const DURATION_EXAMPLE = 'a duration such as 500ms, 10s or 3m';

function duration(options: { allowZero?: boolean; wholeSeconds?: boolean } = {}) {
  return z.unknown().transform((raw, ctx): Timed | undefined => {
    if (raw === undefined) return undefined;
    if (typeof raw === 'number') return fail(ctx, `${DURATION_EXAMPLE} (a bare number has no unit)`);
    if (typeof raw !== 'string') return fail(ctx, DURATION_EXAMPLE);
    const ms = parseDuration(raw);
    if (ms === undefined) return fail(ctx, DURATION_EXAMPLE);
    if (!Number.isInteger(ms)) return fail(ctx, 'a whole number of milliseconds');
    if (ms === 0 && options.allowZero !== true) return fail(ctx, 'longer than 0s');
    if (ms > MAX_DURATION_MS) return fail(ctx, `at most ${formatDuration(MAX_DURATION_MS)}`);
    if (options.wholeSeconds === true && ms % 1000 !== 0) return fail(ctx, 'a whole number of seconds (leaseDurationSeconds is an integer)');
    return { ms, text: raw };
  });
}

function text(rule: (value: string, ctx: Ctx) => void, whenUnset?: string) {
  return z.unknown().transform((raw, ctx): string | undefined => {
    if (raw === undefined || raw === '') {
      if (whenUnset !== undefined) return fail(ctx, whenUnset);
      if (raw === undefined) return undefined;
    }
    if (typeof raw !== 'string') return fail(ctx, 'a string');
    rule(raw, ctx);
    return raw;
  });
}

const fields = {
  nodeName: text((v, ctx) => {
    if (!DNS_SUBDOMAIN.test(v)) {
      fail(ctx, "a DNS subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)");
    }
  }, 'set (--node-name or NODE_NAME)'),
  criEndpoint: text((v, ctx) => {
    if (!v.startsWith('unix:///')) fail(ctx, 'a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock');
    else if (Buffer.byteLength(v.slice('unix://'.length)) > MAX_SOCKET_PATH_BYTES) {
      fail(ctx, `a socket path of at most ${MAX_SOCKET_PATH_BYTES} bytes (the kernel's sun_path limit)`);
    }
  }).optional(),
  kubeconfig: text((v, ctx) => {
    if (v === '') fail(ctx, 'a file path');
  }).optional(),
  leaseNamespace: text((v, ctx) => {
    if (!DNS_LABEL.test(v)) {
      fail(ctx, "a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)");
    } else if (v === 'kube-node-lease') fail(ctx, 'a namespace other than kube-node-lease (the kubelet owns the leases there)');
  }, 'set (--lease-namespace or POD_NAMESPACE)'),
  leaseDuration: duration({ wholeSeconds: true }),
  renewInterval: duration().optional(),
  leaseRecheck: duration(),
  relistPeriod: duration(),
  relistThreshold: duration(),
  relistDeadline: duration(),
  idleWindow: duration(),
  stuckWindow: duration().optional(),
  maxMessageSize: z.unknown().transform((raw, ctx): number => {
    const bytes = typeof raw === 'string' || typeof raw === 'number' ? parseByteSize(raw) : undefined;
    if (bytes === undefined) return fail(ctx, 'a byte size such as 16777216 or 16Mi');
    if (bytes < MIN_MESSAGE_BYTES || bytes > MAX_MESSAGE_BYTES) {
      return fail(ctx, `between ${formatByteSize(MIN_MESSAGE_BYTES)} and ${MAX_MESSAGE_BYTES} bytes (gRPC takes a 32-bit limit)`);
    }
    return bytes;
  }),
  statusPeriod: duration(),
  statusDeadline: duration(),
  apiTimeout: duration(),
  conditionRefresh: duration(),
  nodeCondition: z.unknown().transform((raw, ctx): boolean => {
    if (typeof raw === 'boolean') return raw;
    if (typeof raw === 'string' && GO_TRUE.includes(raw)) return true;
    if (typeof raw === 'string' && GO_FALSE.includes(raw)) return false;
    return fail(ctx, 'true or false');
  }),
  httpAddress: text((v, ctx) => {
    if (parseHostPort(v) === undefined) fail(ctx, 'host:port such as 0.0.0.0:9356, :9356 or [::1]:9356');
  }),
  startupGrace: duration({ allowZero: true }),
  logLevel: z.unknown().transform((raw, ctx): LogLevel => {
    const level = LOG_LEVELS.find((l) => l === raw);
    return level ?? fail(ctx, `one of ${LOG_LEVELS.join(', ')}`);
  }),
};

type Parsed = z.output<z.ZodObject<typeof fields>>;

/** Every key, validated, with the derived defaults filled in. */
interface Resolved extends Omit<Parsed, 'renewInterval' | 'stuckWindow'> {
  readonly renewInterval: Timed;
  readonly stuckWindow: Timed;
}

function need<T>(value: T | undefined, key: string): T {
  // The loader supplies a default for every key that needs one; reaching this is a bug there.
  if (value === undefined) throw new Error(`config key ${key} has no value and no default`);
  return value;
}

function resolve(p: Parsed): Resolved {
  const lease = need(p.leaseDuration, 'leaseDuration');
  const deadline = need(p.relistDeadline, 'relistDeadline');
  const renewMs = Math.round(lease.ms * RENEW_INTERVAL_FRACTION);
  const stuckMs = deadline.ms + STUCK_WINDOW_SLACK_MS;
  return {
    ...p,
    renewInterval: p.renewInterval ?? { ms: renewMs, text: `${formatDuration(renewMs)} (leaseDuration × ${RENEW_INTERVAL_FRACTION})` },
    stuckWindow: p.stuckWindow ?? { ms: stuckMs, text: `${formatDuration(stuckMs)} (relistDeadline + ${formatDuration(STUCK_WINDOW_SLACK_MS)})` },
  };
}

type DurationKey = {
  [K in keyof Resolved]-?: Resolved[K] extends Timed | undefined ? (Resolved[K] extends string | undefined ? never : K) : never;
}[keyof Resolved];

function crossRules(r: Resolved, ctx: Ctx): void {
  const t = (key: DurationKey): Timed => need(r[key], key);
  const rule = (key: DurationKey, ok: boolean, message: string): void => {
    if (ok) return;
    const params: AgentConfigIssueParams = { shown: t(key).text };
    ctx.addIssue({ code: 'custom', path: [key], message, params });
  };
  const shorter = (a: DurationKey, b: DurationKey): void => rule(a, t(a).ms < t(b).ms, `shorter than ${b} (${t(b).text})`);
  const longer = (a: DurationKey, b: DurationKey): void => rule(a, t(a).ms > t(b).ms, `longer than ${b} (${t(b).text})`);

  shorter('relistDeadline', 'relistThreshold');
  shorter('relistPeriod', 'relistThreshold');
  longer('stuckWindow', 'relistDeadline');
  longer('idleWindow', 'relistPeriod');
  shorter('renewInterval', 'leaseDuration');
  rule(
    'renewInterval',
    t('renewInterval').ms * (1 + RENEW_JITTER_FRACTION) < t('idleWindow').ms,
    `shorter than idleWindow (${t('idleWindow').text}) with ${RENEW_JITTER_FRACTION * 100}% jitter added, or the lease loop reads as stalled between renewals`,
  );
  shorter('leaseRecheck', 'idleWindow');
  shorter('statusPeriod', 'idleWindow');
  shorter('statusDeadline', 'stuckWindow');
  shorter('apiTimeout', 'stuckWindow');
  rule('apiTimeout', t('apiTimeout').ms <= t('leaseDuration').ms, `no longer than leaseDuration (${t('leaseDuration').text})`);
}

function toAgentConfig(r: Resolved): AgentConfig {
  const ms = (key: DurationKey): number => need(r[key], key).ms;
  const httpAddress = need(r.httpAddress, 'httpAddress');
  const hostPort = need(parseHostPort(httpAddress), 'httpAddress');
  return {
    nodeName: need(r.nodeName, 'nodeName'),
    criEndpoint: r.criEndpoint,
    kubeconfig: r.kubeconfig,
    leaseNamespace: need(r.leaseNamespace, 'leaseNamespace'),
    leaseDurationMs: ms('leaseDuration'),
    renewIntervalMs: ms('renewInterval'),
    leaseRecheckMs: ms('leaseRecheck'),
    relistPeriodMs: ms('relistPeriod'),
    relistThresholdMs: ms('relistThreshold'),
    relistDeadlineMs: ms('relistDeadline'),
    idleWindowMs: ms('idleWindow'),
    stuckWindowMs: ms('stuckWindow'),
    maxMessageSizeBytes: r.maxMessageSize,
    statusPeriodMs: ms('statusPeriod'),
    statusDeadlineMs: ms('statusDeadline'),
    apiTimeoutMs: ms('apiTimeout'),
    conditionRefreshMs: ms('conditionRefresh'),
    nodeCondition: r.nodeCondition,
    httpAddress,
    httpHost: hostPort.host,
    httpPort: hostPort.port,
    startupGraceMs: ms('startupGrace'),
    logLevel: r.logLevel,
  };
}

/** The one schema: raw merged values in, AgentConfig out. Unknown keys are issues. */
export const agentConfigSchema = z.strictObject(fields).transform(resolve).superRefine(crossRules).transform(toAgentConfig);
