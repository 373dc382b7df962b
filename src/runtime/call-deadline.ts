import { PluginCallError } from "./errors.js";
import { GO_CANCELED, GO_DEADLINE_EXCEEDED } from "./go/status-text.js";

/**
 * The signal of one call to a plugin, like Go's `context.WithTimeout(ctx, requestTimeout)`: it
 * aborts with a `deadline` PluginCallError after `timeoutMs`, or with a `canceled` one when the
 * runtime's own signal for the event aborts first.
 */
export class CallDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly outer: AbortSignal | undefined;
  /** performance.now() value at which the call's timeout passes. */
  readonly at: number;

  constructor(timeoutMs: number, outer?: AbortSignal) {
    this.at = performance.now() + timeoutMs;
    this.timer = setTimeout(() => this.controller.abort(new PluginCallError(GO_DEADLINE_EXCEEDED, "deadline")), timeoutMs);
    this.outer = outer;
    if (outer?.aborted) this.onOuterAbort();
    else outer?.addEventListener("abort", this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The failure this call ended with, once the signal has aborted. */
  get reason(): PluginCallError | undefined {
    return this.controller.signal.aborted ? (this.controller.signal.reason as PluginCallError) : undefined;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener("abort", this.onOuterAbort);
  }

  private readonly onOuterAbort = (): void => {
    clearTimeout(this.timer);
    this.controller.abort(new PluginCallError(GO_CANCELED, "canceled", { cause: this.outer?.reason }));
  };
}
