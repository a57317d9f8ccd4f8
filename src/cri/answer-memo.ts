// What the previous answer of one listing held, so that the next answer's unchanged items are
// taken from it instead of being decoded again, and so that an answer whose items all decode as
// before is known to be the same listing.
//
// Why: on a node where nothing moves, every relist receives the same items. Decoding them again
// allocates every id and name string afresh, and the lifecycle diff then walks every item to find
// that nothing moved (docs/bench.md measures both). With this memo an unchanged item costs a walk
// over its field tags and a comparison of a few hundred bytes, and an unchanged listing can skip
// the diff altogether (relister.ts).
//
// What "unchanged" means: an item's SIGNATURE is the sequence of the fields the lean decoder keeps
// (lean-decode.ts: id, metadata, state, created_at, and pod_sandbox_id for a container), each as
// its bytes on the wire, tag included, in the order they came. The decoder's record of an item is
// a function of its signature alone, so two items with equal signatures decode to equal records.
// Whole items cannot be compared: containerd writes labels and annotations from Go maps, whose
// order changes from one answer to the next, and it lists the items themselves in a changing
// order too (seen on containerd 1.6 with 110 pods: no two answers were byte-identical).
//
// How: for each item of the previous answer the memo keeps its signature's byte ranges and its
// record, indexed by a key of its first kept field's leading bytes (the start of a 64-hex id). An
// item of the new answer whose signature equals a previous item's, byte for byte, takes that
// item's record; each previous item is taken at most once. The key only finds candidates: a key
// collision costs a comparison, never a wrong record.
//
// | the new answer's items, against the previous answer's                | contentId             |
// |-----------------------------------------------------------------------|-----------------------|
// | one for one equal signatures, the same count, in any order           | the previous answer's |
// | anything else, or no previous answer, or the last decode failed       | a new one             |
//
// So an answer with the previous answer's content id decodes to the same records, as a multiset.
// Content ids come from one counter for the whole process, so two memos (two clients, or a client
// replaced by another) never hand out the same id for different content.
//
// Assumptions and failure modes:
//   - the previous answer's buffer is kept until the next answer is finished: grpc-js hands each
//     answer to its deserializer in bytes of its own, which it never writes again (a test holds
//     grpc-js to this, runtime-client.test.ts). It costs one answer's bytes of memory per listing;
//   - begin(), then reuse() or remember() for each item in order, then finish(); a decode that
//     throws calls abandon(), and the next answer is decoded in full and gets a new content id;
//   - synchronous, one answer at a time, never re-entered.

let lastContentId = 0;

/** Bytes of the first kept field that go into an item's key, past its tag and length byte. */
const KEY_BYTES = 12;
const KEY_SKIP = 2;
const INITIAL_ITEMS = 64;
/** The key of an item without a signature: keyOf() never returns it, so no lookup finds it. */
const UNMATCHABLE = -1;
const INITIAL_RANGES = 512;

/** One answer's items: their signatures (as ranges of its buffer), records, and a key index. */
class AnswerItems<T> {
  buffer: Buffer | undefined;
  /** The same bytes, for comparisons four at a time. */
  view: DataView | undefined;
  count = 0;
  /** Item i's signature is ranges [firstRange[i], firstRange[i] + rangeCount[i]). */
  firstRange = new Int32Array(INITIAL_ITEMS);
  rangeCount = new Int32Array(INITIAL_ITEMS);
  /** The next item with the same key, or -1. */
  next = new Int32Array(INITIAL_ITEMS);
  /** The round in which the answer after this one took the item. */
  taken = new Uint32Array(INITIAL_ITEMS);
  /** Range r is [bounds[2r], bounds[2r + 1]). */
  bounds = new Int32Array(2 * INITIAL_RANGES);
  ranges = 0;
  records: T[] = [];
  readonly index = new Map<number, number>();

  reset(buffer: Buffer | undefined): void {
    this.buffer = buffer;
    this.view = buffer === undefined ? undefined : new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    this.count = 0;
    this.ranges = 0;
    this.records.length = 0;
    this.index.clear();
  }

  add(key: number, signature: readonly number[], rangeCount: number, record: T): void {
    const i = this.count;
    if (i === this.firstRange.length) this.#growItems();
    while (2 * (this.ranges + rangeCount) > this.bounds.length) this.bounds = grown(this.bounds);
    this.firstRange[i] = this.ranges;
    this.rangeCount[i] = rangeCount;
    for (let r = 0; r < 2 * rangeCount; r++) this.bounds[2 * this.ranges + r] = signature[r] as number;
    this.ranges += rangeCount;
    this.taken[i] = 0;
    this.next[i] = this.index.get(key) ?? -1;
    this.index.set(key, i);
    this.records[i] = record;
    this.count = i + 1;
  }

  #growItems(): void {
    this.firstRange = grown(this.firstRange);
    this.rangeCount = grown(this.rangeCount);
    this.next = grown(this.next);
    this.taken = grown(this.taken);
  }
}

function grown<A extends Int32Array | Uint32Array>(from: A): A {
  const to = new (from.constructor as new (n: number) => A)(from.length * 2);
  to.set(from);
  return to;
}

export class AnswerMemo<T> {
  /**
   * The signature of the item being read, filled by the decoder: range r is
   * [signature[2r], signature[2r + 1]) of the current answer's buffer.
   */
  readonly signature: number[] = [];
  #previous = new AnswerItems<T>();
  #current = new AnswerItems<T>();
  #round = 0;
  #matched = 0;
  #contentId = 0;

  /** The content id of the last finished answer (0 before the first). */
  get contentId(): number {
    return this.#contentId;
  }

  /** Starts a new answer held in `bytes`. */
  begin(bytes: Buffer): void {
    this.#current.reset(bytes);
    this.#matched = 0;
    this.#round = (this.#round + 1) >>> 0 || 1;
  }

  /**
   * The record of a previous item, not yet taken, whose signature equals the current item's
   * (the first `rangeCount` ranges of `signature`), or undefined.
   */
  reuse(rangeCount: number): T | undefined {
    const previous = this.#previous;
    const old = previous.view;
    const current = this.#current;
    const bytes = current.buffer;
    const view = current.view;
    if (old === undefined || bytes === undefined || view === undefined || rangeCount === 0) return undefined;
    const signature = this.signature;
    const key = keyOf(bytes, signature, rangeCount);
    for (let i = previous.index.get(key) ?? -1; i >= 0; i = previous.next[i] as number) {
      if (previous.taken[i] === this.#round || previous.rangeCount[i] !== rangeCount) continue;
      if (!sameSignature(old, previous.bounds, previous.firstRange[i] as number, view, signature, rangeCount)) continue;
      previous.taken[i] = this.#round;
      this.#matched++;
      const record = previous.records[i] as T;
      current.add(key, signature, rangeCount, record);
      return record;
    }
    return undefined;
  }

  /**
   * Records a freshly decoded item of the current answer, whose signature the decoder filled; a
   * rangeCount below 1 (no signature) counts the item but no later item can take its record.
   */
  remember(rangeCount: number, record: T): void {
    const current = this.#current;
    if (current.buffer === undefined) return;
    if (rangeCount < 1) current.add(UNMATCHABLE, this.signature, 0, record);
    else current.add(keyOf(current.buffer, this.signature, rangeCount), this.signature, rangeCount, record);
  }

  /** Ends the current answer; returns its content id (see the header's table). */
  finish(): number {
    const previous = this.#previous;
    const current = this.#current;
    const same = previous.buffer !== undefined && this.#matched === current.count && current.count === previous.count;
    if (!same) this.#contentId = ++lastContentId;
    this.#previous = current;
    this.#current = previous;
    previous.reset(undefined);
    return this.#contentId;
  }

  /** Forgets everything: the answer being decoded failed. */
  abandon(): void {
    this.#previous.reset(undefined);
    this.#current.reset(undefined);
  }
}

function keyOf(bytes: Buffer, signature: readonly number[], rangeCount: number): number {
  const start = signature[0] as number;
  const end = signature[1] as number;
  let h = rangeCount * 0x10001 + (end - start);
  const to = Math.min(end, start + KEY_SKIP + KEY_BYTES);
  for (let i = start + KEY_SKIP; i < to; i++) h = (Math.imul(h, 31) + (bytes[i] as number)) | 0;
  return h & 0x3fffffff;
}

/** Whether `rangeCount` ranges of `old` (from bounds[2·first]) hold the bytes of the signature's ranges in `bytes`. */
function sameSignature(old: DataView, bounds: Int32Array, first: number, bytes: DataView, signature: readonly number[], rangeCount: number): boolean {
  for (let r = 0; r < rangeCount; r++) {
    const from = bounds[2 * (first + r)] as number;
    const length = (bounds[2 * (first + r) + 1] as number) - from;
    const at = signature[2 * r] as number;
    if ((signature[2 * r + 1] as number) - at !== length) return false;
    // Four bytes at a time, then the rest one by one.
    const words = length & ~3;
    let k = 0;
    for (; k < words; k += 4) if (old.getUint32(from + k) !== bytes.getUint32(at + k)) return false;
    for (; k < length; k++) if (old.getUint8(from + k) !== bytes.getUint8(at + k)) return false;
  }
  return true;
}
