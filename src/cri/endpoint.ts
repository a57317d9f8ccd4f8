// Which CRI socket the agent talks to.
//
// Order, as crictl and kubelet users expect it:
//   1. the --cri-endpoint flag, when given;
//   2. the CONTAINER_RUNTIME_ENDPOINT environment variable, when set and not empty;
//   3. the first of DEFAULT_CRI_ENDPOINTS whose socket file exists (containerd, CRI-O,
//      cri-dockerd: the three runtimes crictl probes).
//
// An endpoint named by the flag or the environment is used as given, even when its socket does
// not exist yet: the runtime may still be starting, and the client reports `unavailable` until it
// answers. Only the defaults are probed. When none of them exists, resolution fails with
// NoCriEndpointError, whose message lists every path tried.
//
// Endpoints are unix sockets: `unix:///path` (as crictl writes them) or a bare absolute path,
// which is turned into the unix:// form. Any other scheme is refused (InvalidCriEndpointError):
// the agent never talks to a runtime over the network.
//
// The candidate list and the existence check are injectable, so the table test never touches
// the machine's sockets.
import { statSync } from 'node:fs';

/** The sockets tried when no endpoint is configured, in order. */
export const DEFAULT_CRI_ENDPOINTS: readonly string[] = [
  'unix:///run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/cri-dockerd.sock',
];

export type CriEndpointSource = 'flag' | 'env' | 'default';

export interface ResolvedCriEndpoint {
  /** Always in the unix:///absolute/path form. */
  readonly endpoint: string;
  /** The socket's path on disk. */
  readonly path: string;
  readonly source: CriEndpointSource;
}

export interface ResolveCriEndpointOptions {
  /** The value of --cri-endpoint, if given. */
  readonly flag?: string | undefined;
  /** The environment to read CONTAINER_RUNTIME_ENDPOINT from; defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Replaces DEFAULT_CRI_ENDPOINTS (tests). */
  readonly candidates?: readonly string[];
  /** Replaces the check that a socket path exists (tests). */
  readonly exists?: (path: string) => boolean;
}

export class NoCriEndpointError extends Error {
  readonly code = 'no_cri_endpoint';
  /** Every endpoint tried, in order. */
  readonly tried: readonly string[];

  constructor(tried: readonly string[]) {
    super(
      `criEndpoint: none of ${tried.join(', ')} exists; ` +
        'set --cri-endpoint or CONTAINER_RUNTIME_ENDPOINT to the runtime\'s socket',
    );
    this.name = 'NoCriEndpointError';
    this.tried = tried;
  }
}

export class InvalidCriEndpointError extends Error {
  readonly code = 'invalid_cri_endpoint';
  readonly endpoint: string;

  constructor(key: string, endpoint: string) {
    super(`${key}: ${JSON.stringify(endpoint)} must be unix:///absolute/path or an absolute path`);
    this.name = 'InvalidCriEndpointError';
    this.endpoint = endpoint;
  }
}

/** Picks the endpoint (see the module header for the order). Throws NoCriEndpointError or InvalidCriEndpointError. */
export function resolveCriEndpoint(options: ResolveCriEndpointOptions = {}): ResolvedCriEndpoint {
  const flag = options.flag;
  if (flag !== undefined && flag !== '') return { ...parseCriEndpoint(flag, 'criEndpoint'), source: 'flag' };
  const fromEnv = (options.env ?? process.env)['CONTAINER_RUNTIME_ENDPOINT'];
  if (fromEnv !== undefined && fromEnv !== '') {
    return { ...parseCriEndpoint(fromEnv, 'CONTAINER_RUNTIME_ENDPOINT'), source: 'env' };
  }
  const exists = options.exists ?? socketExists;
  const candidates = options.candidates ?? DEFAULT_CRI_ENDPOINTS;
  for (const candidate of candidates) {
    const parsed = parseCriEndpoint(candidate, 'criEndpoint');
    if (exists(parsed.path)) return { ...parsed, source: 'default' };
  }
  throw new NoCriEndpointError(candidates);
}

/** Normalises `unix:///p` or `/p` to `{ endpoint: 'unix:///p', path: '/p' }`; throws InvalidCriEndpointError otherwise. */
export function parseCriEndpoint(text: string, key = 'criEndpoint'): { endpoint: string; path: string } {
  let path: string | undefined;
  if (text.startsWith('unix://')) path = text.slice('unix://'.length);
  else if (text.startsWith('/')) path = text;
  if (path === undefined || !path.startsWith('/') || path.length < 2) throw new InvalidCriEndpointError(key, text);
  return { endpoint: `unix://${path}`, path };
}

function socketExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}
