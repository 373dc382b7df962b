import { EXECUTABLE_FORMS, type ExecutableForm } from "../ship/executable.js";
import { buildPlugin } from "../ship/build.js";
import { BUILD_ENGINES, type BuildEngine } from "../ship/engine-registry.js";
import { parsePlatforms, type Platform, PLATFORM_NAMES, platformName } from "../ship/platform.js";
import { type Command, EXIT } from "./command.js";
import { UsageError } from "./errors.js";

const MiB = 1024 * 1024;

/** `nri-wire build ENTRY --name NAME --idx NN --out DIR`. */
export const buildCommand: Command = {
  name: "build",
  summary: "build a plugin's executable, OCI image, DaemonSet and Helm chart from its entry file",
  description: [
    "ENTRY's default export is an object of plugin handlers (createContainer, configure, ...).",
    "Writes DIR/NN-NAME (what a runtime launches from its plugin directory; it connects to",
    "--socket PATH otherwise and reconnects when the runtime restarts; with several platforms,",
    "DIR/linux-ARCH/NN-NAME), DIR/NAME.oci.tar (the image REPOSITORY:TAG, one manifest per",
    "platform), its SBOM DIR/NAME.cdx.json, DIR/kubernetes/daemonset.yaml and the Helm chart",
    "DIR/chart/. The same inputs and SOURCE_DATE_EPOCH give the same bytes.",
    "Form sea (default): a single executable application, needs no engine on the host; engine",
    "node needs a Node 25.5 or later to build with (--node), engine bun a Bun 1.4 or later (--bun).",
    "Form script (engine node): the bundle behind #!NODE, which must exist at that path on the host.",
    "See docs/deployment.md.",
  ].join("\n"),
  options: {
    name: { type: "string", value: "NAME", description: "plugin name ([a-zA-Z0-9_.+-])", required: true },
    idx: { type: "string", value: "NN", description: "plugin index, two digits", required: true },
    out: { type: "string", value: "DIR", description: "output directory (created if missing)", required: true },
    form: { type: "string", value: "FORM", description: `executable form: ${EXECUTABLE_FORMS.join(" or ")} (default sea)` },
    engine: { type: "string", value: "ENGINE", description: `what the plugin runs on: ${BUILD_ENGINES.join(" or ")} (default node)` },
    bun: { type: "string", value: "PATH|VERSION", description: "with --engine bun: a Bun binary, or a version from the npm registry (default: the newest)" },
    node: {
      type: "string",
      value: "PATH|VERSION",
      description: "the engine: a Node binary, or a version from the npm registry (default: the Node running if 25.5+, else the newest Node 26)",
    },
    "node-options": { type: "string", value: "FLAGS", flagsValue: true, description: 'Node/V8 flags the plugin starts with, e.g. "--max-semi-space-size=1"' },
    platform: { type: "string", value: "LIST", description: `platforms, comma-separated: ${PLATFORM_NAMES.join(", ")} (default: this host's)` },
    repository: { type: "string", value: "REPO", description: "the image's fully qualified repository (default localhost/nri-wire/NAME)" },
    tag: { type: "string", value: "TAG", description: "image tag (default: the entry's package.json version)" },
  },
  positionals: "ENTRY",
  async run(values, positionals) {
    if (positionals.length !== 1) throw new UsageError(`nri-wire build: expected one ENTRY file, got ${positionals.length}`);
    for (const o of ["name", "idx", "out"]) if (typeof values[o] !== "string") throw new UsageError(`nri-wire build: --${o} is required`);
    const form = values.form as string | undefined;
    const engine = values.engine as string | undefined;
    if (engine !== undefined && !BUILD_ENGINES.includes(engine as BuildEngine)) throw new UsageError(`nri-wire build: --engine must be ${BUILD_ENGINES.join(" or ")}, not "${engine}"`);
    if (form !== undefined && !EXECUTABLE_FORMS.includes(form as ExecutableForm)) throw new UsageError(`nri-wire build: --form must be ${EXECUTABLE_FORMS.join(" or ")}, not "${form}"`);
    let platforms: Platform[] | undefined;
    if (typeof values.platform === "string") {
      try {
        platforms = parsePlatforms(values.platform);
      } catch (e) {
        // One line, as every other problem of the build's input.
        throw new Error(`build: ${(e as Error).message}`, { cause: e });
      }
    }
    const nodeOptions = typeof values["node-options"] === "string" ? values["node-options"].split(/\s+/).filter((s) => s !== "") : [];
    const r = await buildPlugin({
      entry: positionals[0]!,
      name: values.name as string,
      idx: values.idx as string,
      out: values.out as string,
      ...(form === undefined ? {} : { form: form as ExecutableForm }),
      ...(typeof values.node === "string" ? { node: values.node } : {}),
      ...(engine === undefined ? {} : { engine: engine as BuildEngine }),
      ...(typeof values.bun === "string" ? { bun: values.bun } : {}),
      nodeOptions,
      ...(platforms === undefined ? {} : { platforms }),
      ...(typeof values.repository === "string" ? { repository: values.repository } : {}),
      ...(typeof values.tag === "string" ? { tag: values.tag } : {}),
      progress: (line) => process.stderr.write(`${line}\n`),
    });
    const mib = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
    const layerNames = ["base", "engine", "plugin"];
    process.stdout.write(
      [
        ...r.engines.map((e) => `build: engine ${e.name} ${e.version} for ${platformName(e.platform)} (${e.from}; stripped ${mib(e.bytes.original)} to ${mib(e.bytes.stripped)})`),
        ...r.executables.map((e) => `build: ${e.path} (${form ?? "sea"}${e.platform === undefined ? "" : `, ${platformName(e.platform)}`}, ${mib(e.bytes)}; events ${r.events})`),
        `build: ${r.image} (${r.imageRef}@${r.imageDigest}, ${mib(r.imageBytes)})`,
        ...r.manifests.map((m) => `build:   ${platformName(m.platform)}: ${m.layers.map((l, i) => `${layerNames[i] ?? "layer"} ${mib(l.bytes)}`).join(", ")} (${mib(m.layers.reduce((n, l) => n + l.unpackedBytes, 0))} unpacked)`),
        `build: ${r.sbom}`,
        `build: ${r.daemonSet}`,
        `build: ${r.chart}/`,
      ].join("\n") + "\n",
    );
    return EXIT.ok;
  },
};
