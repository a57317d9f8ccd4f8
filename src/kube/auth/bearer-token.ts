// The bearer token the client sends: inline, or read from a file that is re-read every 60 s and
// at once after a 401, as client-go's cached file token source does for projected
// service-account tokens (they rotate hourly; kubelet refreshes the file well before expiry).
//
// Failure modes: a token file that cannot be read keeps the last token that was read (a
// rotation in progress must not drop a still-valid token) and records why; with no token ever
// read, requests go without Authorization and the server answers 401, whose error names the
// file problem. The token itself lives only in a private field: it is never logged, never put in
// an error, and never reachable from an object a logger might serialise.
import { open } from 'node:fs/promises';
import type { Clock } from '../../clock/clock.ts';

/** Upstream re-reads a token file at most once a minute (client-go transport.NewCachedFileTokenSource). */
export const TOKEN_REREAD_MS = 60_000;

/** A token file larger than this is not a token. */
const MAX_TOKEN_BYTES = 64 * 1024;

export interface BearerTokenOptions {
  readonly clock: Clock;
  readonly token?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly rereadMs?: number;
}

export class BearerToken {
  readonly #clock: Clock;
  readonly #file: string | undefined;
  readonly #rereadMs: number;
  #token: string | undefined;
  #readAtMs: number | undefined;
  #reading: Promise<boolean> | undefined;
  #problem: string | undefined;

  constructor(options: BearerTokenOptions) {
    this.#clock = options.clock;
    this.#file = options.tokenFile;
    this.#rereadMs = options.rereadMs ?? TOKEN_REREAD_MS;
    this.#token = options.tokenFile === undefined ? options.token : undefined;
  }

  /** The file the token comes from, if any (a path, never the token). */
  get file(): string | undefined {
    return this.#file;
  }

  /** Why the last read of the token file failed, or undefined. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** The Authorization header value, or undefined when there is no token. */
  async header(): Promise<string | undefined> {
    if (this.#file !== undefined && (this.#readAtMs === undefined || this.#clock.monotonicMs() - this.#readAtMs >= this.#rereadMs)) {
      await this.reload();
    } else if (this.#reading !== undefined) {
      // A read started by a concurrent request (or a 401) is in flight: wait for it, or the very
      // first requests of several loops go out with no token at all and meet a 401.
      await this.#reading;
    }
    return this.#token === undefined ? undefined : `Bearer ${this.#token}`;
  }

  /** Re-reads the token file now. Resolves true when the token changed. Never rejects. */
  reload(): Promise<boolean> {
    if (this.#file === undefined) return Promise.resolve(false);
    this.#reading ??= this.#read(this.#file).finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  async #read(file: string): Promise<boolean> {
    this.#readAtMs = this.#clock.monotonicMs();
    try {
      const handle = await open(file, 'r');
      let text: string;
      try {
        const buffer = Buffer.alloc(MAX_TOKEN_BYTES + 1);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        if (bytesRead > MAX_TOKEN_BYTES) throw new Error(`larger than ${MAX_TOKEN_BYTES} bytes`);
        text = buffer.subarray(0, bytesRead).toString('utf8').trim();
      } finally {
        await handle.close();
      }
      if (text === '') throw new Error('empty');
      this.#problem = undefined;
      const changed = text !== this.#token;
      this.#token = text;
      return changed;
    } catch (err) {
      this.#problem = `token file ${file} could not be read: ${(err as Error).message}`;
      return false;
    }
  }
}
