{{/* Name of the chart. */}}
{{- define "nodepulse.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Base name of every object: the release name, with the chart name when it lacks it. */}}
{{- define "nodepulse.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "nodepulse.serviceAccountName" -}}
{{- include "nodepulse.fullname" . }}
{{- end }}

{{- define "nodepulse.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaseNamespace }}
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

{{- define "nodepulse.labels" -}}
{{ include "nodepulse.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: nodepulse
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
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

{{/* The controller (controller.enabled): its own name, service account and labels. */}}
{{- define "nodepulse.controllerName" -}}
{{- printf "%s-controller" (include "nodepulse.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "nodepulse.controllerSelectorLabels" -}}
app.kubernetes.io/name: {{ include "nodepulse.name" . }}
app.kubernetes.io/component: controller
{{- end }}

{{- define "nodepulse.controllerLabels" -}}
{{ include "nodepulse.controllerSelectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: nodepulse
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}
