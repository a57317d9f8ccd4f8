// Probing the known CRI sockets: which one is the node's runtime?
//
// A socket file is not a runtime. On a node with Docker and cri-dockerd, Docker's own containerd
// often owns /run/containerd/containerd.sock with its CRI plugin disabled: the file is there,
// and every CRI call on it is answered UNIMPLEMENTED. So a candidate counts first when CRI
// `Version` answers on it, within PROBE_VERSION_DEADLINE_MS. And a runtime that is there but
// sick (its socket refuses, or Version hangs) is still the node's runtime: when nothing better
// answered, it is chosen, so that its relists fail as the runtime's faults, not as "no socket".
// A socket the agent may not open (EACCES) or that does not speak CRI runtime.v1 (UNIMPLEMENTED)
// never is: those faults are the agent's (fault-cause.ts).
//
// Which socket is the runtime, decided by chooseCriEndpoint() (a pure function). A socket is
// `sick` when it is there and its Version failed for a runtime-caused reason (refused, hung,
// the runtime's own error); the runtime a sick socket belongs to is read from its known path
// (KNOWN_ENDPOINT_RUNTIMES), since it cannot say its own name:
//
// | what the probe saw                          | the Node's containerRuntimeVersion          | chosen                               |
// |---------------------------------------------|---------------------------------------------|--------------------------------------|
// | sockets answered                            | unknown (unread, unreadable, empty)         | the first in probe order             |
// | sockets answered                            | `name://version`, answered with both        | the first with name and version      |
// | sockets answered                            | `name://version`, answered with the name    | the first with the name              |
// | none answered as `name` (or none answered); | `name://version`                            | the first sick socket at a path of   |
// |   sick sockets                              |                                             | `name`'s; none when there is none    |
// | no socket answered; sick sockets            | unknown                                     | the first sick socket in probe order |
// | no socket answered, none sick               | anything                                    | none                                 |
//
// The Node's field is what the kubelet built from the same Version call (`runtime_name://
// runtime_version`, e.g. `containerd://1.7.13`, `cri-o://1.30.4`), so it names the runtime the
// kubelet uses. A socket that answers as another runtime is not the node's runtime, and the
// agent relisting it would vouch for the wrong thing: with a named runtime and no match, nothing
// is chosen and the reason says so. The version (a leading `v` ignored, as the kubelet drops it)
// only breaks a tie between two sockets of the same runtime, e.g. a system containerd beside
// k3s's. Without the Node's word (no API, no such field yet), probe order decides.
//
// When nothing is chosen, noChoiceCause() (a pure function) says why, as a failure mode of
// fault-cause.ts:
//
// | what the probe saw                                          | cause             |
// |-------------------------------------------------------------|-------------------|
// | the socket chosen before is gone (no file)                  | vanished          |
// | a socket the agent may not open, or one that answers        | that socket's     |
// |   without CRI runtime.v1, or undecodably (first in order)   | cause             |
// | anything else: no socket file, or none of the Node's runtime| no-socket         |
//
// The first row keeps a runtime that went away a runtime fault: the agent used that socket,
// and it is gone (a runtime stopped cleanly removes its socket). Every other row is the
// agent's: it is looking in the wrong place, or may not look.
//
// probeCriEndpoints() asks every candidate at once and waits for all of them, so a hung socket
// costs one deadline, not one per socket, and the order rule still sees every answer. The Node
// is read only when some socket answered or is sick: a node with no runtime costs the API
// server nothing.
//
// Failure modes: a Version that fails or outlives its deadline (timed on the injected clock)
// makes its socket `refused`, with the fault and its cause; a Node that cannot be read makes the
// Node's runtime unknown (the error is kept for /status). Clients of sockets not chosen are
// closed here; the chosen one's client is handed to the caller, already connected.
import { statSync } from 'node:fs';
import type { Clock } from '../clock/clock.ts';
import { CriError, toFault, type CriFault } from './cri-error.ts';
import { KNOWN_ENDPOINT_RUNTIMES, parseCriEndpoint } from './endpoint.ts';
import { blameOf, type FaultCause } from './fault-cause.ts';
import type { RuntimeClient } from './types.ts';

/** Version is answered from memory; 2 s (crictl's default timeout) keeps a hung socket from stalling the probe. */
export const PROBE_VERSION_DEADLINE_MS = 2_000;

export type ProbeState = 'absent' | 'answered' | 'refused';

/** What one candidate socket did. */
export interface ProbeResult {
  readonly endpoint: string;
  /** `absent`: no file; `answered`: CRI Version answered; `refused`: the file is there, Version did not answer. */
  readonly state: ProbeState;
  /** runtime_name and runtime_version, when Version answered. */
  readonly runtime?: { readonly name: string; readonly version: string };
  /** Why Version did not answer, when refused. */
  readonly fault?: CriFault;
}

/** The rule that chose a probed socket. */
export type ProbeRule = 'node-runtime' | 'probe-order' | 'sick-runtime';

export type EndpointChoice =
  | { readonly chosen: true; readonly endpoint: string; readonly rule: ProbeRule; readonly reason: string }
  | { readonly chosen: false; readonly reason: string };

/** `containerd://1.7.13` → { name: 'containerd', version: '1.7.13' }; undefined when it names no runtime. */
export function parseNodeRuntime(text: string | undefined): { name: string; version: string } | undefined {
  const match = /^([^:/\s]+):\/\/(.*)$/.exec(text ?? '');
  if (match === null) return undefined;
  return { name: match[1] ?? '', version: match[2] ?? '' };
}

/** Whether a probed socket is there but sick: its Version failed for a reason that blames the runtime. */
export function isSick(r: ProbeResult): boolean {
  return r.state === 'refused' && r.fault !== undefined && blameOf(r.fault.cause) === 'runtime';
}

/** Chooses among probe results (see the table in the header). `nodeRuntime` is the Node's containerRuntimeVersion. */
export function chooseCriEndpoint(results: readonly ProbeResult[], nodeRuntime: string | undefined): EndpointChoice {
  const answered = results.filter((r) => r.state === 'answered');
  const node = parseNodeRuntime(nodeRuntime);
  if (answered.length > 0 && node === undefined) {
    const first = answered[0] as ProbeResult;
    const others = answered.slice(1).map(describe);
    return {
      chosen: true,
      endpoint: first.endpoint,
      rule: 'probe-order',
      reason: `the first socket in probe order whose CRI Version answered (${runtimeText(first)})` +
        `${others.length === 0 ? '' : `; also answered: ${others.join('; ')}`}; without the Node's containerRuntimeVersion, probe order decides`,
    };
  }
  if (node !== undefined) {
    const sameName = answered.filter((r) => r.runtime?.name === node.name);
    const best = sameName.find((r) => bareVersion(r.runtime?.version) === bareVersion(node.version)) ?? sameName[0];
    if (best !== undefined) {
      return {
        chosen: true,
        endpoint: best.endpoint,
        rule: 'node-runtime',
        reason: `its CRI Version (${runtimeText(best)}) matches the Node's containerRuntimeVersion ${nodeRuntime ?? ''}`,
      };
    }
  }
  const sick = results.find((r) => isSick(r) && (node === undefined || KNOWN_ENDPOINT_RUNTIMES[r.endpoint] === node.name));
  if (sick !== undefined) {
    const whose = node === undefined ? 'the first socket in probe order that is there' : `the socket of the Node's runtime (${nodeRuntime ?? ''})`;
    return {
      chosen: true,
      endpoint: sick.endpoint,
      rule: 'sick-runtime',
      reason: `no socket answered CRI Version${node === undefined ? '' : ` as ${node.name}`}; ${whose} does not answer (${probeResultText(sick)}): a runtime that is there but sick (${describeAll(results)})`,
    };
  }
  if (answered.length === 0) return { chosen: false, reason: `no socket answered CRI Version (${describeAll(results)})` };
  return {
    chosen: false,
    reason: `the Node's containerRuntimeVersion is ${nodeRuntime ?? ''}, but no socket answered as ${node?.name ?? ''} (${answered.map(describe).join('; ')})`,
  };
}

/**
 * Why no socket was chosen, as a failure mode (the second table in the header). `chosenBefore`
 * is the socket an earlier probe chose, if any.
 */
export function noChoiceCause(results: readonly ProbeResult[], chosenBefore: string | undefined): FaultCause {
  if (chosenBefore !== undefined && results.some((r) => r.endpoint === chosenBefore && r.state === 'absent')) return 'vanished';
  const agents = results.find((r) => r.state === 'refused' && r.fault !== undefined && blameOf(r.fault.cause) === 'agent');
  return agents?.fault?.cause ?? 'no-socket';
}

/** Which socket the agent talks to, and why (the `criEndpoint` part of /status). */
export interface CriEndpointView {
  /** The socket in use, or null while none is chosen. */
  readonly endpoint: string | null;
  /** `configured` (given, never probed), or the probe rule that chose it; null while none is chosen. */
  readonly rule: 'configured' | ProbeRule | null;
  /** Why this socket, or why none. */
  readonly reason: string;
  /** Whether a relist has succeeded on it: a held socket is kept for the agent's life. */
  readonly held: boolean;
  /** The Node's containerRuntimeVersion as last read, or null. */
  readonly nodeRuntime: string | null;
  /** What the last probe saw, socket by socket, in probe order (empty for a given endpoint). */
  readonly probed: readonly ProbeResult[];
}

export interface ProbeOptions {
  /** The candidate endpoints, in probe order. */
  readonly candidates: readonly string[];
  readonly create: (endpoint: string) => RuntimeClient;
  readonly clock: Clock;
  /** Each Version call's deadline; PROBE_VERSION_DEADLINE_MS by default. */
  readonly deadlineMs?: number;
  /** Whether a socket file exists; a stat by default. */
  readonly exists?: (path: string) => boolean;
  /** Reads the Node's containerRuntimeVersion; asked only once some socket answered or is sick. */
  readonly nodeRuntime?: () => Promise<string | undefined>;
  readonly signal?: AbortSignal;
}

export interface ProbeOutcome {
  readonly results: readonly ProbeResult[];
  /** The Node's containerRuntimeVersion as read, when it was read and set. */
  readonly nodeRuntime: string | undefined;
  /** Why the Node could not be read, when it could not. */
  readonly nodeRuntimeError: string | undefined;
  readonly choice: EndpointChoice;
  /** The chosen socket's client (the caller owns it), when one was chosen. */
  readonly client: RuntimeClient | undefined;
}

/** Probes every candidate at once, reads the Node when a socket answered or is sick, and chooses. Never rejects. */
export async function probeCriEndpoints(options: ProbeOptions): Promise<ProbeOutcome> {
  const exists = options.exists ?? socketExists;
  const deadlineMs = options.deadlineMs ?? PROBE_VERSION_DEADLINE_MS;
  const clients = new Map<string, RuntimeClient>();
  const results = await Promise.all(
    options.candidates.map(async (candidate): Promise<ProbeResult> => {
      const { endpoint, path } = parseCriEndpoint(candidate);
      if (!exists(path)) return { endpoint, state: 'absent' };
      const client = options.create(endpoint);
      clients.set(endpoint, client);
      try {
        const v = await versionWithin(client, deadlineMs, options.clock, options.signal);
        return { endpoint, state: 'answered', runtime: { name: v.runtimeName, version: v.runtimeVersion } };
      } catch (err) {
        return { endpoint, state: 'refused', fault: toFault(err) };
      }
    }),
  );
  let nodeRuntime: string | undefined;
  let nodeRuntimeError: string | undefined;
  if (options.nodeRuntime !== undefined && results.some((r) => r.state === 'answered' || isSick(r))) {
    try {
      const read = await options.nodeRuntime();
      nodeRuntime = read === '' ? undefined : read;
    } catch (err) {
      nodeRuntimeError = err instanceof Error ? err.message : String(err);
    }
  }
  const choice = chooseCriEndpoint(results, nodeRuntime);
  const chosen = choice.chosen ? choice.endpoint : undefined;
  for (const [endpoint, client] of clients) if (endpoint !== chosen) client.close();
  return { results, nodeRuntime, nodeRuntimeError, choice, client: chosen === undefined ? undefined : clients.get(chosen) };
}

/** One Version call, ended on the injected clock at deadlineMs whatever the client does. */
async function versionWithin(client: RuntimeClient, deadlineMs: number, clock: Clock, signal: AbortSignal | undefined) {
  const call = new AbortController();
  const stop = (): void => call.abort(signal?.reason);
  if (signal?.aborted === true) stop();
  else signal?.addEventListener('abort', stop, { once: true });
  let timer: { cancel(): void } | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = clock.after(deadlineMs, () => {
      const err = new CriError('deadline_exceeded', `CRI Version did not answer within ${deadlineMs}ms`);
      call.abort(err);
      reject(err);
    });
  });
  const answer = client.version({ deadlineMs, signal: call.signal });
  answer.catch(() => undefined);
  try {
    return await Promise.race([answer, expired]);
  } finally {
    timer?.cancel();
    signal?.removeEventListener('abort', stop);
  }
}

/** Whether a file is at `path` (a stat that succeeds). */
export function socketExists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function bareVersion(version: string | undefined): string {
  return (version ?? '').replace(/^v/, '');
}

function runtimeText(r: ProbeResult): string {
  return `${r.runtime?.name ?? '?'} ${r.runtime?.version ?? '?'}`;
}

/** What one socket did, for people: `no socket`, `cri-o 1.30.4`, `refused: unimplemented: …` (its cause when it differs). */
export function probeResultText(r: ProbeResult): string {
  switch (r.state) {
    case 'absent':
      return 'no socket';
    case 'answered':
      return runtimeText(r);
    case 'refused':
      return `refused: ${r.fault?.code ?? 'other'}: ${r.fault?.message ?? ''}`;
  }
}

function describe(r: ProbeResult): string {
  return `${r.endpoint}: ${probeResultText(r)}`;
}

function describeAll(results: readonly ProbeResult[]): string {
  return results.length === 0 ? 'no candidates' : results.map(describe).join('; ');
}
