/** The plugin under test stopped in a way that ends the conformance script for a dialect. */
export class PluginGoneError extends Error {
  override name = "PluginGoneError";
}
