import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CriError } from './cri-error.ts';
import { status as GRPC_STATUS } from '@grpc/grpc-js';
import { criErrorFromGrpc, criErrorFromStatus, faultCodeFor, grpcCodeName } from './grpc-fault.ts';

describe('gRPC status to CriError', () => {
  const table: Array<[number, string, string]> = [
    [GRPC_STATUS.UNAVAILABLE, 'unavailable', 'Unavailable'],
    [GRPC_STATUS.DEADLINE_EXCEEDED, 'deadline_exceeded', 'DeadlineExceeded'],
    [GRPC_STATUS.RESOURCE_EXHAUSTED, 'resource_exhausted', 'ResourceExhausted'],
    [GRPC_STATUS.UNIMPLEMENTED, 'unimplemented', 'Unimplemented'],
    [GRPC_STATUS.CANCELLED, 'other', 'Canceled'],
    [GRPC_STATUS.UNKNOWN, 'other', 'Unknown'],
    [GRPC_STATUS.INVALID_ARGUMENT, 'other', 'InvalidArgument'],
    [GRPC_STATUS.NOT_FOUND, 'other', 'NotFound'],
    [GRPC_STATUS.PERMISSION_DENIED, 'other', 'PermissionDenied'],
    [GRPC_STATUS.INTERNAL, 'other', 'Internal'],
    [GRPC_STATUS.UNAUTHENTICATED, 'other', 'Unauthenticated'],
    [99, 'other', 'Code(99)'],
  ];
  for (const [grpcCode, code, name] of table) {
    test(`status ${grpcCode} is ${code}, named ${name}`, () => {
      assert.equal(faultCodeFor(grpcCode), code);
      assert.equal(grpcCodeName(grpcCode), name);
    });
  }

  test('keeps the runtime message in the message and verbatim in detail, and the cause', () => {
    const cause = new Error('14 UNAVAILABLE: connect ENOENT /run/x.sock');
    const err = criErrorFromStatus('ListContainers', GRPC_STATUS.UNAVAILABLE, 'connect ENOENT /run/x.sock', { cause });
    assert.ok(err instanceof CriError);
    assert.equal(err.code, 'unavailable');
    assert.equal(err.grpcCode, 14);
    assert.equal(err.detail, 'connect ENOENT /run/x.sock');
    assert.equal(err.message, 'RuntimeService/ListContainers: rpc error: code = Unavailable desc = connect ENOENT /run/x.sock');
    assert.equal(err.cause, cause);
  });

  test('says that a runtime answering UNIMPLEMENTED lacks CRI v1', () => {
    const err = criErrorFromStatus('ListContainers', GRPC_STATUS.UNIMPLEMENTED, 'unknown service runtime.v1.RuntimeService');
    assert.equal(err.code, 'unimplemented');
    assert.equal(
      err.message,
      'runtime does not implement CRI runtime.v1 (RuntimeService/ListContainers): unknown service runtime.v1.RuntimeService',
    );
  });

  test('maps a grpc-js ServiceError by its code and details, and anything else to other', () => {
    const serviceError = Object.assign(new Error('8 RESOURCE_EXHAUSTED: Received message larger than max (20 vs 10)'), {
      code: 8,
      details: 'Received message larger than max (20 vs 10)',
    });
    const mapped = criErrorFromGrpc('ListPodSandbox', serviceError);
    assert.equal(mapped.code, 'resource_exhausted');
    assert.equal(mapped.detail, 'Received message larger than max (20 vs 10)');
    assert.equal(mapped.cause, serviceError);

    const plain = criErrorFromGrpc('Version', new TypeError('boom'));
    assert.equal(plain.code, 'other');
    assert.equal(plain.message, 'RuntimeService/Version: boom');

    const already = new CriError('deadline_exceeded', 'x');
    assert.equal(criErrorFromGrpc('Status', already), already, 'a CriError passes through');
  });

  test('a fault of the connection or the deadline names the socket, once; the runtime\'s other faults do not', () => {
    const socketPath = '/run/containerd/containerd.sock';
    const rows: Array<[number, string, string]> = [
      [GRPC_STATUS.UNAVAILABLE, 'Connection dropped', 'RuntimeService/Version: rpc error: code = Unavailable desc = Connection dropped (socket /run/containerd/containerd.sock)'],
      [GRPC_STATUS.DEADLINE_EXCEEDED, 'deadline of 2000ms exceeded', 'RuntimeService/Version: rpc error: code = DeadlineExceeded desc = deadline of 2000ms exceeded (socket /run/containerd/containerd.sock)'],
      [GRPC_STATUS.UNAVAILABLE, `connect ENOENT ${socketPath}`, `RuntimeService/Version: rpc error: code = Unavailable desc = connect ENOENT ${socketPath}`],
      [GRPC_STATUS.INTERNAL, 'disk on fire', 'RuntimeService/Version: rpc error: code = Internal desc = disk on fire'],
      [GRPC_STATUS.RESOURCE_EXHAUSTED, 'too big', 'RuntimeService/Version: rpc error: code = ResourceExhausted desc = too big'],
    ];
    for (const [grpcCode, details, message] of rows) {
      const err = criErrorFromStatus('Version', grpcCode, details, { socketPath });
      assert.equal(err.message, message);
      assert.equal(err.detail, details, 'detail stays the words as received');
    }
    const serviceError = Object.assign(new Error('14 UNAVAILABLE: Connection dropped'), { code: 14, details: 'Connection dropped' });
    assert.match(criErrorFromGrpc('Status', serviceError, socketPath).message, / \(socket \/run\/containerd\/containerd\.sock\)$/);
    assert.doesNotMatch(criErrorFromStatus('Version', GRPC_STATUS.UNAVAILABLE, 'Connection dropped').message, /socket/, 'no socket given, none named');
  });
});
