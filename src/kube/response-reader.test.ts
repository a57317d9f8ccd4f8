// readFrames on chunks given one at a time, so each case cuts the stream exactly where it says
// (over a real socket, writes may arrive joined).
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { KubeApiError } from './kube-api-error.ts';
import { readFrames, type ReadControl } from './response-reader.ts';

const CONTROL: ReadControl = { what: 'WATCH /api/v1/nodes', transportError: (err) => (err instanceof Error ? err : new Error(String(err))) };

/** A length-prefixed frame holding `body`. */
function frame(body: string): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(Buffer.byteLength(body), 0);
  return Buffer.concat([prefix, Buffer.from(body)]);
}

/** Feeds `chunks` to readFrames one 'data' event each; the frames it delivered, and the chunks as they arrived. */
async function framesOf(chunks: Buffer[], maxFrameBytes = 1024): Promise<{ frames: Buffer[]; arrived: Buffer[] }> {
  const response = Object.assign(new PassThrough(), { statusCode: 200 });
  const frames: Buffer[] = [];
  const read = readFrames(response as unknown as IncomingMessage, maxFrameBytes, CONTROL, (f) => frames.push(f));
  // It may fail before every chunk is written; the caller awaits it after.
  read.catch(() => undefined);
  const arrived: Buffer[] = [];
  response.on('data', (chunk: Buffer) => arrived.push(chunk));
  for (const chunk of chunks) {
    response.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
  await read;
  return { frames, arrived };
}

/** `bytes` cut at the given offsets. */
function cut(bytes: Buffer, ...at: number[]): Buffer[] {
  const edges = [0, ...at, bytes.length];
  return edges.slice(1).map((end, i) => bytes.subarray(edges[i], end));
}

test('frames are read whole however the chunks cut them: inside a length prefix, across three chunks, several in one chunk', async () => {
  const stream = Buffer.concat([frame('alpha'), frame('a frame cut in three'), frame(''), frame('b'), frame('c')]);
  // 1 and 2: inside the first prefix; 12: inside the second frame's prefix; 20 and 30: inside
  // that frame; the rest (its end, an empty frame and two more) in one chunk.
  const { frames, arrived } = await framesOf(cut(stream, 1, 3, 12, 20, 30));
  assert.equal(arrived.length, 6, 'precondition: the stream arrived as the six chunks it was cut into');
  assert.deepEqual(frames.map((f) => f.toString()), ['alpha', 'a frame cut in three', '', 'b', 'c']);
});

test('a stream that ends inside a frame or its prefix, or a frame over the bound, is bad_response naming the bytes', async () => {
  const whole = frame('whole');
  const stream = Buffer.concat([whole, frame('cut short')]);
  // The second frame's 4-byte prefix and 6 of its 9 bytes, the chunks cut inside the prefix.
  await assert.rejects(framesOf(cut(stream.subarray(0, stream.length - 3), whole.length + 2)), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'bad_response' && /ended inside an event \(10 bytes of it\)/.test(err.message));
  // Its prefix and nothing after; then half of its prefix.
  await assert.rejects(framesOf(cut(stream.subarray(0, whole.length + 4))), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'bad_response' && /ended inside an event \(4 bytes of it\)/.test(err.message));
  await assert.rejects(framesOf(cut(stream.subarray(0, whole.length + 2))), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'bad_response' && /ended inside an event \(2 bytes of it\)/.test(err.message));
  await assert.rejects(framesOf(cut(frame('x'.repeat(17))), 16), (err: unknown) =>
    err instanceof KubeApiError && err.code === 'bad_response' && /a watch event larger than 16 bytes \(17\)/.test(err.message));
});
