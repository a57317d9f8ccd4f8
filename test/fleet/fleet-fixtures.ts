// Realistic Nodes and agent Leases for the fleet tests and the 5,000-node measurement.
//
// A Node here carries what a kubelet really publishes: ~20 labels and annotations, addresses,
// capacity and allocatable, the five kubelet conditions, nodeInfo, and a list of cached images
// with their digests and sizes, so that one Node is about 6 KiB of JSON, as on a real cluster.
// Lease times are written with the API stand-in's own Go-layout formatter, never the product's:
// a fixture built with the reader's own formatter would hide a bug the two share.
import { formatTime, RFC3339_MICRO } from '../../src/stand-ins/api-server/go-time.ts';

export const LEASE_NAMESPACE = 'nodepulse';

function metaTime(micros: number): string {
  return `${new Date(Math.floor(micros / 1000)).toISOString().slice(0, 19)}Z`;
}

export interface NodeOptions {
  readonly os?: string;
  readonly createdMicros: number;
  readonly unschedulable?: boolean;
  readonly condition?: { status: string; reason: string; message?: string };
}

export function realisticNode(name: string, index: number, o: NodeOptions): Record<string, unknown> {
  const t = metaTime(o.createdMicros);
  const kubeletCondition = (type: string, status: string, reason: string, message: string): Record<string, string> => ({
    type, status, reason, message, lastHeartbeatTime: t, lastTransitionTime: t,
  });
  const conditions = [
    kubeletCondition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    kubeletCondition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    kubeletCondition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    kubeletCondition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
  ];
  if (o.condition !== undefined) {
    conditions.push(kubeletCondition('RuntimeRelistUnhealthy', o.condition.status, o.condition.reason, o.condition.message ?? ''));
  }
  const images = Array.from({ length: 20 }, (_, i) => ({
    names: [
      `registry.example.com/team-${i % 7}/service-${i}@sha256:${(index * 31 + i).toString(16).padStart(64, '0')}`,
      `registry.example.com/team-${i % 7}/service-${i}:v1.${i}.${index % 10}`,
    ],
    sizeBytes: 10_000_000 + i * 1_234_567,
  }));
  const octet = (n: number): number => n % 250;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      creationTimestamp: t,
      labels: {
        'kubernetes.io/os': o.os ?? 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'beta.kubernetes.io/os': o.os ?? 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        'node.kubernetes.io/instance-type': 'm6i.2xlarge',
        'topology.kubernetes.io/region': 'eu-west-1',
        'topology.kubernetes.io/zone': `eu-west-1${'abc'[index % 3] ?? 'a'}`,
        'node-role.kubernetes.io/worker': '',
        pool: `pool-${index % 8}`,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-0${index.toString(16).padStart(16, '0')}` }),
      },
    },
    spec: {
      podCIDR: `10.${octet(index >> 8)}.${octet(index)}.0/24`,
      podCIDRs: [`10.${octet(index >> 8)}.${octet(index)}.0/24`],
      providerID: `aws:///eu-west-1a/i-0${index.toString(16).padStart(16, '0')}`,
      ...(o.unschedulable === true ? { unschedulable: true } : {}),
    },
    status: {
      capacity: { cpu: '8', 'ephemeral-storage': '104845292Ki', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '32386544Ki', pods: '110' },
      allocatable: { cpu: '7910m', 'ephemeral-storage': '95551679124', 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', memory: '31369712Ki', pods: '110' },
      conditions,
      addresses: [
        { type: 'InternalIP', address: `172.16.${octet(index >> 8)}.${octet(index)}` },
        { type: 'Hostname', address: name },
        { type: 'InternalDNS', address: `${name}.eu-west-1.compute.internal` },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: index.toString(16).padStart(32, '0'),
        systemUUID: `ec2${index.toString(16).padStart(29, '0')}`,
        bootID: `b00d${index.toString(16).padStart(28, '0')}`,
        kernelVersion: '6.1.0-18-amd64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.6.20',
        kubeletVersion: 'v1.31.9',
        kubeProxyVersion: 'v1.31.9',
        operatingSystem: o.os ?? 'linux',
        architecture: 'amd64',
      },
      images,
    },
  };
}

export function agentLease(name: string, renewMicros: number): Record<string, unknown> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace: LEASE_NAMESPACE,
      labels: { 'app.kubernetes.io/name': 'nodepulse', 'nodepulse.io/role': 'node-lease' },
    },
    spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: formatTime(RFC3339_MICRO, renewMicros) },
  };
}
