// Which connection the agent's HTTP server closes when a new one would take more than its room,
// so that idle connections cannot silence the probes.
//
// A cap that refuses newcomers (net.Server's maxConnections) hands the server to whoever opens
// connections first and never finishes a request: a pod on the node's network holding as many
// half-sent headers as the cap allows fails every kubelet probe and every scrape. Go's servers, which the kubelet and
// node-exporter use, hold no cap at all; we keep one (file descriptors are bounded), but choose
// what to close:
//
// | when a connection arrives and …                       | the server closes                           |
// |-------------------------------------------------------|---------------------------------------------|
// | its peer (remote address) then holds more than its    | that peer's connection that has waited      |
// | share (default maxConnections / 8)                     | longest without completing a request        |
// | the server then holds more than maxConnections         | the connection, of any peer, that has waited|
// |                                                        | longest without completing a request        |
// | neither                                                | nothing                                     |
//
// - "Waiting" starts when the connection is accepted and again when a response is done (an idle
//   keep-alive connection is waiting too); a connection whose request is being answered is not
//   waiting and is never chosen. A newcomer is the one that has waited least, so it is chosen
//   only when every other candidate is busy.
// - A probe opens a connection and sends its request at once: at most one unfriendly peer's share
//   is ever between it and the server, and it is never the longest-waiting. So probes are never
//   starved, whoever else connects.
// - Order is kept by a counter, not by time: no clock is needed to know which waited longest.
//
// Failure modes: a peer that reopens every connection it loses makes the server accept and close
// connections as fast as it opens them; each costs an accept and a close, and the probes'
// requests are served in between.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Connections held at most. */
  readonly maxConnections: number;
  /** Connections one remote address may hold at most. */
  readonly maxPerPeer: number;
}

/** One peer may hold this share of the connections by default. */
export const PEER_SHARE = 1 / 8;

export function defaultMaxPerPeer(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections * PEER_SHARE));
}

export interface HeldConnection {
  /** The remote address. */
  readonly peer: string;
  /** When it began waiting, as an order (lower waited longer); undefined while a request is answered. */
  readonly waitingSince: number | undefined;
}

/**
 * The connection to close now that `newcomer` has joined `held` (which includes it), or
 * undefined when everything fits. See the table in the module header.
 */
export function connectionToClose<C extends HeldConnection>(held: readonly C[], newcomer: C, limits: ConnectionLimits): C | undefined {
  const samePeer = held.filter((c) => c.peer === newcomer.peer);
  if (samePeer.length > limits.maxPerPeer) return longestWaiting(samePeer) ?? newcomer;
  if (held.length > limits.maxConnections) return longestWaiting(held) ?? newcomer;
  return undefined;
}

function longestWaiting<C extends HeldConnection>(connections: readonly C[]): C | undefined {
  let oldest: C | undefined;
  for (const c of connections) {
    if (c.waitingSince !== undefined && (oldest?.waitingSince === undefined || c.waitingSince < oldest.waitingSince)) oldest = c;
  }
  return oldest;
}

interface Tracked extends HeldConnection {
  readonly socket: Socket;
  waitingSince: number | undefined;
}

/** Holds `server`'s connections to `limits`, closing as the table says. Replaces server.maxConnections. */
export function guardConnections(server: Server, limits: ConnectionLimits): void {
  const tracked = new Map<Socket, Tracked>();
  let order = 0;
  server.on('connection', (socket: Socket) => {
    const entry: Tracked = { socket, peer: socket.remoteAddress ?? '', waitingSince: order++ };
    tracked.set(socket, entry);
    socket.once('close', () => tracked.delete(socket));
    const victim = connectionToClose([...tracked.values()], entry, limits);
    if (victim === undefined) return;
    tracked.delete(victim.socket);
    victim.socket.destroy();
  });
  server.on('request', (req, res) => {
    const entry = tracked.get(req.socket);
    if (entry === undefined) return;
    entry.waitingSince = undefined;
    res.once('close', () => {
      if (tracked.get(req.socket) === entry) entry.waitingSince = order++;
    });
  });
}
