import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { casesOf, designTable } from '../../test/support/design-tables.ts';
import { status as GRPC_STATUS } from '@grpc/grpc-js';
import { CriError, toFault, type CriFaultCode } from './cri-error.ts';
import { AGENT_CAUSES, blameOf, classifyFault, RUNTIME_CAUSES, type FaultCause } from './fault-cause.ts';

const SOCKET = '/run/containerd/containerd.sock';
/** grpc-js's words for a connect() that failed, as seen from @grpc/grpc-js 1.14 on a unix socket. */
const connect = (errno: string): string => `No connection established. Last error: Error: connect ${errno} ${SOCKET}. Resolution note: `;

interface Fault {
  readonly code: CriFaultCode;
  readonly grpcCode: number | undefined;
  readonly detail: string;
  readonly known: FaultCause | undefined;
}
const fault = (code: CriFaultCode, grpcCode: number | undefined, detail: string, known?: FaultCause): Fault => ({ code, grpcCode, detail, known });

// The faults of each row of docs/design.md's table ("Whom a fault blames"), by the row's first
// cell; the cause and the blame each must get are the row's own. "that cause" and "its own" are
// the known cause and its blame.
const CASES: Readonly<Record<string, readonly Fault[]>> = {
  'a cause known where it arose (the decoder, the socket probe)': [
    fault('other', undefined, 'field 1 has wire type 0 at byte 0', 'undecodable'),
    fault('unavailable', GRPC_STATUS.UNAVAILABLE, 'criEndpoint: no runtime chosen', 'no-socket'),
    // A known cause stands over what the status would say.
    fault('unavailable', GRPC_STATUS.UNAVAILABLE, connect('ENOENT'), 'no-socket'),
    fault('unavailable', GRPC_STATUS.UNAVAILABLE, connect('ECONNREFUSED'), 'vanished'),
  ],
  'DEADLINE_EXCEEDED (the call outlived its deadline)': [fault('deadline_exceeded', GRPC_STATUS.DEADLINE_EXCEEDED, 'deadline of 60000ms exceeded')],
  'UNAVAILABLE, connect ECONNREFUSED (a socket, no listener)': [fault('unavailable', GRPC_STATUS.UNAVAILABLE, connect('ECONNREFUSED'))],
  'UNAVAILABLE, connect ENOENT (a socket in use is gone)': [fault('unavailable', GRPC_STATUS.UNAVAILABLE, connect('ENOENT'))],
  'UNAVAILABLE, connect EACCES / EPERM': [fault('unavailable', GRPC_STATUS.UNAVAILABLE, connect('EACCES')), fault('unavailable', GRPC_STATUS.UNAVAILABLE, connect('EPERM'))],
  "UNAVAILABLE, anything else (a dropped connection, the runtime's own UNAVAILABLE)": [
    fault('unavailable', GRPC_STATUS.UNAVAILABLE, 'Connection dropped'),
    fault('unavailable', GRPC_STATUS.UNAVAILABLE, 'server is shutting down'),
  ],
  'UNIMPLEMENTED (no CRI runtime.v1 on the socket)': [fault('unimplemented', GRPC_STATUS.UNIMPLEMENTED, 'unknown service runtime.v1.RuntimeService')],
  "RESOURCE_EXHAUSTED from the agent's own receive limit (Received message larger than max)": [
    fault('resource_exhausted', GRPC_STATUS.RESOURCE_EXHAUSTED, 'Received message larger than max (17825792 vs 16777216)'),
  ],
  'RESOURCE_EXHAUSTED from the runtime': [fault('resource_exhausted', GRPC_STATUS.RESOURCE_EXHAUSTED, 'too many requests')],
  'PERMISSION_DENIED, UNAUTHENTICATED (the runtime refuses us)': [
    fault('other', GRPC_STATUS.PERMISSION_DENIED, 'not allowed'),
    fault('other', GRPC_STATUS.UNAUTHENTICATED, 'who are you'),
  ],
  'any other gRPC status (UNKNOWN, INTERNAL, ...)': [
    fault('other', GRPC_STATUS.UNKNOWN, 'failed to list containers'),
    fault('other', GRPC_STATUS.INTERNAL, 'disk on fire'),
  ],
  "no gRPC status at all: the agent's own error": [fault('other', undefined, 'Cannot read properties of undefined')],
};

describe("classifyFault and blameOf: docs/design.md's table", () => {
  for (const { key, expected, case: faults } of casesOf(designTable('Whom a fault blames'), 1, CASES)) {
    const [cause, blame] = expected;
    test(`${key} → ${cause} (${blame})`, () => {
      for (const f of faults) {
        const want = cause === 'that cause' ? f.known : cause;
        assert.ok(want !== undefined, `precondition: a fault of the row "${key}" knows its cause`);
        const got = classifyFault(f);
        assert.equal(got, want, f.detail);
        assert.equal(blameOf(got), blame === 'its own' ? blameOf(want as FaultCause) : blame, f.detail);
      }
    });
  }
});

test('every cause blames exactly one side, and the two lists are the blame', () => {
  for (const cause of RUNTIME_CAUSES) assert.equal(blameOf(cause), 'runtime', cause);
  for (const cause of AGENT_CAUSES) assert.equal(blameOf(cause), 'agent', cause);
  assert.equal(new Set([...RUNTIME_CAUSES, ...AGENT_CAUSES]).size, RUNTIME_CAUSES.length + AGENT_CAUSES.length);
});

test('a CriError becomes a fault with its cause; anything else is the agent\'s own error', () => {
  const refused = new CriError('unavailable', 'RuntimeService/ListContainers: …', { detail: connect('ECONNREFUSED'), grpcCode: GRPC_STATUS.UNAVAILABLE });
  assert.deepEqual(toFault(refused), { code: 'unavailable', message: 'RuntimeService/ListContainers: …', cause: 'refused' });
  const decoded = new CriError('other', 'RuntimeService/ListContainers: answer could not be decoded: x', { knownCause: 'undecodable' });
  assert.equal(toFault(decoded).cause, 'undecodable');
  assert.deepEqual(toFault(new TypeError('boom')), { code: 'other', message: 'boom', cause: 'agent-error' });
});
