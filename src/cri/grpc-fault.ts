// gRPC statuses to CriError, in one place.
//
// | gRPC status        | CriError code       |
// |--------------------|---------------------|
// | UNAVAILABLE        | unavailable         |
// | DEADLINE_EXCEEDED  | deadline_exceeded   |
// | RESOURCE_EXHAUSTED | resource_exhausted  |
// | UNIMPLEMENTED      | unimplemented       |
// | anything else      | other               |
//
// Messages keep the shape operators already search for in kubelet logs, Go's status string
// (`rpc error: code = Unavailable desc = ...`), prefixed with the call that failed. UNIMPLEMENTED
// says plainly that the runtime lacks CRI v1: that is what it means on a CRI socket (a runtime
// that speaks only v1alpha2, or a socket that is not a CRI runtime at all).
//
// The runtime's own words are kept unedited in `detail`, and the original error under `cause`.
//
// A fault of the connection (`unavailable`) or of the deadline (`deadline_exceeded`) names the
// runtime's socket when the caller gives it: the message ends with `(socket /path)`, unless the
// details already name it (grpc-js's connect errors do: `connect ENOENT /path`). Which runtime
// did not answer is the first thing a reader of the log or /status needs on a node with several.
import { CriError, type CriFaultCode } from './cri-error.ts';

/** gRPC status numbers (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

// Go's names for the codes, as in `rpc error: code = DeadlineExceeded desc = ...`.
const GO_CODE_NAMES: readonly string[] = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** The CriError code for a gRPC status number (the table above). */
export function faultCodeFor(grpcCode: number): CriFaultCode {
  switch (grpcCode) {
    case GRPC_STATUS.UNAVAILABLE:
      return 'unavailable';
    case GRPC_STATUS.DEADLINE_EXCEEDED:
      return 'deadline_exceeded';
    case GRPC_STATUS.RESOURCE_EXHAUSTED:
      return 'resource_exhausted';
    case GRPC_STATUS.UNIMPLEMENTED:
      return 'unimplemented';
    default:
      return 'other';
  }
}

/** Go's name for a gRPC status number, e.g. 14 → Unavailable. */
export function grpcCodeName(grpcCode: number): string {
  return GO_CODE_NAMES[grpcCode] ?? `Code(${grpcCode})`;
}

export interface FaultContext {
  /** The error that carried the status. */
  readonly cause?: unknown;
  /** The runtime's socket, named in a fault of the connection or the deadline. */
  readonly socketPath?: string | undefined;
}

/**
 * The CriError for a failed call. `method` is the RPC's name (e.g. ListContainers); `details`
 * is the status text from the runtime (or from gRPC itself, for transport faults).
 */
export function criErrorFromStatus(method: string, grpcCode: number, details: string, context: FaultContext = {}): CriError {
  const { cause, socketPath } = context;
  const code = faultCodeFor(grpcCode);
  const call = `RuntimeService/${method}`;
  const names = socketPath !== undefined && (code === 'unavailable' || code === 'deadline_exceeded') && !details.includes(socketPath);
  const message =
    code === 'unimplemented'
      ? `runtime does not implement CRI runtime.v1 (${call}): ${details}`
      : `${call}: rpc error: code = ${grpcCodeName(grpcCode)} desc = ${details}${names ? ` (socket ${socketPath})` : ''}`;
  return new CriError(code, message, cause === undefined ? { detail: details, grpcCode } : { detail: details, grpcCode, cause });
}

/** A thrown value with a gRPC `code` and `details` (a grpc-js ServiceError) or anything else, as a CriError. */
export function criErrorFromGrpc(method: string, err: unknown, socketPath?: string): CriError {
  if (err instanceof CriError) return err;
  if (isServiceError(err)) return criErrorFromStatus(method, err.code, err.details, { cause: err, socketPath });
  const text = err instanceof Error ? err.message : String(err);
  return new CriError('other', `RuntimeService/${method}: ${text}`, { detail: text, cause: err });
}

function isServiceError(err: unknown): err is { code: number; details: string } {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'number' &&
    typeof (err as { details?: unknown }).details === 'string'
  );
}
