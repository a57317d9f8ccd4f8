import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { connectionToClose, defaultMaxPerPeer, type HeldConnection } from './connection-guard.ts';
import { createHttpServer } from './http-server.ts';

interface Conn extends HeldConnection {
  readonly name: string;
}

const LIMITS = { maxConnections: 4, maxPerPeer: 2 };

/** `name@peer` waiting since `n`, or `name@peer busy`. */
function c(spec: string): Conn {
  const m = /^(\w+)@([\w.]+)(?: (\d+|busy))$/.exec(spec);
  if (m === null) throw new Error(`bad spec ${spec}`);
  return { name: m[1] ?? '', peer: m[2] ?? '', waitingSince: m[3] === 'busy' ? undefined : Number(m[3]) };
}

// The table in connection-guard.ts, with its edges. The newcomer is last and has waited least.
const TABLE: ReadonlyArray<[string, string[], string | undefined]> = [
  ['room for everyone: nothing is closed', ['a@x 1', 'b@y 2', 'n@z 3'], undefined],
  ['a peer at its share exactly: nothing is closed', ['a@x 1', 'b@y 2', 'n@x 3'], undefined],
  ['a peer past its share: its own longest-waiting connection', ['a@x 1', 'b@y 0', 'c@x 2', 'n@x 3'], 'a'],
  ['a peer past its share whose others are busy: the newcomer', ['a@x busy', 'c@x busy', 'n@x 3'], 'n'],
  ['a busy connection is never closed, even the oldest', ['a@x busy', 'c@x 2', 'n@x 3'], 'c'],
  ['full: the longest-waiting connection of any peer, not the newcomer', ['a@x 5', 'b@y 1', 'c@z 2', 'd@w 3', 'n@v 6'], 'b'],
  ['full, the longest-waiting is busy: the next longest', ['a@x 5', 'b@y busy', 'c@z 2', 'd@w 3', 'n@v 6'], 'c'],
  ['full, every other busy: the newcomer', ['a@x busy', 'b@y busy', 'c@z busy', 'd@w busy', 'n@v 6'], 'n'],
  ['full and past a share: the peer\'s own connection is closed, which makes room', ['a@x 1', 'b@y 0', 'c@x 2', 'd@w 3', 'n@x 6'], 'a'],
];

for (const [name, specs, expected] of TABLE) {
  test(`which connection is closed: ${name}`, () => {
    const held = specs.map(c);
    const newcomer = held.at(-1);
    assert.ok(newcomer !== undefined);
    assert.equal(connectionToClose(held, newcomer, LIMITS)?.name, expected);
  });
}

test('one peer may hold an eighth of the connections, and at least one', () => {
  assert.equal(defaultMaxPerPeer(64), 8);
  assert.equal(defaultMaxPerPeer(4), 1);
});

const HALF_HEADER = 'GET /livez HTTP/1.1\r\nHost: x\r\n';

function open(port: number, localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.write(HALF_HEADER);
      resolve(socket);
    });
    socket.once('close', () => reject(new Error(`a connection from ${localAddress} closed before it connected`)));
  });
}

function closedSoon(socket: Socket): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed || socket.readableEnded) resolve(true);
    socket.once('close', () => resolve(true));
    socket.once('end', () => resolve(true));
    socket.setTimeout(1_000, () => resolve(false));
  });
}

test('through a real server: when full, the connection that waited longest is closed and the newcomer is served', async (t) => {
  const server = createHttpServer(
    {
      loops: () => [],
      withinStartupGrace: () => true,
      ready: () => [{ name: 'started', ok: true, reason: '' }],
      checks: () => [],
      status: () => {
        throw new Error('not used');
      },
      registry: new Registry(),
    },
    { maxConnections: 3, maxConnectionsPerPeer: 2 },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as AddressInfo;
  const a = await open(port, '127.0.0.2');
  const b = await open(port, '127.0.0.3');
  const third = await open(port, '127.0.0.4');
  // A fourth connection, from a fourth address, that sends a whole request.
  const answered = await new Promise<string>((resolve) => {
    const d = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.5' });
    let text = '';
    d.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    d.on('error', () => resolve(`error: ${text}`));
    d.on('close', () => resolve(text));
    d.write('GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
  assert.match(answered.split('\r\n')[0] ?? '', /^HTTP\/1\.1 200 /, 'the newcomer is served, not refused');
  assert.equal(await closedSoon(a), true, 'the connection that waited longest was closed');
  assert.equal(b.destroyed || b.readableEnded, false, 'the others stay');
  assert.equal(third.destroyed || third.readableEnded, false, 'the others stay');

  // One peer past its share: its own oldest connection goes, not another peer's.
  const e = await open(port, '127.0.0.3');
  const f = await open(port, '127.0.0.3');
  assert.equal(await closedSoon(b), true, "the peer's longest-waiting connection was closed");
  assert.equal(third.destroyed || third.readableEnded, false, "another peer's connection stays");
  for (const s of [third, e, f]) s.destroy();
});
