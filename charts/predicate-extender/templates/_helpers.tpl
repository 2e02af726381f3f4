{{/*
The labels every object carries: the two manifests/ gives them, and Helm's own.
*/}}
{{- define "predicate-extender.labels" -}}
app.kubernetes.io/name: predicate-scheduler
app.kubernetes.io/part-of: predicate-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
What selects the pods (the Deployment, the PodDisruptionBudget, the NetworkPolicy, the PodMonitor):
the same selector as manifests/, so that the two install the same objects.
*/}}
{{- define "predicate-extender.selector" -}}
app.kubernetes.io/name: predicate-scheduler
{{- end }}

{{/*
The file in the scheduler-config ConfigMap that kube-scheduler and the extender read.
*/}}
{{- define "predicate-extender.schedulerConfigFile" -}}
{{- if and .Values.inProcess.enabled (not .Values.schedulerConfig) -}}
scheduler-config-in-process.yaml
{{- else if and .Values.policyOnly (not .Values.schedulerConfig) -}}
scheduler-config-policy.yaml
{{- else -}}
scheduler-config.yaml
{{- end -}}
{{- end }}

{{/*
A shipped scheduler configuration with its Lease in the release's namespace (the files name
predicate-scheduler, manifests/' namespace).
*/}}
{{- define "predicate-extender.shippedSchedulerConfig" -}}
{{- $file := index . 0 -}}
{{- $root := index . 1 -}}
{{- $root.Files.Get (printf "files/%s" $file) | replace "resourceNamespace: predicate-scheduler" (printf "resourceNamespace: %s" $root.Release.Namespace) -}}
{{- end }}

{{/*
The scheduler-config ConfigMap's data: scheduler-config.yaml (the shipped one or the value
schedulerConfig), scheduler-config-policy.yaml and scheduler-config-in-process.yaml.
*/}}
{{- define "predicate-extender.schedulerConfigData" -}}
scheduler-config.yaml: {{ .Values.schedulerConfig | default (include "predicate-extender.shippedSchedulerConfig" (list "scheduler-config.yaml" .)) | toYaml | indent 2 | trim }}
scheduler-config-policy.yaml: {{ include "predicate-extender.shippedSchedulerConfig" (list "scheduler-config-policy.yaml" .) | toYaml | indent 2 | trim }}
scheduler-config-in-process.yaml: {{ include "predicate-extender.shippedSchedulerConfig" (list "scheduler-config-in-process.yaml" .) | toYaml | indent 2 | trim }}
{{- end }}

{{/*
An image reference: repository@digest when a digest is given, else repository:tag.
*/}}
{{- define "predicate-extender.image" -}}
{{- if .digest -}}
{{ printf "%s@%s" .repository .digest }}
{{- else -}}
{{ printf "%s:%s" .repository .tag }}
{{- end -}}
{{- end }}
