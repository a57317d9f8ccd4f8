// A loopback TCP port nobody listens on: bound on port 0, then closed. A test points a client at
// it to see a refused connection (or hands it to a server it starts later). Another process could
// take the port in between; on a test machine that is rare enough to ignore.
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
