// The elector's Lease calls over the project's API client. GET and POST are the client's own;
// the conditional PUT goes through its request core, so it shares the timeout, the token and
// the error mapping (a 409 on a stale resourceVersion is `conflict`).
import type { KubeClient } from '../kube/kube-client.ts';
import type { Lease } from '../kube/kube-types.ts';
import type { ElectionLeaseApi } from './leader-elector.ts';

export function electionLeaseApi(client: KubeClient): ElectionLeaseApi {
  return {
    getLease: (namespace, name, options) => client.getLease(namespace, name, options),
    createLease: (namespace, lease, options) => client.createLease(namespace, lease, options),
    replaceLease: (namespace, name, lease, options) =>
      client.request<Lease>({
        ...options,
        method: 'PUT',
        path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases/${encodeURIComponent(name)}`,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease },
        what: `PUT leases ${namespace}/${name}`,
      }),
  };
}
