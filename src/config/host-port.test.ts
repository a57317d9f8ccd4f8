import assert from 'node:assert/strict';
import { it } from 'node:test';
import { formatHostPort, parseHostPort } from './host-port.ts';

it('reads host:port as Go does, IPv6 in brackets', () => {
  const table: ReadonlyArray<[string, { host: string | undefined; port: number } | undefined]> = [
    ['0.0.0.0:9356', { host: '0.0.0.0', port: 9356 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['localhost:9356', { host: 'localhost', port: 9356 }],
    [':9356', { host: undefined, port: 9356 }],
    ['[::1]:9356', { host: '::1', port: 9356 }],
    ['[::]:80', { host: '::', port: 80 }],
    ['::1:9356', undefined],
    ['[zz]:9356', undefined],
    ['0.0.0.0', undefined],
    ['0.0.0.0:', undefined],
    ['0.0.0.0:65536', undefined],
    ['0.0.0.0:-1', undefined],
    ['bad host:1', undefined],
  ];
  for (const [input, expected] of table) assert.deepEqual(parseHostPort(input), expected, input);
});

it('writes an address back with IPv6 in brackets, so that it is a URL authority', () => {
  const table: ReadonlyArray<[string, number, string]> = [
    ['::', 9356, '[::]:9356'],
    ['fd53:7572:6661::2', 80, '[fd53:7572:6661::2]:80'],
    ['0.0.0.0', 9356, '0.0.0.0:9356'],
    ['198.18.0.2', 1, '198.18.0.2:1'],
    ['localhost', 9356, 'localhost:9356'],
  ];
  for (const [host, port, expected] of table) {
    assert.equal(formatHostPort(host, port), expected, host);
    assert.deepEqual(parseHostPort(expected), { host, port }, `${expected} reads back`);
  }
});
