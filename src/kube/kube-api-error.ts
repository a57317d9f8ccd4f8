// Kubernetes API failures, mapped in ONE place (this file) to one error class with a stable
// `code`, as client-go's apimachinery/pkg/api/errors maps a metav1.Status to IsNotFound,
// IsConflict and the rest. Every caller decides on the predicates, never on raw status numbers.
//
// | what happened                                   | code               | predicate          |
// |-------------------------------------------------|--------------------|--------------------|
// | 404                                             | not_found          | isNotFound         |
// | 409, reason AlreadyExists                       | already_exists     | isAlreadyExists    |
// | 409, any other reason (Conflict)                | conflict           | isConflict         |
// | 422 (Invalid)                                   | invalid            | isInvalid          |
// | 400 (BadRequest)                                | bad_request        | isBadRequest       |
// | 401, or no credentials to send (exec plugin     | unauthorized       | isUnauthorized     |
// | failed, certificate file unreadable)            |                    |                    |
// | 403                                             | forbidden          | isForbidden        |
// | 429 (Retry-After kept as retryAfterMs)          | too_many_requests  | isTooManyRequests  |
// | 5xx, connection refused/reset, request timeout  | unavailable        | isUnavailable      |
// | the caller's own signal aborted the request     | aborted            | isAborted          |
// | a 2xx whose body is not the JSON expected       | bad_response       | –                  |
// | any other status (405, 406, 415, …)             | other              | –                  |
//
// The server's Status `message` and `reason` are kept verbatim. A body that is not JSON (a
// proxy's HTML error page, say) still maps by its status, and the message names the status and
// quotes a bounded snippet of the body. Nothing here ever holds a request header, so a bearer
// token cannot leak through an error or its log line.

export type KubeApiErrorCode =
  | 'not_found'
  | 'already_exists'
  | 'conflict'
  | 'invalid'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'too_many_requests'
  | 'unavailable'
  | 'aborted'
  | 'bad_response'
  | 'other';

/** The Kubernetes metav1.Status fields nodepulse reads. */
export interface KubeStatusBody {
  readonly kind?: string;
  readonly status?: string;
  readonly message?: string;
  readonly reason?: string;
  readonly code?: number;
  readonly details?: { readonly name?: string; readonly group?: string; readonly kind?: string; readonly retryAfterSeconds?: number };
}

export interface KubeApiErrorInit {
  /** The HTTP status, or 0 when no response arrived. */
  readonly status: number;
  /** The Status body's reason (NotFound, Conflict, …), or undefined. */
  readonly reason?: string | undefined;
  /** What was asked, e.g. "PATCH leases nodepulse/node-1". */
  readonly what: string;
  readonly retryAfterMs?: number | undefined;
  readonly cause?: unknown;
}

/** How many characters of a non-JSON body an error quotes. */
const SNIPPET_CHARS = 200;

export class KubeApiError extends Error {
  readonly code: KubeApiErrorCode;
  /** HTTP status, or 0 when the request never got one (refused, reset, timed out, aborted). */
  readonly status: number;
  /** metav1.Status reason, verbatim, when the server sent one. */
  readonly reason: string | undefined;
  /** What was asked: verb, resource and object, for logs ("PATCH leases nodepulse/node-1"). */
  readonly what: string;
  /** From Retry-After (or Status details.retryAfterSeconds) on a 429 or 503. */
  readonly retryAfterMs: number | undefined;

  constructor(code: KubeApiErrorCode, message: string, init: KubeApiErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'KubeApiError';
    this.code = code;
    this.status = init.status;
    this.reason = init.reason;
    this.what = init.what;
    this.retryAfterMs = init.retryAfterMs;
  }
}

function codeOf(err: unknown): KubeApiErrorCode | undefined {
  return err instanceof KubeApiError ? err.code : undefined;
}

export const isNotFound = (err: unknown): boolean => codeOf(err) === 'not_found';
export const isAlreadyExists = (err: unknown): boolean => codeOf(err) === 'already_exists';
export const isConflict = (err: unknown): boolean => codeOf(err) === 'conflict';
export const isInvalid = (err: unknown): boolean => codeOf(err) === 'invalid';
export const isBadRequest = (err: unknown): boolean => codeOf(err) === 'bad_request';
export const isUnauthorized = (err: unknown): boolean => codeOf(err) === 'unauthorized';
export const isForbidden = (err: unknown): boolean => codeOf(err) === 'forbidden';
export const isTooManyRequests = (err: unknown): boolean => codeOf(err) === 'too_many_requests';
export const isUnavailable = (err: unknown): boolean => codeOf(err) === 'unavailable';
export const isAborted = (err: unknown): boolean => codeOf(err) === 'aborted';

/** The code for an HTTP status (and the Status reason, which splits 409). */
export function codeForStatus(status: number, reason: string | undefined): KubeApiErrorCode {
  if (status === 404) return 'not_found';
  if (status === 409) return reason === 'AlreadyExists' ? 'already_exists' : 'conflict';
  if (status === 422) return 'invalid';
  if (status === 400) return 'bad_request';
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 429) return 'too_many_requests';
  if (status >= 500 && status <= 599) return 'unavailable';
  return 'other';
}

/**
 * Parses Retry-After: delta-seconds, or an HTTP-date measured against nowWallMs. Returns
 * undefined for anything else. A date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, nowWallMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowWallMs);
}

/**
 * The error for a non-2xx answer. body is the raw text; when it is a metav1.Status, its message
 * and reason are kept.
 */
export function errorFromResponse(
  what: string,
  status: number,
  body: string,
  retryAfterHeader: string | undefined,
  nowWallMs: number,
): KubeApiError {
  const parsed = parseStatusBody(body);
  const reason = parsed?.reason;
  const code = codeForStatus(status, reason);
  let retryAfterMs = parseRetryAfter(retryAfterHeader, nowWallMs);
  const detailSeconds = parsed?.details?.retryAfterSeconds;
  if (retryAfterMs === undefined && typeof detailSeconds === 'number') retryAfterMs = detailSeconds * 1000;
  const message =
    parsed === undefined
      ? `${what}: HTTP ${status} with a non-JSON body: ${JSON.stringify(snippet(body))}`
      : `${what}: HTTP ${status}${reason === undefined ? '' : ` ${reason}`}: ${parsed.message ?? '(no message)'}`;
  return new KubeApiError(code, message, { status, reason, what, retryAfterMs });
}

/** The error for a request that got no answer: refused, reset, timed out, or aborted by its caller. */
export function errorFromTransport(what: string, err: unknown, how: 'timeout' | 'aborted' | 'failed', timeoutMs: number): KubeApiError {
  if (how === 'aborted') return new KubeApiError('aborted', `${what}: aborted by the caller`, { status: 0, what, cause: err });
  if (how === 'timeout') return new KubeApiError('unavailable', `${what}: no answer within ${timeoutMs}ms`, { status: 0, what, cause: err });
  const sysCode = (err as { code?: unknown } | null)?.code;
  const detail = err instanceof Error ? err.message : String(err);
  const message = `${what}: ${typeof sysCode === 'string' ? `${sysCode}: ` : ''}${detail}`;
  return new KubeApiError('unavailable', message, { status: 0, what, cause: err });
}

/** The error for a request never sent because its credentials could not be had (an exec plugin failed). */
export function errorFromCredentials(what: string, err: unknown): KubeApiError {
  const detail = err instanceof Error ? err.message : String(err);
  return new KubeApiError('unauthorized', `${what}: getting credentials: ${detail}`, { status: 0, what, cause: err });
}

/** The error for a 2xx answer whose body is not the JSON object expected. */
export function errorFromBadBody(what: string, status: number, body: string, cause?: unknown): KubeApiError {
  return new KubeApiError('bad_response', `${what}: HTTP ${status} with a body that is not a JSON object: ${JSON.stringify(snippet(body))}`, {
    status,
    what,
    cause,
  });
}

/** An answer in protobuf that kube-protobuf.ts could not read (its error names the fault). */
export function errorFromBadProtobuf(what: string, status: number, cause: unknown): KubeApiError {
  const why = cause instanceof Error ? cause.message : String(cause);
  return new KubeApiError('bad_response', `${what}: HTTP ${status} with a protobuf body that cannot be read: ${why}`, { status, what, cause });
}

function parseStatusBody(body: string): KubeStatusBody | undefined {
  try {
    const value: unknown = JSON.parse(body);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    return value as KubeStatusBody;
  } catch {
    return undefined;
  }
}

function snippet(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat;
}
