// The lean relist reader against the full decode (proto-loader / protobufjs on proto/), on the
// same bytes: random messages, and the edge cases a runtime can send.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { ServiceDefinition } from '@grpc/proto-loader';
import { loadCriService } from './cri-proto.ts';
import {
  decodeListContainersResponse,
  decodeListPodSandboxResponse,
  decodeStatusResponse,
  decodeVersionResponse,
  encodeVersionRequest,
  LeanDecodeError,
} from './lean-decode.ts';
import type { Container, PodSandbox, RuntimeStatus, RuntimeVersion } from './types.ts';
import { mulberry32 } from '../stand-ins/cri-runtime/sim-state.ts';

// --- a hand writer of the protobuf wire format, so tests can put anything on the wire -------

const MASK64 = (1n << 64n) - 1n;

function varint(value: bigint | number): Buffer {
  let v = BigInt(value) & MASK64;
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}
const tag = (field: number, wire: number): Buffer => varint((BigInt(field) << 3n) | BigInt(wire));
const fVarint = (field: number, value: bigint | number): Buffer => Buffer.concat([tag(field, 0), varint(value)]);
const fLen = (field: number, bytes: Buffer): Buffer => Buffer.concat([tag(field, 2), varint(bytes.length), bytes]);
const fStr = (field: number, text: string): Buffer => fLen(field, Buffer.from(text, 'utf8'));
const fFixed64 = (field: number, bytes = Buffer.alloc(8, 0xab)): Buffer => Buffer.concat([tag(field, 1), bytes]);
const fFixed32 = (field: number, bytes = Buffer.alloc(4, 0xcd)): Buffer => Buffer.concat([tag(field, 5), bytes]);
const fGroup = (field: number, inner: Buffer): Buffer => Buffer.concat([tag(field, 3), inner, tag(field, 4)]);
const mapEntry = (field: number, key: string, value: string): Buffer => fLen(field, Buffer.concat([fStr(1, key), fStr(2, value)]));

// --- a seeded generator (the sim's mulberry32), so a failure can be replayed -------------------

class Gen {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
  text(max: number): string {
    const alphabet = ['a', 'b', 'z', '0', '9', '-', '.', '/', 'é', 'ß', '日', '🙂', ' '];
    let s = '';
    const n = this.int(max + 1);
    for (let i = 0; i < n; i++) s += this.pick(alphabet);
    return s;
  }
  int64(): bigint {
    const kind = this.int(5);
    if (kind === 0) return BigInt(this.int(1000));
    if (kind === 1) return -BigInt(this.int(1 << 30)) * BigInt(1 + this.int(1 << 30));
    const hi = BigInt(this.int(2 ** 31)) << 32n;
    return BigInt.asIntN(64, hi | BigInt(this.int(2 ** 32)) | (this.chance(0.5) ? 1n << 63n : 0n));
  }
  enumValue(): number {
    return this.pick([0, 1, 2, 3, 4, 7, 99, -1, -42, 2 ** 31 - 1, -(2 ** 31)]);
  }
  /** An unknown field (number not in `known`), of a random wire type, groups included. */
  unknown(known: readonly number[], depth = 0): Buffer {
    let field = 0;
    do field = this.pick([8, 9, 11, 15, 16, 100, 2047, 2 ** 29 - 1, 1 + this.int(5000)]);
    while (known.includes(field));
    switch (this.int(depth < 2 ? 5 : 4)) {
      case 0:
        return fVarint(field, this.int64());
      case 1:
        return fFixed64(field);
      case 2:
        return fLen(field, Buffer.from(this.text(20)));
      case 3:
        return fFixed32(field);
      default:
        return fGroup(field, Buffer.concat([this.unknown([], depth + 1), this.unknown([], depth + 1)]));
    }
  }
}

const SANDBOX_FIELDS = [1, 2, 3, 4, 5, 6, 7];
const SANDBOX_META_FIELDS = [1, 2, 3, 4];
const CONTAINER_FIELDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const CONTAINER_META_FIELDS = [1, 2];

/** Fields of one message, shuffled, with unknown fields sprinkled in. */
function shuffle(g: Gen, parts: Buffer[], known: readonly number[]): Buffer {
  const all = [...parts];
  const unknowns = g.int(4);
  for (let i = 0; i < unknowns; i++) all.push(g.unknown(known));
  for (let i = all.length - 1; i > 0; i--) {
    const j = g.int(i + 1);
    [all[i], all[j]] = [all[j] as Buffer, all[i] as Buffer];
  }
  return Buffer.concat(all);
}

function randomSandbox(g: Gen): Buffer {
  const parts: Buffer[] = [];
  if (g.chance(0.9)) parts.push(fStr(1, g.chance(0.1) ? '' : g.text(64)));
  if (g.chance(0.9)) {
    const meta: Buffer[] = [];
    if (g.chance(0.9)) meta.push(fStr(1, g.text(30)));
    if (g.chance(0.9)) meta.push(fStr(2, g.text(36)));
    if (g.chance(0.9)) meta.push(fStr(3, g.text(20)));
    if (g.chance(0.7)) meta.push(fVarint(4, g.pick([0, 1, 7, 2 ** 31, 2 ** 32 - 1])));
    parts.push(fLen(2, shuffle(g, meta, SANDBOX_META_FIELDS)));
  }
  if (g.chance(0.8)) parts.push(fVarint(3, g.enumValue()));
  if (g.chance(0.2)) parts.push(fVarint(3, g.enumValue())); // a repeated scalar: the last wins
  if (g.chance(0.9)) parts.push(fVarint(4, g.int64()));
  for (let i = g.int(6); i > 0; i--) parts.push(mapEntry(5, g.text(20), g.text(40)));
  for (let i = g.int(6); i > 0; i--) parts.push(mapEntry(6, g.text(20), g.text(80)));
  if (g.chance(0.5)) parts.push(fStr(7, g.text(10)));
  return shuffle(g, parts, SANDBOX_FIELDS);
}

function randomContainer(g: Gen): Buffer {
  const parts: Buffer[] = [];
  if (g.chance(0.9)) parts.push(fStr(1, g.chance(0.1) ? '' : g.text(64)));
  if (g.chance(0.9)) parts.push(fStr(2, g.text(64)));
  if (g.chance(0.9)) {
    const meta: Buffer[] = [];
    if (g.chance(0.9)) meta.push(fStr(1, g.text(30)));
    if (g.chance(0.7)) meta.push(fVarint(2, g.pick([0, 1, 5, 2 ** 32 - 1])));
    parts.push(fLen(3, shuffle(g, meta, CONTAINER_META_FIELDS)));
  }
  if (g.chance(0.7)) parts.push(fLen(4, Buffer.concat([fStr(1, `sha256:${g.text(64)}`), mapEntry(2, g.text(5), g.text(5)), fStr(20, g.text(10))])));
  if (g.chance(0.7)) parts.push(fStr(5, g.text(80)));
  if (g.chance(0.8)) parts.push(fVarint(6, g.enumValue()));
  if (g.chance(0.9)) parts.push(fVarint(7, g.int64()));
  if (g.chance(0.2)) parts.push(fVarint(7, g.int64())); // a repeated scalar: the last wins
  for (let i = g.int(6); i > 0; i--) parts.push(mapEntry(8, g.text(20), g.text(40)));
  for (let i = g.int(8); i > 0; i--) parts.push(mapEntry(9, g.text(20), g.text(80)));
  if (g.chance(0.3)) parts.push(fStr(10, g.text(70)));
  return shuffle(g, parts, CONTAINER_FIELDS);
}

function randomList(g: Gen, item: (g: Gen) => Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let i = g.int(12); i > 0; i--) parts.push(fLen(1, item(g)));
  for (let i = g.int(3); i > 0; i--) parts.push(g.unknown([1]));
  for (let i = parts.length - 1; i > 0; i--) {
    const j = g.int(i + 1);
    [parts[i], parts[j]] = [parts[j] as Buffer, parts[i] as Buffer];
  }
  return Buffer.concat(parts);
}

// --- the full decode, reduced to the fields the agent keeps ------------------------------------

type Full = Record<string, unknown>;

function enumOf(value: unknown): string {
  return typeof value === 'number' ? `UNKNOWN_${value}` : String(value);
}

function fullSandboxes(service: ServiceDefinition, bytes: Buffer): PodSandbox[] {
  const answer = service['ListPodSandbox']?.responseDeserialize(bytes) as { items: Full[] };
  return answer.items.map((s) => {
    const meta = (s['metadata'] ?? {}) as Full;
    return {
      id: s['id'] as string,
      name: (meta['name'] ?? '') as string,
      namespace: (meta['namespace'] ?? '') as string,
      uid: (meta['uid'] ?? '') as string,
      attempt: (meta['attempt'] ?? 0) as number,
      state: enumOf(s['state']) as PodSandbox['state'],
      createdAtNs: BigInt(s['createdAt'] as string),
    };
  });
}

function fullContainers(service: ServiceDefinition, bytes: Buffer): Container[] {
  const answer = service['ListContainers']?.responseDeserialize(bytes) as { containers: Full[] };
  return answer.containers.map((c) => {
    const meta = (c['metadata'] ?? {}) as Full;
    return {
      id: c['id'] as string,
      podSandboxId: c['podSandboxId'] as string,
      name: (meta['name'] ?? '') as string,
      attempt: (meta['attempt'] ?? 0) as number,
      state: enumOf(c['state']) as Container['state'],
      createdAtNs: BigInt(c['createdAt'] as string),
    };
  });
}

let service: ServiceDefinition;
before(async () => {
  service = await loadCriService();
});

function assertSameSandboxes(bytes: Buffer, why: string): PodSandbox[] {
  const lean = decodeListPodSandboxResponse(bytes);
  assert.deepEqual(lean, fullSandboxes(service, bytes), why);
  return lean;
}

function assertSameContainers(bytes: Buffer, why: string): Container[] {
  const lean = decodeListContainersResponse(bytes);
  assert.deepEqual(lean, fullContainers(service, bytes), why);
  return lean;
}

describe('lean relist decoder', () => {
  test('decodes random sandbox listings exactly as the full decode does', () => {
    for (let seed = 1; seed <= 400; seed++) assertSameSandboxes(randomList(new Gen(seed), randomSandbox), `seed ${seed}`);
  });

  test('decodes random container listings exactly as the full decode does', () => {
    for (let seed = 1; seed <= 400; seed++) assertSameContainers(randomList(new Gen(seed), randomContainer), `seed ${seed}`);
  });

  test('decodes what the full encoder writes, as the full decoder reads it back', () => {
    const sandboxes = service['ListPodSandbox']?.responseSerialize({
      items: [
        {
          id: 'a'.repeat(64),
          metadata: { name: 'web-0', uid: 'u-1', namespace: 'default', attempt: 3 },
          state: 'SANDBOX_NOTREADY',
          createdAt: '1767323045123456789',
          labels: { 'io.kubernetes.pod.name': 'web-0' },
          annotations: { 'kubernetes.io/config.source': 'api' },
          runtimeHandler: 'runc',
        },
        {},
      ],
    }) as Buffer;
    const lean = assertSameSandboxes(sandboxes, 'encoded by protobufjs');
    assert.deepEqual(lean[0], {
      id: 'a'.repeat(64),
      name: 'web-0',
      namespace: 'default',
      uid: 'u-1',
      attempt: 3,
      state: 'SANDBOX_NOTREADY',
      createdAtNs: 1767323045123456789n,
    });
    assert.deepEqual(lean[1], { id: '', name: '', namespace: '', uid: '', attempt: 0, state: 'SANDBOX_READY', createdAtNs: 0n });

    const containers = service['ListContainers']?.responseSerialize({
      containers: [
        {
          id: 'b'.repeat(64),
          podSandboxId: 'a'.repeat(64),
          metadata: { name: 'main', attempt: 1 },
          image: { image: `sha256:${'c'.repeat(64)}` },
          imageRef: 'registry.example.com/x@sha256:00',
          state: 'CONTAINER_EXITED',
          createdAt: '-1',
          labels: { 'io.kubernetes.container.name': 'main' },
          annotations: { 'io.kubernetes.container.restartCount': '1' },
          imageId: 'sha256:dd',
        },
      ],
    }) as Buffer;
    assert.deepEqual(assertSameContainers(containers, 'encoded by protobufjs'), [
      { id: 'b'.repeat(64), podSandboxId: 'a'.repeat(64), name: 'main', attempt: 1, state: 'CONTAINER_EXITED', createdAtNs: -1n },
    ]);
  });

  test('keeps created_at exact beyond 2^53 ns and when negative', () => {
    const values = [0n, 1n, 2n ** 53n + 1n, 1767323045123456789n, 2n ** 63n - 1n, -1n, -(2n ** 53n) - 3n, -(2n ** 63n)];
    for (const ns of values) {
      const bytes = fLen(1, Buffer.concat([fStr(1, 'id'), fVarint(4, ns)]));
      assert.equal(assertSameSandboxes(bytes, `sandbox created_at ${ns}`)[0]?.createdAtNs, ns);
      const cbytes = fLen(1, Buffer.concat([fStr(1, 'id'), fVarint(7, ns)]));
      assert.equal(assertSameContainers(cbytes, `container created_at ${ns}`)[0]?.createdAtNs, ns);
    }
  });

  test('names enum numbers the proto does not know UNKNOWN_<n>', () => {
    const cases: Array<[number, string, string]> = [
      [0, 'SANDBOX_READY', 'CONTAINER_CREATED'],
      [1, 'SANDBOX_NOTREADY', 'CONTAINER_RUNNING'],
      [2, 'UNKNOWN_2', 'CONTAINER_EXITED'],
      [3, 'UNKNOWN_3', 'CONTAINER_UNKNOWN'],
      [4, 'UNKNOWN_4', 'UNKNOWN_4'],
      [99, 'UNKNOWN_99', 'UNKNOWN_99'],
      [-1, 'UNKNOWN_-1', 'UNKNOWN_-1'],
      [2 ** 31 - 1, `UNKNOWN_${2 ** 31 - 1}`, `UNKNOWN_${2 ** 31 - 1}`],
    ];
    for (const [n, sandboxState, containerState] of cases) {
      assert.equal(assertSameSandboxes(fLen(1, fVarint(3, n)), `sandbox state ${n}`)[0]?.state, sandboxState);
      assert.equal(assertSameContainers(fLen(1, fVarint(6, n)), `container state ${n}`)[0]?.state, containerState);
    }
  });

  test('skips unknown fields of every wire type, at every level', () => {
    const unknowns = Buffer.concat([
      fVarint(50, 2n ** 63n),
      fFixed64(51),
      fLen(52, Buffer.from('unknown bytes')),
      fGroup(53, Buffer.concat([fVarint(1, 7), fGroup(2, fFixed32(3)), fLen(4, Buffer.from('x'))])),
      fFixed32(54),
    ]);
    const sandbox = Buffer.concat([
      unknowns,
      fStr(1, 'sb'),
      fLen(2, Buffer.concat([unknowns, fStr(1, 'pod'), unknowns, fVarint(4, 2)])),
      unknowns,
      fVarint(3, 1),
    ]);
    const container = Buffer.concat([unknowns, fStr(1, 'ct'), fLen(3, Buffer.concat([fStr(1, 'main'), unknowns])), fVarint(6, 1), unknowns]);
    assert.deepEqual(assertSameSandboxes(Buffer.concat([unknowns, fLen(1, sandbox), unknowns]), 'sandboxes'), [
      { id: 'sb', name: 'pod', namespace: '', uid: '', attempt: 2, state: 'SANDBOX_NOTREADY', createdAtNs: 0n },
    ]);
    assert.deepEqual(assertSameContainers(Buffer.concat([unknowns, fLen(1, container), unknowns]), 'containers'), [
      { id: 'ct', podSandboxId: '', name: 'main', attempt: 0, state: 'CONTAINER_RUNNING', createdAtNs: 0n },
    ]);
  });

  test('reads empty ids, an empty item and an empty answer', () => {
    assert.deepEqual(assertSameSandboxes(Buffer.alloc(0), 'empty answer'), []);
    assert.deepEqual(assertSameContainers(Buffer.alloc(0), 'empty answer'), []);
    assert.deepEqual(assertSameContainers(Buffer.concat([fLen(1, Buffer.alloc(0)), fLen(1, Buffer.concat([fStr(1, ''), fStr(2, '')]))]), 'empty items'), [
      { id: '', podSandboxId: '', name: '', attempt: 0, state: 'CONTAINER_CREATED', createdAtNs: 0n },
      { id: '', podSandboxId: '', name: '', attempt: 0, state: 'CONTAINER_CREATED', createdAtNs: 0n },
    ]);
  });

  test('skips 1 MB labels and annotations and still reads the fields around them', () => {
    const big = 'L'.repeat(1024 * 1024);
    const sandbox = Buffer.concat([fStr(1, 'before'), mapEntry(5, 'big', big), mapEntry(6, big, 'v'), fVarint(4, 5n), fStr(1, 'after')]);
    assert.deepEqual(assertSameSandboxes(Buffer.concat([fLen(1, sandbox), fLen(1, fStr(1, 'next'))]), '1 MB maps'), [
      { id: 'after', name: '', namespace: '', uid: '', attempt: 0, state: 'SANDBOX_READY', createdAtNs: 5n },
      { id: 'next', name: '', namespace: '', uid: '', attempt: 0, state: 'SANDBOX_READY', createdAtNs: 0n },
    ]);
    const container = Buffer.concat([fStr(1, 'c'), mapEntry(8, 'big', big), mapEntry(9, 'big', big), fVarint(6, 2)]);
    assert.equal(assertSameContainers(fLen(1, container), '1 MB maps')[0]?.state, 'CONTAINER_EXITED');
  });

  test('decodes UTF-8 strings as the full decode does, invalid sequences included', () => {
    const bytes = fLen(1, Buffer.concat([fLen(1, Buffer.from([0x69, 0xff, 0xc3, 0x28, 0xf0, 0x9f, 0x99, 0x82])), fStr(2, 'pod-é-日')]));
    assertSameContainers(bytes, 'utf-8');
  });

  test('merges a metadata message sent twice, as the protobuf encoding rules say', () => {
    // protobufjs replaces a repeated embedded message instead of merging it, so this case is
    // checked against the encoding rules rather than against the full decode.
    const bytes = fLen(1, Buffer.concat([fLen(2, Buffer.concat([fStr(1, 'pod'), fVarint(4, 1)])), fLen(2, fStr(3, 'ns'))]));
    assert.deepEqual(decodeListPodSandboxResponse(bytes), [
      { id: '', name: 'pod', namespace: 'ns', uid: '', attempt: 1, state: 'SANDBOX_READY', createdAtNs: 0n },
    ]);
  });

  test('fails where the full decode fails, and agrees wherever it succeeds, on every truncation', () => {
    const g = new Gen(7);
    const bytes = Buffer.concat([0, 1, 2, 3].map(() => fLen(1, randomContainer(g))));
    assert.ok(bytes.length > 100, 'precondition: the sample is large enough to cut');
    for (let cut = 0; cut < bytes.length; cut++) {
      const part = bytes.subarray(0, cut);
      let full: Container[] | undefined;
      try {
        full = fullContainers(service, part);
      } catch {
        full = undefined;
      }
      if (full === undefined) assert.throws(() => decodeListContainersResponse(part), LeanDecodeError, `cut at ${cut}`);
      else assert.deepEqual(decodeListContainersResponse(part), full, `cut at ${cut}`);
    }
  });

  test('refuses malformed wire data with LeanDecodeError', () => {
    const cases: Array<[string, Buffer]> = [
      ['wire type 6', Buffer.concat([tag(9, 6), Buffer.alloc(4)])],
      ['wire type 7', Buffer.concat([tag(9, 7), Buffer.alloc(4)])],
      ['an end-group with no start', tag(9, 4)],
      ['a group that never ends', Buffer.concat([tag(9, 3), fVarint(1, 1)])],
      ['a group ended by another field number', Buffer.concat([tag(9, 3), tag(10, 4)])],
      ['a varint of 11 bytes', Buffer.concat([tag(9, 0), Buffer.alloc(10, 0xff), Buffer.from([0x01])])],
      ['a length past the end', Buffer.concat([tag(1, 2), varint(10), Buffer.alloc(3)])],
      ['a field overrunning its item', fLen(1, Buffer.concat([tag(1, 2), varint(5)]))],
      ['field number 0', Buffer.concat([tag(0, 0), varint(1)])],
    ];
    for (const [why, bytes] of cases) {
      assert.throws(() => decodeListPodSandboxResponse(bytes), LeanDecodeError, why);
      assert.throws(() => decodeListContainersResponse(bytes), LeanDecodeError, why);
    }
  });

  test('refuses a field it keeps that comes with another wire type, at every level, naming the field', () => {
    // [why, bytes, the field named]: each a kept field sent with a wire type other than its own.
    const sandboxes: Array<[string, Buffer, number]> = [
      ['the items as varints', fVarint(1, 3), 1],
      ['a sandbox id as a varint', fLen(1, fVarint(1, 7)), 1],
      ['a sandbox state as a length-delimited field', fLen(1, fStr(3, 'SANDBOX_READY')), 3],
      ['a sandbox created_at as fixed64', fLen(1, fFixed64(4)), 4],
      ['a sandbox metadata name as fixed32', fLen(1, fLen(2, fFixed32(1))), 1],
      ['a sandbox metadata attempt as a string', fLen(1, fLen(2, fStr(4, '1'))), 4],
    ];
    for (const [why, bytes, field] of sandboxes) {
      assert.throws(() => decodeListPodSandboxResponse(bytes), new RegExp(`^LeanDecodeError: field ${field} has wire type \\d, not its own at byte \\d+$`), why);
    }
    const containers: Array<[string, Buffer, number]> = [
      ['the items as fixed32', fFixed32(1), 1],
      ['a container pod_sandbox_id as a varint', fLen(1, fVarint(2, 1)), 2],
      ['a container state as a string', fLen(1, fStr(6, 'CONTAINER_RUNNING')), 6],
      ['a container created_at as a group', fLen(1, fGroup(7, Buffer.alloc(0))), 7],
      ['a container metadata name as a varint', fLen(1, fLen(3, fVarint(1, 5))), 1],
    ];
    for (const [why, bytes, field] of containers) {
      assert.throws(() => decodeListContainersResponse(bytes), new RegExp(`^LeanDecodeError: field ${field} has wire type \\d, not its own`), why);
    }
    assert.throws(() => decodeStatusResponse(fVarint(1, 1)), /field 1 has wire type 0/, 'the status as a varint');
    assert.throws(() => decodeStatusResponse(fLen(1, fLen(1, fLen(2, Buffer.alloc(0))))), /field 2 has wire type 2/, 'a condition status as a string');
    assert.throws(() => decodeVersionResponse(fVarint(2, 1)), /field 2 has wire type 0/, 'the runtime name as a varint');
    // A wire type no field may have is named as such, kept field or not.
    assert.throws(() => decodeListPodSandboxResponse(Buffer.concat([tag(1, 7), Buffer.alloc(4)])), /^LeanDecodeError: invalid wire type 7 at byte 1$/);
    assert.throws(() => decodeListContainersResponse(tag(1, 4)), /^LeanDecodeError: invalid wire type 4 at byte 1$/);
  });

  test('still skips a field it does not keep, whatever its wire type (labels, image, ...)', () => {
    // Container 4 image, 8 labels; PodSandbox 5 labels: the reader never keeps them.
    assert.deepEqual(decodeListContainersResponse(fLen(1, Buffer.concat([fStr(1, 'c'), fVarint(4, 1), fFixed32(8)]))).map((c) => c.id), ['c']);
    assert.deepEqual(decodeListPodSandboxResponse(fLen(1, Buffer.concat([fStr(1, 's'), fVarint(5, 1)]))).map((s) => s.id), ['s']);
    assert.deepEqual(decodeListPodSandboxResponse(fVarint(2, 1)), [], 'a top-level field it does not keep');
  });

  test('bounds the nesting of skipped groups', () => {
    let nested: Buffer = Buffer.alloc(0);
    for (let i = 0; i < 100; i++) nested = fGroup(9, nested);
    assert.throws(() => decodeListContainersResponse(nested), /nested deeper than 64/);
  });
});

// --- Status and Version: the small answers the agent also reads ---------------------------------

function fullStatus(bytes: Buffer): RuntimeStatus {
  const answer = service['Status']?.responseDeserialize(bytes) as { status: { conditions?: Full[] } | null };
  return {
    conditions: (answer.status?.conditions ?? []).map((c) => ({
      type: c['type'] as string,
      status: c['status'] as boolean,
      reason: c['reason'] as string,
      message: c['message'] as string,
    })),
  };
}

function fullVersion(bytes: Buffer): RuntimeVersion {
  const answer = service['Version']?.responseDeserialize(bytes) as Full;
  return {
    version: answer['version'] as string,
    runtimeName: answer['runtimeName'] as string,
    runtimeVersion: answer['runtimeVersion'] as string,
    runtimeApiVersion: answer['runtimeApiVersion'] as string,
  };
}

function randomCondition(g: Gen): Buffer {
  const parts: Buffer[] = [];
  if (g.chance(0.9)) parts.push(fStr(1, g.pick(['RuntimeReady', 'NetworkReady', g.text(20)])));
  // A bool is the varint's low 32 bits ≠ 0: 2^32 reads as false, as protobufjs reads it.
  if (g.chance(0.8)) parts.push(fVarint(2, g.pick([0, 1, 2, 2 ** 32, 2n ** 63n + 1n])));
  if (g.chance(0.7)) parts.push(fStr(3, g.text(30)));
  if (g.chance(0.7)) parts.push(fStr(4, g.text(120)));
  return shuffle(g, parts, [1, 2, 3, 4]);
}

function randomStatus(g: Gen): Buffer {
  const parts: Buffer[] = [];
  if (g.chance(0.9)) {
    const conditions: Buffer[] = [];
    for (let i = g.int(5); i > 0; i--) conditions.push(fLen(1, randomCondition(g)));
    parts.push(fLen(1, shuffle(g, conditions, [1])));
  }
  for (let i = g.int(4); i > 0; i--) parts.push(mapEntry(2, g.text(10), g.text(200)));
  if (g.chance(0.5)) parts.push(fLen(3, Buffer.concat([fStr(1, 'runc'), fLen(2, fVarint(1, 1))])));
  return shuffle(g, parts, [1, 2, 3, 4]);
}

function randomVersion(g: Gen): Buffer {
  const parts: Buffer[] = [];
  for (const field of [1, 2, 3, 4]) if (g.chance(0.8)) parts.push(fStr(field, g.text(20)));
  return shuffle(g, parts, [1, 2, 3, 4]);
}

describe('lean Status and Version decoders', () => {
  test('decode random StatusResponses exactly as the full decode does, unknown fields included', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const bytes = randomStatus(new Gen(seed));
      assert.deepEqual(decodeStatusResponse(bytes), fullStatus(bytes), `seed ${seed}`);
    }
  });

  test('decode random VersionResponses exactly as the full decode does, unknown fields included', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const bytes = randomVersion(new Gen(seed));
      assert.deepEqual(decodeVersionResponse(bytes), fullVersion(bytes), `seed ${seed}`);
    }
  });

  test('decode what the full encoder writes', () => {
    const status = service['Status']?.responseSerialize({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true },
          { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' },
        ],
      },
      info: { config: '{"a":1}' },
    }) as Buffer;
    assert.deepEqual(decodeStatusResponse(status), {
      conditions: [
        { type: 'RuntimeReady', status: true, reason: '', message: '' },
        { type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config uninitialized' },
      ],
    });
    assert.deepEqual(decodeStatusResponse(Buffer.alloc(0)), fullStatus(Buffer.alloc(0)), 'an empty answer: no status, no conditions');
    const version = service['Version']?.responseSerialize({ version: '0.1.0', runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' }) as Buffer;
    assert.deepEqual(decodeVersionResponse(version), { version: '0.1.0', runtimeName: 'containerd', runtimeVersion: '1.6.20', runtimeApiVersion: 'v1' });
  });

  test('encode a VersionRequest byte for byte as the full encoder does', () => {
    for (const version of ['0.1.0', '', 'v'.repeat(200), 'é日🙂']) {
      const full = service['Version']?.requestSerialize({ version }) as Buffer;
      assert.deepEqual(encodeVersionRequest(version), full, JSON.stringify(version));
    }
  });

  test('refuse a truncated StatusResponse with LeanDecodeError', () => {
    const whole = fLen(1, fLen(1, fStr(1, 'RuntimeReady')));
    for (let cut = 1; cut < whole.length; cut++) assert.throws(() => decodeStatusResponse(whole.subarray(0, cut)), LeanDecodeError, `cut at ${cut}`);
  });
});
