/**
 * An error of the runtime's adaptation whose `message` is byte for byte the text containerd/nri's
 * Go runtime (v0.12.5 `pkg/adaptation`) returns for the same situation: ownership conflicts,
 * updates asked during creation, validator rejections. Callers compare or relay the text as is.
 */
export class AdaptationError extends Error {
  override name = "AdaptationError";
}
