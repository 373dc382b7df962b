import { toGeneratedMessage } from "../api/loose.js";
import { RpcError } from "../ttrpc/errors.js";
import { Code } from "../ttrpc/status.js";
import { undecodable } from "../ttrpc/typed.js";
import { pluginService, type UnaryMethod } from "../api/services.js";
import { errorText } from "../internal/error-text.js";

/*
 * Translation is loaded when a v1alpha1 runtime first calls (or for the older dialects): a
 * plugin of a v1beta1 runtime never needs it, nor the v1alpha1 method tables it reads.
 */
/** The translation module's exports. */
export type Translation = typeof import("../translate/index.js");
let translateModule: Promise<Translation> | undefined;
let translateLoaded: Translation | undefined;
export function translation(): Promise<Translation> {
  return (translateModule ??= import("../translate/index.js").then((t) => (translateLoaded = t)));
}

/** The translation module once loaded (then calls need not wait for it), else undefined. */
export function loadedTranslation(): Translation | undefined {
  return translateLoaded;
}

/** A v1beta1 Plugin method: its handler name and the generated code of its request and response. */
export type PluginMethod = UnaryMethod;

/** The Plugin methods by wire name, from the generated method table (no service descriptor). */
export const pluginMethods: ReadonlyMap<string, PluginMethod> = new Map(
  Object.values(pluginService).map((m) => [m.name, m]),
);

/**
 * Runs a typed handler on raw bytes. A handler that answers at once is answered at once, with no
 * promise between the request and the bytes of its answer (the ttrpc server writes those at
 * once); a decoding failure throws. A promised answer is awaited.
 */
export function invoke(method: PluginMethod, payload: Uint8Array, run: (req: never) => unknown): Uint8Array | Promise<Uint8Array> {
  let req: unknown;
  try {
    req = method.input.decode(payload);
  } catch (e) {
    throw undecodable(e);
  }
  const r = run(req as never);
  return isThenable(r) ? Promise.resolve(r).then((out) => answer(method, out)) : answer(method, r);
}

/** The bytes of a handler's answer. */
function answer(method: PluginMethod, out: unknown): Uint8Array {
  try {
    return method.output.encode(toGeneratedMessage(method.output, out) as never);
  } catch (e) {
    // A handler's answer that does not fit its type is our fault, not the runtime's.
    throw new RpcError(Code.INTERNAL, `cannot encode ${method.output.typeName}: ${errorText(e)}`, { cause: e });
  }
}

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === "function";
}
