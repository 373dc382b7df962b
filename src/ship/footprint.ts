/**
 * The resources a built plugin's pod asks for, sized from what `npm run bench:ship` measures for
 * the sea form on Node 26 (docs/deployment.md has the figures: a peak RSS of 71–80 MiB under a
 * sustained event load, most of it the Node binary's pages): the request covers that peak, the
 * limit leaves V8 room to grow its heap. No CPU limit: a throttled plugin delays every container
 * start on the node.
 */
export const POD_RESOURCES = {
  requests: { cpu: "10m", memory: "96Mi" },
  limits: { memory: "192Mi" },
} as const;

/**
 * The low-footprint profile (`nri-wire build --node-options "..."`): a young generation of 1 MiB
 * semi-spaces instead of V8's default (it grows to 16 MiB under load), V8 with no worker threads
 * (garbage collection and optimizing compilation on the main thread, so no thread keeps a malloc
 * arena of its own), and an old generation whose first full collection comes at 2 MiB instead of
 * when V8's far larger initial limit is reached. Measured in `npm run bench -- --only footprint`
 * (docs/performance.md, Memory).
 */
export const LOW_FOOTPRINT_OPTIONS: readonly string[] = ["--max-semi-space-size=1", "--single-threaded", "--initial-old-space-size=2"];

/**
 * What a Bun plugin (`nri-wire build --engine bun`) always starts with: Bun's defaults. Measured
 * with the bench plugin (one plugin, 6 s of events from the TypeScript runtime, the plugin's
 * highest RssAnon): `--smol` (a smaller heap, collected more often) and a later JIT tier-up
 * (`--compile-jit-policy`) lowered the peak by less than a tenth; what does lower it, turning
 * JavaScriptCore's top tier off (`BUN_JSC_useFTLJIT=0`, about a quarter less), is an environment
 * variable, which the image sets (IMAGE_ENGINE_ENV) and an executable the runtime launches does
 * not carry (docs/deployment.md).
 */
export const BUN_EXEC_ARGV: readonly string[] = [];

/**
 * What an image's config sets in the plugin's environment besides its PATH, by engine (variable
 * name → value; the config lists them as `NAME=value` after the PATH, in this order): settings
 * that lower the memory a plugin holds at no cost in events/s, which only an environment can
 * carry (a pre-installed executable, which the runtime launches with three variables of its own,
 * goes without them). Node: glibc's malloc keeps one arena instead of one per thread that
 * allocates (V8's compiler and collector threads kept 9 MiB in four); the bench plugin's peak
 * RssAnon fell by 3–4 MiB as an executable and 2–3 in the image form, events/s within the
 * rounds' spread (docs/performance.md, Memory). Bun: JavaScriptCore without its top JIT tier
 * (FTL), a peak lower by a quarter at the same events/s or better (docs/deployment.md).
 * `npm run bench:ship` runs the image forms with them.
 */
export const IMAGE_ENGINE_ENV: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  node: { MALLOC_ARENA_MAX: "1" },
  bun: { BUN_JSC_useFTLJIT: "0" },
};

/** An engine's IMAGE_ENGINE_ENV as an image config lists it: `NAME=value`, in order. */
export function engineEnv(engine: string): string[] {
  return Object.entries(IMAGE_ENGINE_ENV[engine] ?? {}).map(([name, value]) => `${name}=${value}`);
}
