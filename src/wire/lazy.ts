import { createRequire } from "node:module";

/*
 * Schemas that decode their descriptors on first use. protoc-gen-es builds every descriptor of a
 * file when its module is imported; a program that only needs the generated codecs (a plugin)
 * should not pay for that. A lazy schema is a stand-in that knows its kind and type name and
 * loads the real module (synchronously, with require(); Node 20.19 and later load ES modules that
 * way) when anything else is asked of it, then answers as the real schema does.
 */

type Namespace = Readonly<Record<string, unknown>>;

const provided = new Map<string, Namespace>();
const real = new WeakMap<object, () => object>();

/**
 * Hands the loaded protoc-gen-es module of `proto` to its lazy schemas, so they need no require()
 * (entries importing the full module anyway call this; it is what makes lazy schemas work where
 * require() cannot load the module, as under a TypeScript test runner).
 */
export function provideSchemas(proto: string, module: Namespace): void {
  provided.set(proto, module);
}

/**
 * The lazy schemas of one .proto file: `lazy(exportName, kind, typeName?)` is a stand-in for
 * export `exportName` of the protoc-gen-es module `specifier` (relative to `base`, the URL of
 * the module asking).
 */
export function lazySchemas(proto: string, base: string, specifier: string): <T extends object>(exportName: string, kind: string, typeName?: string) => T {
  let module: Namespace | undefined;
  const load = (): Namespace => {
    module ??= provided.get(proto);
    if (module === undefined) {
      try {
        module = createRequire(base)(specifier) as Namespace;
      } catch (e) {
        throw new Error(`wire: loading the schemas of ${proto} from ${specifier}: ${(e as Error).message}`, { cause: e });
      }
    }
    return module;
  };
  return <T extends object>(exportName: string, kind: string, typeName?: string): T => {
    let target: object | undefined;
    const resolve = (): object => (target ??= load()[exportName] as object);
    const known: Record<string, string> = typeName === undefined ? { kind } : { kind, typeName };
    const proxy = new Proxy(Object.create(null) as object, {
      get: (_, p) => (typeof p === "string" && p in known ? known[p] : Reflect.get(resolve(), p)),
      has: (_, p) => Reflect.has(resolve(), p),
      ownKeys: () => Reflect.ownKeys(resolve()),
      getOwnPropertyDescriptor: (_, p) => {
        const d = Reflect.getOwnPropertyDescriptor(resolve(), p);
        return d === undefined ? undefined : { ...d, configurable: true };
      },
      getPrototypeOf: () => Reflect.getPrototypeOf(resolve()),
      set: (_, p, v) => Reflect.set(resolve(), p, v),
      defineProperty: (_, p, d) => Reflect.defineProperty(resolve(), p, d),
      deleteProperty: (_, p) => Reflect.deleteProperty(resolve(), p),
    }) as T;
    real.set(proxy, resolve);
    return proxy;
  };
}

/** The real schema behind a lazy one (loading it), or `schema` itself. */
export function realSchema<T extends object>(schema: T): T {
  const resolve = real.get(schema);
  return resolve === undefined ? schema : (resolve() as T);
}
