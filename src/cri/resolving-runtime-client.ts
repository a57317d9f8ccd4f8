// A RuntimeClient that finds the node's runtime, and keeps looking until a relist proves it.
//
// The agent must never exit because the runtime is absent at start (only `nodepulse check`
// does): on a booting node the agent can come up before the runtime.
//
// | the endpoint                        | what every call does                                           |
// |-------------------------------------|----------------------------------------------------------------|
// | given (flag, env, config file)      | goes to it, as given; it is never probed                       |
// | not given, none chosen yet          | probes (endpoint-probe.ts), then goes to the chosen socket     |
// | not given, none could be chosen     | fails `unavailable` with what each socket did, and why as a    |
// |                                     | failure mode (noChoiceCause: no-socket, permission-denied, …)  |
// | chosen, no relist succeeded on it   | goes to it; a relist that finds no runtime there drops it,    |
// |                                     | and the next call probes again                                 |
// | chosen, a relist succeeded on it    | goes to it, for the client's life (held)                       |
//
// Why a choice is dropped until a relist succeeds: the agent's runtime stays NotYetObserved
// until then, and holding a socket that never answered a relist would keep the agent on it even
// after a better one appeared (a runtime that came up at another known path). A relist "finds no
// runtime there" when it fails `unavailable`, `unimplemented` or `deadline_exceeded`; any other
// fault (an oversized listing, the runtime's own error) is an answer from the runtime, so the
// socket is kept and the ledger sees the fault. Once a relist has succeeded the socket is the
// runtime: a later failure is the runtime's fault, which the ledger must see, not a reason to
// wander to another socket. "A relist succeeded" is not tracked here: the relist ledger is the
// one place that knows, and the agent hands its answer in (relistSucceeded). Only relists go
// through this client to the ledger, and only the socket in use can answer one, so the first
// success is on the socket then in use, which is never dropped after it.
//
// Whom a failure blames (cri/fault-cause.ts) depends on what the agent knew of the socket, which
// only this client knows:
//   - no socket chosen: the cause comes from the probe (noChoiceCause), or from the relist
//     whose failure dropped the choice, so a sick runtime stays the runtime's fault while the
//     agent looks again. A socket chosen once and gone at the next probe is `vanished`.
//   - a given endpoint whose socket was never seen (every relist so far failed `connect
//     ENOENT`) is `no-socket`: the path given holds nothing, which is the agent's setting. Once a
//     relist has reached it (any other outcome), ENOENT there means it went away: `vanished`.
//
// Bounds, on the injected clock: a probe starts no sooner than REPROBE_GAP_MS after the last one
// started (a call in between fails at once with the last probe's reason); calls that arrive
// while a probe runs wait for that one probe; the Node is read at most once per
// NODE_READ_INTERVAL_MS, so a node whose sockets keep answering as the wrong runtime costs the
// API server one GET a minute. A call's deadline covers the probe it waited for.
//
// view() says which socket is in use and why, for /status and tests. The choice is logged here,
// where it is made: "CRI endpoint chosen" once per newly chosen socket (a given endpoint at its
// first call; a socket chosen again after a drop is not logged again). A drop shows in the relist
// failures and in /status.
import type { Clock } from '../clock/clock.ts';
import type { Logger } from '../log/logger.ts';
import { CriError, toFault, type CriFaultCode } from './cri-error.ts';
import { noChoiceCause, probeCriEndpoints, type CriEndpointView } from './endpoint-probe.ts';
import type { FaultCause } from './fault-cause.ts';
import { DEFAULT_CRI_ENDPOINTS, NoCriEndpointError, type ConfiguredCriEndpoint } from './endpoint.ts';
import type { CallOptions, RuntimeClient } from './types.ts';

/** At most one probe a second: the relist period, so a missing runtime costs one probe per relist. */
export const REPROBE_GAP_MS = 1_000;
/** The Node's containerRuntimeVersion is read at most this often. */
export const NODE_READ_INTERVAL_MS = 60_000;
/** Relist faults that mean no runtime answered on the socket (see the header). */
const NO_RUNTIME_THERE: ReadonlySet<CriFaultCode> = new Set(['unavailable', 'unimplemented', 'deadline_exceeded']);

export interface ResolvingRuntimeClientOptions {
  /** The endpoint given by flag, env or config file; undefined to probe. */
  readonly configured: ConfiguredCriEndpoint | undefined;
  readonly create: (endpoint: string) => RuntimeClient;
  readonly clock: Clock;
  /** Replaces DEFAULT_CRI_ENDPOINTS (tests). */
  readonly candidates?: readonly string[];
  /** Replaces the check that a socket file exists (tests). */
  readonly exists?: (path: string) => boolean;
  /** Reads the Node's status.nodeInfo.containerRuntimeVersion; without it, probe order decides. */
  readonly nodeRuntime?: (signal: AbortSignal) => Promise<string | undefined>;
  /**
   * Whether a relist through this client has ever succeeded: the relist ledger's answer (the
   * agent's), read when a relist fails and for view().held.
   */
  readonly relistSucceeded: () => boolean;
  /** Where the choice of a socket is logged; none without it. */
  readonly logger?: Logger;
}

export class ResolvingRuntimeClient implements RuntimeClient {
  readonly #options: ResolvingRuntimeClientOptions;
  readonly #stop = new AbortController();
  #inner: RuntimeClient | undefined;
  /** The view but `held`, which is the ledger's (relistSucceeded). */
  #view: Omit<CriEndpointView, 'held'>;
  #probing: Promise<void> | undefined;
  #lastProbeAtMs: number | undefined;
  #node: { atMs: number; value: string | undefined; error: string | undefined } | undefined;
  #closed = false;
  /** The socket the last probe that chose one chose: gone at a later probe, it vanished. */
  #chosenBefore: string | undefined;
  /** Why no socket is in use, as a failure mode, for calls that find none. */
  #noChoiceCause: FaultCause = 'no-socket';
  /** Whether a relist has reached the given endpoint's socket (any outcome but `connect ENOENT`). */
  #givenSeen = false;
  /** The socket last logged as chosen, so each is logged once. */
  #loggedEndpoint: string | undefined;

  constructor(options: ResolvingRuntimeClientOptions) {
    this.#options = options;
    const given = options.configured;
    this.#view = given === undefined
      ? { endpoint: null, rule: null, reason: 'not probed yet', nodeRuntime: null, probed: [] }
      : { endpoint: given.endpoint, rule: 'configured', reason: `given by ${given.source}; used as given, never probed`, nodeRuntime: null, probed: [] };
  }

  get endpoint(): string {
    return this.#view.endpoint ?? '(none chosen yet)';
  }

  /** Which socket is in use and why. */
  view(): CriEndpointView {
    return { ...this.#view, held: this.#options.relistSucceeded() };
  }

  async relist(o: CallOptions): ReturnType<RuntimeClient['relist']> {
    const { client, deadlineMs } = await this.#client(o);
    try {
      const listing = await client.relist({ ...o, deadlineMs });
      this.#givenSeen = true;
      return listing;
    } catch (err) {
      if (o.signal?.aborted === true) throw err;
      this.#relistFailed(client, err);
      throw this.#givenNeverSeen(err);
    }
  }

  async version(o: CallOptions): ReturnType<RuntimeClient['version']> {
    const { client, deadlineMs } = await this.#client(o);
    return client.version({ ...o, deadlineMs });
  }

  async status(o: CallOptions): ReturnType<RuntimeClient['status']> {
    const { client, deadlineMs } = await this.#client(o);
    return client.status({ ...o, deadlineMs });
  }

  async listPodSandbox(o: CallOptions): ReturnType<RuntimeClient['listPodSandbox']> {
    const { client, deadlineMs } = await this.#client(o);
    return client.listPodSandbox({ ...o, deadlineMs });
  }

  async listContainers(o: CallOptions): ReturnType<RuntimeClient['listContainers']> {
    const { client, deadlineMs } = await this.#client(o);
    return client.listContainers({ ...o, deadlineMs });
  }

  async podSandboxStatus(id: string, o: CallOptions): ReturnType<RuntimeClient['podSandboxStatus']> {
    const { client, deadlineMs } = await this.#client(o);
    return client.podSandboxStatus(id, { ...o, deadlineMs });
  }

  async containerStatus(id: string, o: CallOptions): ReturnType<RuntimeClient['containerStatus']> {
    const { client, deadlineMs } = await this.#client(o);
    return client.containerStatus(id, { ...o, deadlineMs });
  }

  close(): void {
    this.#closed = true;
    this.#stop.abort(new CriError('unavailable', 'runtime client is closed'));
    this.#inner?.close();
  }

  /** The client to call, and what is left of the call's deadline after any probe it waited for. */
  async #client(o: CallOptions): Promise<{ client: RuntimeClient; deadlineMs: number }> {
    const { clock } = this.#options;
    const startedMs = clock.monotonicMs();
    if (this.#closed) throw new CriError('unavailable', 'runtime client is closed');
    const given = this.#options.configured;
    if (given !== undefined) {
      if (this.#inner === undefined) {
        this.#inner = this.#options.create(given.endpoint);
        this.#logChosen();
      }
      return { client: this.#inner, deadlineMs: o.deadlineMs };
    }
    if (this.#inner === undefined) {
      if (this.#probing === undefined) {
        if (this.#lastProbeAtMs !== undefined && startedMs - this.#lastProbeAtMs < REPROBE_GAP_MS) throw this.#noChoice();
        this.#probing = this.#probe().finally(() => {
          this.#probing = undefined;
        });
      }
      await this.#probing;
    }
    const client = this.#inner;
    if (this.#closed) throw new CriError('unavailable', 'runtime client is closed');
    if (client === undefined) throw this.#noChoice();
    const deadlineMs = o.deadlineMs - (clock.monotonicMs() - startedMs);
    if (deadlineMs <= 0) throw new CriError('deadline_exceeded', `the probe for the runtime's socket used the whole ${o.deadlineMs}ms deadline`);
    return { client, deadlineMs };
  }

  async #probe(): Promise<void> {
    const { clock, candidates = DEFAULT_CRI_ENDPOINTS } = this.#options;
    this.#lastProbeAtMs = clock.monotonicMs();
    let outcome;
    try {
      outcome = await this.#probeOnce(candidates);
    } catch (err) {
      this.#view = { ...this.#view, endpoint: null, rule: null, reason: `probing failed: ${err instanceof Error ? err.message : String(err)}` };
      this.#noChoiceCause = 'agent-error';
      return;
    }
    if (this.#closed) {
      outcome.client?.close();
      return;
    }
    const nodeRuntime = this.#node?.value ?? null;
    const nodeNote = this.#node?.error === undefined ? '' : ` (the Node could not be read: ${this.#node.error})`;
    const { choice } = outcome;
    if (choice.chosen) this.#chosenBefore = choice.endpoint;
    else this.#noChoiceCause = noChoiceCause(outcome.results, this.#chosenBefore);
    this.#inner = outcome.client;
    this.#view = choice.chosen
      ? { endpoint: choice.endpoint, rule: choice.rule, reason: `${choice.reason}${nodeNote}`, nodeRuntime, probed: outcome.results }
      : { endpoint: null, rule: null, reason: `${choice.reason}${nodeNote}`, nodeRuntime, probed: outcome.results };
    if (choice.chosen) this.#logChosen();
  }

  /** Logs the socket in use, unless it is the one logged last. */
  #logChosen(): void {
    const v = this.#view;
    if (v.endpoint === null || v.endpoint === this.#loggedEndpoint) return;
    this.#loggedEndpoint = v.endpoint;
    this.#options.logger?.info({ criEndpoint: v.endpoint, rule: v.rule, reason: v.reason, nodeRuntime: v.nodeRuntime, probed: v.probed }, 'CRI endpoint chosen');
  }

  #probeOnce(candidates: readonly string[]): ReturnType<typeof probeCriEndpoints> {
    return probeCriEndpoints({
      candidates,
      create: this.#options.create,
      clock: this.#options.clock,
      signal: this.#stop.signal,
      ...(this.#options.exists === undefined ? {} : { exists: this.#options.exists }),
      ...(this.#options.nodeRuntime === undefined ? {} : { nodeRuntime: () => this.#readNode() }),
    });
  }

  /**
   * The Node's runtime, read at most once per NODE_READ_INTERVAL_MS; a failed read counts as unknown,
   * and so does an empty one: the API server gives a Node whose kubelet has not reported yet an
   * empty containerRuntimeVersion, not none.
   */
  async #readNode(): Promise<string | undefined> {
    const { clock, nodeRuntime } = this.#options;
    const now = clock.monotonicMs();
    if (nodeRuntime === undefined) return undefined;
    if (this.#node === undefined || now - this.#node.atMs >= NODE_READ_INTERVAL_MS) {
      try {
        const value = await nodeRuntime(this.#stop.signal);
        this.#node = { atMs: now, value: value === '' ? undefined : value, error: undefined };
      } catch (err) {
        this.#node = { atMs: now, value: undefined, error: err instanceof Error ? err.message : String(err) };
      }
    }
    return this.#node.value;
  }

  /** A relist failed on `client`: drop it when no runtime answered there, unless it is held, given, or already replaced. */
  #relistFailed(client: RuntimeClient, err: unknown): void {
    if (this.#options.configured !== undefined || client !== this.#inner || this.#options.relistSucceeded()) return;
    if (!(err instanceof CriError) || !NO_RUNTIME_THERE.has(err.code)) return;
    const why = err instanceof Error ? err.message : String(err);
    client.close();
    this.#inner = undefined;
    this.#noChoiceCause = toFault(err).cause;
    this.#view = {
      ...this.#view,
      endpoint: null,
      rule: null,
      reason: `dropped ${client.endpoint}: its relist failed before any succeeded (${why}); probing again`,
    };
  }

  #noChoice(): CriError {
    const cause = new NoCriEndpointError(this.#options.candidates ?? DEFAULT_CRI_ENDPOINTS, this.#view.reason);
    return new CriError('unavailable', cause.message, { cause, knownCause: this.#noChoiceCause });
  }

  /**
   * A relist fault on the given endpoint, marked `no-socket` while its socket has never been
   * seen (see the header); any other outcome marks it seen. Probed sockets pass through.
   */
  #givenNeverSeen(err: unknown): unknown {
    if (this.#options.configured === undefined || !(err instanceof CriError)) return err;
    if (toFault(err).cause !== 'vanished') {
      this.#givenSeen = true;
      return err;
    }
    if (this.#givenSeen) return err;
    return new CriError(err.code, err.message, {
      detail: err.detail,
      cause: err,
      knownCause: 'no-socket',
      ...(err.grpcCode === undefined ? {} : { grpcCode: err.grpcCode }),
    });
  }
}
