// CRI faults, typed by gRPC status. One class, a stable `code`, the runtime's own message
// kept verbatim, and the original error under `cause`.

export type CriFaultCode = 'unavailable' | 'deadline_exceeded' | 'resource_exhausted' | 'unimplemented' | 'other';

export const CRI_FAULT_CODES: readonly CriFaultCode[] = [
  'unavailable',
  'deadline_exceeded',
  'resource_exhausted',
  'unimplemented',
  'other',
];

export class CriError extends Error {
  readonly code: CriFaultCode;
  /** The gRPC status number, when the fault came from one. */
  readonly grpcCode: number | undefined;
  /** The runtime's (or gRPC's) own words, unedited. */
  readonly detail: string;

  constructor(code: CriFaultCode, message: string, options: { detail?: string; grpcCode?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CriError';
    this.code = code;
    this.grpcCode = options.grpcCode;
    this.detail = options.detail ?? message;
  }
}

/** A fault as the ledger and /status keep it: plain data, no stack. */
export interface CriFault {
  readonly code: CriFaultCode;
  readonly message: string;
}

export function toFault(err: unknown): CriFault {
  if (err instanceof CriError) return { code: err.code, message: err.message };
  return { code: 'other', message: err instanceof Error ? err.message : String(err) };
}
