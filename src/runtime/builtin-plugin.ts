import { create } from "../api/messages.js";
import { pluginService } from "../api/services.js";
import { type HandlerContext, type PluginHandlers, eventsOf } from "../api/handlers.js";
import { toMessage } from "../api/loose.js";
import { CallDeadline } from "./call-deadline.js";
import { PluginCallError } from "./errors.js";
import type { BackendCallOptions, PluginBackend } from "./plugin-backend.js";
import type { PluginMethodName, PluginRequest, PluginResponse } from "../api/handlers.js";
import { errorText } from "../internal/error-text.js";

/** An in-process plugin: index, name and handlers, the same handlers a plugin process takes. */
export interface BuiltinPlugin {
  readonly idx: string;
  readonly name: string;
  readonly handlers: PluginHandlers;
}

/**
 * Calls an in-process plugin. As in the reference, its handlers are not raced against the
 * request timeout: they get the signal and decide. A handler that rejects with the signal's
 * reason failed fatally (like a Go handler returning ctx.Err()); any other error is its answer.
 */
export class BuiltinBackend implements PluginBackend {
  readonly kind = "builtin" as const;
  readonly closed: Promise<void> = new Promise(() => undefined);

  constructor(readonly plugin: BuiltinPlugin) {}

  async call<K extends PluginMethodName>(method: K, request: PluginRequest<K>, options: BackendCallOptions): Promise<PluginResponse<K>> {
    const desc = pluginService[method];
    const h = (this.plugin.handlers as Record<string, ((req: unknown, ctx: HandlerContext) => unknown) | undefined>)[method];
    let out: unknown;
    const deadline = new CallDeadline(options.timeoutMs, options.signal);
    try {
      out = h === undefined ? undefined : await h(request, { signal: deadline.signal, deadline: deadline.at });
    } catch (e) {
      if (deadline.signal.aborted && e === deadline.signal.reason) throw e as PluginCallError;
      if (method === "validateContainerAdjustment") {
        return create(pluginService.validateContainerAdjustment.output, { reject: true, reason: errorText(e) }) as PluginResponse<K>;
      }
      throw new PluginCallError(errorText(e), "status", { cause: e });
    } finally {
      deadline.dispose();
    }
    if (method === "configure") {
      const res = toMessage(pluginService.configure.output, out as never);
      if (res.events === 0) res.events = eventsOf(this.plugin.handlers);
      return res as PluginResponse<K>;
    }
    return toMessage(desc.output, out as never) as PluginResponse<K>;
  }

  close(): void {}
}
