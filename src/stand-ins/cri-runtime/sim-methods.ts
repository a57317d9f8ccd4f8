// The calls the simulated runtime serves, and the CRI calls it knows of but refuses.
//
// It serves exactly the six read-only calls of proto/. Every other method of upstream's
// runtime.v1 RuntimeService and ImageService is registered too, so that a call to one is
// answered UNIMPLEMENTED *and counted* as unexpected: a strict fake fails a test on any call it
// was not told to expect. (A path outside both lists gets gRPC's own UNIMPLEMENTED, uncounted.)

export const CRI_SIM_METHODS = [
  'Version',
  'Status',
  'ListPodSandbox',
  'ListContainers',
  'PodSandboxStatus',
  'ContainerStatus',
] as const;

export type CriSimMethod = (typeof CRI_SIM_METHODS)[number];

/** Upstream runtime.v1 methods the simulated runtime refuses, by service. */
export const REFUSED_CRI_METHODS: Readonly<Record<string, readonly { name: string; stream: boolean }[]>> = {
  'runtime.v1.RuntimeService': [
    { name: 'RunPodSandbox', stream: false },
    { name: 'StopPodSandbox', stream: false },
    { name: 'RemovePodSandbox', stream: false },
    { name: 'StreamPodSandboxes', stream: true },
    { name: 'CreateContainer', stream: false },
    { name: 'StartContainer', stream: false },
    { name: 'StopContainer', stream: false },
    { name: 'RemoveContainer', stream: false },
    { name: 'StreamContainers', stream: true },
    { name: 'UpdateContainerResources', stream: false },
    { name: 'ReopenContainerLog', stream: false },
    { name: 'ExecSync', stream: false },
    { name: 'Exec', stream: false },
    { name: 'Attach', stream: false },
    { name: 'PortForward', stream: false },
    { name: 'ContainerStats', stream: false },
    { name: 'ListContainerStats', stream: false },
    { name: 'StreamContainerStats', stream: true },
    { name: 'PodSandboxStats', stream: false },
    { name: 'ListPodSandboxStats', stream: false },
    { name: 'StreamPodSandboxStats', stream: true },
    { name: 'UpdateRuntimeConfig', stream: false },
    { name: 'CheckpointContainer', stream: false },
    { name: 'GetContainerEvents', stream: true },
    { name: 'ListMetricDescriptors', stream: false },
    { name: 'ListPodSandboxMetrics', stream: false },
    { name: 'StreamPodSandboxMetrics', stream: true },
    { name: 'RuntimeConfig', stream: false },
    { name: 'UpdatePodSandboxResources', stream: false },
  ],
  'runtime.v1.ImageService': [
    { name: 'ListImages', stream: false },
    { name: 'StreamImages', stream: true },
    { name: 'ImageStatus', stream: false },
    { name: 'PullImage', stream: false },
    { name: 'RemoveImage', stream: false },
    { name: 'ImageFsInfo', stream: false },
  ],
};
