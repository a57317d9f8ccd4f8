// Whom a failed CRI call blames: the runtime, or the agent itself. A pure function of what the
// fault says (its gRPC status, the runtime's or gRPC's own words) and of what the place it arose
// already knew, with a stable code for each failure mode.
//
// Why it matters: `True` on the Node condition means "the runtime is sick", and node-remediation
// tooling reboots or replaces nodes on it. An agent that cannot observe the runtime (a socket it
// may not open, an answer it cannot read, a runtime that does not speak its API) must never say
// that: one bad agent rollout would otherwise remediate healthy nodes across the fleet. So every
// fault gets a cause, and the ledger (relist/relist-ledger.ts) judges by its blame.
//
// | the fault                                                   | cause             | blame   |
// |-------------------------------------------------------------|-------------------|---------|
// | a cause known where it arose (the decoder, the socket probe)| that cause        | its own |
// | DEADLINE_EXCEEDED (the call outlived its deadline)           | hung              | runtime |
// | UNAVAILABLE, `connect ECONNREFUSED` (a socket, no listener)  | refused           | runtime |
// | UNAVAILABLE, `connect ENOENT` (a socket in use is gone)      | vanished          | runtime |
// | UNAVAILABLE, `connect EACCES` / `EPERM`                      | permission-denied | agent   |
// | UNAVAILABLE, anything else (a dropped connection, the        | runtime-error     | runtime |
// |   runtime's own UNAVAILABLE)                                 |                   |         |
// | UNIMPLEMENTED (no CRI runtime.v1 on the socket)              | unimplemented     | agent   |
// | RESOURCE_EXHAUSTED from the agent's own receive limit        | oversized         | agent   |
// |   (`Received message larger than max`)                       |                   |         |
// | RESOURCE_EXHAUSTED from the runtime                          | runtime-error     | runtime |
// | PERMISSION_DENIED, UNAUTHENTICATED (the runtime refuses us)  | permission-denied | agent   |
// | any other gRPC status (UNKNOWN, INTERNAL, ...)               | runtime-error     | runtime |
// | no gRPC status at all: the agent's own error                 | agent-error       | agent   |
//
// The causes known where they arose: `undecodable` (runtime-client.ts: the lean decoder refused
// the answer); `no-socket`, `permission-denied`, `unimplemented`, `undecodable` and `vanished`
// when no socket could be chosen (endpoint-probe.ts, noChoiceCause); `no-socket` for a given
// endpoint whose socket file was never seen (resolving-runtime-client.ts).
//
// Why each agent-caused row is the agent's:
//   - permission-denied: the socket is there and the runtime behind it may be fine; the agent's
//     uid or groups are wrong (a non-root install without the socket's gid).
//   - unimplemented: the socket answers, but not with CRI runtime.v1 (Docker's own containerd
//     with its CRI plugin disabled, an old runtime): the agent talks to the wrong thing.
//   - undecodable: the runtime answered; the agent cannot read the answer.
//   - oversized: the runtime answered with a listing larger than the agent's own receive limit
//     (--max-message-size). The fix is the agent's setting; rebooting or replacing the node
//     brings back the same pods, and the same listing. (The kubelet's own 16 MiB limit is not
//     the agent's: the agent's may have been set lower, or the kubelet's higher.)
//   - no-socket: nothing at any known path, or a given path that never held a socket: the
//     agent is looking in the wrong place (a runtime at an unknown path, a mount missing).
//   - agent-error: a fault with no gRPC status never came from the runtime.
// And why the runtime-caused ones are the runtime's: the socket the agent uses is there and
// refuses, hangs, went away after it was used, or answers errors of its own.
import type { CriFaultCode } from './cri-error.ts';

/** A failure mode the runtime is to blame for. */
export type RuntimeCause = 'refused' | 'vanished' | 'hung' | 'runtime-error';
/** A failure mode of the agent itself: it cannot observe the runtime. */
export type AgentCause = 'no-socket' | 'permission-denied' | 'undecodable' | 'unimplemented' | 'oversized' | 'agent-error';
export type FaultCause = RuntimeCause | AgentCause;
export type Blame = 'runtime' | 'agent';

export const RUNTIME_CAUSES: readonly RuntimeCause[] = ['refused', 'vanished', 'hung', 'runtime-error'];
export const AGENT_CAUSES: readonly AgentCause[] = ['no-socket', 'permission-denied', 'undecodable', 'unimplemented', 'oversized', 'agent-error'];

/** What a fault says, as classifyFault reads it. */
export interface FaultFacts {
  readonly code: CriFaultCode;
  /** The gRPC status number, when the fault came from one. */
  readonly grpcCode: number | undefined;
  /** The runtime's (or gRPC's) own words. */
  readonly detail: string;
  /** A cause the place where the fault arose already knew; it stands. */
  readonly known: FaultCause | undefined;
}

/** gRPC status numbers read here (grpc/doc/statuscodes.md). */
const PERMISSION_DENIED = 7;
const UNAUTHENTICATED = 16;
/** grpc-js's words for a connect() that failed: `connect ECONNREFUSED /run/…`. */
const CONNECT_ERRNO = /\bconnect (E[A-Z]+)\b/;
/** grpc-js's words when an answer passes the channel's receive limit. */
const RECEIVE_LIMIT = /received message larger than max/i;

/** The cause of a fault (the table in the header). */
export function classifyFault(facts: FaultFacts): FaultCause {
  if (facts.known !== undefined) return facts.known;
  switch (facts.code) {
    case 'deadline_exceeded':
      return 'hung';
    case 'unimplemented':
      return 'unimplemented';
    case 'resource_exhausted':
      return RECEIVE_LIMIT.test(facts.detail) ? 'oversized' : 'runtime-error';
    case 'unavailable':
      switch (CONNECT_ERRNO.exec(facts.detail)?.[1]) {
        case 'ECONNREFUSED':
          return 'refused';
        case 'ENOENT':
          return 'vanished';
        case 'EACCES':
        case 'EPERM':
          return 'permission-denied';
        default:
          return 'runtime-error';
      }
    case 'other':
      if (facts.grpcCode === PERMISSION_DENIED || facts.grpcCode === UNAUTHENTICATED) return 'permission-denied';
      return facts.grpcCode === undefined ? 'agent-error' : 'runtime-error';
  }
}

/** Whether a cause is the agent's own: it cannot observe the runtime. */
export function isAgentCause(cause: FaultCause): cause is AgentCause {
  return (AGENT_CAUSES as readonly string[]).includes(cause);
}

/** Whom a cause blames. */
export function blameOf(cause: FaultCause): Blame {
  return isAgentCause(cause) ? 'agent' : 'runtime';
}
