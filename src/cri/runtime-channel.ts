// The options of the one @grpc/grpc-js channel a runtime client holds for its life.
//
// Why each option, and what it guards against:
//   - grpc.max_receive_message_length: the receive limit, kubelet's 16 MiB unless configured.
//     grpc-js's own default is 4 MiB, too small for a large node. grpc-js checks each answer's
//     length prefix against it and ends a larger answer with RESOURCE_EXHAUSTED before buffering
//     it: its own fault, not a dead runtime.
//   - grpc.initial_reconnect_backoff_ms, grpc.max_reconnect_backoff_ms: grpc-js backs off its
//     reconnect attempts from 1 s up to 120 s by default, so a runtime that returned after a long
//     outage could go unseen for two minutes while the agent withholds the lease. Capped at the
//     agent's default relist period (1 s), the channel is connecting again within about a second
//     of the runtime's return, and the next relist reaches it.
//   - grpc-node.flow_control_window: the HTTP/2 stream and connection windows, twice the receive
//     limit (within HTTP/2's bounds), so a large listing streams without a WINDOW_UPDATE round
//     trip every 64 KiB (the HTTP/2 default).
//   - grpc.use_local_subchannel_pool: the connection belongs to this client alone, so close()
//     ends it, and two clients of one socket (the agent's and `check`'s, a probe's) never share
//     a connection's faults.
//   - grpc.primary_user_agent: `nodepulse/<version>`, so the runtime's own logs name the caller.
// No keepalive pings: the peer is a local unix socket, whose loss closes the connection at once,
// and a hung runtime is caught by every call's deadline (the client's, on its Clock).
import type { ChannelOptions } from '@grpc/grpc-js';
import { VERSION } from '../version.ts';

/** Upstream's default max receive size (kubelet's maxMsgSize): 16 MiB. */
export const DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The largest receive size gRPC accepts (a signed 32-bit length). */
export const MAX_MESSAGE_BYTES_LIMIT = 2 ** 31 - 1;

/**
 * Reconnect backoff: from 100 ms, doubling, to at most 1 s, the agent's default relist period
 * (docs/design.md), so a returning runtime is reached by the next relist or the one after.
 */
export const RECONNECT_BACKOFF_MS = { initial: 100, max: 1000 } as const;

/** The HTTP/2 default window (RFC 9113 §6.9.2) and the largest one (§6.9.1). */
const HTTP2_DEFAULT_WINDOW_BYTES = 65_535;
const HTTP2_MAX_WINDOW_BYTES = 2 ** 31 - 1;

/** The channel options for a client whose receive limit is `maxMessageBytes`. */
export function runtimeChannelOptions(maxMessageBytes: number): ChannelOptions {
  return {
    'grpc.max_receive_message_length': maxMessageBytes,
    'grpc.initial_reconnect_backoff_ms': RECONNECT_BACKOFF_MS.initial,
    'grpc.max_reconnect_backoff_ms': RECONNECT_BACKOFF_MS.max,
    'grpc-node.flow_control_window': Math.max(HTTP2_DEFAULT_WINDOW_BYTES, Math.min(2 * maxMessageBytes, HTTP2_MAX_WINDOW_BYTES)),
    'grpc.use_local_subchannel_pool': 1,
    'grpc.primary_user_agent': `nodepulse/${VERSION}`,
  };
}
