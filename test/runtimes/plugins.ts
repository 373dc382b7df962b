import { NRI_WIRE } from "./support.js";

/**
 * A plugin the project ships, as the real-runtime suite runs it. Its stdout must be one JSON
 * object a line, `{"event": "<Event>", "pod": "<id>", "container": "<id>"}` for each event it
 * receives (other keys are ignored), which is what `nri-wire example-plugin` prints.
 */
export interface PluginUnderTest {
  /** Shown in test names. */
  readonly label: string;
  /** Index and base name: the plugin registers as `<idx>-<name>`. */
  readonly idx: string;
  readonly name: string;
  /** argv starting the plugin; socket mode appends `--socket PATH`, fd mode runs it as is. */
  readonly argv: readonly string[];
  /** The revision it registers with first; refused with UNIMPLEMENTED, a v1beta1 plugin falls back to v1alpha1. */
  readonly registersWith: "v1beta1" | "v1alpha1";
  /** Whether it implements only StateChange for the events that have no answer. */
  readonly stateChangeOnly: boolean;
  /**
   * Whether it subscribes to ValidateContainerAdjustment even where the runtime's NRI does not
   * know it, which CRI-O v1.34.0 (NRI v0.9.1) refuses.
   */
  readonly validates: boolean;
  /** What its CreateContainer adjusts and what its UpdateContainer answers, to look for in the container. */
  readonly adjusts: { readonly env: readonly [string, string]; readonly annotation: readonly [string, string]; readonly cpuSharesOnUpdate: number };
}

/** The example plugin in one dialect. */
function example(dialect: "v1beta1" | "v1alpha1" | "statechange"): PluginUnderTest {
  return {
    label: `example-plugin ${dialect}`,
    idx: "10",
    name: `example-${dialect}`,
    argv: [...NRI_WIRE, "example-plugin", "--dialect", dialect],
    registersWith: dialect === "v1beta1" ? "v1beta1" : "v1alpha1",
    stateChangeOnly: dialect === "statechange",
    // It infers the runtime's NRI release and leaves out the events that release does not know.
    validates: false,
    adjusts: { env: ["NRI_WIRE_SEEN", "true"], annotation: ["nri-wire/seen", "true"], cpuSharesOnUpdate: 512 },
  };
}

/** Every plugin the project ships; each runs through every runtime in both connection modes. */
export const PLUGINS: readonly PluginUnderTest[] = [example("v1beta1"), example("v1alpha1"), example("statechange")];
