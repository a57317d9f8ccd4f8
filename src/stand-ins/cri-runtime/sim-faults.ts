// The simulated runtime's fault script: which of the next calls fail, hang or come slowly.
//
// A fault applies to one method (or '*', every method) for its next `count` calls, or for every
// call until cleared when `count` is absent. Faults are matched in the order they were added;
// the first that matches a call is used and its count goes down by one.
//
// | fault                      | the call                                           |
// |----------------------------|----------------------------------------------------|
// | { code, message? }         | fails with that gRPC status and message            |
// | { delayMs }                | is answered after delayMs                          |
// | { delayMs, code }          | fails after delayMs                                |
// | { hang: true }             | is accepted and never answered (until cleared)      |
// | { malformed: true }        | is answered with MALFORMED_ANSWER: field 1 with     |
// |                            | wire type 0 (a varint), where each of the six       |
// |                            | answers has a message or a string (wire type 2)     |
// | { delayMs, malformed }     | is answered so, after delayMs                       |
//
// MALFORMED_ANSWER is an answer a client cannot read: field 1 is what the agent reads first in
// each answer (the listings' items, Version's version, Status's status), and a wire type is
// fixed by the field's type, so no CRI client may take it for a valid answer.
//
// Validation is done once, on add, with messages in the form `key: value must be rule`.
import { CRI_SIM_METHODS, type CriSimMethod } from './sim-methods.ts';

/** Field 1 with wire type 0 (tag 0x08), value 1: see the header. */
export const MALFORMED_ANSWER: Buffer = Buffer.from([(1 << 3) | 0, 1]);

export interface SimFault {
  /** The RPC it applies to, or '*' for all six. */
  readonly method: CriSimMethod | '*';
  /** How many calls it applies to; absent: every call until cleared. */
  readonly count?: number;
  /** Fail with this gRPC status number (1-16). */
  readonly code?: number;
  /** The status message for `code`; default names the fault. */
  readonly message?: string;
  /** Answer (or fail) after this many milliseconds. */
  readonly delayMs?: number;
  /** Accept the call and never answer it. */
  readonly hang?: boolean;
  /** Answer with MALFORMED_ANSWER, which no client can decode. */
  readonly malformed?: boolean;
}

interface Armed {
  readonly fault: SimFault;
  remaining: number;
}

export class FaultScript {
  #armed: Armed[] = [];

  add(fault: SimFault): void {
    const problems = validateFault(fault);
    if (problems.length > 0) throw new RangeError(problems.join('; '));
    this.#armed.push({ fault, remaining: fault.count ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.#armed = [];
  }

  /** The fault for the next call of `method`, if any (and uses up one of its count). */
  take(method: CriSimMethod): SimFault | undefined {
    for (const armed of this.#armed) {
      if (armed.remaining <= 0) continue;
      if (armed.fault.method !== '*' && armed.fault.method !== method) continue;
      armed.remaining--;
      return armed.fault;
    }
    return undefined;
  }

  /** Faults that still apply to at least one call. */
  active(): SimFault[] {
    return this.#armed.filter((a) => a.remaining > 0).map((a) => a.fault);
  }
}

/** Every problem with a fault, one line each; empty when it is valid. */
export function validateFault(fault: unknown): string[] {
  if (typeof fault !== 'object' || fault === null) return ['fault: must be an object'];
  const f = fault as Record<string, unknown>;
  const problems: string[] = [];
  const known = new Set(['method', 'count', 'code', 'message', 'delayMs', 'hang', 'malformed']);
  for (const key of Object.keys(f)) if (!known.has(key)) problems.push(`${key}: is not a fault field`);
  if (f['method'] !== '*' && !(CRI_SIM_METHODS as readonly unknown[]).includes(f['method'])) {
    problems.push(`method: ${JSON.stringify(f['method'])} must be '*' or one of ${CRI_SIM_METHODS.join(', ')}`);
  }
  if (f['count'] !== undefined && !(Number.isInteger(f['count']) && (f['count'] as number) >= 1)) {
    problems.push(`count: ${JSON.stringify(f['count'])} must be a whole number ≥ 1`);
  }
  if (f['code'] !== undefined && !(Number.isInteger(f['code']) && (f['code'] as number) >= 1 && (f['code'] as number) <= 16)) {
    problems.push(`code: ${JSON.stringify(f['code'])} must be a gRPC status from 1 to 16`);
  }
  if (f['message'] !== undefined && typeof f['message'] !== 'string') problems.push('message: must be a string');
  if (f['delayMs'] !== undefined && !(typeof f['delayMs'] === 'number' && Number.isFinite(f['delayMs']) && f['delayMs'] >= 0)) {
    problems.push(`delayMs: ${JSON.stringify(f['delayMs'])} must be a finite number ≥ 0`);
  }
  if (f['hang'] !== undefined && typeof f['hang'] !== 'boolean') problems.push('hang: must be true or false');
  if (f['hang'] === true && (f['code'] !== undefined || f['delayMs'] !== undefined)) {
    problems.push('hang: true must not be combined with code or delayMs');
  }
  if (f['malformed'] !== undefined && typeof f['malformed'] !== 'boolean') problems.push('malformed: must be true or false');
  if (f['malformed'] === true && (f['code'] !== undefined || f['hang'] === true)) {
    problems.push('malformed: true must not be combined with code or hang');
  }
  if (f['hang'] !== true && f['malformed'] !== true && f['code'] === undefined && f['delayMs'] === undefined) {
    problems.push('fault: must set code, delayMs, hang or malformed');
  }
  return problems;
}
