// Fault injection: the next N requests that match a route fail in a chosen way.
//
// A route is `METHOD /path` or `/path` (any method), where `*` matches one path segment and
// `**` any number of them, or an object with a RegExp. Faults are checked in the order they
// were added, before authentication, as a proxy or an overloaded server in front of the API
// would fail. Each matching request uses up one of the fault's `times` (Infinity is allowed).
//
// Actions:
//   status   answer with that code and a Status body (NewGenericServerResponse's wording, or
//            NewTooManyRequests for 429), plus Retry-After when given; `plainText` answers
//            with text instead, as the max-in-flight and APF filters do for their own 429;
//   delay    wait `ms` on the server's clock, then serve the request normally;
//   hang     never answer (the socket is destroyed when the server closes);
//   reset    destroy the connection without an answer (ECONNRESET at the client);
//   nonJson  answer 200 (or `status`) with a body that is not JSON.

export type FaultAction =
  | { readonly kind: 'status'; readonly status: number; readonly retryAfterSeconds?: number; readonly message?: string; readonly plainText?: boolean }
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'nonJson'; readonly status?: number; readonly body?: string };

export type Route = string | { readonly method?: string; readonly path: string | RegExp };

interface Rule {
  readonly method: string | undefined;
  readonly path: RegExp;
  remaining: number;
  readonly action: FaultAction;
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] ?? '';
    if (ch === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (ch === '*') {
      re += '[^/]*';
    } else {
      re += ch.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${re}$`);
}

function parseRoute(route: Route): { method: string | undefined; path: RegExp } {
  if (typeof route === 'string') {
    const m = /^([A-Z]+)\s+(\S+)$/.exec(route.trim());
    if (m !== null) return { method: m[1], path: globToRegExp(m[2] ?? '') };
    return { method: undefined, path: globToRegExp(route.trim()) };
  }
  const path = typeof route.path === 'string' ? globToRegExp(route.path) : route.path;
  return { method: route.method?.toUpperCase(), path };
}

export class FaultInjector {
  readonly #rules: Rule[] = [];

  /** Adds a fault for the next `times` matching requests (default 1). */
  add(route: Route, action: FaultAction, times = 1): void {
    if (!(times > 0)) throw new RangeError(`times: ${times} must be greater than 0`);
    const { method, path } = parseRoute(route);
    this.#rules.push({ method, path, remaining: times, action });
  }

  failNext(times: number, route: Route, status: number, options: { retryAfterSeconds?: number; message?: string; plainText?: boolean } = {}): void {
    this.add(route, { kind: 'status', status, ...options }, times);
  }

  delayNext(times: number, route: Route, ms: number): void {
    this.add(route, { kind: 'delay', ms }, times);
  }

  hangNext(times: number, route: Route): void {
    this.add(route, { kind: 'hang' }, times);
  }

  resetNext(times: number, route: Route): void {
    this.add(route, { kind: 'reset' }, times);
  }

  nonJsonNext(times: number, route: Route, body?: string): void {
    this.add(route, body === undefined ? { kind: 'nonJson' } : { kind: 'nonJson', body }, times);
  }

  /** Removes every pending fault. */
  clear(): void {
    this.#rules.length = 0;
  }

  /** How many fault uses are still pending, over all rules. */
  pending(): number {
    return this.#rules.reduce((n, r) => n + r.remaining, 0);
  }

  /** Takes the first matching fault for a request, or undefined. */
  take(method: string, path: string): FaultAction | undefined {
    const i = this.#rules.findIndex((r) => (r.method === undefined || r.method === method) && r.path.test(path));
    if (i < 0) return undefined;
    const rule = this.#rules[i];
    if (rule === undefined) return undefined;
    rule.remaining--;
    if (rule.remaining <= 0) this.#rules.splice(i, 1);
    return rule.action;
  }
}
