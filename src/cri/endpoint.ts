// Which CRI sockets the agent may talk to: the one it is given, or the ones it probes.
//
// Order, as crictl and kubelet users expect it:
//   1. the --cri-endpoint flag (or the config file's criEndpoint), when given;
//   2. the CONTAINER_RUNTIME_ENDPOINT environment variable, when set and not empty;
//   3. otherwise DEFAULT_CRI_ENDPOINTS are probed (endpoint-probe.ts): a socket whose CRI Version
//      answers, or else one that is there but refuses or hangs (a sick runtime).
//
// An endpoint that is given is used as given, never probed, even when its socket does not exist
// yet: the runtime may still be starting, and the client reports `unavailable` until it answers.
//
// Why this probe order (docs/install.md says the same to users):
//   - containerd first: the most common runtime, and the first of crictl's own defaults.
//   - CRI-O second, as crictl orders it.
//   - k3s and RKE2 third: they run their own containerd with its socket under /run/k3s, which
//     crictl does not know. A node that has both a system containerd and k3s's is resolved by
//     the Node's containerRuntimeVersion (endpoint-probe.ts), not by this order.
//   - cri-dockerd last: its socket sits directly in /var/run, a directory the shipped DaemonSet
//     does not mount (mounting /run would hand the agent every socket of the host), so it is
//     found only where a user mounted it. The path is cri-dockerd's own default
//     (`--container-runtime-endpoint`, cmd/cri/options/options.go in Mirantis/cri-dockerd), the
//     one kubeadm and crictl use; /var/run is /run on systemd hosts.
//
// Endpoints are unix sockets: `unix:///path` (as crictl writes them) or a bare absolute path,
// which is turned into the unix:// form. Any other scheme is refused (InvalidCriEndpointError):
// the agent never talks to a runtime over the network.

/** The sockets probed when no endpoint is given, in order (see the header for why). */
export const DEFAULT_CRI_ENDPOINTS: readonly string[] = [
  'unix:///run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///run/k3s/containerd/containerd.sock',
  'unix:///var/run/cri-dockerd.sock',
];

/**
 * The runtime each known socket belongs to, as the Node's containerRuntimeVersion names it
 * (`containerd://…`, `cri-o://…`, `docker://…` with cri-dockerd). Used only for a socket that is
 * there but does not answer, whose runtime cannot say its own name (endpoint-probe.ts).
 */
export const KNOWN_ENDPOINT_RUNTIMES: Readonly<Record<string, string>> = {
  'unix:///run/containerd/containerd.sock': 'containerd',
  'unix:///run/crio/crio.sock': 'cri-o',
  'unix:///run/k3s/containerd/containerd.sock': 'containerd',
  'unix:///var/run/cri-dockerd.sock': 'docker',
};

export interface ConfiguredCriEndpoint {
  /** Always in the unix:///absolute/path form. */
  readonly endpoint: string;
  /** The socket's path on disk. */
  readonly path: string;
  /** What set it, for people: `--cri-endpoint`, `CONTAINER_RUNTIME_ENDPOINT`, `config file …`. */
  readonly source: string;
}

export class NoCriEndpointError extends Error {
  readonly code = 'no_cri_endpoint';
  /** Every endpoint probed, in order. */
  readonly tried: readonly string[];

  /** `why` says what each probed socket did (absent, refused, answered as another runtime). */
  constructor(tried: readonly string[], why: string) {
    super(`criEndpoint: no runtime chosen among ${tried.join(', ')}: ${why}; set --cri-endpoint or CONTAINER_RUNTIME_ENDPOINT to the runtime's socket`);
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

/**
 * The endpoint given by the flag or the environment (flag first), or undefined when neither is
 * set (an empty value counts as unset). Throws InvalidCriEndpointError for a non-unix endpoint.
 */
export function configuredCriEndpoint(options: {
  readonly flag?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}): ConfiguredCriEndpoint | undefined {
  const flag = options.flag;
  if (flag !== undefined && flag !== '') return { ...parseCriEndpoint(flag, 'criEndpoint'), source: '--cri-endpoint' };
  const fromEnv = options.env['CONTAINER_RUNTIME_ENDPOINT'];
  if (fromEnv !== undefined && fromEnv !== '') {
    return { ...parseCriEndpoint(fromEnv, 'CONTAINER_RUNTIME_ENDPOINT'), source: 'CONTAINER_RUNTIME_ENDPOINT' };
  }
  return undefined;
}

/** Normalises `unix:///p` or `/p` to `{ endpoint: 'unix:///p', path: '/p' }`; throws InvalidCriEndpointError otherwise. */
export function parseCriEndpoint(text: string, key = 'criEndpoint'): { endpoint: string; path: string } {
  let path: string | undefined;
  if (text.startsWith('unix://')) path = text.slice('unix://'.length);
  else if (text.startsWith('/')) path = text;
  if (path === undefined || !path.startsWith('/') || path.length < 2) throw new InvalidCriEndpointError(key, text);
  return { endpoint: `unix://${path}`, path };
}
