// Reading an API server's answer off a node:http response, three ways, all bounded:
// - readBytes / readBody: the whole body, at most maxBytes (a plain request, or an error answer);
// - readJsonLines: one JSON value per line as it streams (a JSON watch), at most maxLineBytes a
//   line;
// - readFrames: one frame per event as it streams (a protobuf watch: a 4-byte big-endian length,
//   then that many bytes), at most maxFrameBytes a frame.
//
// Failure modes: a body, a line or a frame over its bound, a line that is not JSON, or a stream
// that ends inside a frame, rejects with a KubeApiError 'bad_response' and destroys the response; a stream error or an aborted response
// rejects with what `transportError` maps it to (the caller knows whether its timer or its caller
// aborted it). A callback that throws ends the stream with its error.
import type { IncomingMessage } from 'node:http';
import { errorFromBadBody, KubeApiError } from './kube-api-error.ts';

export interface ReadControl {
  /** What was asked, for errors ("WATCH /api/v1/nodes"). */
  readonly what: string;
  /** Called for every chunk that arrives (a watch restarts its idle timer here). */
  readonly onData?: () => void;
  /** Maps a stream error or an aborted response to the error to reject with. */
  readonly transportError: (err: unknown) => Error;
}

export async function readBody(response: IncomingMessage, maxBytes: number, control: ReadControl): Promise<string> {
  return (await readBytes(response, maxBytes, control)).toString('utf8');
}

export function readBytes(response: IncomingMessage, maxBytes: number, control: ReadControl): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      control.onData?.();
      size += chunk.length;
      if (size > maxBytes) {
        // Reject first: destroying the response emits its own error, which must lose.
        reject(errorFromBadBody(control.what, response.statusCode ?? 0, `(a body larger than ${maxBytes} bytes)`));
        response.destroy();
        return;
      }
      chunks.push(chunk);
    });
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', (err) => reject(control.transportError(err)));
    response.on('aborted', () => reject(control.transportError(new Error('response aborted'))));
  });
}

/**
 * What a streamed read (a watch) shares, whatever its framing: each chunk restarts the idle timer
 * and goes to onChunk; the end goes to onEnd; a failure rejects once and destroys the response.
 * `fail` is handed to both, and a callback of the caller that throws fails the read with its error.
 */
function readStream(
  response: IncomingMessage,
  control: ReadControl,
  onChunk: (chunk: Buffer, fail: (err: Error) => void) => void,
  onEnd: (fail: (err: Error) => void) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      reject(err);
      response.destroy();
    };
    response.on('data', (chunk: Buffer) => {
      control.onData?.();
      if (!failed) onChunk(chunk, fail);
    });
    response.on('end', () => {
      if (failed) return;
      onEnd(fail);
      if (!failed) resolve();
    });
    response.on('error', (err) => fail(control.transportError(err)));
    response.on('aborted', () => fail(control.transportError(new Error('response aborted'))));
  });
}

/** Calls `callback`; what it throws fails the read. Returns whether it returned. */
function deliver(callback: () => void, fail: (err: Error) => void): boolean {
  try {
    callback();
    return true;
  } catch (err) {
    fail(err instanceof Error ? err : new Error(String(err)));
    return false;
  }
}

export function readJsonLines(response: IncomingMessage, maxLineBytes: number, control: ReadControl, onValue: (value: unknown) => void): Promise<void> {
  const status = response.statusCode ?? 0;
  const { what } = control;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  /** One line: parsed and given to onValue; false once the read failed. */
  const line = (bytes: Buffer, fail: (err: Error) => void): boolean => {
    if (bytes.length === 0) return true;
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      fail(new KubeApiError('bad_response', `${what}: a watch line that is not JSON`, { status, what, cause: err }));
      return false;
    }
    return deliver(() => onValue(value), fail);
  };
  return readStream(response, control, (chunk, fail) => {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      const part = chunk.subarray(start, i);
      const ok = line(pending.length === 0 ? part : Buffer.concat([...pending, part]), fail);
      pending = [];
      pendingBytes = 0;
      start = i + 1;
      if (!ok) return;
    }
    if (start >= chunk.length) return;
    pending.push(chunk.subarray(start));
    pendingBytes += chunk.length - start;
    if (pendingBytes > maxLineBytes) fail(new KubeApiError('bad_response', `${what}: a watch event larger than ${maxLineBytes} bytes`, { status, what }));
  }, (fail) => {
    if (pendingBytes > 0) line(Buffer.concat(pending), fail);
  });
}

/** The length prefix of a protobuf watch frame. */
const FRAME_PREFIX_BYTES = 4;

export function readFrames(response: IncomingMessage, maxFrameBytes: number, control: ReadControl, onFrame: (frame: Buffer) => void): Promise<void> {
  const status = response.statusCode ?? 0;
  const { what } = control;
  // The chunks of the frame being read, joined once it is whole (a large event arrives in many).
  let chunks: Buffer[] = [];
  let size = 0;
  /** The frame's length once its prefix is in; -1 before. */
  let length = -1;
  return readStream(response, control, (chunk, fail) => {
    chunks.push(chunk);
    size += chunk.length;
    while (size >= FRAME_PREFIX_BYTES) {
      if (length < 0) {
        const head = (chunks[0] as Buffer).length >= FRAME_PREFIX_BYTES ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
        length = head.readUInt32BE(0);
        if (length > maxFrameBytes) {
          fail(new KubeApiError('bad_response', `${what}: a watch event larger than ${maxFrameBytes} bytes (${length})`, { status, what }));
          return;
        }
      }
      if (size < FRAME_PREFIX_BYTES + length) return;
      const all = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      const frame = all.subarray(FRAME_PREFIX_BYTES, FRAME_PREFIX_BYTES + length);
      const rest = all.subarray(FRAME_PREFIX_BYTES + length);
      chunks = rest.length === 0 ? [] : [rest];
      size = rest.length;
      length = -1;
      if (!deliver(() => onFrame(frame), fail)) return;
    }
  }, (fail) => {
    if (size > 0) fail(new KubeApiError('bad_response', `${what}: the watch ended inside an event (${size} bytes of it)`, { status, what }));
  });
}
