// Registers a Node the way a kubelet does: a POST to /api/v1/nodes with the labels every
// kubelet sets and a Ready condition. For the demo, the benchmark and the tests, which need a
// Node for the agent to own its Lease through and to publish its condition on.

/** The labels a Linux kubelet puts on its Node (the agent's DaemonSet selects on the first). */
export function kubeletLabels(name: string): Record<string, string> {
  return { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name };
}

/**
 * POSTs the Node to the API server at `url` and resolves once it is created (HTTP 201).
 * `nodeInfo` is status.nodeInfo as a kubelet reports it (e.g. containerRuntimeVersion).
 */
export async function registerNode(
  url: string,
  name: string,
  options: { timeoutMs?: number; nodeInfo?: Readonly<Record<string, string>> } = {},
): Promise<void> {
  const res = await fetch(`${url}/api/v1/nodes`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: kubeletLabels(name) },
      status: {
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
        ...(options.nodeInfo === undefined ? {} : { nodeInfo: options.nodeInfo }),
      },
    }),
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
  });
  if (res.status !== 201) throw new Error(`creating Node ${name}: HTTP ${res.status}: ${await res.text()}`);
}
