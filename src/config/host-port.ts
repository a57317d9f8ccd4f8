// host:port as Go's net.SplitHostPort reads it, for --http-address: `0.0.0.0:9356`,
// `127.0.0.1:0`, `localhost:9356`, `[::1]:9356`, `[::]:9356`, and `:9356` (every interface).
// An IPv6 host must be in brackets, because its colons would otherwise be ambiguous.
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
