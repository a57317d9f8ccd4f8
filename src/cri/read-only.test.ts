// The agent's CRI client is read-only by construction: proto/ declares exactly six RPCs, none
// of which changes anything, and the client object has exactly the matching calls.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ManualClock } from '../clock/manual-clock.ts';
import { criProtoPath } from './cri-proto.ts';
import { createRuntimeClient, RUNTIME_CLIENT_CALLS } from './runtime-client.ts';

const READ_ONLY_RPCS = ['ContainerStatus', 'ListContainers', 'ListPodSandbox', 'PodSandboxStatus', 'Status', 'Version'];
const MUTATING = /create|start|stop|remove|update|exec|attach|portforward|reopen|checkpoint|run|pull|events|stream/i;

/** Every `rpc Name(Req) returns (...)` in the proto text, comments stripped. */
function rpcs(text: string): Array<{ name: string; streams: boolean }> {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const found: Array<{ name: string; streams: boolean }> = [];
  for (const match of code.matchAll(/\brpc\s+(\w+)\s*\(([^)]*)\)\s*returns\s*\(([^)]*)\)/g)) {
    found.push({ name: match[1] ?? '', streams: /\bstream\b/.test(`${match[2]} ${match[3]}`) });
  }
  return found;
}

describe('read-only by construction', () => {
  const text = readFileSync(criProtoPath(), 'utf8');

  test('proto/ declares exactly the six read-only RPCs, in one service', () => {
    const declared = rpcs(text);
    assert.deepEqual(declared.map((r) => r.name).sort(), READ_ONLY_RPCS);
    assert.equal([...text.matchAll(/^\s*service\s+(\w+)/gm)].length, 1, 'one service');
    assert.match(text, /^\s*package\s+runtime\.v1\s*;/m);
    assert.match(text, /^\s*service\s+RuntimeService\s*\{/m);
  });

  test('no RPC in proto/ creates, stops, removes, updates, execs, attaches, port-forwards or streams', () => {
    for (const rpc of rpcs(text)) {
      assert.equal(rpc.streams, false, `${rpc.name} streams`);
      assert.doesNotMatch(rpc.name.replace(/^List|Status$/g, ''), MUTATING, `${rpc.name} looks like it changes something`);
    }
  });

  test('the rpc parser sees a mutating or streaming RPC when one is there', () => {
    // Precondition for the two tests above: they would fail on a proto that had one.
    const bad = rpcs('service S {\n rpc StopContainer(A) returns (B) {}\n // rpc Hidden(A) returns (B)\n rpc GetContainerEvents(A) returns (stream B) {}\n}');
    assert.deepEqual(bad, [
      { name: 'StopContainer', streams: false },
      { name: 'GetContainerEvents', streams: true },
    ]);
  });

  test('the client exposes exactly endpoint, the seven read-only calls and close', () => {
    const client = createRuntimeClient({ endpoint: 'unix:///nonexistent/nodepulse-test.sock', clock: new ManualClock() });
    try {
      assert.deepEqual(
        Object.keys(client).sort(),
        ['endpoint', ...RUNTIME_CLIENT_CALLS, 'close'].sort(),
      );
      assert.deepEqual([...RUNTIME_CLIENT_CALLS].sort(), [
        'containerStatus',
        'listContainers',
        'listPodSandbox',
        'podSandboxStatus',
        'relist',
        'status',
        'version',
      ]);
      assert.ok(Object.isFrozen(client), 'no call can be added to a client');
      for (const name of RUNTIME_CLIENT_CALLS) assert.equal(typeof client[name], 'function');
      assert.equal(Object.getPrototypeOf(client), Object.prototype, 'no inherited calls');
    } finally {
      client.close();
    }
  });
});
