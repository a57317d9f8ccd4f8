// THE schema of `nodepulse agent`'s config: one plain validator over every key of
// agent-config-keys.ts, its cross-field rules, and the parsed AgentConfig it yields.
//
// Input: one raw value per key, as the loader merged it from flags, env, file and defaults
// (strings from flags and env; strings, numbers, booleans, null, lists or mappings from a file;
// undefined when unset).
// Output: AgentConfig, in which every duration is milliseconds under a name ending in `Ms`
// (relistDeadline → relistDeadlineMs) and the message size is bytes (maxMessageSizeBytes).
//
// Rules of a single key (each key has exactly one; the first that fails is its issue):
//
// | key(s)                  | valid when                                                       |
// |-------------------------|------------------------------------------------------------------|
// | nodeName                | set, a string, a DNS subdomain                                   |
// | leaseNamespace          | set, a string, a DNS label, not kube-node-lease                  |
// | criEndpoint             | unset, or a string `unix:///…` whose path fits sun_path (107 B)  |
// | kubeconfig              | unset, or a non-empty string                                     |
// | httpAddress             | a string that is host:port (host-port.ts)                        |
// | every duration          | a string (a bare number has no unit) in Go's syntax, a whole     |
// |                         | number of ms, more than 0 (startupGrace may be 0), at most 24h   |
// | leaseDuration           | also whole seconds                                               |
// | maxMessageSize          | a byte size (byte-size.ts) from 1Ki to 2^31 - 1                  |
// | nodeCondition           | a boolean, or a string Go's strconv.ParseBool reads              |
// | logLevel                | one of LOG_LEVELS                                                |
//
// renewInterval and stuckWindow may be unset: they are then derived (leaseDuration × 0.25,
// relistDeadline + 30s) before the cross-field rules run, and a message shows how.
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
// | idleWindow > 7s, unless nodeCondition is  | the Node condition loop backs off up to 7 s after a failed |
// | false                                     | write (conditionBackoffRule)                               |
// | leaseDuration is whole seconds            | the Lease field is leaseDurationSeconds, an integer        |
//
// statusDeadline is deliberately NOT bounded by statusPeriod: the poller's period is sliding (it
// counts from the end of the previous poll), so polls never overlap, and kubelet itself polls
// Status every 5 s with a far longer request timeout. What a long Status deadline can break is
// the poller's own liveness, hence statusDeadline < stuckWindow.
//
// Together these keep the idle window above the longest wait any loop can choose between two
// ticks: the relister's period, the lease loop's jittered renew interval, its recheck and its
// wait after a failure (cut to the renew interval, lease/backoff.ts), the Status poller's period,
// and the condition loop's recheck and backoff. A loop that waits as long as it chose must never
// read as Stalled, or /livez gets a healthy agent restarted.
//
// Written by hand, without a schema library: the config is validated once at start-up, and a
// library loaded for that stays resident for the agent's whole life (zod cost about 7 MiB of RSS
// in an agent held to 100 MiB; modules cannot be unloaded).
//
// Failure modes: a bad value becomes an AgentConfigIssue whose rule is the message's tail
// ("shorter than relistThreshold (3m0s)"); the loader renders it as `key: value must be rule`.
// Issues come in key order (agent-config-keys.ts), then in the order of the table above. Cross-field
// rules run only once every single key is valid, so one typo yields one line, not a cascade; every
// broken cross-field rule is reported at once. A key that should have a value and has none (the
// loader supplies a default for it) throws: that is a bug in the loader, not bad input.
import { MAX_BACKOFF_MS } from '../lease/backoff.ts';
import { LOG_LEVELS, type LogLevel } from '../log/logger.ts';
import { parseByteSize, formatByteSize } from './byte-size.ts';
import { formatDuration, parseDuration } from './duration.ts';
import { parseHostPort } from './host-port.ts';
import { AGENT_CONFIG_KEYS, type AgentConfigKey } from './agent-config-keys.ts';

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


/** One broken rule: the loader renders it as `key: value must be rule`. */
export interface AgentConfigIssue {
  readonly key: AgentConfigKey;
  /** What the value must be, e.g. `a duration such as 500ms, 10s or 3m`. */
  readonly rule: string;
  /**
   * Cross-field rules only: the value as the line shows it, in place of the raw value and its
   * source (a derived default reads `10s (leaseDuration × 0.25)`).
   */
  readonly shown?: string;
}

export type AgentConfigValidation =
  | { readonly ok: true; readonly config: AgentConfig }
  | { readonly ok: false; readonly issues: readonly AgentConfigIssue[] };

/** The raw merged value of every key; an unset key is present as undefined. */
export type RawAgentConfig = Readonly<Record<AgentConfigKey, unknown>>;

/** A single key's verdict: its parsed value, or the rule its raw value breaks. */
type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly rule: string };
type Check<T> = (raw: unknown) => Checked<T>;

function valid<T>(value: T): Checked<T> {
  return { ok: true, value };
}

function invalid(rule: string): { readonly ok: false; readonly rule: string } {
  return { ok: false, rule };
}

/** A duration as parsed: milliseconds, and the text to show in a message. */
interface Timed {
  readonly ms: number;
  readonly text: string;
}

const DURATION_EXAMPLE = 'a duration such as 500ms, 10s or 3m';

/** A Go-style duration string; unset stays undefined (the loader gives every duration a default or derives it). */
function duration(options: { allowZero?: boolean; wholeSeconds?: boolean } = {}): Check<Timed | undefined> {
  return (raw) => {
    if (raw === undefined) return valid(undefined);
    if (typeof raw === 'number') return invalid(`${DURATION_EXAMPLE} (a bare number has no unit)`);
    if (typeof raw !== 'string') return invalid(DURATION_EXAMPLE);
    const ms = parseDuration(raw);
    if (ms === undefined) return invalid(DURATION_EXAMPLE);
    if (!Number.isInteger(ms)) return invalid('a whole number of milliseconds');
    if (ms === 0 && options.allowZero !== true) return invalid('longer than 0s');
    if (ms > MAX_DURATION_MS) return invalid(`at most ${formatDuration(MAX_DURATION_MS)}`);
    if (options.wholeSeconds === true && ms % 1000 !== 0) return invalid('a whole number of seconds (leaseDurationSeconds is an integer)');
    return valid({ ms, text: raw });
  };
}

/**
 * A string that passes `rule` (which returns what it must be, or undefined when it is fine).
 * With `whenUnset`, unset and "" are that issue; without, unset stays undefined and "" meets `rule`.
 */
function text(rule: (value: string) => string | undefined, whenUnset?: string): Check<string | undefined> {
  return (raw) => {
    if ((raw === undefined || raw === '') && whenUnset !== undefined) return invalid(whenUnset);
    if (raw === undefined) return valid(undefined);
    if (typeof raw !== 'string') return invalid('a string');
    const broken = rule(raw);
    return broken === undefined ? valid(raw) : invalid(broken);
  };
}

function nodeName(value: string): string | undefined {
  if (DNS_SUBDOMAIN.test(value)) return undefined;
  return "a DNS subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)";
}

function criEndpoint(value: string): string | undefined {
  if (!value.startsWith('unix:///')) return 'a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock';
  if (Buffer.byteLength(value.slice('unix://'.length)) > MAX_SOCKET_PATH_BYTES) {
    return `a socket path of at most ${MAX_SOCKET_PATH_BYTES} bytes (the kernel's sun_path limit)`;
  }
  return undefined;
}

function kubeconfig(value: string): string | undefined {
  return value === '' ? 'a file path' : undefined;
}

function leaseNamespace(value: string): string | undefined {
  if (!DNS_LABEL.test(value)) return "a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)";
  if (value === 'kube-node-lease') return 'a namespace other than kube-node-lease (the kubelet owns the leases there)';
  return undefined;
}

function httpAddress(value: string): string | undefined {
  return parseHostPort(value) === undefined ? 'host:port such as 0.0.0.0:9356, :9356 or [::1]:9356' : undefined;
}

function maxMessageSize(raw: unknown): Checked<number> {
  const bytes = typeof raw === 'string' || typeof raw === 'number' ? parseByteSize(raw) : undefined;
  if (bytes === undefined) return invalid('a byte size such as 16777216 or 16Mi');
  if (bytes < MIN_MESSAGE_BYTES || bytes > MAX_MESSAGE_BYTES) {
    return invalid(`between ${formatByteSize(MIN_MESSAGE_BYTES)} and ${MAX_MESSAGE_BYTES} bytes (gRPC takes a 32-bit limit)`);
  }
  return valid(bytes);
}

function nodeCondition(raw: unknown): Checked<boolean> {
  if (typeof raw === 'boolean') return valid(raw);
  if (typeof raw === 'string' && GO_TRUE.includes(raw)) return valid(true);
  if (typeof raw === 'string' && GO_FALSE.includes(raw)) return valid(false);
  return invalid('true or false');
}

function logLevel(raw: unknown): Checked<LogLevel> {
  const level = LOG_LEVELS.find((l) => l === raw);
  return level === undefined ? invalid(`one of ${LOG_LEVELS.join(', ')}`) : valid(level);
}

/** The single-key rules, one check per key. */
const CHECKS = {
  nodeName: text(nodeName, 'set (--node-name or NODE_NAME)'),
  criEndpoint: text(criEndpoint),
  kubeconfig: text(kubeconfig),
  leaseNamespace: text(leaseNamespace, 'set (--lease-namespace or POD_NAMESPACE)'),
  leaseDuration: duration({ wholeSeconds: true }),
  renewInterval: duration(),
  leaseRecheck: duration(),
  relistPeriod: duration(),
  relistThreshold: duration(),
  relistDeadline: duration(),
  idleWindow: duration(),
  stuckWindow: duration(),
  maxMessageSize,
  statusPeriod: duration(),
  statusDeadline: duration(),
  apiTimeout: duration(),
  conditionRefresh: duration(),
  nodeCondition,
  httpAddress: text(httpAddress),
  startupGrace: duration({ allowZero: true }),
  logLevel,
} satisfies { readonly [K in AgentConfigKey]: Check<unknown> };

/** Every key, each past its single-key rule. */
type Parsed = { readonly [K in AgentConfigKey]: (typeof CHECKS)[K] extends Check<infer T> ? T : never };

/** Every key, validated, with the derived defaults filled in. */
interface Resolved extends Omit<Parsed, 'renewInterval' | 'stuckWindow'> {
  readonly renewInterval: Timed;
  readonly stuckWindow: Timed;
}

type DurationKey = {
  [K in keyof Resolved]-?: Resolved[K] extends Timed | undefined ? (Resolved[K] extends string | undefined ? never : K) : never;
}[keyof Resolved];

function need<T>(value: T | undefined, key: string): T {
  // The loader supplies a default for every key that needs one; reaching this is a bug there.
  if (value === undefined) throw new Error(`config key ${key} has no value and no default`);
  return value;
}

/** Raw merged values in; AgentConfig out, or every issue found. */
export function validateAgentConfig(raw: RawAgentConfig): AgentConfigValidation {
  const issues: AgentConfigIssue[] = [];
  const parsed: Partial<Record<AgentConfigKey, unknown>> = {};
  for (const key of AGENT_CONFIG_KEYS) {
    const checked = CHECKS[key](raw[key]);
    if (checked.ok) parsed[key] = checked.value;
    else issues.push({ key, rule: checked.rule });
  }
  if (issues.length > 0) return { ok: false, issues };

  // Every key passed its check above, so each holds its check's value.
  const resolved = resolve(parsed as Parsed);
  const broken = crossRuleIssues(resolved);
  if (broken.length > 0) return { ok: false, issues: broken };
  return { ok: true, config: toAgentConfig(resolved) };
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

/** Every cross-field rule of the table at the top, in its order; each broken one is an issue. */
function crossRuleIssues(r: Resolved): AgentConfigIssue[] {
  const issues: AgentConfigIssue[] = [];
  const t = (key: DurationKey): Timed => need(r[key], key);
  const rule = (key: DurationKey, ok: boolean, message: string): void => {
    if (!ok) issues.push({ key, rule: message, shown: t(key).text });
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
  const backoff = conditionBackoffRule(t('idleWindow').ms, r.nodeCondition);
  if (backoff !== undefined) rule('idleWindow', false, backoff);
  return issues;
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
