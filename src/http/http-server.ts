// The agent's HTTP surface, built but not listening (the caller listens, as with fastify):
//
// | path        | answers                                                                     |
// |-------------|-----------------------------------------------------------------------------|
// | /livez      | 200 while every loop is Alive, or Unknown within the start-up grace; else   |
// |             | 503 naming each failing loop and why. Never reads the runtime's health.     |
// | /readyz     | 200 once started and serving (config loaded, loops started, HTTP up), unless|
// |             | the agent cannot observe the runtime (503, with the ledger's words): a      |
// |             | rollout of a version that cannot observe stops, one on a sick node does not |
// |             | (health-report.ts, readyzChecks).                                           |
// | /healthz    | every check (each loop, the runtime judgement, the lease); ?verbose lists   |
// |             | them as Kubernetes components do. 200 only when all pass.                   |
// | /metrics    | Prometheus text, or OpenMetrics when Accept asks for it.                    |
// | /status     | the StatusSnapshot as JSON.                                                 |
//
// Routing, the 404/405/413/500 answers and every bound (header size and timeouts, keep-alive, the
// connection guard) are the shared server's (bounded-server.ts), which the controller serves on
// too.
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { Liveness } from '../liveness/liveness.ts';
import { exposition } from '../metrics/exposition.ts';
import { createBoundedServer, textAnswer, type HttpServerOptions, type Route } from './bounded-server.ts';
import { livezChecks, renderHealth, type HealthCheck } from './health-report.ts';
import type { StatusSnapshot } from './status-snapshot.ts';

/** What the server reads, as plain functions the agent supplies; each is called per request. */
export interface HttpDeps {
  /** Each loop's liveness row now (relister, lease, Status poller). */
  loops(): readonly Liveness[];
  /** True while the start-up grace for /livez has not run out. */
  withinStartupGrace(): boolean;
  /** The /readyz checks (readyzChecks): started and serving, and the runtime observable. */
  ready(): readonly HealthCheck[];
  /** /healthz checks: each loop, the runtime judgement, the lease. */
  checks(): readonly HealthCheck[];
  status(): StatusSnapshot;
  /** The registry the agent's metrics live on. */
  readonly registry: Registry;
  /** Told about a dependency that threw (the request got a 500). Must not throw. */
  onError?(err: unknown, path: string): void;
}

export const ROUTES = ['/livez', '/readyz', '/healthz', '/metrics', '/status'] as const;

export function createHttpServer(deps: HttpDeps, options: HttpServerOptions = {}): Server {
  const routes: Record<(typeof ROUTES)[number], Route> = {
    '/livez': (query) => {
      const { status, body } = renderHealth('livez', livezChecks(deps.loops(), deps.withinStartupGrace()), query.has('verbose'));
      return textAnswer(status, body);
    },
    '/readyz': (query) => {
      const { status, body } = renderHealth('readyz', deps.ready(), query.has('verbose'));
      return textAnswer(status, body);
    },
    '/healthz': (query) => {
      const { status, body } = renderHealth('healthz', deps.checks(), query.has('verbose'));
      return textAnswer(status, body);
    },
    '/metrics': async (_query, req) => {
      const { contentType, body } = await exposition(deps.registry, req.headers.accept);
      return { status: 200, contentType, body };
    },
    '/status': () => ({ status: 200, contentType: 'application/json; charset=utf-8', body: `${JSON.stringify(deps.status(), null, 2)}\n` }),
  };
  return createBoundedServer(routes, options, (err, path) => deps.onError?.(err, path));
}
