// Authentication and authorization of the stand-in, both changeable while it runs.
//
// Authentication: a client certificate the TLS handshake verified comes first, as the real
// server's x509 authenticator runs before its token authenticators: the user is its CN. Then
// bearer tokens, as the token-file authenticator: with no token table configured, every other
// request is user `system:admin`. With one, a request whose bearer token is
// not in the table gets 401, except that a request with no token at all may read the
// non-resource paths /version, /healthz, /livez and /readyz, which the default RBAC grants to
// system:unauthenticated (system:public-info-viewer).
//
// Authorization: allow-all by default. Once rules are set, a resource request is allowed only
// when some rule matches user, verb, resource (`nodes/status` for a subresource), namespace and
// name; `*` matches anything. Discovery and other non-resource requests are always allowed, as
// system:discovery allows them to every authenticated user. A denial is 403 Forbidden with
// the message ForbiddenStatusError writes (endpoints/handlers/responsewriters/errors.go).

export interface AccessRule {
  /** The user it applies to; every user when absent. */
  readonly user?: string;
  readonly verbs: readonly string[];
  /** Plural resources, `nodes/status` for a subresource, or `*`. */
  readonly resources: readonly string[];
  readonly namespaces?: readonly string[];
  readonly names?: readonly string[];
}

export interface ResourceAttributes {
  readonly user: string;
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
}

export const ADMIN_USER = 'system:admin';

const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);

export type AuthnResult = { readonly ok: true; readonly user: string } | { readonly ok: false };

/** The run-time-changeable auth settings, exposed on the server handle as `auth`. */
export class AuthSettings {
  #tokens: Map<string, string> | undefined;
  #rules: AccessRule[] | undefined;

  constructor(options: { tokens?: Readonly<Record<string, string>>; rules?: readonly AccessRule[] } = {}) {
    this.#tokens = options.tokens === undefined ? undefined : new Map(Object.entries(options.tokens));
    this.#rules = options.rules === undefined ? undefined : [...options.rules];
  }

  /** Replaces the token table (token → user name); undefined turns authentication off. */
  setTokens(tokens: Readonly<Record<string, string>> | undefined): void {
    this.#tokens = tokens === undefined ? undefined : new Map(Object.entries(tokens));
  }

  /** Replaces the authorization rules; undefined allows everything. */
  setRules(rules: readonly AccessRule[] | undefined): void {
    this.#rules = rules === undefined ? undefined : [...rules];
  }

  /** certificateUser: the CN of a verified client certificate, if the request came with one. */
  authenticate(authorization: string | undefined, path: string, certificateUser?: string): AuthnResult {
    if (certificateUser !== undefined) return { ok: true, user: certificateUser };
    if (this.#tokens === undefined) return { ok: true, user: ADMIN_USER };
    const m = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m === null) {
      if (authorization === undefined && PUBLIC_PATHS.has(path)) return { ok: true, user: 'system:anonymous' };
      return { ok: false };
    }
    const user = this.#tokens.get(m[1] ?? '');
    return user === undefined ? { ok: false } : { ok: true, user };
  }

  authorize(a: ResourceAttributes): boolean {
    if (this.#rules === undefined) return true;
    const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
    return this.#rules.some((r) =>
      (r.user === undefined || r.user === a.user) &&
      matches(r.verbs, a.verb) &&
      matches(r.resources, resource) &&
      (r.namespaces === undefined || matches(r.namespaces, a.namespace)) &&
      (r.names === undefined || matches(r.names, a.name)));
  }
}

function matches(allowed: readonly string[], value: string): boolean {
  return allowed.includes('*') || allowed.includes(value);
}

/** ForbiddenStatusError's reason text: `User "u" cannot patch resource "leases" in API group "..." in the namespace "ns"`. */
export function forbiddenReason(a: ResourceAttributes): string {
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  let msg = `User "${a.user}" cannot ${a.verb} resource "${resource}"`;
  msg += a.namespace !== ''
    ? ` in API group "${a.group}" in the namespace "${a.namespace}"`
    : ` in API group "${a.group}" at the cluster scope`;
  return msg;
}
