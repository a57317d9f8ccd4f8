// What the request core asks of credentials, wherever they come from: a connection (an Agent
// holding the TLS material: CA, client certificate, server name) and the headers of the next
// request (Authorization). Two implementations:
//
// | implementation                 | used by                                | credentials                        |
// |--------------------------------|----------------------------------------|------------------------------------|
// | leanAuth (lean-auth.ts), by    | the agent in a pod, a reader in a pod  | service-account token file and CA  |
// | inClusterAuth (in-cluster.ts)  | with no kubeconfig                     |                                    |
// | leanAuth (lean-auth.ts)        | tests and the demo, against a server   | an inline token or a token file,   |
// |                                | reached directly                       | and a CA                           |
// | kubeConfigAuth                 | fleet, controller, the kubectl plugin, | anything a kubeconfig holds, read  |
// | (kubeconfig-auth.ts)           | and the agent given a kubeconfig file  | by @kubernetes/client-node         |
//
// pick-kube-auth.ts is the one picker between them for the commands.
//
// Credentials are asked for before EVERY request, because they change under a running process:
// a projected token file rotates, an exec plugin's token expires. After a 401 the core tells the
// credentials, which drop what they cached so that the caller's retry carries fresh ones, as
// client-go resets its token source and its exec authenticator on a 401.
import type { Agent } from 'node:http';

export interface PreparedRequest {
  readonly agent: Agent;
  /** Headers to send (Authorization, Impersonate-User). Never logged, never put in an error. */
  readonly headers: Readonly<Record<string, string>>;
  /** Basic auth as node:http's `auth` option ("user:password"), if the credentials use it. */
  readonly basicAuth?: string | undefined;
}

export interface KubeAuth {
  /** The API server's base URL, without a trailing slash. Never holds credentials. */
  readonly server: string;
  /** Where the credentials came from, for the start-up log: "in-cluster", "kubeconfig /x (context y)". */
  readonly source: string;
  /** The connection and headers for the next request. Rejects when no credentials can be had (an exec plugin failed). */
  prepare(): Promise<PreparedRequest>;
  /**
   * A request prepared by `prepared` was answered 401: drop cached credentials so the next
   * prepare() reads them afresh. Resolves with why the credentials may be wrong, if known
   * (e.g. "token file /x could not be read: …"); never with a secret. Never rejects.
   */
  unauthorized(prepared: PreparedRequest): Promise<string | undefined>;
  /** Destroys the connections; requests in flight fail. */
  close(): void;
}
