// A TCP relay in front of the API server that counts every byte each way: what a fleet costs on
// the wire, TLS records and HTTP/1.1 or HTTP/2 framing included, whatever the client (the
// agents' Node.js client, the kubelets' Go client). Clients are pointed at the relay's address;
// the API server's certificate names the same IP, so TLS verifies as it would without it.
//
// Counts are read as totals; a measurement takes the difference over its window. Connections are
// counted too: a fleet of keep-alive clients opens one each and keeps it, so new connections in a
// window mean handshakes the window paid for.
import net from 'node:net';

export interface RelayCounts {
  /** Bytes from the clients to the API server. */
  readonly up: number;
  /** Bytes from the API server to the clients. */
  readonly down: number;
  readonly connections: number;
  readonly open: number;
}

export interface ByteRelay {
  readonly port: number;
  counts(): RelayCounts;
  close(): Promise<void>;
}

export async function startByteRelay(options: { readonly host: string; readonly targetHost: string; readonly targetPort: number }): Promise<ByteRelay> {
  let up = 0;
  let down = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect({ host: options.targetHost, port: options.targetPort });
    sockets.add(client);
    sockets.add(upstream);
    client.on('data', (chunk: Buffer) => {
      up += chunk.length;
    });
    upstream.on('data', (chunk: Buffer) => {
      down += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  server.maxConnections = 20_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('byte relay: no port');
  return {
    port: address.port,
    counts: () => ({ up, down, connections, open: Math.floor(sockets.size / 2) }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
