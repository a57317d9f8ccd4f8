// The simulated runtime answering as CRI-O does. CRI-O cannot run on the machines this project is
// tested on, so its answers are taken from its public source (github.com/cri-o/cri-o):
//
// - server/version.go: Version answers `version` "0.1.0" (kubeAPIVersion), `runtime_name`
//   "cri-o" (containerName, the prefix of `cri-o://<id>` container ids) and `runtime_version`
//   the CRI-O release, written without a leading `v` (`crictl version` on CRI-O 1.29.1 prints
//   `RuntimeVersion: 1.29.1`; containerd writes `v1.6.8`). `runtime_api_version` is "v1" on the
//   runtime.v1 service (cri-o/cri-o pull request 4473: the version follows the RPC's package).
// - server/runtime_status.go: Status always reports RuntimeReady=true with no reason or message:
//   CRI-O has no runtime-not-ready state to report, so this profile refuses a scripted
//   runtimeReady=false. NetworkReady=false carries reason NetworkPluginNotReady and the message
//   "Network plugin returns error: " + the CNI error (ocicni's "no CNI configuration file in
//   /etc/cni/net.d/. Has your network provider started?" on a node without CNI config). The
//   answer also lists a runtime handler per configured runtime plus the default one again under
//   the empty name, each with its recursive-read-only-mounts and user-namespaces features, and
//   the runtime features (supplemental groups policy). Verbose adds `info.config`, a JSON object
//   holding the pause image as `sandboxImage`.
// - internal/lib/sandbox/sandbox.go (CRISandbox, Ready): a listed sandbox carries id,
//   created_at, labels, annotations, metadata and state, and nothing else: `runtime_handler` is
//   left empty even for a pod run with a handler. The state is READY while the pod's infra
//   container runs, NOTREADY otherwise. Labels and annotations are the kubelet's own.
// - server/container_list.go and internal/oci/container.go (NewContainer, CRIContainer): a
//   listed container carries `image.image` as the kubelet asked for it (the image id it got from
//   CRI-O, which writes ids as bare hex, without `sha256:`), `image_ref` as the image's repo
//   digest when one is known (else the id), and `image_id` as the bare id. created -> CREATED,
//   running and paused -> RUNNING, stopped -> EXITED.
// - server/sandbox_list.go, server/container_list.go: sandboxes and containers still being
//   created are not listed (the simulated state has none in that phase).
//
// What is not modelled: PodSandboxStatus and ContainerStatus keep the default profile's shape
// (the agent never calls them); the runtime handler features are CRI-O's defaults for runc.
import { SIM_PROFILE, type SimProfile } from './sim-profile.ts';

/** A CRI-O release, as CRI-O writes it in Version (no leading `v`). */
export const CRIO_RUNTIME_VERSION = '1.30.4';
/** What the kubelet then writes in the Node's status.nodeInfo.containerRuntimeVersion. */
export const CRIO_NODE_RUNTIME_VERSION = `cri-o://${CRIO_RUNTIME_VERSION}`;
/** CRI-O's default runtime handler. */
const DEFAULT_HANDLER = 'runc';
/** The pause image CRI-O reports in verbose Status. */
const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** ocicni's error on a node without CNI configuration, as CRI-O passes it on. */
export const CRIO_NO_CNI_MESSAGE = 'Network plugin returns error: no CNI configuration file in /etc/cni/net.d/. Has your network provider started?';
/** A label the simulated state adds for the default profile; CRI-O lists only the kubelet's labels. */
const CONTAINERD_KIND_LABEL = 'io.cri-containerd.kind';

export const CRIO_PROFILE: SimProfile = {
  name: 'cri-o',
  version: () => ({ version: '0.1.0', runtimeName: 'cri-o', runtimeVersion: CRIO_RUNTIME_VERSION, runtimeApiVersion: 'v1' }),
  status: (conditions, verbose) => {
    const handlerFeatures = { recursiveReadOnlyMounts: true, userNamespaces: true };
    return {
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          {
            type: 'NetworkReady',
            status: conditions.networkReady,
            reason: conditions.networkReady ? '' : 'NetworkPluginNotReady',
            message: conditions.networkReady ? '' : CRIO_NO_CNI_MESSAGE,
          },
        ],
      },
      runtimeHandlers: [
        { name: DEFAULT_HANDLER, features: handlerFeatures },
        { name: '', features: handlerFeatures },
      ],
      features: { supplementalGroupsPolicy: true },
      info: verbose ? { config: JSON.stringify({ sandboxImage: PAUSE_IMAGE }) } : {},
    };
  },
  checkConditions: (conditions) => {
    if (!conditions.runtimeReady) {
      throw new RangeError('runtimeReady: false must be true for the cri-o profile: CRI-O always reports RuntimeReady=true (server/runtime_status.go)');
    }
  },
  sandbox: (s) => ({
    id: s.id,
    metadata: { name: s.name, uid: s.uid, namespace: s.namespace, attempt: s.attempt },
    state: s.state,
    createdAt: s.createdAtNs.toString(),
    labels: Object.fromEntries(Object.entries(s.labels).filter(([key]) => key !== CONTAINERD_KIND_LABEL)),
    annotations: s.annotations,
  }),
  container: (c) => {
    const imageId = c.image.replace(/^sha256:/, '');
    return {
      ...SIM_PROFILE.container(c),
      image: { image: imageId, annotations: {} },
      imageRef: c.imageRef,
      imageId,
    };
  },
};
