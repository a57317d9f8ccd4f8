// host:port as Go's net.SplitHostPort reads it, for --http-address: `:9356` (every address),
// `0.0.0.0:9356`, `127.0.0.1:0`, `localhost:9356`, `[::1]:9356`, `[::]:9356`. An IPv6 host must
// be in brackets, because its colons would otherwise be ambiguous.
//
// An empty host is the agent's and the controller's default, because it is the one spelling that
// serves every pod network: Node's listen() without a host binds the unspecified IPv6 address
// `::` as a dual-stack socket (libuv clears IPV6_V6ONLY, so IPv4 peers reach it as mapped
// addresses, even where net.ipv6.bindv6only is 1), and falls back to `0.0.0.0` where no IPv6
// socket can be made (a kernel booted with ipv6.disable=1). With IPv6 disabled by sysctl in the
// pod's network namespace the `::` socket is still made and answers IPv4 (test/e2e/dual-stack.test.ts
// holds both cases). `0.0.0.0:9356` would serve IPv4 only, and `[::]:9356` would fail where no
// IPv6 socket can be made.
//
// Failure modes: a missing or non-numeric port, a port past 65535, an IPv6 host without
// brackets, or a host that is neither an IP literal nor a DNS name is `undefined`.
import { isIP } from 'node:net';

export interface HostPort {
  /** The host to listen on; undefined means every interface (`:9356`), as node's listen() reads it. */
  readonly host: string | undefined;
  readonly port: number;
}

const DNS_NAME = /^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*$/;

export function parseHostPort(text: string): HostPort | undefined {
  const colon = text.lastIndexOf(':');
  if (colon < 0) return undefined;
  const portText = text.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port > 65535) return undefined;
  let host = text.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1);
    return isIP(host) === 6 ? { host, port } : undefined;
  }
  if (host === '') return { host: undefined, port };
  if (isIP(host) === 4 || DNS_NAME.test(host)) return { host, port };
  return undefined;
}

/** An address as people write it: `[::]:9356` for IPv6, `0.0.0.0:9356` otherwise (logs, URLs). */
export function formatHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
