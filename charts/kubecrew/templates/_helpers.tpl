{{/* Names: "<release>-<chart>", or the release name when it already holds the chart name (as helm create does). */}}
{{- define "kubecrew.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "kubecrew.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "<fullname>-<component>", kept within 63 characters. */}}
{{- define "kubecrew.componentName" -}}
{{- printf "%s-%s" (include "kubecrew.fullname" .root | trunc (int (sub 62 (len .component))) | trimSuffix "-") .component }}
{{- end }}

{{- define "kubecrew.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels of a component: {root, component}. */}}
{{- define "kubecrew.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubecrew.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/* Labels of every object: {root, component}. */}}
{{- define "kubecrew.labels" -}}
{{ include "kubecrew.selectorLabels" . }}
helm.sh/chart: {{ include "kubecrew.chart" .root }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: kubecrew
{{- with .root.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "kubecrew.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* ServiceAccount names. The runner's is what the controller puts into task pods. */}}
{{- define "kubecrew.apiServiceAccount" -}}{{ include "kubecrew.componentName" (dict "root" . "component" "api") }}{{- end }}
{{- define "kubecrew.controllerServiceAccount" -}}{{ include "kubecrew.componentName" (dict "root" . "component" "controller") }}{{- end }}
{{- define "kubecrew.runnerServiceAccount" -}}{{ include "kubecrew.componentName" (dict "root" . "component" "runner") }}{{- end }}
{{- define "kubecrew.integrationsServiceAccount" -}}{{ include "kubecrew.componentName" (dict "root" . "component" "integrations") }}{{- end }}
{{- define "kubecrew.redisServiceAccount" -}}{{ include "kubecrew.componentName" (dict "root" . "component" "redis") }}{{- end }}

{{/* The Secret holding the generated keys (or the user's existingSecret). */}}
{{- define "kubecrew.secretName" -}}
{{- default (include "kubecrew.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/* The integrations service inside the cluster (its Service), for the controller and the API. */}}
{{- define "kubecrew.integrationsInternalUrl" -}}
{{- printf "http://%s.%s.svc:%d" (include "kubecrew.componentName" (dict "root" . "component" "integrations")) .Release.Namespace (int .Values.integrations.service.port) }}
{{- end }}

{{- define "kubecrew.redisHost" -}}
{{- printf "%s.%s.svc" (include "kubecrew.componentName" (dict "root" . "component" "redis")) .Release.Namespace }}
{{- end }}

{{/*
KUBECREW_REDIS_URL (and what it needs) as container env entries. The chart's Redis: the password from the Secret, expanded by
Kubernetes into the URL ($(REDIS_PASSWORD) refers to the variable defined just before it).
*/}}
{{- define "kubecrew.redisEnv" -}}
{{- if .Values.redis.enabled }}
{{- if .Values.redis.auth }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "kubecrew.secretName" . }}
      key: redis-password
- name: KUBECREW_REDIS_URL
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s:%d/0" (include "kubecrew.redisHost" .) (int .Values.redis.port) | quote }}
{{- else }}
- name: KUBECREW_REDIS_URL
  value: {{ printf "redis://%s:%d/0" (include "kubecrew.redisHost" .) (int .Values.redis.port) | quote }}
{{- end }}
{{- else if .Values.externalRedis.existingSecret }}
- name: KUBECREW_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.externalRedis.existingSecret }}
      key: {{ .Values.externalRedis.existingSecretKey }}
{{- else }}
- name: KUBECREW_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "kubecrew.componentName" (dict "root" . "component" "external-redis") }}
      key: redis-url
{{- end }}
{{- end }}

{{/* The ingress scheme: https when TLS is on. */}}
{{- define "kubecrew.ingressScheme" -}}
{{- if .Values.ingress.tls.enabled }}https{{ else }}http{{ end }}
{{- end }}

{{/* scheme://host[:port] of a hostname the Gateway serves ("root", "host"): gateway.port only when set. */}}
{{- define "kubecrew.gatewayOrigin" -}}
{{- $g := .root.Values.gateway }}
{{- printf "%s://%s" $g.scheme .host }}{{ if $g.port }}:{{ int $g.port }}{{ end }}
{{- end }}

{{/* KUBECREW_OAUTH_PUBLIC_URL: explicit, from the Gateway or the Ingress, or the port-forward address. */}}
{{- define "kubecrew.integrationsPublicUrl" -}}
{{- if .Values.integrations.publicUrl }}
{{- .Values.integrations.publicUrl | trimSuffix "/" }}
{{- else if and .Values.gateway.enabled .Values.gateway.integrations.enabled (or .Values.gateway.integrations.hostnames .Values.gateway.hostnames) }}
{{- if .Values.gateway.integrations.hostnames }}
{{- include "kubecrew.gatewayOrigin" (dict "root" . "host" (first .Values.gateway.integrations.hostnames)) }}
{{- else }}
{{- include "kubecrew.gatewayOrigin" (dict "root" . "host" (first .Values.gateway.hostnames)) }}{{ .Values.gateway.integrations.path | trimSuffix "/" }}
{{- end }}
{{- else if and .Values.ingress.enabled .Values.ingress.integrations.enabled }}
{{- if .Values.ingress.integrations.host }}
{{- printf "%s://%s" (include "kubecrew.ingressScheme" .) .Values.ingress.integrations.host }}
{{- else }}
{{- printf "%s://%s%s" (include "kubecrew.ingressScheme" .) .Values.ingress.host (.Values.ingress.integrations.path | trimSuffix "/") }}
{{- end }}
{{- else }}
{{- printf "http://localhost:%d" (int .Values.integrations.port) }}
{{- end }}
{{- end }}

{{/* "true" when the API is reached through an Ingress or an HTTPRoute with a hostname (not a port-forward). */}}
{{- define "kubecrew.routed" -}}
{{- if or .Values.ingress.enabled (and .Values.gateway.enabled .Values.gateway.hostnames) }}true{{ end }}
{{- end }}

{{/* The URL users reach the API at, for NOTES. */}}
{{- define "kubecrew.apiUrl" -}}
{{- if and .Values.gateway.enabled .Values.gateway.hostnames }}
{{- include "kubecrew.gatewayOrigin" (dict "root" . "host" (first .Values.gateway.hostnames)) }}
{{- else if .Values.ingress.enabled }}
{{- printf "%s://%s" (include "kubecrew.ingressScheme" .) .Values.ingress.host }}
{{- else }}
{{- printf "http://localhost:%d" (int .Values.api.localPort) }}
{{- end }}
{{- end }}

{{- define "kubecrew.trustProxyHops" -}}
{{- if kindIs "invalid" .Values.api.trustProxyHops }}
{{- if .Values.ingress.enabled }}1{{ else }}0{{ end }}
{{- else }}
{{- .Values.api.trustProxyHops }}
{{- end }}
{{- end }}

{{/* Pod-level settings shared by every Deployment: {root, values (the component's values), serviceAccount}. */}}
{{- define "kubecrew.podScheduling" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* Fails the render with a clear message when values contradict each other. */}}
{{- define "kubecrew.validate" -}}
{{- if and (gt (int .Values.controller.replicas) 1) (not .Values.controller.leaderElection.enabled) }}
{{- fail "controller.replicas > 1 needs controller.leaderElection.enabled=true: two controllers would both create Jobs" }}
{{- end }}
{{- if and (gt (int .Values.controller.shards) 1) (not .Values.controller.leaderElection.enabled) }}
{{- fail "controller.shards > 1 needs controller.leaderElection.enabled=true: shards are held on Leases" }}
{{- end }}
{{- if and (not .Values.redis.enabled) (not .Values.externalRedis.url) (not .Values.externalRedis.existingSecret) }}
{{- fail "redis.enabled=false needs externalRedis.url or externalRedis.existingSecret" }}
{{- end }}
{{- if and .Values.redis.enabled (or .Values.externalRedis.url .Values.externalRedis.existingSecret) }}
{{- fail "externalRedis is set but redis.enabled=true: set redis.enabled=false to use your own Redis" }}
{{- end }}
{{- if and .Values.ingress.enabled .Values.ingress.integrations.enabled (not .Values.ingress.integrations.host) (not (hasPrefix "/" .Values.ingress.integrations.path)) }}
{{- fail "ingress.integrations.path must start with /" }}
{{- end }}
{{- end }}

{{/* The claim controller.runner.models.pull makes and fills. */}}
{{- define "kubecrew.modelsClaim" -}}{{ include "kubecrew.componentName" (dict "root" . "component" "models") }}{{- end }}

{{/*
The volume of the local provider's models as the controller reads it (KUBECREW_RUNNER_MODEL_VOLUME, JSON):
controller.runner.models.volume, else the claim models.pull fills (read-only); empty: none.
*/}}
{{- define "kubecrew.modelVolume" -}}
{{- $models := .Values.controller.runner.models }}
{{- if $models.volume }}
{{- toJson $models.volume }}
{{- else if $models.pull.enabled }}
{{- toJson (dict "persistentVolumeClaim" (dict "claimName" (include "kubecrew.modelsClaim" .) "readOnly" true)) }}
{{- end }}
{{- end }}
