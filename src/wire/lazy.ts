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

/** What a stand-in knows before loading: its kind and type name, and how to get the real one. */
interface Shell {
  readonly kind: string;
  readonly typeName: string | undefined;
  readonly resolve: () => object;
}

const shells = new WeakMap<object, Shell>();

function shellOf(target: object): Shell {
  return shells.get(target)!;
}

/* One handler for every stand-in: the proxy's target is an empty object keyed to its shell. */
const handler: ProxyHandler<object> = {
  get: (t, p) => {
    const s = shellOf(t);
    if (p === "kind") return s.kind;
    if (p === "typeName" && s.typeName !== undefined) return s.typeName;
    return Reflect.get(s.resolve(), p);
  },
  has: (t, p) => Reflect.has(shellOf(t).resolve(), p),
  ownKeys: (t) => Reflect.ownKeys(shellOf(t).resolve()),
  getOwnPropertyDescriptor: (t, p) => {
    const d = Reflect.getOwnPropertyDescriptor(shellOf(t).resolve(), p);
    return d === undefined ? undefined : { ...d, configurable: true };
  },
  getPrototypeOf: (t) => Reflect.getPrototypeOf(shellOf(t).resolve()),
  set: (t, p, v) => Reflect.set(shellOf(t).resolve(), p, v),
  defineProperty: (t, p, d) => Reflect.defineProperty(shellOf(t).resolve(), p, d),
  deleteProperty: (t, p) => Reflect.deleteProperty(shellOf(t).resolve(), p),
};

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
    const shell = Object.create(null) as object;
    shells.set(shell, { kind, typeName, resolve });
    const proxy = new Proxy(shell, handler);
    real.set(proxy, resolve);
    return proxy as T;
  };
}

/** The real schema behind a lazy one (loading it), or `schema` itself. */
export function realSchema<T extends object>(schema: T): T {
  const resolve = real.get(schema);
  return resolve === undefined ? schema : (resolve() as T);
}
