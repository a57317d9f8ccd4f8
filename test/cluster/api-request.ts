// One HTTPS request to the cluster's API server (or a component's health port), as a client
// certificate or a bearer token, answered with the status, the headers and the body as text.
//
// The tests read what a client library hides: the status code and reason of a refusal, and the
// API Priority and Fairness headers (X-Kubernetes-PF-FlowSchema-UID) of an answer.
//
// Failure modes: a connection error or no answer within timeoutMs rejects, naming the method and
// URL; any HTTP status resolves (the caller asserts it).
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';

export type Credentials =
  | { readonly kind: 'cert'; readonly cert: string; readonly key: string }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'anonymous' };

export interface ApiRequest {
  readonly url: string;
  readonly method?: string;
  readonly body?: unknown;
  /** Content-Type of a body (default application/json). */
  readonly contentType?: string;
  readonly credentials: Credentials;
  /** The CA (PEM) that signed the server's certificate; undefined skips verification (health probes of self-signed ports). */
  readonly caPem?: string;
  readonly timeoutMs?: number;
}

export interface ApiAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function apiRequest(req: ApiRequest): Promise<ApiAnswer> {
  const method = req.method ?? 'GET';
  const payload = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (payload !== undefined) headers['Content-Type'] = req.contentType ?? 'application/json';
  if (req.credentials.kind === 'token') headers['Authorization'] = `Bearer ${req.credentials.token}`;
  const tls = req.credentials.kind === 'cert' ? { cert: readFileSync(req.credentials.cert), key: readFileSync(req.credentials.key) } : {};
  return new Promise<ApiAnswer>((resolve, reject) => {
    const r = httpsRequest(req.url, {
      method,
      headers,
      ...tls,
      ...(req.caPem === undefined ? { rejectUnauthorized: false } : { ca: req.caPem }),
      timeout: req.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      });
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json });
      });
      res.on('error', reject);
    });
    r.on('timeout', () => r.destroy(new Error(`${method} ${req.url}: no answer within ${req.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`)));
    r.on('error', (err) => reject(new Error(`${method} ${req.url}: ${err.message}`, { cause: err })));
    r.end(payload);
  });
}
