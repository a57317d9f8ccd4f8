// The controller's HTTP endpoints, on the server the agent serves on (http/bounded-server.ts),
// so the controller's port has the same bounds: header size and timeouts, keep-alive, and the
// connection guard that keeps idle connections from starving the probes.
//
// | path     | answers                                                                        |
// |----------|--------------------------------------------------------------------------------|
// | /healthz | 200 while the election loop steps (election/election-health.ts), else 503      |
// |          | naming why; ?verbose lists the check as the agent's /healthz does.              |
// | /metrics | the controller's metrics, Prometheus text or OpenMetrics as Accept asks         |
//
// Every replica serves both, leader or standby: a standby's election loop is as much alive.
import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import { createBoundedServer, textAnswer, type HttpServerOptions } from '../http/bounded-server.ts';
import { renderHealth, type HealthCheck } from '../http/health-report.ts';
import { exposition } from '../metrics/exposition.ts';

export interface ControllerHttpDeps {
  /** The /healthz checks now (the election loop's). */
  checks(): readonly HealthCheck[];
  /** Brings the scrape-time gauges up to date before /metrics is written. */
  collect(): void;
  readonly registry: Registry;
  /** Told about a route that threw (the request got a 500). Must not throw. */
  onError?(err: unknown, path: string): void;
}

export function createControllerServer(deps: ControllerHttpDeps, options: HttpServerOptions = {}): Server {
  return createBoundedServer(
    {
      '/healthz': (query) => {
        const { status, body } = renderHealth('healthz', deps.checks(), query.has('verbose'));
        return textAnswer(status, body);
      },
      '/metrics': async (_query, req) => {
        deps.collect();
        const { contentType, body } = await exposition(deps.registry, req.headers.accept);
        return { status: 200, contentType, body };
      },
    },
    options,
    (err, path) => deps.onError?.(err, path),
  );
}
