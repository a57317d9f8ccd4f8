// Which agent pod `nodepulse verify` checks: one of the pods the agent selector lists, chosen by
// a pure rule so that the choice is the same for the same listing.
//
// | the listed pods                                            | the choice                            |
// |------------------------------------------------------------|---------------------------------------|
// | none                                                       | none: no agent pod matches            |
// | none usable: not Running, no pod IP, no node, being        | none, naming each pod and why         |
// | deleted, or no container port named `metrics`              |                                       |
// | usable ones, some Ready                                    | the first Ready one, by name          |
// | usable ones, none Ready                                    | the first, by name: its /readyz then  |
// |                                                            | says why it is not ready              |
//
// Assumptions: the agent serves /readyz on its container port named `metrics` (the DaemonSet's
// probes use that name), at the pod's IP, reachable from the pod network. An IPv6 pod IP is
// written in brackets in the URL by the caller.
import type { Lease } from '../kube/kube-types.ts';

/** The fields of a v1 Pod this module reads. */
export interface AgentPod {
  readonly metadata: { readonly name?: string | undefined; readonly deletionTimestamp?: string | undefined };
  readonly spec?: {
    readonly nodeName?: string | undefined;
    readonly containers?: ReadonlyArray<{ readonly ports?: ReadonlyArray<{ readonly name?: string | undefined; readonly containerPort?: number | undefined }> | undefined }> | undefined;
  } | undefined;
  readonly status?: {
    readonly phase?: string | undefined;
    readonly podIP?: string | undefined;
    readonly conditions?: ReadonlyArray<{ readonly type?: string | undefined; readonly status?: string | undefined }> | undefined;
  } | undefined;
}

/** The agent pod to check, and where its HTTP port is. */
export interface AgentTarget {
  readonly pod: string;
  readonly node: string;
  readonly ip: string;
  readonly port: number;
  readonly ready: boolean;
}

export type AgentChoice =
  | { readonly picked: AgentTarget; readonly usable: number }
  | { readonly none: string };

/** The name of the agent's HTTP port, as the DaemonSet's probes name it. */
export const METRICS_PORT_NAME = 'metrics';

/** Why a pod cannot be checked, or its target. */
export function agentTarget(pod: AgentPod): AgentTarget | { readonly unusable: string } {
  const { metadata, spec, status } = pod;
  if (metadata.deletionTimestamp !== undefined) return { unusable: 'being deleted' };
  if (status?.phase !== 'Running') return { unusable: `phase ${status?.phase ?? 'unknown'}` };
  if (spec?.nodeName === undefined || spec.nodeName === '') return { unusable: 'no node' };
  if (status.podIP === undefined || status.podIP === '') return { unusable: 'no pod IP' };
  const port = (spec.containers ?? []).flatMap((c) => c.ports ?? []).find((p) => p.name === METRICS_PORT_NAME)?.containerPort;
  if (port === undefined) return { unusable: `no container port named ${METRICS_PORT_NAME}` };
  const ready = (status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  return { pod: metadata.name ?? '', node: spec.nodeName, ip: status.podIP, port, ready };
}

/** The pod to check, by the table in the header. */
export function pickAgentPod(pods: readonly AgentPod[]): AgentChoice {
  if (pods.length === 0) return { none: 'no agent pod matches' };
  const targets: AgentTarget[] = [];
  const unusable: string[] = [];
  for (const pod of pods) {
    const t = agentTarget(pod);
    if ('unusable' in t) unusable.push(`${pod.metadata.name ?? '?'}: ${t.unusable}`);
    else targets.push(t);
  }
  if (targets.length === 0) return { none: `no agent pod can be checked (${unusable.sort().join('; ')})` };
  const byName = targets.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
  return { picked: byName.find((t) => t.ready) ?? (byName[0] as AgentTarget), usable: targets.length };
}

/** host:port for a URL: an IPv6 address in brackets. */
export function hostPort(target: Pick<AgentTarget, 'ip' | 'port'>): string {
  return target.ip.includes(':') ? `[${target.ip}]:${target.port}` : `${target.ip}:${target.port}`;
}

/** A Lease's renewTime as written, or undefined. */
export function renewTimeOf(lease: Lease): string | undefined {
  return lease.spec?.renewTime ?? undefined;
}
