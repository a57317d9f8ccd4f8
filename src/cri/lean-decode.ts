// A hand-written protobuf reader for the two answers of a relist: ListPodSandboxResponse and
// ListContainersResponse (proto/runtime/v1/api.proto); and for the two small answers the agent
// also reads, StatusResponse and VersionResponse, with the writer of VersionRequest.
//
// Why: the agent relists every second, forever, on every node. A full decode (protobufjs via
// proto-loader) builds every label, annotation and image field of every item: the floor the
// benchmark measures the agent's relist against (docs/bench.md). The agent reads only ids,
// metadata names, states and creation times (src/cri/types.ts), so this reader walks the bytes
// once, keeps those fields and skips everything else by its length, without decoding it.
//
// What it keeps, by field number (the same numbers as upstream's api.proto):
//   PodSandbox: 1 id, 2 metadata {1 name, 2 uid, 3 namespace, 4 attempt}, 3 state, 4 created_at
//   Container:  1 id, 2 pod_sandbox_id, 3 metadata {1 name, 2 attempt}, 6 state, 7 created_at
//   StatusResponse: 1 status {1 conditions {1 type, 2 status, 3 reason, 4 message}}
//   VersionResponse: 1 version, 2 runtime_name, 3 runtime_version, 4 runtime_api_version
// Why Status and Version too: the agent polls Status every 5 s. Decoding it with the full proto
// would load proto-loader and parse api.proto in every agent, megabytes of RSS for a message of a
// few hundred bytes (docs/bench.md, RSS breakdown). With these, an agent never loads it.
//
// Semantics follow the protobuf encoding rules, and a test checks them against the full decode
// of the same bytes:
//   - absent fields take proto3 defaults ('' / 0 / the zero enum / 0n);
//   - a scalar seen twice keeps the last value; a metadata message seen twice is merged;
//   - created_at is an int64 kept as a bigint, exact beyond 2^53 and when negative;
//   - an enum number this file does not name becomes `UNKNOWN_<n>` (n as a signed int32);
//   - unknown fields of every wire type (varint, fixed64, length-delimited, group, fixed32) are
//     skipped, and so are the fields of a message this reader does not keep (labels, image...);
//   - a field it keeps that arrives with another wire type is refused (below);
//   - strings are decoded as UTF-8 with Buffer's own utf8Slice, as protobufjs does on Node.
//
// Failure modes: truncated input, a varint longer than 10 bytes, wire types 4 (unopened), 6 and
// 7, field number 0, a group whose end does not match its start, groups nested deeper than
// MAX_GROUP_DEPTH, or a field it keeps with another wire type than its own throw LeanDecodeError.
// Nothing else is thrown.
//
// Why a kept field with the wrong wire type is refused, not skipped: a wire type is fixed by the
// field's type, and no compatible change of the CRI can change it, so such an answer is not the
// message the agent reads (another API behind the socket, a broken runtime, corruption).
// Skipping it would read, say, a listing whose items came as varints as an empty listing: a
// wrong answer taken for a good one. Go's protobuf keeps such a field as unknown, and protobufjs
// reads it as if its wire type were right, so the two do not agree either; the full-decode
// comparisons below never send one. The agent refuses the answer, and says so
// (`undecodable`, cri/fault-cause.ts).
//
// The reader keeps its cursor in module state: decoding is synchronous and never re-entered,
// and a cursor object per call would be the only allocation besides the results.
import type { Container, ContainerState, PodSandbox, RuntimeCondition, RuntimeStatus, RuntimeVersion, SandboxState } from './types.ts';

/** Nesting bound for skipped groups, so a hostile answer cannot exhaust the stack. */
const MAX_GROUP_DEPTH = 64;

const SANDBOX_STATES: readonly SandboxState[] = ['SANDBOX_READY', 'SANDBOX_NOTREADY'];
const CONTAINER_STATES: readonly ContainerState[] = [
  'CONTAINER_CREATED',
  'CONTAINER_RUNNING',
  'CONTAINER_EXITED',
  'CONTAINER_UNKNOWN',
];

/** The fields each message's reader keeps, one bit per field number (all below 32). */
const KEPT_LIST = bits(1);
const KEPT_SANDBOX = bits(1, 2, 3, 4);
const KEPT_SANDBOX_METADATA = bits(1, 2, 3, 4);
const KEPT_CONTAINER = bits(1, 2, 3, 6, 7);
const KEPT_CONTAINER_METADATA = bits(1, 2);
const KEPT_STATUS_RESPONSE = bits(1);
const KEPT_RUNTIME_STATUS = bits(1);
const KEPT_CONDITION = bits(1, 2, 3, 4);
const KEPT_VERSION = bits(1, 2, 3, 4);

function bits(...fields: number[]): number {
  return fields.reduce((mask, field) => mask | (1 << field), 0);
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_START_GROUP = 3;
const WIRE_END_GROUP = 4;
const WIRE_FIXED32 = 5;

export class LeanDecodeError extends Error {
  readonly code = 'malformed_message';
  /** Byte offset in the message where decoding failed. */
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(`${message} at byte ${offset}`);
    this.name = 'LeanDecodeError';
    this.offset = offset;
  }
}

// Node's Buffer has a native UTF-8 slice that skips toString()'s argument checks. It is not in
// @types/node, hence the local type.
interface SliceableBuffer extends Buffer {
  utf8Slice(start: number, end: number): string;
}

let buf: SliceableBuffer = Buffer.alloc(0) as SliceableBuffer;
let pos = 0;

/** Decodes a ListPodSandboxResponse, keeping the fields of PodSandbox in types.ts. */
export function decodeListPodSandboxResponse(bytes: Uint8Array): PodSandbox[] {
  start(bytes);
  try {
    const items: PodSandbox[] = [];
    const end = buf.length;
    while (pos < end) {
      const tag = varint32(end);
      if (tag === ((1 << 3) | WIRE_LEN)) items.push(podSandbox(messageEnd(end)));
      else skipUnkept(tag, end, KEPT_LIST);
    }
    return items;
  } finally {
    release();
  }
}

/** Decodes a ListContainersResponse, keeping the fields of Container in types.ts. */
export function decodeListContainersResponse(bytes: Uint8Array): Container[] {
  start(bytes);
  try {
    const items: Container[] = [];
    const end = buf.length;
    while (pos < end) {
      const tag = varint32(end);
      if (tag === ((1 << 3) | WIRE_LEN)) items.push(container(messageEnd(end)));
      else skipUnkept(tag, end, KEPT_LIST);
    }
    return items;
  } finally {
    release();
  }
}

/** Decodes a StatusResponse, keeping the runtime's conditions (status.conditions). */
export function decodeStatusResponse(bytes: Uint8Array): RuntimeStatus {
  start(bytes);
  try {
    const conditions: RuntimeCondition[] = [];
    const end = buf.length;
    while (pos < end) {
      const tag = varint32(end);
      if (tag !== ((1 << 3) | WIRE_LEN)) {
        skipUnkept(tag, end, KEPT_STATUS_RESPONSE);
        continue;
      }
      // RuntimeStatus: a message seen twice is merged, so its conditions add up.
      const statusEnd = messageEnd(end);
      while (pos < statusEnd) {
        const statusTag = varint32(statusEnd);
        if (statusTag === ((1 << 3) | WIRE_LEN)) conditions.push(condition(messageEnd(statusEnd)));
        else skipUnkept(statusTag, statusEnd, KEPT_RUNTIME_STATUS);
      }
      checkEnd(statusEnd);
    }
    return { conditions };
  } finally {
    release();
  }
}

/** Decodes a VersionResponse. */
export function decodeVersionResponse(bytes: Uint8Array): RuntimeVersion {
  start(bytes);
  try {
    let version = '';
    let runtimeName = '';
    let runtimeVersion = '';
    let runtimeApiVersion = '';
    const end = buf.length;
    while (pos < end) {
      const tag = varint32(end);
      switch (tag) {
        case (1 << 3) | WIRE_LEN:
          version = string(end);
          break;
        case (2 << 3) | WIRE_LEN:
          runtimeName = string(end);
          break;
        case (3 << 3) | WIRE_LEN:
          runtimeVersion = string(end);
          break;
        case (4 << 3) | WIRE_LEN:
          runtimeApiVersion = string(end);
          break;
        default:
          skipUnkept(tag, end, KEPT_VERSION);
      }
    }
    return { version, runtimeName, runtimeVersion, runtimeApiVersion };
  } finally {
    release();
  }
}

/** Encodes a VersionRequest { version } (field 1, a string), written even when empty, as protobufjs writes it. */
export function encodeVersionRequest(version: string): Buffer {
  const text = Buffer.from(version, 'utf8');
  const length: number[] = [];
  for (let n = text.length; ; n >>>= 7) {
    if (n < 0x80) {
      length.push(n);
      break;
    }
    length.push((n & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from([(1 << 3) | WIRE_LEN, ...length]), text]);
}

function condition(end: number): RuntimeCondition {
  let type = '';
  let status = false;
  let reason = '';
  let message = '';
  while (pos < end) {
    const tag = varint32(end);
    switch (tag) {
      case (1 << 3) | WIRE_LEN:
        type = string(end);
        break;
      case (2 << 3) | WIRE_VARINT:
        // protobufjs reads a bool as the varint's low 32 bits ≠ 0; so does this.
        status = varint32(end) !== 0;
        break;
      case (3 << 3) | WIRE_LEN:
        reason = string(end);
        break;
      case (4 << 3) | WIRE_LEN:
        message = string(end);
        break;
      default:
        skipUnkept(tag, end, KEPT_CONDITION);
    }
  }
  checkEnd(end);
  return { type, status, reason, message };
}

function start(bytes: Uint8Array): void {
  buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as SliceableBuffer;
  pos = 0;
}

function release(): void {
  // Drop the reference so a large answer is not kept alive until the next relist.
  buf = EMPTY;
  pos = 0;
}

const EMPTY = Buffer.alloc(0) as SliceableBuffer;

function podSandbox(end: number): PodSandbox {
  let id = '';
  let name = '';
  let uid = '';
  let namespace = '';
  let attempt = 0;
  let state = 0;
  let createdAtNs = 0n;
  while (pos < end) {
    const tag = varint32(end);
    switch (tag) {
      case (1 << 3) | WIRE_LEN:
        id = string(end);
        break;
      case (2 << 3) | WIRE_LEN: {
        const metaEnd = messageEnd(end);
        while (pos < metaEnd) {
          const metaTag = varint32(metaEnd);
          switch (metaTag) {
            case (1 << 3) | WIRE_LEN:
              name = string(metaEnd);
              break;
            case (2 << 3) | WIRE_LEN:
              uid = string(metaEnd);
              break;
            case (3 << 3) | WIRE_LEN:
              namespace = string(metaEnd);
              break;
            case (4 << 3) | WIRE_VARINT:
              attempt = varint32(metaEnd) >>> 0;
              break;
            default:
              skipUnkept(metaTag, metaEnd, KEPT_SANDBOX_METADATA);
          }
        }
        break;
      }
      case (3 << 3) | WIRE_VARINT:
        state = varint32(end) | 0;
        break;
      case (4 << 3) | WIRE_VARINT:
        createdAtNs = int64(end);
        break;
      default:
        skipUnkept(tag, end, KEPT_SANDBOX);
    }
  }
  checkEnd(end);
  return {
    id,
    name,
    namespace,
    uid,
    attempt,
    state: SANDBOX_STATES[state] ?? (`UNKNOWN_${state}` as const),
    createdAtNs,
  };
}

function container(end: number): Container {
  let id = '';
  let podSandboxId = '';
  let name = '';
  let attempt = 0;
  let state = 0;
  let createdAtNs = 0n;
  while (pos < end) {
    const tag = varint32(end);
    switch (tag) {
      case (1 << 3) | WIRE_LEN:
        id = string(end);
        break;
      case (2 << 3) | WIRE_LEN:
        podSandboxId = string(end);
        break;
      case (3 << 3) | WIRE_LEN: {
        const metaEnd = messageEnd(end);
        while (pos < metaEnd) {
          const metaTag = varint32(metaEnd);
          switch (metaTag) {
            case (1 << 3) | WIRE_LEN:
              name = string(metaEnd);
              break;
            case (2 << 3) | WIRE_VARINT:
              attempt = varint32(metaEnd) >>> 0;
              break;
            default:
              skipUnkept(metaTag, metaEnd, KEPT_CONTAINER_METADATA);
          }
        }
        break;
      }
      case (6 << 3) | WIRE_VARINT:
        state = varint32(end) | 0;
        break;
      case (7 << 3) | WIRE_VARINT:
        createdAtNs = int64(end);
        break;
      default:
        skipUnkept(tag, end, KEPT_CONTAINER);
    }
  }
  checkEnd(end);
  return {
    id,
    podSandboxId,
    name,
    attempt,
    state: CONTAINER_STATES[state] ?? (`UNKNOWN_${state}` as const),
    createdAtNs,
  };
}

function checkEnd(end: number): void {
  // A field that ran past its enclosing message's length is malformed even if the buffer goes on.
  if (pos !== end) throw new LeanDecodeError('field overruns its message', pos);
}

/** Reads a varint within [pos, end) and returns its low 32 bits (as a signed int). */
function varint32(end: number): number {
  let b = byte(end);
  if (b < 0x80) return b;
  let value = b & 0x7f;
  b = byte(end);
  value |= (b & 0x7f) << 7;
  if (b < 0x80) return value;
  b = byte(end);
  value |= (b & 0x7f) << 14;
  if (b < 0x80) return value;
  b = byte(end);
  value |= (b & 0x7f) << 21;
  if (b < 0x80) return value;
  b = byte(end);
  value |= (b & 0x0f) << 28;
  if (b < 0x80) return value;
  // Bytes 6 to 10 carry bits above 32: a negative int32 is sign-extended to ten bytes.
  for (let i = 0; i < 5; i++) if (byte(end) < 0x80) return value;
  throw new LeanDecodeError('varint longer than 10 bytes', pos);
}

/** Reads a varint as a signed 64-bit integer, exactly. */
function int64(end: number): bigint {
  let lo = 0;
  let b = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    b = byte(end);
    lo |= (b & 0x7f) << shift;
    if (b < 0x80) return BigInt(lo);
  }
  b = byte(end);
  lo |= (b & 0x0f) << 28;
  let hi = (b & 0x7f) >> 4;
  if (b >= 0x80) {
    for (let shift = 3; ; shift += 7) {
      b = byte(end);
      hi |= (b & 0x7f) << shift;
      if (b < 0x80) break;
      if (shift >= 31) throw new LeanDecodeError('varint longer than 10 bytes', pos);
    }
  }
  return BigInt.asIntN(64, (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0));
}

function byte(end: number): number {
  if (pos >= end) throw new LeanDecodeError('message truncated', pos);
  return buf[pos++] as number;
}

/** Reads a length prefix and checks that many bytes remain before end. */
function length(end: number): number {
  const at = pos;
  const n = varint32(end);
  if (n < 0 || n > end - pos) throw new LeanDecodeError(`length ${n >>> 0} exceeds the ${end - pos} bytes left`, at);
  return n;
}

/** Reads a length prefix and returns where the embedded message it announces ends. */
function messageEnd(end: number): number {
  const n = length(end);
  return pos + n;
}

function string(end: number): string {
  const n = length(end);
  const from = pos;
  pos += n;
  return n === 0 ? '' : buf.utf8Slice(from, pos);
}

/**
 * Skips a field the reader does not keep. A field it keeps (a bit of `kept`) reaches here only
 * with another wire type than its own, and is refused (see the header).
 */
function skipUnkept(tag: number, end: number, kept: number): void {
  const field = tag >>> 3;
  // A wire type that no field may have (4 unopened, 6, 7) is reported as such by skipField.
  if (field < 32 && ((kept >>> field) & 1) === 1 && VALID_FIELD_WIRE_TYPES.has(tag & 7)) {
    throw new LeanDecodeError(`field ${field} has wire type ${tag & 7}, not its own`, pos);
  }
  skipField(tag, end, 0);
}

/** The wire types a field may start with (the protobuf encoding): every one but 4, 6 and 7. */
const VALID_FIELD_WIRE_TYPES: ReadonlySet<number> = new Set([WIRE_VARINT, WIRE_FIXED64, WIRE_LEN, WIRE_START_GROUP, WIRE_FIXED32]);

function skipField(tag: number, end: number, depth: number): void {
  const field = tag >>> 3;
  if (field === 0) throw new LeanDecodeError('field number 0', pos);
  switch (tag & 7) {
    case WIRE_VARINT:
      varint32(end);
      return;
    case WIRE_FIXED64:
      advance(8, end);
      return;
    case WIRE_LEN: {
      const n = length(end);
      pos += n;
      return;
    }
    case WIRE_FIXED32:
      advance(4, end);
      return;
    case WIRE_START_GROUP: {
      if (depth >= MAX_GROUP_DEPTH) throw new LeanDecodeError(`groups nested deeper than ${MAX_GROUP_DEPTH}`, pos);
      for (;;) {
        const inner = varint32(end);
        if ((inner & 7) === WIRE_END_GROUP) {
          if (inner >>> 3 !== field) throw new LeanDecodeError(`group ${field} ended by ${inner >>> 3}`, pos);
          return;
        }
        skipField(inner, end, depth + 1);
      }
    }
    default:
      throw new LeanDecodeError(`invalid wire type ${tag & 7}`, pos);
  }
}

function advance(n: number, end: number): void {
  if (n > end - pos) throw new LeanDecodeError('message truncated', pos);
  pos += n;
}
