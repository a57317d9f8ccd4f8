// An in-memory stand-in for the agent's API calls (LeaseApi + NodeConditionApi), for unit tests
// of the agent's wiring on a manual clock, where real HTTP would race the clock. Every call
// resolves on the microtask queue and is recorded. It keeps one Node and the Leases and Events
// written to it, with merge-patch semantics for the Lease and merge-by-type for conditions.
//
// It is deliberately small: the faithful API is src/stand-ins/api-server/ (the stand-in), which the lease
// and condition tests use over real HTTP. This double only has to be correct for the calls the
// agent makes, and it throws on any Lease or Node it was not given, as the real server would 404.
import type { CallOptions } from '../../kube/kube-client.ts';
import { KubeApiError } from '../../kube/kube-api-error.ts';
import type { KubeEvent, Lease, Node, NodeCondition } from '../../kube/kube-types.ts';

export interface MemoryKubeCall {
  readonly method: 'patchLease' | 'createLease' | 'getNode' | 'patchNodeStatus' | 'createEvent';
  readonly name: string;
  readonly body: unknown;
}

export class MemoryKube {
  readonly calls: MemoryKubeCall[] = [];
  readonly events: KubeEvent[] = [];
  readonly leases = new Map<string, Lease>();
  node: Node | undefined;

  constructor(nodeName: string) {
    this.node = { metadata: { name: nodeName, uid: `uid-${nodeName}` }, status: { conditions: [] } };
  }

  async patchLease(namespace: string, name: string, patch: unknown, _options?: CallOptions): Promise<Lease> {
    this.calls.push({ method: 'patchLease', name, body: patch });
    const key = `${namespace}/${name}`;
    const lease = this.leases.get(key);
    if (lease === undefined) throw notFound('leases.coordination.k8s.io', name);
    const p = patch as { spec?: Lease['spec']; metadata?: Lease['metadata'] };
    const next: Lease = { ...lease, metadata: { ...lease.metadata, ...p.metadata }, spec: { ...lease.spec, ...p.spec } };
    this.leases.set(key, next);
    return next;
  }

  async createLease(namespace: string, lease: Lease, _options?: CallOptions): Promise<Lease> {
    const name = lease.metadata.name ?? '';
    this.calls.push({ method: 'createLease', name, body: lease });
    this.leases.set(`${namespace}/${name}`, lease);
    return lease;
  }

  async getNode(name: string, _options?: CallOptions): Promise<Node> {
    this.calls.push({ method: 'getNode', name, body: undefined });
    if (this.node === undefined || this.node.metadata.name !== name) throw notFound('nodes', name);
    return this.node;
  }

  async patchNodeStatus(name: string, patch: unknown, _options?: CallOptions): Promise<Node> {
    this.calls.push({ method: 'patchNodeStatus', name, body: patch });
    const node = await this.getNode(name);
    this.calls.pop(); // the read above is part of this call, not one of its own
    const incoming = (patch as { status?: { conditions?: NodeCondition[] } }).status?.conditions ?? [];
    const merged = [...(node.status?.conditions ?? [])];
    for (const c of incoming) {
      const i = merged.findIndex((m) => m.type === c.type);
      if (i >= 0) merged[i] = { ...merged[i], ...c } as NodeCondition;
      else merged.push(c);
    }
    this.node = { ...node, status: { ...node.status, conditions: merged } };
    return this.node;
  }

  async createEvent(_namespace: string, event: KubeEvent, _options?: CallOptions): Promise<KubeEvent> {
    this.calls.push({ method: 'createEvent', name: event.metadata?.name ?? '', body: event });
    this.events.push(event);
    return event;
  }

  /** The node's condition of this type, if any. */
  condition(type: string): NodeCondition | undefined {
    return this.node?.status?.conditions?.find((c) => c.type === type);
  }
}

function notFound(resource: string, name: string): KubeApiError {
  return new KubeApiError('not_found', `${resource} "${name}" not found`, { status: 404, reason: 'NotFound', what: `${resource} ${name}` });
}
