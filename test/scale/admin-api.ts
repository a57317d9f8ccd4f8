// The load script's own API client: the admin's client certificate over keep-alive connections,
// so thousands of writes reuse a few TLS sessions (test/cluster/api-request.ts opens a connection
// per request, which is right for a test's handful of requests and too slow for 10,000 objects).
//
// Every request has a timeout; any HTTP status resolves (the caller decides), a transport error
// rejects naming the method and path. pool() runs a list of jobs with at most `concurrency` in
// flight, so a load never opens more connections than that.
import { readFileSync } from 'node:fs';
import https from 'node:https';

export interface Answer {
  readonly status: number;
  readonly json: unknown;
  readonly body: string;
}

export interface AdminApi {
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<Answer>;
  close(): void;
}

const TIMEOUT_MS = 60_000;

export function adminApi(options: { readonly server: string; readonly caPem: string; readonly cert: string; readonly key: string; readonly maxSockets: number }): AdminApi {
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: options.maxSockets,
    ca: options.caPem,
    cert: readFileSync(options.cert),
    key: readFileSync(options.key),
  });
  return {
    request(method, path, body, contentType = 'application/json') {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string> = { accept: 'application/json' };
      if (payload !== undefined) {
        headers['content-type'] = contentType;
        headers['content-length'] = String(payload.length);
      }
      return new Promise<Answer>((resolve, reject) => {
        const req = https.request(`${options.server}${path}`, { method, headers, agent, timeout: TIMEOUT_MS }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode ?? 0, json, body: text });
          });
          res.on('error', reject);
        });
        req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${TIMEOUT_MS} ms`)));
        req.on('error', (err) => reject(new Error(`${method} ${path}: ${err.message}`, { cause: err })));
        req.end(payload);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** Runs every job, at most `concurrency` at a time; rejects with the first failure after all settle. */
export async function pool<T>(items: readonly T[], concurrency: number, job: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        await job(items[i] as T, i);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure !== undefined) throw failure;
}
