import type { MessageInitShape } from "@bufbuild/protobuf";
import { create } from "./messages.js";
import { Plugin } from "../../gen/v1beta1/api_pb.js";
import { ALL_EVENTS, eventBit, formatEvent } from "../api/events.js";
import { CallDeadline } from "./call-deadline.js";
import { PluginCallError } from "./call-error.js";
import type { BackendCallOptions, PluginBackend, PluginMethodName, PluginMethods, PluginRequest, PluginResponse } from "./plugin-backend.js";

type MaybePromise<T> = T | Promise<T>;

/** What an in-process handler gets besides its request. */
export interface BuiltinContext {
  /** Aborts at the request timeout (reason: `context deadline exceeded`) or when the event is canceled. */
  readonly signal: AbortSignal;
}

type Answering = "configure" | "synchronize" | "updatePodSandbox" | "createContainer" | "updateContainer" | "stopContainer";
type Silent = Exclude<PluginMethodName, Answering | "shutdown" | "stateChange">;

/**
 * Handlers of an in-process plugin (the reference's BuiltinHandlers). Events that carry an
 * answer return it; the others return nothing; a thrown error is the plugin's error. A
 * validateContainerAdjustment handler rejects an adjustment by throwing: its message becomes
 * the rejection's reason.
 */
export type BuiltinHandlers = {
  [K in Answering]?: (request: PluginRequest<K>, ctx: BuiltinContext) => MaybePromise<MessageInitShape<PluginMethods[K]["output"]> | undefined | void>;
} & {
  [K in Silent]?: (request: PluginRequest<K>, ctx: BuiltinContext) => MaybePromise<void>;
};

/** An in-process plugin: index, name and handlers (the reference's BuiltinPlugin). */
export interface BuiltinPlugin {
  readonly idx: string;
  readonly name: string;
  readonly handlers: BuiltinHandlers;
}

/** The events an in-process plugin subscribes to when its Configure leaves the mask at 0. */
export function builtinEvents(handlers: BuiltinHandlers): number {
  let mask = 0;
  for (const e of ALL_EVENTS) {
    const m = formatEvent(e);
    const local = `${m.charAt(0).toLowerCase()}${m.slice(1)}` as keyof BuiltinHandlers;
    if (handlers[local] !== undefined) mask |= eventBit(e);
  }
  return mask;
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
    const desc = Plugin.method[method];
    const h = (this.plugin.handlers as Record<string, ((req: unknown, ctx: BuiltinContext) => unknown) | undefined>)[method];
    let out: unknown;
    const deadline = new CallDeadline(options.timeoutMs, options.signal);
    try {
      out = h === undefined ? undefined : await h(request, { signal: deadline.signal });
    } catch (e) {
      if (deadline.signal.aborted && e === deadline.signal.reason) throw e as PluginCallError;
      if (method === "validateContainerAdjustment") {
        return create(Plugin.method.validateContainerAdjustment.output, { reject: true, reason: errorText(e) }) as PluginResponse<K>;
      }
      throw new PluginCallError(errorText(e), "status", { cause: e });
    } finally {
      deadline.dispose();
    }
    if (method === "configure") {
      const res = create(Plugin.method.configure.output, (out ?? {}) as MessageInitShape<typeof Plugin.method.configure.output>);
      if (res.events === 0) res.events = builtinEvents(this.plugin.handlers);
      return res as PluginResponse<K>;
    }
    return create(desc.output, (out ?? {}) as never) as PluginResponse<K>;
  }

  close(): void {}
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
