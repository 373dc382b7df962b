import type { RuntimeUnderTest } from "./runtime.js";
import type { Built } from "./support.js";

export function crio(_b: Built): RuntimeUnderTest {
  throw new Error("todo");
}
