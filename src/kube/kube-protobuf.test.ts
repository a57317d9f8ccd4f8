import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { nodeRecord } from '../fleet/fleet-view.ts';
import type { Node, NodeCondition, ObjectMeta } from './kube-types.ts';
import { decodeNodeList, decodeNodeWatchEvent, decodeStatus, NodeProtobufError } from './kube-protobuf.ts';

const FIXTURES = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'kube-protobuf');
const fixture = (name: string): Buffer => readFileSync(join(FIXTURES, name));

/** A Node as the server wrote it in JSON: what the reader keeps, and some of what it skips. */
interface JsonNode {
  readonly metadata: ObjectMeta & { readonly managedFields?: unknown[] };
  readonly spec?: { readonly unschedulable?: boolean; readonly taints?: unknown[] };
  readonly status: { readonly conditions: NodeCondition[]; readonly nodeInfo: { readonly containerRuntimeVersion: string }; readonly images?: unknown[] };
}

/** The fields the reader keeps, taken from a Node as the server wrote it in JSON. */
function kept(json: JsonNode): Node {
  const m = json.metadata;
  const spec = json.spec ?? {};
  const status = json.status;
  const pickSpec = {
    ...(spec.unschedulable === undefined ? {} : { unschedulable: spec.unschedulable }),
    ...(spec.taints === undefined ? {} : { taints: spec.taints }),
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: m.name ?? '',
      uid: m.uid ?? '',
      resourceVersion: m.resourceVersion ?? '',
      creationTimestamp: m.creationTimestamp ?? '',
      ...(m.labels === undefined ? {} : { labels: m.labels }),
      ...(m.annotations === undefined ? {} : { annotations: m.annotations }),
    },
    spec: pickSpec,
    status: {
      conditions: status.conditions,
      nodeInfo: { containerRuntimeVersion: status.nodeInfo.containerRuntimeVersion },
    },
  };
}

/** Frames of a protobuf watch: a 4-byte big-endian length, then the event. */
function frames(stream: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < stream.length; ) {
    const length = stream.readUInt32BE(i);
    out.push(stream.subarray(i + 4, i + 4 + length));
    i += 4 + length;
  }
  return out;
}

// ---- a protobuf writer for the cases no server sends on demand -------------------------------

type Field = [number, 'varint', number] | [number, 'bytes', Buffer | string] | [number, 'wire', number, Buffer];

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = BigInt.asUintN(64, BigInt(n));
  do {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v === 0n ? b : b | 0x80);
  } while (v !== 0n);
  return Buffer.from(out);
}

function message(...fields: Field[]): Buffer {
  return Buffer.concat(fields.map((f) => {
    if (f[1] === 'varint') return Buffer.concat([varint(f[0] * 8), varint(f[2])]);
    if (f[1] === 'bytes') {
      const b = typeof f[2] === 'string' ? Buffer.from(f[2]) : f[2];
      return Buffer.concat([varint(f[0] * 8 + 2), varint(b.length), b]);
    }
    return Buffer.concat([varint(f[0] * 8 + f[2]), f[3]]);
  }));
}

/** `k8s\0` and runtime.Unknown around an object of `kind`. */
function envelope(kind: string, raw: Buffer, encoding = ''): Buffer {
  const fields: Field[] = [[1, 'bytes', message([1, 'bytes', 'v1'], [2, 'bytes', kind])], [2, 'bytes', raw]];
  if (encoding !== '') fields.push([3, 'bytes', encoding]);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), message(...fields)]);
}

const watchEvent = (type: string, object: Buffer): Buffer => message([1, 'bytes', type], [2, 'bytes', message([1, 'bytes', object])]);

// ---- the real server's answers --------------------------------------------------------------

test('a real NodeList in protobuf reads as the same Nodes the server wrote as JSON, field for field', () => {
  const json = JSON.parse(fixture('nodes.json').toString('utf8')) as { metadata: { resourceVersion: string }; items: JsonNode[] };
  const list = decodeNodeList(fixture('nodes.pb'));
  assert.equal(list.metadata.resourceVersion, json.metadata.resourceVersion, 'precondition: the two answers are of one resourceVersion');
  assert.equal(list.items.length, 3);
  assert.deepEqual(list.items, json.items.map(kept));
  assert.deepEqual(list.items.map(nodeRecord), json.items.map((n) => nodeRecord(n as unknown as Node)));
  assert.ok(list.items.every((n) => (n.status?.conditions?.length ?? 0) >= 4), 'precondition: the kubelets wrote their conditions');
  assert.ok(json.items.some((n) => (n.status.images?.length ?? 0) > 0 && n.metadata.managedFields !== undefined), 'precondition: the JSON has what the reader skips (images, managedFields)');
});

test('a page of a real list carries its continue token and the resourceVersion', () => {
  const page = decodeNodeList(fixture('nodes-page1.pb'));
  assert.equal(page.items.length, 2);
  assert.ok((page.metadata.continue ?? '').length > 20, `a continue token: ${page.metadata.continue}`);
  assert.match(page.metadata.resourceVersion ?? '', /^\d+$/);
});

test('a real streaming list in protobuf: three ADDED Nodes, then the bookmark that ends the initial events, then changes', () => {
  const events = frames(fixture('watch-initial.pb')).map(decodeNodeWatchEvent);
  assert.deepEqual(events.map((e) => [e.type, e.object.metadata.name ?? '']), [
    ['ADDED', 'np-node-1'], ['ADDED', 'np-node-2'], ['ADDED', 'np-node-3'], ['BOOKMARK', ''], ['MODIFIED', 'np-node-2'], ['MODIFIED', 'np-node-3'],
  ]);
  const bookmark = events[3]?.object.metadata;
  assert.equal(bookmark?.annotations?.['k8s.io/initial-events-end'], 'true');
  assert.match(bookmark?.resourceVersion ?? '', /^\d+$/);
  const added = events[0]?.object;
  assert.equal(added?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.match(added?.metadata.creationTimestamp ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('a real 404 Status in protobuf reads as its code, reason and message', () => {
  assert.deepEqual(decodeStatus(fixture('status404.pb')), { code: 404, reason: 'NotFound', message: 'nodes "no-such-node" not found' });
});

// ---- what the server may send that the captures lack -----------------------------------------

test('an ERROR event carries its Status (410 Expired), as list-watch reads it', () => {
  const status = message([3, 'bytes', 'too old resource version: 1 (1431)'], [4, 'bytes', 'Expired'], [6, 'varint', 410]);
  assert.deepEqual(decodeNodeWatchEvent(watchEvent('ERROR', envelope('Status', status))), {
    type: 'ERROR',
    object: { code: 410, reason: 'Expired', message: 'too old resource version: 1 (1431)' },
  });
});

test('a Status with details keeps retryAfterSeconds (a 429)', () => {
  const status = message([4, 'bytes', 'TooManyRequests'], [5, 'bytes', message([1, 'bytes', 'x'], [5, 'varint', 7])], [6, 'varint', 429]);
  assert.deepEqual(decodeStatus(envelope('Status', status)), { code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 7 } });
});

test('unknown fields of every wire type are skipped; a scalar seen twice keeps the last; taints, cordon and times before 1970', () => {
  const meta = message([1, 'bytes', 'first'], [99, 'varint', 5], [1, 'bytes', 'n1'], [100, 'wire', 1, Buffer.alloc(8)], [101, 'wire', 5, Buffer.alloc(4)], [8, 'bytes', message([1, 'varint', -86_400], [2, 'varint', 5])]);
  const taint = message([1, 'bytes', 'k'], [3, 'bytes', 'NoSchedule'], [4, 'bytes', message([1, 'varint', 1_700_000_000])]);
  const spec = message([4, 'varint', 1], [5, 'bytes', taint], [5, 'bytes', message([1, 'bytes', 'k2'], [2, 'bytes', 'v'], [3, 'bytes', 'NoExecute'])]);
  const node = message([1, 'bytes', meta], [2, 'bytes', spec], [4, 'bytes', 'an unknown message']);
  const list = decodeNodeList(envelope('NodeList', message([2, 'bytes', node])));
  assert.deepEqual(list.items, [{
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', creationTimestamp: '1969-12-31T00:00:00Z' },
    spec: { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule', timeAdded: '2023-11-14T22:13:20Z' }, { key: 'k2', value: 'v', effect: 'NoExecute' }] },
  }]);
  assert.deepEqual(list.metadata, {});
});

test('bad input is refused with an error naming what was wrong and where', () => {
  const refused = (bytes: Buffer, read: (b: Buffer) => unknown, pattern: RegExp): void => {
    assert.throws(() => read(bytes), (err: unknown) => err instanceof NodeProtobufError && pattern.test(err.message), `expected ${pattern}`);
  };
  const nodeList = (node: Buffer): Buffer => envelope('NodeList', message([2, 'bytes', node]));
  refused(Buffer.from('{"kind":"NodeList"}'), decodeNodeList, /not a Kubernetes protobuf object: it starts "\{\\"kind\\":", not "k8s\\u0000"/);
  refused(envelope('PodList', Buffer.alloc(0)), decodeNodeList, /kind "PodList" where NodeList was expected/);
  refused(envelope('NodeList', Buffer.alloc(0), 'gzip'), decodeNodeList, /content encoding "gzip"/);
  refused(nodeList(message([1, 'bytes', message([1, 'varint', 7])])), decodeNodeList, /metadata\.name \(field 1\) came with wire type 0, not 2/);
  refused(nodeList(message([9, 'wire', 3, Buffer.alloc(0)])), decodeNodeList, /field 9 has wire type 3 at byte \d+, which these messages never use/);
  refused(envelope('NodeList', Buffer.from([0x12, 0x05, 0x0a])), decodeNodeList, /a field of 5 bytes at byte \d+ runs past its message's end/);
  refused(envelope('NodeList', Buffer.from([0x28, 0xff, 0xff])), decodeNodeList, /truncated varint/);
  refused(envelope('NodeList', Buffer.from([0x28, ...Array(11).fill(0xff)])), decodeNodeList, /a varint longer than 10 bytes/);
  refused(envelope('NodeList', Buffer.from([0x00, 0x01])), decodeNodeList, /field number 0/);
  refused(watchEvent('SYNC', envelope('Node', Buffer.alloc(0))), decodeNodeWatchEvent, /a watch event of type "SYNC"/);
  refused(message([1, 'bytes', 'ADDED']), decodeNodeWatchEvent, /a watch event \(ADDED\) without an object/);
  refused(watchEvent('ADDED', envelope('Status', Buffer.alloc(0))), decodeNodeWatchEvent, /kind "Status" where Node was expected/);
});

test('an empty Time message is the zero time (JSON null) and is left out; seconds 0 is 1970', () => {
  const meta = (time: Buffer): Buffer => message([2, 'bytes', message([1, 'bytes', message([1, 'bytes', 'n'], [8, 'bytes', time])])]);
  assert.deepEqual(decodeNodeList(envelope('NodeList', meta(Buffer.alloc(0)))).items[0]?.metadata, { name: 'n' });
  assert.deepEqual(decodeNodeList(envelope('NodeList', meta(message([1, 'varint', 0])))).items[0]?.metadata, { name: 'n', creationTimestamp: '1970-01-01T00:00:00Z' });
});
