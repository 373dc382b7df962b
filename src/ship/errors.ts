/** A bundling failure, with esbuild's first message and where it points. */
export class BundleError extends Error {
  override name = "BundleError";
}
