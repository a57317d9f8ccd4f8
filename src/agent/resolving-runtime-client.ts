// A RuntimeClient that keeps looking for the runtime's socket.
//
// The agent must never exit because the runtime is absent at start (only `nodepulse check`
// does): on a booting node the agent can come up before containerd. When the endpoint was not
// configured, every call re-probes the default sockets until one exists, and only then creates
// the real client. Until then each call fails as `unavailable` with the list of paths tried, so
// the ledger reads NotYetObserved(failing) with a message an operator can act on.
import { CriError } from '../cri/cri-error.ts';
import { NoCriEndpointError, resolveCriEndpoint, type ResolveCriEndpointOptions } from '../cri/endpoint.ts';
import type { CallOptions, RuntimeClient } from '../cri/types.ts';

export interface ResolvingRuntimeClientOptions {
  readonly resolve: ResolveCriEndpointOptions;
  readonly create: (endpoint: string) => RuntimeClient;
}

export class ResolvingRuntimeClient implements RuntimeClient {
  readonly #options: ResolvingRuntimeClientOptions;
  #inner: RuntimeClient | undefined;
  #closed = false;

  constructor(options: ResolvingRuntimeClientOptions) {
    this.#options = options;
  }

  get endpoint(): string {
    return this.#inner?.endpoint ?? '(not found yet)';
  }

  version(o: CallOptions): ReturnType<RuntimeClient['version']> {
    return this.#client().version(o);
  }

  status(o: CallOptions): ReturnType<RuntimeClient['status']> {
    return this.#client().status(o);
  }

  relist(o: CallOptions): ReturnType<RuntimeClient['relist']> {
    return this.#client().relist(o);
  }

  listPodSandbox(o: CallOptions): ReturnType<RuntimeClient['listPodSandbox']> {
    return this.#client().listPodSandbox(o);
  }

  listContainers(o: CallOptions): ReturnType<RuntimeClient['listContainers']> {
    return this.#client().listContainers(o);
  }

  podSandboxStatus(id: string, o: CallOptions): ReturnType<RuntimeClient['podSandboxStatus']> {
    return this.#client().podSandboxStatus(id, o);
  }

  containerStatus(id: string, o: CallOptions): ReturnType<RuntimeClient['containerStatus']> {
    return this.#client().containerStatus(id, o);
  }

  close(): void {
    this.#closed = true;
    this.#inner?.close();
  }

  #client(): RuntimeClient {
    if (this.#inner !== undefined) return this.#inner;
    if (this.#closed) return failing(new CriError('unavailable', 'runtime client is closed'));
    try {
      const { endpoint } = resolveCriEndpoint(this.#options.resolve);
      this.#inner = this.#options.create(endpoint);
      return this.#inner;
    } catch (err) {
      const message = err instanceof NoCriEndpointError ? err.message : err instanceof Error ? err.message : String(err);
      return failing(new CriError('unavailable', message, { cause: err }));
    }
  }
}

/** A client whose every call fails with err: the runtime is not there yet. */
function failing(err: CriError): RuntimeClient {
  const reject = (): Promise<never> => Promise.reject(err);
  return {
    endpoint: '(not found yet)',
    version: reject,
    status: reject,
    relist: reject,
    listPodSandbox: reject,
    listContainers: reject,
    podSandboxStatus: reject,
    containerStatus: reject,
    close: () => undefined,
  };
}
