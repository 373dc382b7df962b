/**
 * Kubernetes manifests of a built plugin: a plain DaemonSet (with its ConfigMap) and a Helm chart
 * rendering the same objects from values. The pod runs the image as root with the host's NRI
 * socket directory mounted, at node-critical priority on every node (tolerating every taint),
 * mounts a ConfigMap whose text goes to the plugin's Configure, and is ready once registered
 * (the executable's `probe` mode; the image has no shell).
 */
import { POD_RESOURCES } from "./footprint.js";
import { OPERATIONS_ANNOTATIONS, OPERATIONS_CONTAINER, operationsTemplates, operationsValues } from "./chart-operations.js";

/** What the manifests are made from. */
export interface ManifestSpec {
  readonly name: string;
  readonly idx: string;
  /** The image reference as a pod names it (`nri-wire/NAME:VERSION`). */
  readonly image: string;
  readonly version: string;
}

/** Where things are inside the pod. */
export const POD_PATHS = {
  socketDir: "/var/run/nri",
  configDir: "/etc/nri-plugin",
  configFile: "config",
  stateDir: "/run/nri-plugin",
} as const;

/** The Kubernetes name of a plugin's objects: `nri-plugin-<name>`, made a DNS label. */
export function objectName(name: string): string {
  const label = name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  return `nri-plugin-${label}`.slice(0, 63).replace(/-+$/, "");
}

/** The executable's path in the image. */
export function executablePath(s: Pick<ManifestSpec, "name" | "idx">): string {
  return `/${s.idx}-${s.name}`;
}

const q = (s: string): string => JSON.stringify(s);

/** What differs between the DaemonSet's pod and the chart's: a literal, or a template expression. */
interface PodTailValues {
  /** The plugin index argument. */
  readonly idx: string;
  /** The container's resources block, indented as a container field. */
  readonly resources: string;
  /** The host's socket directory. */
  readonly socketDir: string;
  /** The ConfigMap holding the plugin's config. */
  readonly configMap: string;
}

/**
 * The plugin container from its args on (args, readiness, resources, security, mounts) and the
 * pod's volumes: one text for the DaemonSet and the chart's template, which differ only in `v`.
 */
function pluginPodTail(exe: string, v: PodTailValues): string {
  return `          args:
            - --socket
            - ${POD_PATHS.socketDir}/nri.sock
            - --idx
            - ${v.idx}
            - --config
            - ${POD_PATHS.configDir}/${POD_PATHS.configFile}
            - --state
            - ${POD_PATHS.stateDir}
          readinessProbe:
            exec:
              command:
                - ${exe}
                - probe
                - --state
                - ${POD_PATHS.stateDir}
            periodSeconds: 5
            failureThreshold: 1
${v.resources}
          securityContext:
            runAsUser: 0
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop:
                - ALL
          volumeMounts:
            - name: nri-socket
              mountPath: ${POD_PATHS.socketDir}
            - name: config
              mountPath: ${POD_PATHS.configDir}
              readOnly: true
            - name: state
              mountPath: ${POD_PATHS.stateDir}
      volumes:
        - name: nri-socket
          hostPath:
            path: ${v.socketDir}
            type: DirectoryOrCreate
        - name: config
          configMap:
            name: ${v.configMap}
        - name: state
          emptyDir:
            medium: Memory
            sizeLimit: 1Mi
`;
}

/** The plain manifests: `kubernetes/daemonset.yaml` (ConfigMap and DaemonSet in kube-system). */
export function daemonSetYaml(s: ManifestSpec): string {
  const n = objectName(s.name);
  const exe = executablePath(s);
  const labels = `app.kubernetes.io/name: ${n}\n    app.kubernetes.io/instance: ${n}`;
  const r = POD_RESOURCES;
  return `# ${s.idx}-${s.name}, an NRI plugin built by nri-wire build: its ConfigMap (the text its
# Configure receives) and the DaemonSet running it on every node. Apply with kubectl apply -f.
apiVersion: v1
kind: ConfigMap
metadata:
  name: ${n}-config
  namespace: kube-system
  labels:
    ${labels}
data:
  ${POD_PATHS.configFile}: ""
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ${n}
  namespace: kube-system
  labels:
    ${labels}
    app.kubernetes.io/version: ${q(s.version)}
spec:
  selector:
    matchLabels:
      ${labels.replace("\n    ", "\n      ")}
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        ${labels.replace("\n    ", "\n        ")}
    spec:
      priorityClassName: system-node-critical
      nodeSelector:
        kubernetes.io/os: linux
      tolerations:
        - operator: Exists
      # The host's network: the plugin needs none of its own, and so starts before the node's network plugin is up.
      hostNetwork: true
      terminationGracePeriodSeconds: 5
      containers:
        - name: plugin
          image: ${s.image}
          imagePullPolicy: IfNotPresent
${pluginPodTail(exe, {
    idx: q(s.idx),
    resources: `          resources:
            requests:
              cpu: ${r.requests.cpu}
              memory: ${r.requests.memory}
            limits:
              memory: ${r.limits.memory}`,
    socketDir: "/var/run/nri",
    configMap: `${n}-config`,
  })}`;
}

/** The Helm chart's files, by path inside `chart/`. */
export function chartFiles(s: ManifestSpec): Record<string, string> {
  const n = objectName(s.name);
  const exe = executablePath(s);
  const r = POD_RESOURCES;
  const repo = s.image.slice(0, s.image.lastIndexOf(":"));
  return {
    "Chart.yaml": `apiVersion: v2
name: ${n}
description: The NRI plugin ${s.idx}-${s.name} (built by nri-wire build), run on every node by a DaemonSet.
type: application
version: ${s.version}
appVersion: ${q(s.version)}
`,
    "values.yaml": `# The plugin's image; tag defaults to the chart's appVersion.
image:
  repository: ${repo}
  tag: ""
  pullPolicy: IfNotPresent

nri:
  # The runtime's NRI socket directory on the host.
  socketDir: /var/run/nri
  plugin:
    # Two digits: the plugin's place among the runtime's plugins (lower runs first).
    index: ${Number(s.idx)}

# The text the plugin's Configure receives (the runtime sends none to a plugin it did not launch).
config: ""

# Sized from the measured footprint (docs/deployment.md). No CPU limit: a throttled plugin
# delays every container start on the node.
resources:
  requests:
    cpu: ${r.requests.cpu}
    memory: ${r.requests.memory}
  limits:
    memory: ${r.limits.memory}

priorityClassName: system-node-critical

# Every node runs containers, so every node runs the plugin, tainted or not.
tolerations:
  - operator: Exists

nodeSelector:
  kubernetes.io/os: linux

affinity: {}

podAnnotations: {}

${operationsValues(s.idx)}
`,
    "templates/_helpers.tpl": `{{/* The objects' name: the release's unless it already carries the chart's. */}}
{{- define "nri-plugin.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "nri-plugin.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "nri-plugin.labels" -}}
{{ include "nri-plugin.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}
`,
    "templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "nri-plugin.fullname" . }}-config
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "nri-plugin.labels" . | nindent 4 }}
data:
  ${POD_PATHS.configFile}: {{ .Values.config | quote }}
`,
    "templates/daemonset.yaml": `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ include "nri-plugin.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "nri-plugin.labels" . | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- include "nri-plugin.selectorLabels" . | nindent 6 }}
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        {{- include "nri-plugin.selectorLabels" . | nindent 8 }}
      annotations:
        # A changed config rolls the pods: the plugin reads it at Configure.
        checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
        {{- with .Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
${OPERATIONS_ANNOTATIONS}
    spec:
      {{- with .Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      # The host's network: the plugin needs none of its own, and so starts before the node's network plugin is up.
      hostNetwork: true
      terminationGracePeriodSeconds: 5
      containers:
        - name: plugin
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
          imagePullPolicy: {{ .Values.image.pullPolicy }}
${OPERATIONS_CONTAINER}
${pluginPodTail(exe, {
      idx: `{{ .Values.nri.plugin.index | int | printf "%02d" | quote }}`,
      resources: `          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}`,
      socketDir: "{{ .Values.nri.socketDir }}",
      configMap: `{{ include "nri-plugin.fullname" . }}-config`,
    })}`,
    ...operationsTemplates(),
  };
}
