// The API paths nodepulse uses, in one place: every resource the product reads or writes, as a
// builder that escapes each name it puts in a path. No product module outside src/kube/ writes a
// path of its own (test/package/api-paths.test.ts holds that); the stand-ins keep theirs, as
// independent witnesses of what the real server serves.
//
// | resource                   | group/version          | scope      | collection / object            |
// |----------------------------|------------------------|------------|--------------------------------|
// | Lease                      | coordination.k8s.io/v1 | namespaced | leasesPath / leasePath         |
// | Node (and its /status)     | v1 (core)              | cluster    | nodesPath / nodePath           |
// | Pod                        | v1 (core)              | namespaced | podsPath                       |
// | DaemonSet                  | apps/v1                | namespaced | daemonSetsPath                 |
// | Event                      | events.k8s.io/v1       | namespaced | eventsPath                     |

/** The collection of Leases in a namespace. */
export function leasesPath(namespace: string): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
}

/** One Lease. */
export function leasePath(namespace: string, name: string): string {
  return `${leasesPath(namespace)}/${encodeURIComponent(name)}`;
}

/** The collection of Nodes (cluster-scoped). */
export function nodesPath(): string {
  return '/api/v1/nodes';
}

/** One Node; its status subresource is this plus /status. */
export function nodePath(name: string): string {
  return `${nodesPath()}/${encodeURIComponent(name)}`;
}

/** The collection of Pods in a namespace. */
export function podsPath(namespace: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`;
}

/** The collection of DaemonSets in a namespace. */
export function daemonSetsPath(namespace: string): string {
  return `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/daemonsets`;
}

/** The collection of events.k8s.io/v1 Events in a namespace. */
export function eventsPath(namespace: string): string {
  return `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}
