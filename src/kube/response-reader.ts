// Reading an API server's answer off a node:http response, two ways, both bounded:
// - readBody: the whole body, at most maxBytes (a plain request, or an error answer);
// - readJsonLines: one JSON value per line as it streams (a watch), at most maxLineBytes a line.
//
// Failure modes: a body or a line over its bound, or a line that is not JSON, rejects with a
// KubeApiError 'bad_response' and destroys the response; a stream error or an aborted response
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

export function readBody(response: IncomingMessage, maxBytes: number, control: ReadControl): Promise<string> {
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
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', (err) => reject(control.transportError(err)));
    response.on('aborted', () => reject(control.transportError(new Error('response aborted'))));
  });
}

export function readJsonLines(response: IncomingMessage, maxLineBytes: number, control: ReadControl, onValue: (value: unknown) => void): Promise<void> {
  const status = response.statusCode ?? 0;
  const { what } = control;
  return new Promise<void>((resolve, reject) => {
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let failed = false;
    const fail = (err: Error): void => {
      if (failed) return;
      failed = true;
      reject(err);
      response.destroy();
    };
    const line = (bytes: Buffer): void => {
      if (bytes.length === 0) return;
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString('utf8'));
      } catch (err) {
        fail(new KubeApiError('bad_response', `${what}: a watch line that is not JSON`, { status, what, cause: err }));
        return;
      }
      try {
        onValue(value);
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      }
    };
    response.on('data', (chunk: Buffer) => {
      control.onData?.();
      let start = 0;
      for (let i = chunk.indexOf(10); i !== -1 && !failed; i = chunk.indexOf(10, start)) {
        const part = chunk.subarray(start, i);
        line(pending.length === 0 ? part : Buffer.concat([...pending, part]));
        pending = [];
        pendingBytes = 0;
        start = i + 1;
      }
      if (failed || start >= chunk.length) return;
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxLineBytes) fail(new KubeApiError('bad_response', `${what}: a watch event larger than ${maxLineBytes} bytes`, { status, what }));
    });
    response.on('end', () => {
      if (failed) return;
      if (pendingBytes > 0) line(Buffer.concat(pending));
      if (!failed) resolve();
    });
    response.on('error', (err) => fail(control.transportError(err)));
    response.on('aborted', () => fail(control.transportError(new Error('response aborted'))));
  });
}
