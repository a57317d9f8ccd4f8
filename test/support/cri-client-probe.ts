// A Go CRI client's reading of a socket, for tests that compare it with their own: runs
// test/cri-fault-proxy/cri-client-probe (built with the proxy, see cri-fault-proxy.ts) and
// returns its JSON.
//
// Two clients: `kubelet` is the kubelet's own k8s.io/cri-client (:authority "localhost", a
// Version call to validate the connection first); `crictl` is the generated CRI clients with
// the socket path as :authority, as crictl 1.26 dials.
//
// Failure modes: a probe that cannot make its client (the kubelet's Version validation failed)
// exits 1 with `connect` set, returned as such; a probe that writes no JSON, or outlives
// PROBE_RUN_TIMEOUT_MS, rejects with its stderr.
import { runTool } from '../../scripts/run-tool.ts';
import { criFaultProxyBinaries } from './cri-fault-proxy.ts';

/** Five calls with a deadline each (default 10 s), plus the process's own start. */
export const PROBE_RUN_TIMEOUT_MS = 60_000;

export interface ProbeError {
  /** The canonical gRPC status name, e.g. UNAVAILABLE; NOT_GRPC for an error that carries none. */
  readonly code: string;
  readonly message: string;
}

/** One call's result: its value, or its error. */
export type ProbeReading<T> = { readonly value: T; readonly error?: undefined } | { readonly value?: undefined; readonly error: ProbeError };

export interface ProbePod {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly attempt: number;
  readonly state: string;
  readonly createdAt: string;
}

export interface ProbeContainer {
  readonly id: string;
  readonly podSandboxId: string;
  readonly name: string;
  readonly attempt: number;
  readonly state: string;
  readonly createdAt: string;
  readonly image: string;
}

export interface ProbeResult {
  readonly client: 'kubelet' | 'crictl';
  readonly authority: string;
  /** Set only when the client could not be made. */
  readonly connect?: ProbeReading<never>;
  readonly version?: ProbeReading<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }>;
  readonly status?: ProbeReading<Array<{ type: string; status: boolean; reason: string }>>;
  readonly pods?: ProbeReading<ProbePod[]>;
  readonly containers?: ProbeReading<ProbeContainer[]>;
  readonly images?: ProbeReading<Array<{ id: string; repoTags: string[] }>>;
}

/** Reads `endpoint` (unix:///…) with a Go client; `timeoutMs` is each call's deadline. */
export async function runCriClientProbe(endpoint: string, client: 'kubelet' | 'crictl', timeoutMs = 10_000): Promise<ProbeResult> {
  const { probe } = await criFaultProxyBinaries();
  const args = ['--endpoint', endpoint, '--client', client, '--timeout', `${timeoutMs}ms`];
  let stdout: string;
  try {
    stdout = await runTool(probe, args, { timeoutMs: PROBE_RUN_TIMEOUT_MS });
  } catch (err) {
    // Exit 1 still writes the JSON (no client could be made); anything else is the probe's failure.
    const text = err instanceof Error ? err.message : String(err);
    const json = /^\{.*\}$/m.exec(text)?.[0];
    if (text.includes('exit code 1') && json !== undefined) return JSON.parse(json) as ProbeResult;
    throw err;
  }
  return JSON.parse(stdout) as ProbeResult;
}
