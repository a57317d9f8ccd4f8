// A tiny loopback HTTP JSON API that scripts a running simulated runtime from outside its
// process (the benchmark, the soak, the demo, shell scripts with curl).
//
// | request                                              | effect                                       |
// |------------------------------------------------------|----------------------------------------------|
// | GET  /calls                                          | calls(): received/answered/failed/cancelled  |
// | GET  /state                                          | counts(): sandboxes and containers by state  |
// | GET  /faults                                         | the faults still armed                       |
// | POST /faults {method, code, count?, message?}        | the next `count` calls of method fail        |
// | POST /faults {method, delayMs, count?}               | ... are answered after delayMs               |
// | POST /faults {method, hang: true, count?}            | ... are accepted and never answered          |
// | POST /faults {method, malformed: true, count?}       | ... are answered with bytes no client can    |
// |                                                      | decode (sim-faults.ts, MALFORMED_ANSWER)     |
// | POST /faults {oversizeBytes: n}                      | listings padded past n bytes (null: stop)    |
// | POST /clear                                          | faults and padding cleared; hung calls answer |
// | POST /pods {pods, containersPerPod}                  | state replaced by pods × containersPerPod    |
// | POST /step {count?}                                  | one churn step                               |
// | POST /conditions {runtimeReady?, networkReady?}      | what Status reports                          |
//
// Every answer is JSON: 200 with the result, 400 {error} for a bad request (one line per
// problem, `key: value must be rule`), 404 for an unknown route. Request bodies are capped at
// MAX_BODY_BYTES. It listens on loopback only; a non-loopback host is refused.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimFault } from './sim-faults.ts';
import type { SimRuntime } from './sim-runtime.ts';

export const MAX_BODY_BYTES = 64 * 1024;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

export interface SimControl {
  /** http://host:port */
  readonly url: string;
  close(): Promise<void>;
}

class BadRequest extends Error {}

export async function startSimControl(sim: SimRuntime, options: { host?: string; port?: number } = {}): Promise<SimControl> {
  const host = options.host ?? '127.0.0.1';
  if (!LOOPBACK_HOSTS.has(host)) throw new RangeError(`control: host ${host} must be a loopback address (127.0.0.1, ::1, localhost)`);
  const server = createServer((req, res) => {
    route(sim, req)
      .then((result) => reply(res, 200, result))
      .catch((err: unknown) => {
        if (err instanceof BadRequest || err instanceof RangeError) reply(res, 400, { error: err.message });
        else if (err instanceof NotFound) reply(res, 404, { error: err.message });
        else reply(res, 500, { error: err instanceof Error ? err.message : String(err) });
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

class NotFound extends Error {}

async function route(sim: SimRuntime, req: IncomingMessage): Promise<unknown> {
  const path = (req.url ?? '/').split('?')[0];
  const key = `${req.method ?? 'GET'} ${path}`;
  switch (key) {
    case 'GET /calls':
      return sim.calls();
    case 'GET /state':
      return sim.counts();
    case 'GET /faults':
      return sim.activeFaults();
    case 'POST /faults': {
      const body = await readJson(req);
      if ('oversizeBytes' in body) {
        const bytes = body['oversizeBytes'];
        if (bytes !== null && typeof bytes !== 'number') throw new BadRequest('oversizeBytes: must be a number or null');
        sim.setOversize(bytes === null ? undefined : bytes);
        return { oversizeBytes: bytes };
      }
      sim.addFault(body as unknown as SimFault);
      return { faults: sim.activeFaults() };
    }
    case 'POST /clear':
      sim.clearFaults();
      sim.setOversize(undefined);
      return { cleared: true };
    case 'POST /pods': {
      const body = await readJson(req);
      const pods = body['pods'];
      const containersPerPod = body['containersPerPod'];
      if (typeof pods !== 'number' || typeof containersPerPod !== 'number') {
        throw new BadRequest('pods, containersPerPod: must both be numbers');
      }
      sim.setPods(pods, containersPerPod);
      return sim.counts();
    }
    case 'POST /step': {
      const body = await readJson(req);
      const count = body['count'] ?? 1;
      if (typeof count !== 'number') throw new BadRequest('count: must be a number');
      sim.step(count);
      return sim.counts();
    }
    case 'POST /conditions': {
      const body = await readJson(req);
      const conditions: { runtimeReady?: boolean; networkReady?: boolean } = {};
      for (const name of ['runtimeReady', 'networkReady'] as const) {
        const value = body[name];
        if (value === undefined) continue;
        if (typeof value !== 'boolean') throw new BadRequest(`${name}: must be true or false`);
        conditions[name] = value;
      }
      sim.setConditions(conditions);
      return conditions;
    }
    default:
      throw new NotFound(`route: ${key} must be one of GET /calls, GET /state, GET /faults, POST /faults, POST /clear, POST /pods, POST /step, POST /conditions`);
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const piece = chunk as Buffer;
    size += piece.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`body: must be at most ${MAX_BODY_BYTES} bytes`);
    chunks.push(piece);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BadRequest('body: must be JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new BadRequest('body: must be a JSON object');
  return value as Record<string, unknown>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
