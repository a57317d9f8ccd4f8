import assert from 'node:assert/strict';
import { test } from 'node:test';
import { status as GRPC_STATUS } from '@grpc/grpc-js';
import { CriError, toFault, type CriFaultCode } from './cri-error.ts';
import { AGENT_CAUSES, blameOf, classifyFault, RUNTIME_CAUSES, type FaultCause } from './fault-cause.ts';

const SOCKET = '/run/containerd/containerd.sock';
/** grpc-js's words for a connect() that failed, as seen from @grpc/grpc-js 1.14 on a unix socket. */
const connect = (errno: string): string => `No connection established. Last error: Error: connect ${errno} ${SOCKET}. Resolution note: `;

// The table in fault-cause.ts's header, row by row: [row, code, gRPC status, detail, known cause, cause].
const TABLE: ReadonlyArray<[string, CriFaultCode, number | undefined, string, FaultCause | undefined, FaultCause]> = [
  ['a cause known where it arose stands (the decoder)', 'other', undefined, 'field 1 has wire type 0 at byte 0', 'undecodable', 'undecodable'],
  ['a cause known where it arose stands (no socket chosen)', 'unavailable', GRPC_STATUS.UNAVAILABLE, 'criEndpoint: no runtime chosen', 'no-socket', 'no-socket'],
  ['a known cause stands over what the status would say', 'unavailable', GRPC_STATUS.UNAVAILABLE, connect('ENOENT'), 'no-socket', 'no-socket'],
  ['DEADLINE_EXCEEDED: the runtime hangs', 'deadline_exceeded', GRPC_STATUS.DEADLINE_EXCEEDED, 'deadline of 60000ms exceeded', undefined, 'hung'],
  ['UNAVAILABLE, connect ECONNREFUSED: a socket with no listener', 'unavailable', GRPC_STATUS.UNAVAILABLE, connect('ECONNREFUSED'), undefined, 'refused'],
  ['UNAVAILABLE, connect ENOENT: the socket in use is gone', 'unavailable', GRPC_STATUS.UNAVAILABLE, connect('ENOENT'), undefined, 'vanished'],
  ['UNAVAILABLE, connect EACCES: the agent may not open the socket', 'unavailable', GRPC_STATUS.UNAVAILABLE, connect('EACCES'), undefined, 'permission-denied'],
  ['UNAVAILABLE, connect EPERM', 'unavailable', GRPC_STATUS.UNAVAILABLE, connect('EPERM'), undefined, 'permission-denied'],
  ['UNAVAILABLE, a dropped connection', 'unavailable', GRPC_STATUS.UNAVAILABLE, 'Connection dropped', undefined, 'runtime-error'],
  ['UNAVAILABLE, the runtime\'s own words', 'unavailable', GRPC_STATUS.UNAVAILABLE, 'server is shutting down', undefined, 'runtime-error'],
  ['UNIMPLEMENTED: no CRI runtime.v1 on the socket', 'unimplemented', GRPC_STATUS.UNIMPLEMENTED, 'unknown service runtime.v1.RuntimeService', undefined, 'unimplemented'],
  ['RESOURCE_EXHAUSTED from the agent\'s receive limit', 'resource_exhausted', GRPC_STATUS.RESOURCE_EXHAUSTED, 'Received message larger than max (17825792 vs 16777216)', undefined, 'oversized'],
  ['RESOURCE_EXHAUSTED from the runtime', 'resource_exhausted', GRPC_STATUS.RESOURCE_EXHAUSTED, 'too many requests', undefined, 'runtime-error'],
  ['PERMISSION_DENIED from the runtime', 'other', GRPC_STATUS.PERMISSION_DENIED, 'not allowed', undefined, 'permission-denied'],
  ['UNAUTHENTICATED from the runtime', 'other', GRPC_STATUS.UNAUTHENTICATED, 'who are you', undefined, 'permission-denied'],
  ['UNKNOWN from the runtime', 'other', GRPC_STATUS.UNKNOWN, 'failed to list containers', undefined, 'runtime-error'],
  ['INTERNAL from the runtime', 'other', GRPC_STATUS.INTERNAL, 'disk on fire', undefined, 'runtime-error'],
  ['no gRPC status at all: the agent\'s own error', 'other', undefined, 'Cannot read properties of undefined', undefined, 'agent-error'],
];

for (const [row, code, grpcCode, detail, known, cause] of TABLE) {
  test(`fault cause: ${row} → ${cause} (${blameOf(cause)})`, () => {
    assert.equal(classifyFault({ code, grpcCode, detail, known }), cause);
  });
}

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
