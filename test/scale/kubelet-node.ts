// A Node object as a v1.34 kubelet registers it and keeps its status, for the scale measurement on
// the real API server: what the controller and `fleet` receive from a real cluster's node list.
//
// | part                   | as the kubelet writes it                                                |
// |------------------------|-------------------------------------------------------------------------|
// | labels                 | kubernetes.io/{arch,os,hostname}, beta.kubernetes.io/{arch,os}, the     |
// |                        | cloud's instance type, region and zone (its --node-labels), a pool label|
// | annotations            | volumes.kubernetes.io/controller-managed-attach-detach, the CSI node id |
// | spec                   | providerID, podCIDR(s) (node IPAM's, written here as a cloud's would be)|
// | status.capacity, .allocatable | cpu, memory, pods, ephemeral-storage, hugepages                  |
// | status.conditions      | MemoryPressure, DiskPressure, PIDPressure, Ready, with heartbeat times; |
// |                        | plus the agent's RuntimeRelistUnhealthy=False/RelistHealthy             |
// | status.addresses       | InternalIP, Hostname, InternalDNS                                       |
// | status.nodeInfo        | machine, system and boot ids, kernel, OS image, runtime, kubelet version|
// | status.images          | 30 to 50 images (the kubelet reports at most 50), each a digest name,   |
// |                        | a tag name and its size                                                 |
// | status.runtimeHandlers, .features, .daemonEndpoints | as 1.34 reports them                       |
//
// The object is deterministic in its index, so a rerun writes the same fleet. The server adds
// managedFields, uid, resourceVersion and creationTimestamp, as it does for a kubelet.
export const NODE_NAME_FORMAT = 'node-%05d';

/** The node name of index i: node-00042 (the Go tool's -name-format gives the same). */
export function nodeName(index: number): string {
  return `node-${String(index).padStart(5, '0')}`;
}

/** metav1.Time: RFC 3339, whole seconds. */
export function metaTime(wallMs: number): string {
  return `${new Date(wallMs).toISOString().slice(0, 19)}Z`;
}

export const KUBELET_CONDITIONS = [
  ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
  ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
] as const;

/** How many images node i reports: 30 to 50. */
export function imageCount(index: number): number {
  return 30 + ((index * 7) % 21);
}

function hex(n: number, width: number): string {
  return (n >>> 0).toString(16).padStart(width, '0').slice(-width);
}

export function kubeletNode(index: number, wallMs: number): Record<string, unknown> {
  const name = nodeName(index);
  const t = metaTime(wallMs);
  const zone = `eu-west-1${'abc'[index % 3] ?? 'a'}`;
  const octet = (n: number): number => n % 250;
  const instance = `i-0${hex(index * 2654435761, 16)}`;
  const images = Array.from({ length: imageCount(index) }, (_, i) => {
    const repo = `registry.example.com/team-${i % 9}/service-${(i * 13 + index) % 400}`;
    const digest = `${hex((index + 1) * (i + 7) * 40503, 8)}${hex(i * 2246822519, 8)}`.repeat(4);
    return { names: [`${repo}@sha256:${digest}`, `${repo}:v1.${i % 17}.${index % 23}`], sizeBytes: 4_000_000 + ((i * 7_919_113 + index * 104_729) % 900_000_000) };
  });
  images.push({ names: ['registry.k8s.io/pause@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097', 'registry.k8s.io/pause:3.10'], sizeBytes: 320_368 });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': 'm6i.2xlarge',
        'beta.kubernetes.io/os': 'linux',
        'failure-domain.beta.kubernetes.io/region': 'eu-west-1',
        'failure-domain.beta.kubernetes.io/zone': zone,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'm6i.2xlarge',
        'topology.ebs.csi.aws.com/zone': zone,
        'topology.kubernetes.io/region': 'eu-west-1',
        'topology.kubernetes.io/zone': zone,
        'node-pool': `pool-${index % 8}`,
      },
      annotations: {
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': instance }),
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {
      podCIDR: `10.${octet(index >> 8)}.${octet(index)}.0/24`,
      podCIDRs: [`10.${octet(index >> 8)}.${octet(index)}.0/24`],
      providerID: `aws:///${zone}/${instance}`,
    },
    status: {
      capacity: { cpu: '8', 'ephemeral-storage': '104845292Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '32386544Ki', pods: '110' },
      allocatable: { cpu: '7910m', 'ephemeral-storage': '95551679124', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '31369712Ki', pods: '110' },
      conditions: [
        ...KUBELET_CONDITIONS.map(([type, status, reason, message]) => ({ type, status, reason, message, lastHeartbeatTime: t, lastTransitionTime: t })),
        { type: 'RuntimeRelistUnhealthy', status: 'False', reason: 'RelistHealthy', message: 'relist succeeded within the threshold of 3m0s', lastHeartbeatTime: t, lastTransitionTime: t },
      ],
      addresses: [
        { type: 'InternalIP', address: `172.16.${octet(index >> 8)}.${octet(index)}` },
        { type: 'InternalDNS', address: `ip-172-16-${octet(index >> 8)}-${octet(index)}.eu-west-1.compute.internal` },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(index * 2654435761, 8).repeat(4),
        systemUUID: `ec2${hex(index * 40503, 5)}-${hex(index, 4)}-${hex(index * 3, 4)}-${hex(index * 5, 4)}-${hex(index * 7, 12)}`,
        bootID: `${hex(index * 97, 8)}-${hex(index, 4)}-4${hex(index, 3)}-8${hex(index, 3)}-${hex(index * 31, 12)}`,
        kernelVersion: '6.1.0-31-cloud-amd64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.7.24',
        kubeletVersion: 'v1.34.4',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images,
      runtimeHandlers: [
        { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
        { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
      ],
      features: { supplementalGroupsPolicy: true },
    },
  };
}

/**
 * The kubelet's periodic status report (every nodeStatusReportFrequency, 5 min, when nothing
 * changed): a strategic-merge patch of status that moves each condition's lastHeartbeatTime.
 */
export function statusHeartbeatPatch(wallMs: number): Record<string, unknown> {
  const t = metaTime(wallMs);
  return {
    status: {
      conditions: KUBELET_CONDITIONS.map(([type]) => ({ type, lastHeartbeatTime: t })),
    },
  };
}
