// The elector's Lease calls over the project's API client: GET, POST and the conditional PUT are
// the client's own (a 409 on a stale resourceVersion is `conflict`), so they share its timeout,
// its token and its error mapping.
import type { KubeClient } from '../kube/kube-client.ts';
import type { ElectionLeaseApi } from './leader-elector.ts';

export function electionLeaseApi(client: KubeClient): ElectionLeaseApi {
  return {
    getLease: (namespace, name, options) => client.getLease(namespace, name, options),
    createLease: (namespace, lease, options) => client.createLease(namespace, lease, options),
    replaceLease: (namespace, name, lease, options) => client.replaceLease(namespace, name, lease, options),
  };
}
