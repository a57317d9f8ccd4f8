import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  errorFromResponse,
  errorFromTransport,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
  isUnavailable,
  KubeApiError,
  parseRetryAfter,
  type KubeApiErrorCode,
} from './kube-api-error.ts';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

// The table in kube-api-error.ts.
const TABLE: ReadonlyArray<[number, string, KubeApiErrorCode, (e: unknown) => boolean]> = [
  [404, 'NotFound', 'not_found', isNotFound],
  [409, 'AlreadyExists', 'already_exists', isAlreadyExists],
  [409, 'Conflict', 'conflict', isConflict],
  [422, 'Invalid', 'invalid', isInvalid],
  [401, 'Unauthorized', 'unauthorized', isUnauthorized],
  [403, 'Forbidden', 'forbidden', isForbidden],
  [429, 'TooManyRequests', 'too_many_requests', isTooManyRequests],
  [500, 'InternalError', 'unavailable', isUnavailable],
  [503, 'ServiceUnavailable', 'unavailable', isUnavailable],
  [504, 'Timeout', 'unavailable', isUnavailable],
  [415, 'UnsupportedMediaType', 'other', () => true],
];

for (const [code, reason, expected, predicate] of TABLE) {
  test(`HTTP ${code} ${reason} maps to ${expected} and keeps the server's reason and message`, () => {
    const err = errorFromResponse('PATCH leases ns/n', code, status(code, reason, `the server says ${code}`), undefined, NOW);
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.code, expected);
    assert.equal(err.status, code);
    assert.equal(err.reason, reason);
    assert.equal(err.message, `PATCH leases ns/n: HTTP ${code} ${reason}: the server says ${code}`);
    assert.ok(predicate(err));
  });
}

test('a predicate is false for other errors and non-errors', () => {
  const notFound = errorFromResponse('GET nodes n', 404, status(404, 'NotFound', 'nodes "n" not found'), undefined, NOW);
  assert.equal(isConflict(notFound), false);
  assert.equal(isNotFound(new Error('404')), false);
  assert.equal(isNotFound(undefined), false);
});

test('a non-JSON body still maps by status, and the message names the status and quotes a snippet', () => {
  const html = `<html><body>${'bad gateway '.repeat(100)}</body></html>`;
  const err = errorFromResponse('GET nodes n', 502, html, undefined, NOW);
  assert.equal(err.code, 'unavailable');
  assert.equal(err.reason, undefined);
  assert.match(err.message, /^GET nodes n: HTTP 502 with a non-JSON body: "<html><body>bad gateway bad gateway/);
  assert.ok(err.message.length < 300, 'the snippet is bounded');
});

test('a 429 carries Retry-After in ms, from the header or the Status details', () => {
  assert.equal(errorFromResponse('x', 429, status(429, 'TooManyRequests', 'slow down'), '3', NOW).retryAfterMs, 3_000);
  const body = JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'm', details: { retryAfterSeconds: 2 } });
  assert.equal(errorFromResponse('x', 429, body, undefined, NOW).retryAfterMs, 2_000);
  assert.equal(errorFromResponse('x', 429, status(429, 'TooManyRequests', 'm'), undefined, NOW).retryAfterMs, undefined);
});

const RETRY_AFTER: ReadonlyArray<[string | undefined, number | undefined]> = [
  [undefined, undefined],
  ['0', 0],
  ['5', 5_000],
  [' 7 ', 7_000],
  [new Date(NOW + 4_000).toUTCString(), 4_000],
  [new Date(NOW - 4_000).toUTCString(), 0],
  ['soon', undefined],
];

for (const [value, expected] of RETRY_AFTER) {
  test(`Retry-After ${JSON.stringify(value)} is ${String(expected)} ms`, () => {
    assert.equal(parseRetryAfter(value, NOW), expected);
  });
}

test('a request that got no answer is unavailable, unless its caller aborted it', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const e1 = errorFromTransport('GET nodes n', refused, 'failed', 10_000);
  assert.equal(e1.code, 'unavailable');
  assert.equal(e1.status, 0);
  assert.equal(e1.message, 'GET nodes n: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1');
  assert.equal(e1.cause, refused);
  assert.equal(errorFromTransport('GET nodes n', new Error('x'), 'timeout', 10_000).message, 'GET nodes n: no answer within 10000ms');
  assert.equal(errorFromTransport('GET nodes n', new Error('x'), 'timeout', 10_000).code, 'unavailable');
  assert.equal(errorFromTransport('GET nodes n', new Error('x'), 'aborted', 10_000).code, 'aborted');
});
