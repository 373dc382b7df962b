import { services_v1alpha1_api } from "../../gen/v1alpha1/api_lite.js";
import { services_v1beta1_api } from "../../gen/v1beta1/api_lite.js";
import { TranslateError } from "./errors.js";
import { type Revision, packages } from "../api/revision.js";



/** The services both revisions define, by short name. */
export const serviceNames: readonly string[] = ["Runtime", "Plugin", "HostFunctions"];

/** Every NRI service's full name and its revision: looked up on every call a peer makes. */
const revisionsByService: ReadonlyMap<string, Revision> = new Map(
  (["v1beta1", "v1alpha1"] as const).flatMap((v) => serviceNames.map((s): [string, Revision] => [`${packages[v]}.${s}`, v])),
);

/** A method of a ttrpc service: `service` is the full name (`nri.pkg.api.v1beta1.Plugin`). */
export interface MethodRef {
  readonly service: string;
  readonly method: string;
}

/**
 * The revision a full service name belongs to, or undefined if it is not one of the NRI services.
 * A runtime endpoint tells a plugin's version by the service of its RegisterPlugin call.
 */
export function serviceRevision(service: string): Revision | undefined {
  return revisionsByService.get(service);
}


/** The short service name (`Plugin`) of a service of revision `from`; throws for any other. */
export function shortServiceName(service: string, from: Revision): string {
  if (serviceRevision(service) !== from) {
    throw new TranslateError(`translate: service ${service} is not a ${from} nri service`);
  }
  return service.slice(packages[from].length + 1);
}

/** The generated method tables of one revision's services (names only: no descriptor is decoded). */
type ServiceTables = Readonly<Record<string, { readonly typeName: string; readonly methods: readonly { readonly name: string; readonly output: string }[] }>>;

/** Response type names by `service/method`, from the generated method tables of one revision. */
function outputTypes(services: ServiceTables): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const s of Object.values(services)) for (const m of s.methods) out.set(`${s.typeName}/${m.name}`, m.output);
  return out;
}

const outputs: Readonly<Record<Revision, ReadonlyMap<string, string>>> = {
  v1alpha1: outputTypes(services_v1alpha1_api),
  v1beta1: outputTypes(services_v1beta1_api),
};

/** The full response type name of a method of revision `version`, or undefined if it has none. */
export function responseTypeName(version: Revision, ref: MethodRef): string | undefined {
  return outputs[version].get(`${ref.service}/${ref.method}`);
}
