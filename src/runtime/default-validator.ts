import { create } from "../api/messages.js";
import { Field, type PodSandbox, SecurityProfile_ProfileType, type ValidateContainerAdjustmentRequest, type ValidateContainerAdjustmentResponse } from "../../gen/v1beta1/api_lite.js";
import { messages_v1beta1_api as v1beta1 } from "../../gen/v1beta1/api_codec.js";
import { goQuote } from "../internal/go-quote.js";
import { goMapKeys } from "./go/map-order.js";
import { fieldOwner, keyedFieldOwner, keyedFieldOwners } from "../api/owners.js";
import { parseYamlStringList } from "./go/yaml-string-list.js";

/**
 * The default validator's configuration, with the keys of containerd/nri's YAML configuration
 * (`plugins/default-validator`). Everything is off unless set.
 */
export interface DefaultValidatorConfig {
  /** Whether the runtime installs the default validator at all. */
  readonly enable?: boolean;
  /** Reject any OCI hook a plugin adds. */
  readonly rejectOCIHookAdjustment?: boolean;
  /** Reject a seccomp policy adjustment of a container with the runtime default profile. */
  readonly rejectRuntimeDefaultSeccompAdjustment?: boolean;
  /** Reject a seccomp policy adjustment of an unconfined container (or one without a profile). */
  readonly rejectUnconfinedSeccompAdjustment?: boolean;
  /** Reject a seccomp policy adjustment of a container with a custom (localhost) profile. */
  readonly rejectCustomSeccompAdjustment?: boolean;
  /** Reject any namespace adjustment. */
  readonly rejectNamespaceAdjustment?: boolean;
  /** Reject any sysctl adjustment. */
  readonly rejectSysctlAdjustment?: boolean;
  /** Plugins (`name` or `idx-name`) that must take part in every CreateContainer. */
  readonly requiredPlugins?: readonly string[];
  /** A pod annotation key whose `true` value lets a container start without required plugins. */
  readonly tolerateMissingPluginsAnnotation?: string;
}

/** The pod annotation listing further required plugins (YAML list), scoped like every NRI annotation. */
export const REQUIRED_PLUGINS_ANNOTATION = "required-plugins.noderesource.dev";

/** The default validator's identity when the runtime installs it. */
export const DEFAULT_VALIDATOR = { idx: "00", name: "default-validator" } as const;

/** A validator handler: the request in, the verdict out. */
export type ValidatorHandler = (req: ValidateContainerAdjustmentRequest) => ValidateContainerAdjustmentResponse;

/**
 * containerd/nri's default validator. Checks run in Go's order (OCI hooks, seccomp policy,
 * namespaces, required plugins, sysctls) and the first failing one rejects with Go's text. Where
 * Go joins names from a map (namespaces, sysctls) they come in code-point order of the
 * namespace type or sysctl key.
 */
export function defaultValidator(config: DefaultValidatorConfig): ValidatorHandler {
  const cfg = { ...config, requiredPlugins: [...(config.requiredPlugins ?? [])] };
  return (req) => {
    const reason = validate(cfg, req);
    return create(v1beta1.ValidateContainerAdjustmentResponse, reason === undefined ? {} : { reject: true, reason });
  };
}

function validate(cfg: DefaultValidatorConfig, req: ValidateContainerAdjustmentRequest): string | undefined {
  return ociHooks(cfg, req) ?? seccompPolicy(cfg, req) ?? namespaces(cfg, req) ?? requiredPlugins(cfg, req) ?? sysctl(cfg, req);
}

const PREFIX = "validation error: ";

function containerId(req: ValidateContainerAdjustmentRequest): string {
  return req.container?.id ?? "";
}

function ociHooks(cfg: DefaultValidatorConfig, req: ValidateContainerAdjustmentRequest): string | undefined {
  if (req.adjust === undefined || cfg.rejectOCIHookAdjustment !== true) return undefined;
  const owners = fieldOwner(req.owners, containerId(req), Field.OciHooks);
  if (owners === undefined) return undefined;
  const offender = owners.includes(",") ? `plugins ${goQuote(owners)}` : `plugin ${goQuote(owners)}`;
  return `${PREFIX}${offender} attempted restricted OCI hook injection`;
}

function seccompPolicy(cfg: DefaultValidatorConfig, req: ValidateContainerAdjustmentRequest): string | undefined {
  if (req.adjust === undefined) return undefined;
  const owner = fieldOwner(req.owners, containerId(req), Field.SeccompPolicy);
  if (owner === undefined) return undefined;
  const profile = req.container?.linux?.seccompProfile;
  // The double spaces are upstream's.
  if (profile === undefined || profile.profileType === SecurityProfile_ProfileType.UNCONFINED) {
    if (cfg.rejectUnconfinedSeccompAdjustment === true) return `${PREFIX}plugin ${owner} attempted restricted  unconfined seccomp policy adjustment`;
  } else if (profile.profileType === SecurityProfile_ProfileType.RUNTIME_DEFAULT) {
    if (cfg.rejectRuntimeDefaultSeccompAdjustment === true) return `${PREFIX}plugin ${owner} attempted restricted runtime default seccomp policy adjustment`;
  } else if (profile.profileType === SecurityProfile_ProfileType.LOCALHOST) {
    if (cfg.rejectCustomSeccompAdjustment === true) return `${PREFIX}plugin ${owner} attempted restricted  custom seccomp policy adjustment`;
  }
  return undefined;
}

function namespaces(cfg: DefaultValidatorConfig, req: ValidateContainerAdjustmentRequest): string | undefined {
  if (req.adjust === undefined || cfg.rejectNamespaceAdjustment !== true) return undefined;
  const owners = keyedFieldOwners(req.owners, containerId(req), Field.Namespace);
  if (owners === undefined) return undefined;
  const offenders = goMapKeys(owners).map((ns) => `${goQuote(owners[ns]!)} (namespace ${goQuote(ns)})`);
  return `${PREFIX}attempted restricted namespace adjustment by plugin(s) ${offenders.join(", ")}`;
}

function sysctl(cfg: DefaultValidatorConfig, req: ValidateContainerAdjustmentRequest): string | undefined {
  const linux = req.adjust?.linux;
  if (linux === undefined || cfg.rejectSysctlAdjustment !== true) return undefined;
  const id = containerId(req);
  const owners = goMapKeys(linux.sysctl).flatMap((key) => keyedFieldOwner(req.owners, id, Field.Sysctl, key) ?? []);
  if (owners.length === 0) return undefined;
  return `${PREFIX}attempted restricted sysctl adjustment by plugin(s) ${owners.join(", ")}`;
}

function requiredPlugins(cfg: DefaultValidatorConfig, req: ValidateContainerAdjustmentRequest): string | undefined {
  const container = req.container?.name ?? "";
  const required = [...(cfg.requiredPlugins ?? [])];
  const tolerate = cfg.tolerateMissingPluginsAnnotation ?? "";
  if (tolerate !== "") {
    const value = effectiveAnnotation(req.pod, tolerate, container);
    if (value !== undefined) {
      const ok = parseGoBool(value);
      if (ok === undefined) return `invalid ${tolerate} annotation ${goQuote(value)}: strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`;
      if (ok) return undefined;
    }
  }
  const annotated = effectiveAnnotation(req.pod, REQUIRED_PLUGINS_ANNOTATION, container);
  if (annotated !== undefined) {
    try {
      required.push(...(parseYamlStringList(annotated) ?? []));
    } catch (err) {
      return `invalid ${REQUIRED_PLUGINS_ANNOTATION} annotation ${goQuote(annotated)}: ${(err as Error).message}`;
    }
  }
  if (required.length === 0) return undefined;
  const present = new Set<string>();
  for (const p of req.plugins) {
    present.add(p.name);
    present.add(`${p.index}-${p.name}`);
  }
  const missing = required.filter((r) => !present.has(r));
  if (missing.length === 0) return undefined;
  const offender = missing.length === 1 ? `required plugin ${goQuote(missing[0]!)}` : `required plugins ${goQuote(missing.join(","))}`;
  return `${PREFIX}${offender} not present`;
}

/** An NRI annotation's value for a container: `key/container.<name>`, then `key/pod`, then `key`. */
export function effectiveAnnotation(pod: PodSandbox | undefined, key: string, container: string): string | undefined {
  const annotations = pod?.annotations ?? {};
  for (const k of [`${key}/container.${container}`, `${key}/pod`, key]) if (Object.hasOwn(annotations, k)) return annotations[k];
  return undefined;
}

/** Go's `strconv.ParseBool`; undefined for anything it refuses. */
function parseGoBool(s: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return false;
  return undefined;
}
