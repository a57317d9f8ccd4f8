// The Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards), as
// checks over a rendered pod spec: which rules of the baseline and the restricted level a pod
// breaks. Pod Security Admission enforces them per namespace (label
// pod-security.kubernetes.io/enforce), so this says which level a namespace must admit.
//
// Limits: Linux pods only; AppArmor, SELinux and sysctls are checked only as far as the project's
// manifests can set them (they set none, and a set one is reported).

interface SecurityContext {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  procMount?: string;
  seLinuxOptions?: unknown;
  appArmorProfile?: unknown;
  seccompProfile?: { type?: string };
  capabilities?: { add?: string[]; drop?: string[] };
}
interface Container {
  name: string;
  securityContext?: SecurityContext;
  ports?: Array<{ hostPort?: number }>;
}
export interface PodSpecShape {
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: SecurityContext & { sysctls?: unknown[] };
  volumes?: Array<Record<string, unknown> & { name: string }>;
  containers: Container[];
  initContainers?: Container[];
}

const BASELINE_CAPABILITIES = ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'];
const RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];

/** Every baseline rule the pod breaks, one line each; empty when baseline admits it. */
export function baselineViolations(pod: PodSpecShape): string[] {
  const out: string[] = [];
  for (const host of ['hostNetwork', 'hostPID', 'hostIPC'] as const) if (pod[host] === true) out.push(`${host}: true`);
  for (const v of pod.volumes ?? []) if ('hostPath' in v) out.push(`volume ${v.name}: hostPath`);
  if (pod.securityContext?.sysctls !== undefined) out.push('pod: sysctls');
  if (pod.securityContext?.seccompProfile?.type === 'Unconfined') out.push('pod: seccompProfile Unconfined');
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    const sc = c.securityContext ?? {};
    if (sc.privileged === true) out.push(`${c.name}: privileged`);
    for (const cap of sc.capabilities?.add ?? []) if (!BASELINE_CAPABILITIES.includes(cap)) out.push(`${c.name}: adds capability ${cap}`);
    for (const p of c.ports ?? []) if ((p.hostPort ?? 0) !== 0) out.push(`${c.name}: hostPort ${p.hostPort}`);
    if (sc.procMount !== undefined && sc.procMount !== 'Default') out.push(`${c.name}: procMount ${sc.procMount}`);
    if (sc.seLinuxOptions !== undefined || sc.appArmorProfile !== undefined) out.push(`${c.name}: SELinux or AppArmor options`);
    if (sc.seccompProfile?.type === 'Unconfined') out.push(`${c.name}: seccompProfile Unconfined`);
  }
  return out;
}

/** Every restricted rule the pod breaks beyond the baseline ones, one line each. */
export function restrictedViolations(pod: PodSpecShape): string[] {
  const out = baselineViolations(pod);
  for (const v of pod.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name');
    if (type !== undefined && !RESTRICTED_VOLUMES.includes(type) && type !== 'hostPath') out.push(`volume ${v.name}: ${type}`);
  }
  const podSc = pod.securityContext ?? {};
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    const sc = c.securityContext ?? {};
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation must be false`);
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${c.name}: runAsNonRoot must be true`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) out.push(`${c.name}: runAsUser 0`);
    const seccomp = sc.seccompProfile?.type ?? podSc.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name}: seccompProfile must be RuntimeDefault or Localhost`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${c.name}: capabilities must drop ALL`);
    for (const cap of sc.capabilities?.add ?? []) if (cap !== 'NET_BIND_SERVICE') out.push(`${c.name}: adds capability ${cap}`);
  }
  return out;
}
