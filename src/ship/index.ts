/** Shipping a plugin: what `nri-wire build` makes and the code its executable runs. */
export { type BuildOptions, type BuildResult, buildPlugin, checkIdentity, checkRepository, defaultRepository, sourceDateEpoch } from "./build.js";
export { type BuildEngine, BUILD_ENGINES } from "./engine-registry.js";
export { type ExecutableForm, EXECUTABLE_FORMS, type SeaStartup } from "./executable.js";
export { HANDLER_NAMES, pluginHandlersOf } from "./plugin-entry.js";
export { type ImageFile, type ImageSpec, type LayerSpec, type PlatformImage, type WrittenImage, writeOciArchive } from "./oci-image.js";
export { chartFiles, daemonSetYaml, objectName, POD_PATHS } from "./manifests.js";
export { type Platform, parsePlatforms, PLATFORM_NAMES } from "./platform.js";
