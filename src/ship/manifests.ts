/**
 * Kubernetes manifests of a built plugin: a plain DaemonSet (with its ConfigMap) and a Helm chart
 * rendering the same objects from values. The pod runs the image by its fully qualified name as
 * root with no capability, a read-only root, no privilege escalation, the runtime's default
 * seccomp profile and no service account token; it mounts the directory of the runtime's NRI
 * socket from the host and a ConfigMap whose text goes to the plugin's Configure; it runs at
 * node-critical priority on every node (tolerating every taint). It is ready once registered: a
 * startup probe asks every second until the plugin is (the kubelet then runs the readiness probe
 * at once, so no readiness period is lost), and the readiness probe asks every 10 s after that.
 * Both run the executable's `probe` mode: the image has no shell.
 */
import { POD_RESOURCES } from "./footprint.js";
import { OPERATIONS_ANNOTATIONS, OPERATIONS_CONTAINER, operationsTemplates, operationsValues } from "./chart-operations.js";

/** What the manifests are made from. */
export interface ManifestSpec {
  readonly name: string;
  readonly idx: string;
  readonly version: string;
  /** The image, fully qualified (`registry/path/name`), and its tag. */
  readonly image: { readonly repository: string; readonly tag: string };
  /** The command that runs the plugin in its image (the image's entrypoint). */
  readonly command: readonly string[];
}

/** Where things are inside the pod. */
export const POD_PATHS = {
  socketDir: "/var/run/nri",
  configDir: "/etc/nri-plugin",
  configFile: "config",
  stateDir: "/run/nri-plugin",
} as const;

/** The runtime's NRI socket on the host, where containerd and CRI-O put it by default. */
export const DEFAULT_SOCKET_PATH = "/var/run/nri/nri.sock";

/** The probes' timing; see the module comment. */
export const PROBES = {
  /** Every second from the container's start until registered; up to 10 minutes (a runtime slow to come up at boot) before the kubelet restarts it. */
  startup: { periodSeconds: 1, failureThreshold: 600, timeoutSeconds: 5 },
  /** Every 10 s once started: one failure (the runtime went away) makes the pod not ready. */
  readiness: { periodSeconds: 10, failureThreshold: 1, timeoutSeconds: 5 },
} as const;

/** The Kubernetes name of a plugin's objects: `nri-plugin-<name>`, made a DNS label. */
export function objectName(name: string): string {
  const label = name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  return `nri-plugin-${label}`.slice(0, 63).replace(/-+$/, "");
}

const q = (s: string): string => JSON.stringify(s);

/** YAML list items, one per line, at `indent` spaces. */
function items(values: readonly string[], indent: number): string {
  return values.map((v) => `${" ".repeat(indent)}- ${q(v)}`).join("\n");
}

/** What differs between the DaemonSet's pod and the chart's: a literal, or a template expression. */
interface PodValues {
  /** The plugin index argument. */
  readonly idx: string;
  /** The container's resources block, indented as a container field. */
  readonly resources: string;
  /** The NRI socket's directory and file name on the host. */
  readonly socketDir: string;
  readonly socketFile: string;
  /** The ConfigMap holding the plugin's config. */
  readonly configMap: string;
  /** The pod's security context, indented as a pod field. */
  readonly podSecurity: string;
  /** More container fields (the chart's env and ports for operations), indented as container fields; empty for none. */
  readonly container: string;
}

/**
 * The pod spec from its security on (security, containers, volumes): one text for the DaemonSet
 * and the chart's template, which differ only in `v`.
 */
function podSpecTail(s: ManifestSpec, image: string, pullPolicy: string, v: PodValues): string {
  const probe = [...s.command, "probe", "--state", POD_PATHS.stateDir];
  const probeBlock = (name: string, t: { periodSeconds: number; failureThreshold: number; timeoutSeconds: number }): string => `          ${name}:
            exec:
              command:
${items(probe, 16)}
            periodSeconds: ${t.periodSeconds}
            failureThreshold: ${t.failureThreshold}
            timeoutSeconds: ${t.timeoutSeconds}`;
  return `      # The host's network: the plugin needs none of its own, and so starts before the node's network plugin is up.
      hostNetwork: true
      # It talks to the runtime only: no API token, no service environment variables.
      automountServiceAccountToken: false
      enableServiceLinks: false
${v.podSecurity}
      terminationGracePeriodSeconds: 5
      containers:
        - name: plugin
          image: ${image}
          imagePullPolicy: ${pullPolicy}
${v.container === "" ? "" : `${v.container}\n`}          args:
            - --socket
            - ${POD_PATHS.socketDir}/${v.socketFile}
            - --idx
            - ${v.idx}
            - --config
            - ${POD_PATHS.configDir}/${POD_PATHS.configFile}
            - --state
            - ${POD_PATHS.stateDir}
${probeBlock("startupProbe", PROBES.startup)}
${probeBlock("readinessProbe", PROBES.readiness)}
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
  const labels = `app.kubernetes.io/name: ${n}\n    app.kubernetes.io/instance: ${n}`;
  const r = POD_RESOURCES;
  const socket = DEFAULT_SOCKET_PATH;
  return `# ${s.idx}-${s.name}, an NRI plugin built by nri-wire build: its ConfigMap (the text its
# Configure receives) and the DaemonSet running it on every node. Apply with kubectl apply -f;
# remove with kubectl delete --cascade=foreground --wait -f (docs/deployment.md says why).
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
${podSpecTail(s, q(`${s.image.repository}:${s.image.tag}`), "IfNotPresent", {
    idx: q(s.idx),
    resources: `          resources:
            requests:
              cpu: ${r.requests.cpu}
              memory: ${r.requests.memory}
            limits:
              memory: ${r.limits.memory}`,
    socketDir: socket.slice(0, socket.lastIndexOf("/")),
    socketFile: socket.slice(socket.lastIndexOf("/") + 1),
    configMap: `${n}-config`,
    podSecurity: `      securityContext:
        seccompProfile:
          type: RuntimeDefault`,
    container: "",
  })}`;
}

/**
 * The chart's values.yaml, one block per concern (image, the runtime's NRI side, config,
 * resources, pod security, scheduling, operations), each with its comment: a new concern is a new block.
 */
function valuesYaml(s: ManifestSpec): string {
  const r = POD_RESOURCES;
  const blocks = [
    `# The plugin's image, fully qualified. The tag defaults to the chart's appVersion; a digest
# (sha256:..., the image index's, which nri-wire build prints) pins it: the pod then runs exactly
# that image, whatever the tag names now.
image:
  repository: ${s.image.repository}
  tag: ""
  digest: ""
  pullPolicy: IfNotPresent`,
    `# The runtime's NRI side of the node.
nri:
  # The runtime's NRI socket on the host (containerd's socket_path, CRI-O's nri_listen): its
  # directory is mounted into the pod.
  socketPath: ${DEFAULT_SOCKET_PATH}
  plugin:
    # Two digits: the plugin's place among the runtime's plugins (lower runs first).
    index: ${Number(s.idx)}`,
    `# The text the plugin's Configure receives (the runtime sends none to a plugin it did not launch).
config: ""`,
    `# Sized from the measured footprint (docs/deployment.md). No CPU limit: a throttled plugin
# delays every container start on the node.
resources:
  requests:
    cpu: ${r.requests.cpu}
    memory: ${r.requests.memory}
  limits:
    memory: ${r.limits.memory}`,
    `# The pod's security context (the container's is fixed: root for the socket, no capability,
# read-only root, no privilege escalation). The runtime's default seccomp profile; on nodes that
# enforce SELinux, the options the plugin's process needs to connect to the runtime's socket
# (for example {type: spc_t}, or the type your policy gives NRI plugins).
podSecurityContext:
  seccompProfile:
    type: RuntimeDefault
  seLinuxOptions: {}`,
    `priorityClassName: system-node-critical

# Every node runs containers, so every node runs the plugin, tainted or not.
tolerations:
  - operator: Exists

nodeSelector:
  kubernetes.io/os: linux

affinity: {}

podAnnotations: {}`,
    operationsValues(s.idx),
  ];
  return `${blocks.join("\n\n")}\n`;
}

/** The Helm chart's files, by path inside `chart/`. */
export function chartFiles(s: ManifestSpec): Record<string, string> {
  return {
    "Chart.yaml": `apiVersion: v2
name: ${objectName(s.name)}
description: The NRI plugin ${s.idx}-${s.name} (built by nri-wire build), run on every node by a DaemonSet.
type: application
version: ${s.version}
appVersion: ${q(s.version)}
`,
    "values.yaml": valuesYaml(s),
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

{{/* The image reference: repository, tag (default the appVersion), and @digest when pinned. */}}
{{- define "nri-plugin.image" -}}
{{- .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- with .Values.image.digest }}@{{ . }}{{ end }}
{{- end -}}

{{/* The NRI socket's path on the host, checked: absolute, in a directory other than /. */}}
{{- define "nri-plugin.socketPath" -}}
{{- $p := .Values.nri.socketPath -}}
{{- if or (not (hasPrefix "/" $p)) (eq (dir $p) "/") (hasSuffix "/" $p) -}}
{{- fail (printf "nri.socketPath %q: must be the absolute path of a socket in a directory other than /" $p) -}}
{{- end -}}
{{- $p -}}
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
    "templates/daemonset.yaml": `{{- $socket := include "nri-plugin.socketPath" . -}}
apiVersion: apps/v1
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
${podSpecTail(s, `{{ include "nri-plugin.image" . | quote }}`, "{{ .Values.image.pullPolicy }}", {
      idx: `{{ .Values.nri.plugin.index | int | printf "%02d" | quote }}`,
      resources: `          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}`,
      socketDir: "{{ dir $socket }}",
      socketFile: "{{ base $socket }}",
      configMap: `{{ include "nri-plugin.fullname" . }}-config`,
      // Every key of podSecurityContext that is set (an empty seLinuxOptions is left out).
      podSecurity: `      {{- $security := dict }}
      {{- range $k, $v := .Values.podSecurityContext }}{{ if $v }}{{ $_ := set $security $k $v }}{{ end }}{{ end }}
      {{- with $security }}
      securityContext:
        {{- toYaml . | nindent 8 }}
      {{- end }}`,
      container: OPERATIONS_CONTAINER,
    })}`,
    ...operationsTemplates(),
  };
}
