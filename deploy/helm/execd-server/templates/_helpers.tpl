{{/* The resource name of everything in the release: the release name. */}}
{{- define "execd-server.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "execd-server.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "execd-server.labels" -}}
{{ include "execd-server.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Host names the server answers to: the values', else the Service's names in its namespace. */}}
{{- define "execd-server.allowedHosts" -}}
{{- if .Values.server.allowedHosts -}}
{{- join "," .Values.server.allowedHosts -}}
{{- else -}}
{{- printf "%s,%s.%s,%s.%s.svc,%s.%s.svc.cluster.local" (include "execd-server.fullname" .) (include "execd-server.fullname" .) .Release.Namespace (include "execd-server.fullname" .) .Release.Namespace (include "execd-server.fullname" .) .Release.Namespace -}}
{{- end -}}
{{- end -}}
