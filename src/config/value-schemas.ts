// The zod schemas of the values every command's settings are made of: durations, byte sizes,
// host:port, booleans, log levels, Kubernetes names, socket URLs. The agent's config
// (agent-config-schema.ts) and the flags of fleet, controller, check and demo are built from
// these, so one kind of value has one rule, and one wording, everywhere.
//
// Input is what a person wrote: a string from a flag or a variable, or any YAML value from the
// agent's config file. Every message is the tail of `key: value must be rule`, so each reads
// after "must be": `a duration such as 500ms, 10s or 3m`.
//
// zod is imported as `zod/v3`, the API zod 4 keeps at that subpath for good: it is a handful of
// modules, where `zod`, `zod/mini` and `zod/v4/core` each load every one of zod's locales too,
// and the agent keeps whatever it loads for its whole life (docs/bench.md, "Config validation").
import { z } from 'zod/v3';
import { LOG_LEVELS } from '../log/logger.ts';
import { parseByteSize, formatByteSize } from './byte-size.ts';
import { formatDuration, parseDuration } from '../clock/duration.ts';
import { parseHostPort, type HostPort } from './host-port.ts';

/** A duration as parsed: milliseconds, and the text as written, for messages that name it. */
export interface Timed {
  readonly ms: number;
  readonly text: string;
}

/** host:port as written, and its parts. */
export interface Address extends HostPort {
  readonly text: string;
}

/** Longest duration accepted: node timers overflow past 2^31 - 1 ms (24.8 days) and fire at once. */
export const MAX_DURATION_MS = 24 * 3_600_000;
export const DURATION_EXAMPLE = 'a duration such as 500ms, 10s or 3m';
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const DNS_SUBDOMAIN_RULE = "a DNS subdomain (at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)";
export const DNS_LABEL_RULE = "a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)";
/** Go's strconv.ParseBool, which pflag and every Kubernetes component read booleans with. */
const GO_TRUE = ['1', 't', 'T', 'TRUE', 'true', 'True'] as const;
const GO_FALSE = ['0', 'f', 'F', 'FALSE', 'false', 'False'] as const;
/** sun_path is 108 bytes on Linux, one of which is the terminating NUL. */
const MAX_SOCKET_PATH_BYTES = 107;

/** Records `rule` as the value's issue and ends the transform. */
export function fail(ctx: z.RefinementCtx, rule: string): never {
  ctx.addIssue({ code: z.ZodIssueCode.custom, message: rule });
  return z.NEVER;
}

/**
 * A string; `unset` is the rule when there is no value at all. zod's own messages ("Expected
 * string, received number") never reach a line: every schema here names its rule.
 */
export function text(unset = 'set') {
  return z.string({ invalid_type_error: 'a string', required_error: unset });
}

/** One message for every way a value can be wrong. */
function only(message: string): { errorMap: z.ZodErrorMap } {
  return { errorMap: () => ({ message }) };
}

const durationText = z.string({
  errorMap: (issue) => ({
    message: issue.code === z.ZodIssueCode.invalid_type && issue.received === 'number' ? `${DURATION_EXAMPLE} (a bare number has no unit)` : DURATION_EXAMPLE,
  }),
});

/**
 * A Go-style duration string (duration.ts): a whole number of milliseconds, more than 0 unless
 * `allowZero`, at most 24h, and whole seconds when `wholeSeconds` (a Lease's duration).
 */
export function duration(options: { allowZero?: boolean; wholeSeconds?: boolean } = {}) {
  let ms = z.number().int('a whole number of milliseconds');
  if (options.allowZero !== true) ms = ms.positive('longer than 0s');
  ms = ms.max(MAX_DURATION_MS, `at most ${formatDuration(MAX_DURATION_MS)}`);
  if (options.wholeSeconds === true) ms = ms.multipleOf(1000, 'a whole number of seconds (leaseDurationSeconds is an integer)');
  return durationText
    .transform((written, ctx): Timed => {
      const parsed = parseDuration(written);
      return parsed === undefined ? fail(ctx, DURATION_EXAMPLE) : { ms: parsed, text: written };
    })
    .pipe(z.object({ ms, text: z.string() }));
}

/** A byte size (byte-size.ts) between `min` and `max`; `why` says where the bounds come from. */
export function byteSize(min: number, max: number, why: string) {
  const example = 'a byte size such as 16777216 or 16Mi';
  const range = `between ${formatByteSize(min)} and ${max} bytes ${why}`;
  return z
    .union([z.string(), z.number()], only(example))
    .transform((raw, ctx) => parseByteSize(raw) ?? fail(ctx, example))
    .pipe(z.number().min(min, range).max(max, range));
}

/** host:port as Go's net.SplitHostPort reads it (host-port.ts). */
export function address(example: string) {
  return text().transform((written, ctx): Address => {
    const parsed = parseHostPort(written);
    return parsed === undefined ? fail(ctx, `host:port such as ${example}`) : { text: written, ...parsed };
  });
}

/** A boolean, or a string Go's strconv.ParseBool reads. */
export const goBool = z
  .union([z.boolean(), z.enum([...GO_TRUE, ...GO_FALSE])], only('true or false'))
  .transform((v) => v === true || (GO_TRUE as readonly unknown[]).includes(v));

export const logLevel = z.enum(LOG_LEVELS, only(`one of ${LOG_LEVELS.join(', ')}`));

export const dnsSubdomain = text().regex(DNS_SUBDOMAIN, DNS_SUBDOMAIN_RULE);
export const dnsLabel = text().regex(DNS_LABEL, DNS_LABEL_RULE);

/** A file path: any non-empty string. */
export const filePath = text().min(1, 'a file path');

/** The agent's CRI endpoint: a unix:// URL whose path the kernel can bind (sun_path). */
export const unixSocketUrl = text()
  .startsWith('unix:///', 'a unix:// URL with an absolute socket path, such as unix:///run/containerd/containerd.sock')
  .refine(
    (url) => Buffer.byteLength(url.slice('unix://'.length)) <= MAX_SOCKET_PATH_BYTES,
    `a socket path of at most ${MAX_SOCKET_PATH_BYTES} bytes (the kernel's sun_path limit)`,
  );

/** One of `choices`, e.g. table or json. */
export function oneOf<const T extends readonly [string, ...string[]]>(choices: T) {
  const last = choices[choices.length - 1];
  const list = choices.length === 1 ? choices[0] : `${choices.slice(0, -1).join(', ')} or ${last}`;
  return z.enum(choices, only(list));
}
