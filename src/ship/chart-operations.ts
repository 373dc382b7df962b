/**
 * The Helm chart's part for operators (docs/operations.md): the `metrics`, `tracing` and `log`
 * values, the container's environment and metrics port they become, the pod's scrape
 * annotations, and a Service and ServiceMonitor for the Prometheus operator. The plugin reads
 * the environment (operations.ts), so the chart sets no flag.
 */

/** The metrics port a chart offers by default: 9400 + the plugin's index, so that plugins on one node differ. */
export function defaultMetricsPort(idx: string): number {
  return 9400 + Number(idx);
}

/** The values blocks. */
export function operationsValues(idx: string): string {
  return `# Prometheus metrics at /metrics (docs/operations.md lists them).
metrics:
  enabled: false
  # The pod uses the host's network: the port is the node's (declared as a hostPort, as
  # containers/nri-plugins' charts do, so that two pods asking for it are not put on one node).
  port: ${defaultMetricsPort(idx)}
  # prometheus.io/scrape, /port and /path on the pods, for Prometheus's pod discovery.
  annotations: true
  # A Service and a ServiceMonitor for the Prometheus operator (its CRD must be installed).
  serviceMonitor:
    enabled: false
    interval: 30s
    labels: {}

# OpenTelemetry traces, sent over OTLP/HTTP.
tracing:
  # The collector's base URL (spans go to ENDPOINT/v1/traces); empty: no traces.
  endpoint: ""
  # The share of the traces the plugin starts that are kept, 0 to 1 (a runtime's decision is followed).
  samplingRate: 1

# The plugin's log lines: text or json, at info, warn or error (default: warn for text, info for json).
log:
  format: text
  level: ""`;
}

/** The container's env and ports, at the indentation of a container's fields. */
export const OPERATIONS_CONTAINER = `          env:
            - name: NRI_WIRE_LOG_FORMAT
              value: {{ .Values.log.format | quote }}
            {{- with .Values.log.level }}
            - name: NRI_WIRE_LOG_LEVEL
              value: {{ . | quote }}
            {{- end }}
            {{- if .Values.metrics.enabled }}
            - name: NRI_WIRE_METRICS_PORT
              value: {{ .Values.metrics.port | quote }}
            {{- end }}
            {{- with .Values.tracing.endpoint }}
            - name: OTEL_EXPORTER_OTLP_ENDPOINT
              value: {{ . | quote }}
            - name: OTEL_TRACES_SAMPLER_ARG
              value: {{ $.Values.tracing.samplingRate | toString | quote }}
            {{- end }}
          {{- if .Values.metrics.enabled }}
          ports:
            - name: metrics
              containerPort: {{ .Values.metrics.port }}
              hostPort: {{ .Values.metrics.port }}
              protocol: TCP
          {{- end }}`;

/** The pod's scrape annotations, at the indentation of the pod template's annotations. */
export const OPERATIONS_ANNOTATIONS = `        {{- if and .Values.metrics.enabled .Values.metrics.annotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ .Values.metrics.port | quote }}
        prometheus.io/path: /metrics
        {{- end }}`;

/** The Service and ServiceMonitor templates, by path inside `chart/`. */
export function operationsTemplates(): Record<string, string> {
  return {
    "templates/service.yaml": `{{- if and .Values.metrics.enabled .Values.metrics.serviceMonitor.enabled }}
# The pods' metrics port, for the ServiceMonitor (no cluster IP: Prometheus scrapes each pod).
apiVersion: v1
kind: Service
metadata:
  name: {{ include "nri-plugin.fullname" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "nri-plugin.labels" . | nindent 4 }}
spec:
  clusterIP: None
  selector:
    {{- include "nri-plugin.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ .Values.metrics.port }}
      targetPort: metrics
      protocol: TCP
{{- end }}
`,
    "templates/servicemonitor.yaml": `{{- if and .Values.metrics.enabled .Values.metrics.serviceMonitor.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "nri-plugin.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "nri-plugin.labels" . | nindent 4 }}
    {{- with .Values.metrics.serviceMonitor.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "nri-plugin.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ .Values.metrics.serviceMonitor.interval }}
{{- end }}
`,
  };
}
