{{/* Name of the chart, or nameOverride: the app.kubernetes.io/name label of every object. */}}
{{- define "nodepulse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Base name of every object: fullnameOverride, else the release name, with the name when it
lacks it. */}}
{{- define "nodepulse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "nodepulse.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "nodepulse.serviceAccountName" -}}
{{- include "nodepulse.fullname" . }}
{{- end }}

{{- define "nodepulse.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaseNamespace }}
{{- end }}

{{/* The agent's identity as the API server authenticates it: the admission policy's match
condition and the FlowSchema's subject are built from it. */}}
{{- define "nodepulse.agentUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "nodepulse.serviceAccountName" .) }}
{{- end }}

{{- /*
Selectors carry the name and the component only, never the release: the same selectors as the
kustomize tree renders (test/deploy diffs the two), because a DaemonSet's or a Deployment's
selector cannot change in place, and moving between the two install paths must not need it to.
So one release of this chart per namespace.
*/}}
{{- define "nodepulse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nodepulse.name" . }}
app.kubernetes.io/component: agent
{{- end }}

{{- /*
A pod template's labels: the selector's and part-of, nothing that changes with the chart's
version, the release or the tool (helm.sh/chart, app.kubernetes.io/version, instance,
managed-by). A change of the template restarts every pod, so a chart bump must not make one;
and the kustomize tree renders these same labels, so moving between the two restarts nothing.
*/}}
{{- define "nodepulse.podLabels" -}}
{{ include "nodepulse.selectorLabels" . }}
app.kubernetes.io/part-of: nodepulse
{{- end }}

{{/* The labels of every object's own metadata (never a pod template's). */}}
{{- define "nodepulse.commonLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: nodepulse
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "nodepulse.labels" -}}
{{ include "nodepulse.selectorLabels" . }}
{{ include "nodepulse.commonLabels" . }}
{{- end }}

{{/* The image, by digest when image.digest is given (the tag, if any, is then only for people). */}}
{{- define "nodepulse.image" -}}
{{- $image := .Values.image }}
{{- if $image.digest }}
{{- if $image.tag }}{{ printf "%s:%s@%s" $image.repository $image.tag $image.digest }}{{ else }}{{ printf "%s@%s" $image.repository $image.digest }}{{ end }}
{{- else }}
{{- printf "%s:%s" $image.repository ($image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* A required node affinity on kubernetes.io/arch from image.architectures (nothing when the
list is empty): the DaemonSet's rule, and the rule of every pod that runs the image. */}}
{{- define "nodepulse.archAffinity" -}}
{{- with .Values.image.architectures }}
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - key: kubernetes.io/arch
            operator: In
            values:
              {{- toYaml . | nindent 14 }}
{{- end }}
{{- end }}

{{/* The endpoint's socket path, or "" when the agent probes. */}}
{{- define "nodepulse.endpointPath" -}}
{{- .Values.runtime.endpoint | default "" | trimPrefix "unix://" }}
{{- end }}

{{/* Directories never mounted whole: they hold every socket of the host. */}}
{{- define "nodepulse.sharedRunDirs" -}}
{{- toJson (list "/" "/run" "/var/run") }}
{{- end }}

{{/* Host directories to mount: socketDirs plus the endpoint's own directory (unless it is /run
itself), deduplicated. */}}
{{- define "nodepulse.socketDirs" -}}
{{- $dirs := .Values.runtime.socketDirs }}
{{- $path := include "nodepulse.endpointPath" . }}
{{- if and $path (not (has (dir $path) (include "nodepulse.sharedRunDirs" . | fromJsonArray))) }}
{{- $dirs = append $dirs (dir $path) }}
{{- end }}
{{- toJson ($dirs | uniq) }}
{{- end }}

{{/* An endpoint whose socket sits directly in /run (cri-dockerd's): that socket file alone is
mounted, or "" when there is none. */}}
{{- define "nodepulse.socketFile" -}}
{{- $path := include "nodepulse.endpointPath" . }}
{{- if and $path (has (dir $path) (include "nodepulse.sharedRunDirs" . | fromJsonArray)) }}{{ $path }}{{ end }}
{{- end }}

{{- /*
A host path's volume name: the path without its leading slash, every character a volume name
cannot hold turned into '-' (/run/k3s/containerd → run-k3s-containerd, /run/cri-dockerd.sock →
run-cri-dockerd-sock). The kustomize base names its volumes the same way, so both install paths
render the same pod. Two paths that give one name fail the render (the DaemonSet checks).
*/}}
{{- define "nodepulse.volumeName" -}}
{{- regexReplaceAll "[^a-z0-9-]" (trimPrefix "/" . | lower) "-" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The controller (controller.enabled): its own name, service account and labels. */}}
{{- define "nodepulse.controllerName" -}}
{{- printf "%s-controller" (include "nodepulse.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nodepulse.controllerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "nodepulse.name" . }}
app.kubernetes.io/component: controller
{{- end }}

{{/* The controller's pod template labels: as the agent's, nothing that changes with a release. */}}
{{- define "nodepulse.controllerPodLabels" -}}
{{ include "nodepulse.controllerSelectorLabels" . }}
app.kubernetes.io/part-of: nodepulse
{{- end }}

{{- define "nodepulse.controllerLabels" -}}
{{ include "nodepulse.controllerSelectorLabels" . }}
{{ include "nodepulse.commonLabels" . }}
{{- end }}

{{/* The container command that runs a nodepulse subcommand in the image (its entrypoint runs
the agent). */}}
{{- define "nodepulse.command" -}}
{{- toJson (list "node" "dist/src/cli/main.js" .) }}
{{- end }}

{{/* A restricted-level security context for the chart's one-shot pods (the hook and test
pods): they only talk HTTP(S). */}}
{{- define "nodepulse.restrictedPodSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "nodepulse.restrictedContainerSecurityContext" -}}
privileged: false
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
{{- end }}
