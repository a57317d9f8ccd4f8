// Nodes in Kubernetes' protobuf encoding, read lean: a node list, a watch event of Nodes, and the
// Status of an error answer or an ERROR event.
//
// Why: the readers (`nodepulse fleet`, the controller) judge every Node of the cluster from a few
// of its fields, and a kubelet's Node is mostly what they never read (images with their sizes,
// managedFields, addresses, capacity). As JSON, 5,000 such Nodes are about 95 MB that the API
// server must encode and the reader must parse (docs/bench.md, "The controller and `fleet` at
// 5,000 Nodes"); in protobuf the server encodes them faster, and this reader walks the bytes once,
// keeps the fields below and skips the rest by its length.
//
// What it keeps, by field number (k8s.io/api core/v1 and apimachinery meta/v1 generated.proto):
//   Node:        1 metadata, 2 spec, 3 status
//   ObjectMeta:  1 name, 5 uid, 6 resourceVersion, 8 creationTimestamp, 11 labels, 12 annotations
//   NodeSpec:    4 unschedulable, 5 taints {1 key, 2 value, 3 effect, 4 timeAdded}
//   NodeStatus:  4 conditions {1 type, 2 status, 3 lastHeartbeatTime, 4 lastTransitionTime,
//                5 reason, 6 message}, 7 nodeInfo {6 containerRuntimeVersion}
//   Time:        1 seconds (RFC 3339 in whole seconds, as metav1.Time's JSON is; nanos skipped)
//   NodeList:    1 metadata {2 resourceVersion, 3 continue}, 2 items
//   Status:      3 message, 4 reason, 5 details {5 retryAfterSeconds}, 6 code
// The result has the shape of the JSON object (kube-types.ts), holding only these fields, so the
// readers' projections (fleet/fleet-view.ts nodeRecord) read either alike.
//
// The framing, as kube-apiserver writes it:
//   - a whole object (a list, a Node, a Status): the 4 bytes `k8s\0`, then runtime.Unknown
//     {1 typeMeta {1 apiVersion, 2 kind}, 2 raw: the object's own bytes, 3 contentEncoding,
//     4 contentType};
//   - a watch stream (content type `…protobuf;stream=watch`): frames of a 4-byte big-endian
//     length and a meta/v1 WatchEvent {1 type, 2 object: RawExtension {1 raw}}, whose raw is a
//     whole object as above (response-reader.ts splits the frames).
//
// Semantics: the result is what the server's JSON of the same object holds. The server's protobuf
// writes every optional scalar, empty or not, where its JSON leaves out a field marked omitempty
// when empty: so an empty name, uid, resourceVersion, label map, reason, message, taint value, a
// false unschedulable or a zero status code is left out here too; a condition's type and status
// and a taint's key and effect are kept even when empty, as the JSON keeps them; a zero time (an
// empty Time message; JSON's null) is left out. A scalar seen twice keeps the last; a repeated
// field or a map entry appends. Unknown fields of wire types 0, 1, 2 and 5 are skipped (no
// message of these protos uses groups).
//
// Failure modes, each a NodeProtobufError naming what was wrong: no `k8s\0` prefix, a kind other
// than the one expected, a content encoding (the server never compresses an embedded object),
// truncated input, a varint longer than 10 bytes, a field number 0, wire types 3, 4, 6 and 7, or a
// kept field that arrives with another wire type than its own.
import type { ListPage, ProtobufReaders, WatchEvent } from './list-watch.ts';
import type { Node, NodeCondition, ObjectMeta } from './kube-types.ts';

/** The content type kube-apiserver answers in protobuf with; `;stream=watch` follows it on a watch. */
export const CONTENT_TYPE_PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** What a reader of Nodes asks for: protobuf where the server has it, JSON otherwise (a stand-in, a proxy). */
export const ACCEPT_PROTOBUF_OR_JSON = `${CONTENT_TYPE_PROTOBUF}, application/json`;

const MAGIC = Buffer.from('k8s\0', 'latin1');
const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;

export class NodeProtobufError extends Error {
  readonly code = 'bad_protobuf';
}

/** The fields an error answer's Status or an ERROR event carries (list-watch.ts reads them). */
export interface StatusFields {
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: { readonly retryAfterSeconds?: number };
}

/** A cursor over one message's bytes: [pos, end) of buf. */
class Cursor {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /** A varint as a number: exact to 2^53, enough for every length, enum and count here. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new NodeProtobufError(`truncated varint at byte ${this.pos}`);
      const b = this.buf[this.pos++] as number;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    throw new NodeProtobufError(`a varint longer than 10 bytes at byte ${this.pos - 10}`);
  }

  /** An int64 varint (a Time's seconds): two's complement, so a time before 1970 is negative. */
  int64(): number {
    const start = this.pos;
    const value = this.varint();
    // Up to 7 bytes hold 49 bits, exact as a number; a longer one is read again exactly.
    if (this.pos - start <= 7) return value;
    let exact = 0n;
    for (let i = this.pos - 1; i >= start; i--) exact = (exact << 7n) | BigInt((this.buf[i] as number) & 0x7f);
    return Number(BigInt.asIntN(64, exact));
  }

  /** The next field's tag: [field number, wire type]. */
  tag(): [number, number] {
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 0) throw new NodeProtobufError(`field number 0 at byte ${this.pos}`);
    return [field, wire];
  }

  /** A length-delimited field's bytes, as a cursor of their own. */
  sub(): Cursor {
    const length = this.varint();
    const start = this.pos;
    if (start + length > this.end) throw new NodeProtobufError(`a field of ${length} bytes at byte ${start} runs past its message's end (${this.end})`);
    this.pos = start + length;
    return new Cursor(this.buf, start, start + length);
  }

  string(): string {
    const c = this.sub();
    return c.buf.toString('utf8', c.pos, c.end);
  }

  bytes(): Buffer {
    const c = this.sub();
    return c.buf.subarray(c.pos, c.end);
  }

  skip(field: number, wire: number): void {
    const at = this.pos;
    if (wire === VARINT) this.varint();
    else if (wire === LENGTH) this.sub();
    else if (wire === FIXED64) this.pos += 8;
    else if (wire === FIXED32) this.pos += 4;
    else throw new NodeProtobufError(`field ${field} has wire type ${wire} at byte ${at}, which these messages never use`);
    if (this.pos > this.end) throw new NodeProtobufError(`field ${field} at byte ${at} runs past its message's end (${this.end})`);
  }
}

/** Checks a kept field's wire type. */
function expect(field: number, wire: number, want: number, what: string): void {
  if (wire !== want) throw new NodeProtobufError(`${what} (field ${field}) came with wire type ${wire}, not ${want}`);
}

/** The object inside a whole answer or a watch event's raw: `k8s\0` and runtime.Unknown. */
function unwrap(bytes: Buffer, kinds: readonly string[]): { kind: string; raw: Cursor } {
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new NodeProtobufError(`not a Kubernetes protobuf object: it starts ${JSON.stringify(bytes.subarray(0, 8).toString('latin1'))}, not "k8s\\u0000"`);
  }
  const c = new Cursor(bytes, MAGIC.length);
  let kind = '';
  let raw: Cursor | undefined;
  let encoding = '';
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 1) {
      expect(field, wire, LENGTH, 'typeMeta');
      const t = c.sub();
      while (t.more()) {
        const [f, w] = t.tag();
        if (f === 2) {
          expect(f, w, LENGTH, 'kind');
          kind = t.string();
        } else t.skip(f, w);
      }
    } else if (field === 2) {
      expect(field, wire, LENGTH, 'raw');
      raw = c.sub();
    } else if (field === 3) {
      expect(field, wire, LENGTH, 'contentEncoding');
      encoding = c.string();
    } else c.skip(field, wire);
  }
  if (!kinds.includes(kind)) throw new NodeProtobufError(`an object of kind ${JSON.stringify(kind)} where ${kinds.join(' or ')} was expected`);
  if (encoding !== '') throw new NodeProtobufError(`a ${kind} with content encoding ${JSON.stringify(encoding)}, which this reader does not undo`);
  return { kind, raw: raw ?? new Cursor(bytes, bytes.length) };
}

/**
 * metav1.Time as its JSON: RFC 3339 in whole seconds (the nanos are not part of it). The zero
 * time (Go's year 1, JSON's null) is written as an empty message, with no seconds at all: it
 * reads as undefined, and the field is left out.
 */
function time(c: Cursor): string | undefined {
  let seconds: number | undefined;
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 1) {
      expect(field, wire, VARINT, 'seconds');
      seconds = c.int64();
    } else c.skip(field, wire);
  }
  if (seconds === undefined) return undefined;
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) throw new NodeProtobufError(`a time of ${seconds} seconds, outside what a date can hold`);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The object without its empty strings and undefined fields, as the JSON leaves out an omitempty
 * field; the names in `always` are kept even when empty (fields the JSON never omits).
 */
function omitEmpty<T extends object>(value: T, always: readonly string[] = []): T {
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || (v === '' && !always.includes(k))) delete (value as Record<string, unknown>)[k];
  }
  return value;
}

/** One entry of a map<string, string>, added to `into`. */
function mapEntry(c: Cursor, into: Record<string, string>): void {
  let key = '';
  let value = '';
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 1 || field === 2) {
      expect(field, wire, LENGTH, field === 1 ? 'a map key' : 'a map value');
      if (field === 1) key = c.string();
      else value = c.string();
    } else c.skip(field, wire);
  }
  into[key] = value;
}

/** An object being read: every field writable and possibly undefined until omitEmpty drops it. */
type Draft<T> = { -readonly [K in keyof T]?: T[K] | undefined };

function objectMeta(c: Cursor): ObjectMeta {
  const meta: Draft<ObjectMeta> = {};
  let labels: Record<string, string> | undefined;
  let annotations: Record<string, string> | undefined;
  while (c.more()) {
    const [field, wire] = c.tag();
    switch (field) {
      case 1:
        expect(field, wire, LENGTH, 'metadata.name');
        meta.name = c.string();
        break;
      case 5:
        expect(field, wire, LENGTH, 'metadata.uid');
        meta.uid = c.string();
        break;
      case 6:
        expect(field, wire, LENGTH, 'metadata.resourceVersion');
        meta.resourceVersion = c.string();
        break;
      case 8:
        expect(field, wire, LENGTH, 'metadata.creationTimestamp');
        meta.creationTimestamp = time(c.sub());
        break;
      case 11:
        expect(field, wire, LENGTH, 'metadata.labels');
        mapEntry(c.sub(), (labels ??= {}));
        break;
      case 12:
        expect(field, wire, LENGTH, 'metadata.annotations');
        mapEntry(c.sub(), (annotations ??= {}));
        break;
      default:
        c.skip(field, wire);
    }
  }
  if (labels !== undefined) meta.labels = labels;
  if (annotations !== undefined) meta.annotations = annotations;
  return omitEmpty(meta) as ObjectMeta;
}

interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
  readonly timeAdded?: string;
}

const TAINT_STRINGS: Readonly<Record<number, 'key' | 'value' | 'effect'>> = { 1: 'key', 2: 'value', 3: 'effect' };

function taint(c: Cursor): Taint {
  const t: Draft<Taint> = { key: '', effect: '' };
  while (c.more()) {
    const [field, wire] = c.tag();
    const name = TAINT_STRINGS[field];
    if (name !== undefined) {
      expect(field, wire, LENGTH, `taint.${name}`);
      t[name] = c.string();
    } else if (field === 4) {
      expect(field, wire, LENGTH, 'taint.timeAdded');
      t.timeAdded = time(c.sub());
    } else c.skip(field, wire);
  }
  return omitEmpty(t, ['key', 'effect']) as Taint;
}

function nodeSpec(c: Cursor): { unschedulable?: boolean; taints?: Taint[] } {
  const spec: { unschedulable?: boolean; taints?: Taint[] } = {};
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 4) {
      expect(field, wire, VARINT, 'spec.unschedulable');
      if (c.varint() !== 0) spec.unschedulable = true;
      else delete spec.unschedulable;
    } else if (field === 5) {
      expect(field, wire, LENGTH, 'spec.taints');
      (spec.taints ??= []).push(taint(c.sub()));
    } else c.skip(field, wire);
  }
  return spec;
}

const CONDITION_STRINGS: Readonly<Record<number, 'type' | 'status' | 'reason' | 'message'>> = { 1: 'type', 2: 'status', 5: 'reason', 6: 'message' };
const CONDITION_TIMES: Readonly<Record<number, 'lastHeartbeatTime' | 'lastTransitionTime'>> = { 3: 'lastHeartbeatTime', 4: 'lastTransitionTime' };

function condition(c: Cursor): NodeCondition {
  const cond: Draft<NodeCondition> = { type: '', status: '' as NodeCondition['status'] };
  while (c.more()) {
    const [field, wire] = c.tag();
    const text = CONDITION_STRINGS[field];
    const when = CONDITION_TIMES[field];
    if (text !== undefined) {
      expect(field, wire, LENGTH, `condition.${text}`);
      (cond as Record<string, string>)[text] = c.string();
    } else if (when !== undefined) {
      expect(field, wire, LENGTH, `condition.${when}`);
      cond[when] = time(c.sub());
    } else c.skip(field, wire);
  }
  return omitEmpty(cond, ['type', 'status']) as NodeCondition;
}

function nodeStatus(c: Cursor): NonNullable<Node['status']> {
  let conditions: NodeCondition[] | undefined;
  let runtimeVersion: string | undefined;
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 4) {
      expect(field, wire, LENGTH, 'status.conditions');
      (conditions ??= []).push(condition(c.sub()));
    } else if (field === 7) {
      expect(field, wire, LENGTH, 'status.nodeInfo');
      const info = c.sub();
      while (info.more()) {
        const [f, w] = info.tag();
        if (f === 6) {
          expect(f, w, LENGTH, 'status.nodeInfo.containerRuntimeVersion');
          runtimeVersion = info.string();
        } else info.skip(f, w);
      }
    } else c.skip(field, wire);
  }
  return {
    ...(conditions === undefined ? {} : { conditions }),
    ...(runtimeVersion === undefined ? {} : { nodeInfo: { containerRuntimeVersion: runtimeVersion } }),
  };
}

function node(c: Cursor): Node {
  let metadata: ObjectMeta = {};
  let spec: ReturnType<typeof nodeSpec> | undefined;
  let status: Node['status'];
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 1) {
      expect(field, wire, LENGTH, 'metadata');
      metadata = objectMeta(c.sub());
    } else if (field === 2) {
      expect(field, wire, LENGTH, 'spec');
      spec = nodeSpec(c.sub());
    } else if (field === 3) {
      expect(field, wire, LENGTH, 'status');
      status = nodeStatus(c.sub());
    } else c.skip(field, wire);
  }
  return { apiVersion: 'v1', kind: 'Node', metadata, ...(spec === undefined ? {} : { spec }), ...(status === undefined ? {} : { status }) };
}

function status(c: Cursor): StatusFields {
  const s: { code?: number; reason?: string; message?: string; details?: { retryAfterSeconds?: number } } = {};
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 3 || field === 4) {
      expect(field, wire, LENGTH, field === 3 ? 'status.message' : 'status.reason');
      s[field === 3 ? 'message' : 'reason'] = c.string();
    } else if (field === 5) {
      expect(field, wire, LENGTH, 'status.details');
      const d = c.sub();
      while (d.more()) {
        const [f, w] = d.tag();
        if (f === 5) {
          expect(f, w, VARINT, 'status.details.retryAfterSeconds');
          s.details = { retryAfterSeconds: d.int64() };
        } else d.skip(f, w);
      }
    } else if (field === 6) {
      expect(field, wire, VARINT, 'status.code');
      s.code = c.int64();
    } else c.skip(field, wire);
  }
  if (s.details?.retryAfterSeconds === 0) delete s.details;
  if (s.code === 0) delete s.code;
  return omitEmpty(s);
}

/** A whole answer to LIST /api/v1/nodes in protobuf. */
export function decodeNodeList(body: Buffer): ListPage<Node> {
  const c = unwrap(body, ['NodeList']).raw;
  const items: Node[] = [];
  const metadata: { resourceVersion?: string; continue?: string } = {};
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 1) {
      expect(field, wire, LENGTH, 'list metadata');
      const m = c.sub();
      while (m.more()) {
        const [f, w] = m.tag();
        if (f === 2 || f === 3) {
          expect(f, w, LENGTH, f === 2 ? 'list resourceVersion' : 'list continue');
          metadata[f === 2 ? 'resourceVersion' : 'continue'] = m.string();
        } else m.skip(f, w);
      }
    } else if (field === 2) {
      expect(field, wire, LENGTH, 'items');
      items.push(node(c.sub()));
    } else c.skip(field, wire);
  }
  return { items, metadata: omitEmpty(metadata) };
}

/** One frame of a watch of Nodes in protobuf: a Node event, or an ERROR event's Status. */
export function decodeNodeWatchEvent(frame: Buffer): WatchEvent<Node> {
  const c = new Cursor(frame);
  let type = '';
  let raw: Buffer | undefined;
  while (c.more()) {
    const [field, wire] = c.tag();
    if (field === 1) {
      expect(field, wire, LENGTH, 'event type');
      type = c.string();
    } else if (field === 2) {
      expect(field, wire, LENGTH, 'event object');
      const ext = c.sub();
      while (ext.more()) {
        const [f, w] = ext.tag();
        if (f === 1) {
          expect(f, w, LENGTH, 'event object raw');
          raw = ext.bytes();
        } else ext.skip(f, w);
      }
    } else c.skip(field, wire);
  }
  if (!['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'].includes(type)) throw new NodeProtobufError(`a watch event of type ${JSON.stringify(type)}`);
  if (raw === undefined) throw new NodeProtobufError(`a watch event (${type}) without an object`);
  const inner = unwrap(raw, type === 'ERROR' ? ['Status'] : ['Node']);
  const object = type === 'ERROR' ? (status(inner.raw) as unknown as Node) : node(inner.raw);
  return { type: type as WatchEvent<Node>['type'], object };
}

/** The Status of an error answer in protobuf (kube-client.ts reads it as it reads the JSON one). */
export function decodeStatus(body: Buffer): StatusFields {
  return status(unwrap(body, ['Status']).raw);
}

/** The Node readers' protobuf, for kubeListWatch's `protobuf` option. */
export const NODE_PROTOBUF: ProtobufReaders<Node> = { list: decodeNodeList, event: decodeNodeWatchEvent };
