// The one route by which "the gate closed" reaches a lease write attempt: a signal that aborts
// when the lease gate closes, as a leader term's signal aborts when its belief ends
// (election/term.ts). NodeLease asks the gate nowhere else, and the writer never sees the gate.
//
// Two ways the watch looks at the gate, one answer:
// - check(), which the writer calls just before every request it sends (lease-writer.ts): the
//   gate is looked at now, and a closed one aborts the signal and throws its reason;
// - every `everyMs` on the injected clock while a request is on the wire: a PATCH held up by a
//   slow API server would otherwise keep going for up to the API timeout (10 s) after the
//   runtime aged out, and land a renewal stamped while the node was healthy. A closed gate
//   aborts the signal, and the client cancels the request.
// Either way the attempt rejects with GateClosedError (or the client's abort), closed() names
// the verdict, and the attempt counts as withheld.
//
// What remains (docs/reliability.md): the gate is looked at every `everyMs`, so a write can still
// be sent up to that long after the gate closed; and a request the API server has already read
// may still be applied after its client has gone. Neither can make a lease move for longer than
// the gate was open plus that small window.
import type { Clock, Timer } from '../clock/clock.ts';
import type { GateVerdict } from './lease-gate.ts';
import type { WriteGuard } from './lease-writer.ts';

export type Withhold = Extract<GateVerdict, { action: 'withhold' }>;

/** The abort reason when the gate closed under a write. */
export class GateClosedError extends Error {
  readonly code = 'gate_closed';
  readonly verdict: Withhold;

  constructor(verdict: Withhold) {
    super(`lease write cancelled: the gate closed (${verdict.reason}: ${verdict.message})`);
    this.name = 'GateClosedError';
    this.verdict = verdict;
  }
}

export interface GateWatch extends WriteGuard {
  /** Aborts when the gate closes, or when the parent signal aborts. */
  readonly signal: AbortSignal;
  /** The verdict that closed the gate under the write, or undefined. */
  closed(): Withhold | undefined;
  /** Ends the watch (its timer and its listener on the parent); call it once the write is over. */
  stop(): void;
}

export function watchGate(clock: Clock, gate: () => GateVerdict, everyMs: number, parent: AbortSignal): GateWatch {
  const controller = new AbortController();
  let closed: Withhold | undefined;
  let timer: Timer | undefined;
  const onParent = (): void => controller.abort(parent.reason);
  /** Looks at the gate now; true while it is open. */
  const open = (): boolean => {
    if (controller.signal.aborted) return false;
    const verdict = gate();
    if (verdict.action === 'renew') return true;
    closed = verdict;
    timer?.cancel();
    controller.abort(new GateClosedError(verdict));
    return false;
  };
  const look = (): void => {
    if (open()) timer = clock.after(everyMs, look);
  };
  if (parent.aborted) controller.abort(parent.reason);
  else {
    parent.addEventListener('abort', onParent, { once: true });
    timer = clock.after(everyMs, look);
  }
  return {
    signal: controller.signal,
    closed: () => closed,
    check: () => {
      open();
      controller.signal.throwIfAborted();
    },
    stop: () => {
      timer?.cancel();
      parent.removeEventListener('abort', onParent);
    },
  };
}
