// metav1.Status bodies, worded and shaped as the real API server words and shapes them.
//
// Each builder mirrors one constructor of staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go
// (NewNotFound, NewAlreadyExists, NewConflict, NewInvalid, NewForbidden, NewBadRequest,
// NewInternalError, NewResourceExpired, NewTooManyRequests, NewGenericServerResponse), or of
// staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/errors.go
// (NewUnsupportedMediaTypeError). Key order follows the Go struct field order, because the real
// server's JSON does and golden tests compare bytes.
//
// Assumption: a qualified resource is written `resource.group`, or bare `resource` for the core
// group, as schema.GroupResource.String() writes it.

import type { FieldError } from './field-error.ts';
import { errorBody } from './field-error.ts';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** An API error as a value: the HTTP code and the Status body to send. */
export class ApiStatusError extends Error {
  readonly code: string;
  readonly httpStatus: number;
  readonly body: StatusBody;

  constructor(body: StatusBody) {
    super(body.message ?? `status ${body.code}`);
    this.name = 'ApiStatusError';
    this.code = body.reason ?? 'Unknown';
    this.httpStatus = body.code;
    this.body = body;
  }
}

/** schema.GroupResource.String(). */
export function qualified(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

/** Builds a Status with the Go field order and Go's omitempty rules. */
export function statusBody(fields: {
  code: number;
  message?: string;
  reason?: string;
  details?: StatusDetails;
}): StatusBody {
  // Insertion order is the JSON order: message, reason and details come before code, as in metav1.Status.
  const ordered: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure' };
  if (fields.message !== undefined && fields.message !== '') ordered['message'] = fields.message;
  if (fields.reason !== undefined && fields.reason !== '') ordered['reason'] = fields.reason;
  if (fields.details !== undefined) ordered['details'] = orderDetails(fields.details);
  ordered['code'] = fields.code;
  return ordered as unknown as StatusBody;
}

function orderDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name !== undefined && d.name !== '') out.name = d.name;
  if (d.group !== undefined && d.group !== '') out.group = d.group;
  if (d.kind !== undefined && d.kind !== '') out.kind = d.kind;
  if (d.uid !== undefined && d.uid !== '') out.uid = d.uid;
  if (d.causes !== undefined && d.causes.length > 0) {
    out.causes = d.causes.map((c) => {
      const cause: StatusCause = {};
      if (c.reason !== undefined && c.reason !== '') cause.reason = c.reason;
      if (c.message !== undefined && c.message !== '') cause.message = c.message;
      if (c.field !== undefined && c.field !== '') cause.field = c.field;
      return cause;
    });
  }
  if (d.retryAfterSeconds !== undefined && d.retryAfterSeconds !== 0) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

function err(fields: Parameters<typeof statusBody>[0]): ApiStatusError {
  return new ApiStatusError(statusBody(fields));
}

/** errors.NewNotFound: `leases.coordination.k8s.io "x" not found`. */
export function notFound(gr: GroupResource, name: string): ApiStatusError {
  return err({
    code: 404,
    reason: 'NotFound',
    message: `${qualified(gr)} "${name}" not found`,
    details: { name, group: gr.group, kind: gr.resource },
  });
}

/** errors.NewAlreadyExists. */
export function alreadyExists(gr: GroupResource, name: string): ApiStatusError {
  return err({
    code: 409,
    reason: 'AlreadyExists',
    message: `${qualified(gr)} "${name}" already exists`,
    details: { name, group: gr.group, kind: gr.resource },
  });
}

/** registry/generic/registry/store.go OptimisticLockErrorMsg. */
export const OPTIMISTIC_LOCK_ERROR_MSG = 'the object has been modified; please apply your changes to the latest version and try again';

/** errors.NewConflict: `Operation cannot be fulfilled on leases.coordination.k8s.io "x": <why>`. */
export function conflict(gr: GroupResource, name: string, why: string = OPTIMISTIC_LOCK_ERROR_MSG): ApiStatusError {
  return err({
    code: 409,
    reason: 'Conflict',
    message: `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`,
    details: { name, group: gr.group, kind: gr.resource },
  });
}

export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

/** schema.GroupKind.String(): `Kind.group`, or bare `Kind` for the core group (and "" for none). */
export function groupKindString(gk: GroupKind): string {
  return gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`;
}

/**
 * errors.NewInvalid: `Lease.coordination.k8s.io "x" is invalid: <errors>`, one cause per field
 * error. Several errors are joined as utilerrors.NewAggregate prints them: `[a, b]`.
 */
export function invalid(gk: GroupKind, name: string, errors: readonly FieldError[]): ApiStatusError {
  const bodies = errors.map((e) => `${e.field}: ${errorBody(e)}`);
  let message = `${groupKindString(gk)} "${name}" is invalid`;
  if (bodies.length === 1) message += `: ${bodies[0] ?? ''}`;
  else if (bodies.length > 1) message += `: [${bodies.join(', ')}]`;
  return err({
    code: 422,
    reason: 'Invalid',
    message,
    details: {
      name,
      group: gk.group,
      kind: gk.kind,
      causes: errors.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
    },
  });
}

/** errors.NewForbidden, with the reason text endpoints/handlers/responsewriters ForbiddenStatusError builds. */
export function forbidden(gr: GroupResource, name: string, why: string): ApiStatusError {
  let message: string;
  if (gr.group === '' && gr.resource === '') message = `forbidden: ${why}`;
  else if (name === '') message = `${qualified(gr)} is forbidden: ${why}`;
  else message = `${qualified(gr)} "${name}" is forbidden: ${why}`;
  return err({ code: 403, reason: 'Forbidden', message, details: { name, group: gr.group, kind: gr.resource } });
}

/** The authenticator's 401 (endpoints/handlers/responsewriters/errors.go, unauthorized). */
export function unauthorized(): ApiStatusError {
  return err({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
}

/** errors.NewBadRequest. */
export function badRequest(message: string): ApiStatusError {
  return err({ code: 400, reason: 'BadRequest', message });
}

/** errors.NewInternalError. */
export function internalError(cause: string): ApiStatusError {
  return err({
    code: 500,
    reason: 'InternalError',
    message: `Internal error occurred: ${cause}`,
    details: { causes: [{ message: cause }] },
  });
}

/** errors.NewResourceExpired (410 Expired), as the watch cache sends for a too-old version. */
export function resourceExpired(message: string): ApiStatusError {
  return err({ code: 410, reason: 'Expired', message });
}

/** errors.NewTooManyRequests. */
export function tooManyRequests(message: string, retryAfterSeconds: number): ApiStatusError {
  return err({ code: 429, reason: 'TooManyRequests', message, details: { retryAfterSeconds } });
}

/** negotiation.NewUnsupportedMediaTypeError. */
export function unsupportedMediaType(accepted: readonly string[]): ApiStatusError {
  return err({
    code: 415,
    reason: 'UnsupportedMediaType',
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  });
}

/** errors.NewTooLargeResourceVersionError (a 504 Timeout). */
export function tooLargeResourceVersion(minimum: number, current: number): ApiStatusError {
  return err({
    code: 504,
    reason: 'Timeout',
    message: `Too large resource version: ${minimum}, current: ${current}`,
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  });
}

/**
 * errors.NewGenericServerResponse(code, "", GroupResource{}, "", serverMessage, retryAfter, false):
 * what the server sends for go-restful's own errors (405) and what an injected fault sends.
 * details is always present (a pointer in Go), so an empty one prints as `{}`.
 */
export function genericServerResponse(code: number, serverMessage = '', retryAfterSeconds = 0): ApiStatusError {
  let reason = 'Unknown';
  let message = `the server responded with the status code ${code} but did not return more information`;
  switch (code) {
    case 409: reason = 'Conflict'; message = 'the server reported a conflict'; break;
    case 404: reason = 'NotFound'; message = 'the server could not find the requested resource'; break;
    case 400: reason = 'BadRequest'; message = 'the server rejected our request for an unknown reason'; break;
    case 401: reason = 'Unauthorized'; message = 'the server has asked for the client to provide credentials'; break;
    case 403: reason = 'Forbidden'; message = serverMessage; break;
    case 406:
      reason = 'NotAcceptable';
      message = serverMessage === '' || serverMessage === 'unknown'
        ? 'the server was unable to respond with a content type that the client supports'
        : serverMessage;
      break;
    case 415: reason = 'UnsupportedMediaType'; message = serverMessage; break;
    case 405: reason = 'MethodNotAllowed'; message = 'the server does not allow this method on the requested resource'; break;
    case 422: reason = 'Invalid'; message = 'the server rejected our request due to an error in our request'; break;
    case 503: reason = 'ServiceUnavailable'; message = 'the server is currently unable to handle the request'; break;
    case 504:
      reason = 'Timeout';
      message = 'the server was unable to return a response in the time allotted, but may still be processing the request';
      break;
    case 429: reason = 'TooManyRequests'; message = 'the server has received too many requests and has asked us to try again later'; break;
    default:
      if (code >= 500) {
        reason = 'InternalError';
        message = `an error on the server (${goQuote(serverMessage)}) has prevented the request from succeeding`;
      }
  }
  const body = statusBody({ code, message, reason, details: { retryAfterSeconds } });
  if (body.details === undefined) body.details = {};
  return new ApiStatusError(body);
}

/** Go's %q for the strings the server quotes (ASCII-faithful; non-ASCII is kept as is). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
