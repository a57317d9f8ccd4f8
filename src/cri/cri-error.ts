// CRI faults, typed by gRPC status. One class, a stable `code`, the runtime's own message
// kept verbatim, and the original error under `cause`. Each fault also has a stable failure
// mode, its `cause` as a CriFault (fault-cause.ts), which says whether the runtime or the agent
// itself is to blame.

import { classifyFault, type FaultCause } from './fault-cause.ts';

export type CriFaultCode = 'unavailable' | 'deadline_exceeded' | 'resource_exhausted' | 'unimplemented' | 'other';

export const CRI_FAULT_CODES: readonly CriFaultCode[] = [
  'unavailable',
  'deadline_exceeded',
  'resource_exhausted',
  'unimplemented',
  'other',
];

export interface CriErrorOptions {
  readonly detail?: string;
  readonly grpcCode?: number;
  readonly cause?: unknown;
  /** The failure mode, when the place the fault arose knows it better than its status does. */
  readonly knownCause?: FaultCause;
}

export class CriError extends Error {
  readonly code: CriFaultCode;
  /** The gRPC status number, when the fault came from one. */
  readonly grpcCode: number | undefined;
  /** The runtime's (or gRPC's) own words, unedited. */
  readonly detail: string;
  /** The failure mode known where the fault arose (the decoder, the socket probe), if any. */
  readonly knownCause: FaultCause | undefined;

  constructor(code: CriFaultCode, message: string, options: CriErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CriError';
    this.code = code;
    this.grpcCode = options.grpcCode;
    this.detail = options.detail ?? message;
    this.knownCause = options.knownCause;
  }
}

/** A fault as the ledger and /status keep it: plain data, no stack. */
export interface CriFault {
  readonly code: CriFaultCode;
  readonly message: string;
  /** The failure mode, which says whom to blame (fault-cause.ts). */
  readonly cause: FaultCause;
}

export function toFault(err: unknown): CriFault {
  if (err instanceof CriError) {
    return { code: err.code, message: err.message, cause: classifyFault({ code: err.code, grpcCode: err.grpcCode, detail: err.detail, known: err.knownCause }) };
  }
  return { code: 'other', message: err instanceof Error ? err.message : String(err), cause: 'agent-error' };
}
