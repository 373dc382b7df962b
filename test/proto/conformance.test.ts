import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ScalarType } from "@bufbuild/protobuf";
import type { DescEnum, DescField, DescFile, DescMessage } from "@bufbuild/protobuf";
import { file_google_protobuf_any } from "@bufbuild/protobuf/wkt";
import { file_v1alpha1_api } from "../../gen/v1alpha1/api_pb.js";
import { file_v1beta1_api } from "../../gen/v1beta1/api_pb.js";
import { file_ttrpc_request } from "../../gen/ttrpc/request_pb.js";
import { file_google_rpc_status } from "../../gen/google/rpc/status_pb.js";
import { allEnums, allMessages } from "../arbitraries/message.js";

/**
 * The generated descriptors against the binding wire contracts (test/fixtures/wire, copies of
 * the upstream descriptors): every message, field number, name and type, every enum value and
 * every method. Each file is normalized into the contract's own notation and compared whole, so
 * any extra, missing or changed item fails.
 */

interface ContractFile {
  file: string;
  package: string;
  syntax: string;
  services: Record<string, string[]>;
  messages: Record<string, string[]>;
  enums: Record<string, Record<string, number>>;
}

interface Contract {
  note: string;
  files: ContractFile[];
}

function loadContract(name: string): Contract {
  const url = new URL(`../fixtures/wire/${name}`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as Contract;
}

/** Scalar type names as .proto spells them. */
const scalarNames: Record<ScalarType, string> = {
  [ScalarType.DOUBLE]: "double",
  [ScalarType.FLOAT]: "float",
  [ScalarType.INT64]: "int64",
  [ScalarType.UINT64]: "uint64",
  [ScalarType.INT32]: "int32",
  [ScalarType.FIXED64]: "fixed64",
  [ScalarType.FIXED32]: "fixed32",
  [ScalarType.BOOL]: "bool",
  [ScalarType.STRING]: "string",
  [ScalarType.BYTES]: "bytes",
  [ScalarType.UINT32]: "uint32",
  [ScalarType.SFIXED32]: "sfixed32",
  [ScalarType.SFIXED64]: "sfixed64",
  [ScalarType.SINT32]: "sint32",
  [ScalarType.SINT64]: "sint64",
};

/** A type's name as the contract writes it: relative to the package when local, else full. */
function typeRef(desc: DescMessage | DescEnum, pkg: string): string {
  const local = desc.file.proto.package === pkg;
  return local && pkg !== "" ? desc.typeName.slice(pkg.length + 1) : desc.typeName;
}

function fieldType(field: DescField, pkg: string): string {
  // `optional` has no place in the contracts: proto3 optional would put zero values on the wire.
  const optional = field.proto.proto3Optional ? "optional " : "";
  switch (field.fieldKind) {
    case "scalar":
      return optional + scalarNames[field.scalar];
    case "enum":
      return optional + typeRef(field.enum, pkg);
    case "message":
      return optional + typeRef(field.message, pkg);
    case "list":
      return `repeated ${elementType(field, pkg)}`;
    case "map":
      return `map<${scalarNames[field.mapKey]},${elementType(field, pkg)}>`;
  }
}

/** The element type of a list or the value type of a map. */
function elementType(field: DescField & { fieldKind: "list" | "map" }, pkg: string): string {
  const kind = field.fieldKind === "list" ? field.listKind : field.mapKind;
  switch (kind) {
    case "scalar":
      return scalarNames[field.scalar as ScalarType];
    case "enum":
      return typeRef(field.enum as DescEnum, pkg);
    case "message":
      return typeRef(field.message as DescMessage, pkg);
  }
}

/** `"N name: type"` per field, in field-number order (the order the encoder writes them in). */
function normalizeFields(msg: DescMessage, pkg: string): string[] {
  return [...msg.fields]
    .sort((a, b) => a.number - b.number)
    .map((f) => `${f.number} ${f.name}: ${fieldType(f, pkg)}`);
}

function sortByNumber(fields: readonly string[]): string[] {
  return [...fields].sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
}

/** A generated file in the contract's notation (method lists sorted: their order is not wire). */
function normalizeFile(file: DescFile): Omit<ContractFile, "file"> {
  const pkg = file.proto.package;
  const messages: Record<string, string[]> = {};
  for (const m of allMessages(file)) messages[typeRef(m, pkg)] = normalizeFields(m, pkg);
  const enums: Record<string, Record<string, number>> = {};
  for (const e of allEnums(file)) {
    enums[typeRef(e, pkg)] = Object.fromEntries(e.values.map((v) => [v.name, v.number]));
  }
  const services: Record<string, string[]> = {};
  for (const s of file.services) {
    services[s.name] = s.methods
      .map((m) => `${m.name}(${typeRef(m.input, pkg)}) -> ${typeRef(m.output, pkg)}`)
      .sort();
  }
  return { package: pkg, syntax: file.proto.syntax, services, messages, enums };
}

/** A contract file with field lists in number order and method lists sorted, like normalizeFile. */
function normalizeContract(c: ContractFile): Omit<ContractFile, "file"> {
  return {
    package: c.package,
    syntax: c.syntax,
    services: Object.fromEntries(Object.entries(c.services).map(([k, v]) => [k, [...v].sort()])),
    messages: Object.fromEntries(Object.entries(c.messages).map(([k, v]) => [k, sortByNumber(v)])),
    enums: c.enums,
  };
}

function contractFile(c: Contract, name: string): ContractFile {
  const f = c.files.find((x) => x.file === name);
  if (f === undefined) throw new Error(`test: contract has no file ${name}`);
  return f;
}

/** protoc's default JSON name: drop each underscore and upper-case the letter after it. */
function protocJsonName(name: string): string {
  let out = "";
  let upper = false;
  for (const ch of name) {
    if (ch === "_") {
      upper = true;
    } else {
      out += upper ? ch.toUpperCase() : ch;
      upper = false;
    }
  }
  return out;
}

const nri = loadContract("nri-v1alpha1.wire.json");
const ttrpc = loadContract("ttrpc.wire.json");
/**
 * The contract is containerd/nri v0.12.2; the protos follow v0.12.5, whose only change on the
 * wire is the failure policy of v0.12.4 (read from the v0.12.5 api.proto). It is applied to the
 * contract here, by name and number, so everything else is still compared with the contract.
 */
function withV0125(c: ContractFile): ContractFile {
  const out = structuredClone(c);
  const configure = out.messages["ConfigureResponse"];
  if (configure === undefined) throw new Error("test: contract has no ConfigureResponse");
  configure.push("3 failure_policy: FailurePolicy");
  out.messages["FailurePolicy"] = ["1 fail_request: bool", "2 keep_connected: bool"];
  return out;
}

const nriContract = withV0125(contractFile(nri, "api.proto"));
const alpha = normalizeFile(file_v1alpha1_api);
const beta = normalizeFile(file_v1beta1_api);

describe("v1alpha1 against nri-v1alpha1.wire.json (containerd/nri v0.12.2) plus v0.12.5's failure policy", () => {
  it("the contract is the one file, package and syntax expected", () => {
    expect(nri.files).toHaveLength(1);
    expect(alpha.package).toBe("nri.pkg.api.v1alpha1");
    expect(nriContract.package).toBe(alpha.package);
    expect(alpha.syntax).toBe("proto3");
    expect(nriContract.syntax).toBe("proto3");
  });

  it("has 86 messages, 10 enums and 21 methods, as the contract does", () => {
    const methods = (s: Record<string, string[]>) => Object.values(s).flat().length;
    expect(Object.keys(nriContract.messages)).toHaveLength(86);
    expect(Object.keys(alpha.messages)).toHaveLength(86);
    expect(Object.keys(nriContract.enums)).toHaveLength(10);
    expect(Object.keys(alpha.enums)).toHaveLength(10);
    expect(methods(nriContract.services)).toBe(21);
    expect(methods(alpha.services)).toBe(21);
    expect(Object.keys(alpha.services).sort()).toEqual(["HostFunctions", "Plugin", "Runtime"]);
  });

  it("declares the same message names", () => {
    expect(Object.keys(alpha.messages).sort()).toEqual(Object.keys(nriContract.messages).sort());
  });

  // One case per message so a mismatch names the message.
  const contract = normalizeContract(nriContract);
  it.each(Object.keys(contract.messages))("message %s: every field number, name and type", (name) => {
    expect(alpha.messages[name]).toEqual(contract.messages[name]);
  });

  it("every message, field, enum value and method, compared whole", () => {
    expect(alpha).toEqual(contract);
  });

  it.each(Object.keys(nriContract.enums))("enum %s: every value name and number", (name) => {
    expect(alpha.enums[name]).toEqual(nriContract.enums[name]);
  });

  it("every service method with its input and output", () => {
    expect(alpha.services).toEqual(contract.services);
  });
});

describe("wire details the contract notation does not spell out", () => {
  const files = [file_v1alpha1_api, file_v1beta1_api, file_ttrpc_request, file_google_rpc_status];
  const fields = files.flatMap((f) => allMessages(f).flatMap((m) => m.fields));

  it("no field uses proto3 `optional` or explicit presence for a scalar or enum", () => {
    const explicit = fields
      .filter((f) => f.fieldKind === "scalar" || f.fieldKind === "enum")
      .filter((f) => f.proto.proto3Optional || f.presence !== 2 /* IMPLICIT */)
      .map((f) => f.toString());
    expect(explicit).toEqual([]);
  });

  it("every repeated scalar and enum field is packed (the proto3 default, as Go writes them)", () => {
    const repeatedScalars = fields.filter(
      (f) => f.fieldKind === "list" && f.listKind !== "message" && f.scalar !== ScalarType.STRING && f.scalar !== ScalarType.BYTES,
    );
    // additional_gids (User, both versions) and the two enum lists of flags, in both versions.
    expect(repeatedScalars.map((f) => f.toString()).sort()).toEqual([
      "field nri.pkg.api.v1alpha1.LinuxMemoryPolicy.flags",
      "field nri.pkg.api.v1alpha1.LinuxScheduler.flags",
      "field nri.pkg.api.v1alpha1.User.additional_gids",
      "field nri.pkg.api.v1beta1.LinuxMemoryPolicy.flags",
      "field nri.pkg.api.v1beta1.LinuxScheduler.flags",
      "field nri.pkg.api.v1beta1.User.additional_gids",
    ]);
    for (const f of repeatedScalars) expect(f.fieldKind === "list" && f.packed, f.toString()).toBe(true);
  });

  it("JSON names are protoc's defaults (no json_name options): NRI_version is NRIVersion", () => {
    const custom = fields.filter((f) => f.jsonName !== protocJsonName(f.name)).map((f) => f.toString());
    expect(custom).toEqual([]);
    const reg = allMessages(file_v1alpha1_api).find((m) => m.name === "RegisterPluginRequest");
    expect(reg?.fields.map((f) => [f.name, f.jsonName, f.localName])).toEqual([
      ["plugin_name", "pluginName", "pluginName"],
      ["plugin_idx", "pluginIdx", "pluginIdx"],
      ["NRI_version", "NRIVersion", "NRIVersion"],
    ]);
  });

  it("every enum is open (proto3): undeclared numbers survive decoding", () => {
    for (const f of [file_v1alpha1_api, file_v1beta1_api]) {
      for (const e of allEnums(f)) expect(e.open, e.typeName).toBe(true);
    }
  });
});

describe("ttrpc envelope against ttrpc.wire.json", () => {
  const cases: [string, DescFile][] = [
    ["google/protobuf/any.proto", file_google_protobuf_any],
    ["google/rpc/status.proto", file_google_rpc_status],
    ["request.proto", file_ttrpc_request],
  ];

  it("the contract has exactly these three files", () => {
    expect(ttrpc.files.map((f) => f.file).sort()).toEqual(cases.map(([n]) => n).sort());
  });

  it.each(cases)("%s: package, messages, fields, enums and services", (name, file) => {
    expect(normalizeFile(file)).toEqual(normalizeContract(contractFile(ttrpc, name)));
  });

  it("ttrpc.proto imports google/rpc/status.proto, which imports google/protobuf/any.proto", () => {
    expect(file_ttrpc_request.dependencies.map((d) => d.name)).toEqual(["google/rpc/status"]);
    expect(file_google_rpc_status.dependencies.map((d) => d.name)).toEqual(["google/protobuf/any"]);
  });
});

describe("v1beta1: v1alpha1 with exactly the changes of PROTOCOL.md section 3", () => {
  it("package nri.pkg.api.v1beta1, proto3, importing nothing", () => {
    expect(beta.package).toBe("nri.pkg.api.v1beta1");
    expect(beta.syntax).toBe("proto3");
    expect(file_v1beta1_api.dependencies).toEqual([]);
    expect(file_v1alpha1_api.dependencies).toEqual([]);
  });

  it("adds RegisterPluginResponse, ShutdownRequest, ShutdownResponse, LogResponse; removes StateChangeEvent, Empty", () => {
    const a = new Set(Object.keys(alpha.messages));
    const b = new Set(Object.keys(beta.messages));
    expect([...b].filter((n) => !a.has(n)).sort()).toEqual([
      "LogResponse",
      "RegisterPluginResponse",
      "ShutdownRequest",
      "ShutdownResponse",
    ]);
    expect([...a].filter((n) => !b.has(n)).sort()).toEqual(["Empty", "StateChangeEvent"]);
    expect(b.size).toBe(86 - 2 + 4);
  });

  it("every shared message is identical field for field", () => {
    const shared = Object.keys(alpha.messages).filter((n) => n in beta.messages);
    expect(shared).toHaveLength(84);
    for (const n of shared) expect(beta.messages[n], n).toEqual(alpha.messages[n]);
  });

  it("the enums are identical (Event stays: it defines the subscription mask)", () => {
    expect(beta.enums).toEqual(alpha.enums);
    expect(beta.enums["Event"]?.["LAST"]).toBe(15);
  });

  it("the whole file is v1alpha1 edited exactly as section 3 says, and nothing else", () => {
    const expected = structuredClone(normalizeContract(nriContract));
    expected.package = "nri.pkg.api.v1beta1";
    delete expected.messages["StateChangeEvent"];
    delete expected.messages["Empty"];
    expected.messages["RegisterPluginResponse"] = [];
    expected.messages["ShutdownRequest"] = ["1 reason: string"];
    expected.messages["ShutdownResponse"] = [];
    expected.messages["LogResponse"] = [];
    const replace = (svc: string, from: string, to: string | undefined): void => {
      const list = expected.services[svc];
      if (list === undefined) throw new Error(`test: no service ${svc}`);
      const i = list.indexOf(from);
      expect(i, `${svc}: ${from}`).toBeGreaterThanOrEqual(0);
      if (to === undefined) list.splice(i, 1);
      else list[i] = to;
      list.sort();
    };
    replace("Runtime", "RegisterPlugin(RegisterPluginRequest) -> Empty", "RegisterPlugin(RegisterPluginRequest) -> RegisterPluginResponse");
    replace("Plugin", "Shutdown(Empty) -> Empty", "Shutdown(ShutdownRequest) -> ShutdownResponse");
    replace("Plugin", "StateChange(StateChangeEvent) -> Empty", undefined);
    replace("HostFunctions", "Log(LogRequest) -> Empty", "Log(LogRequest) -> LogResponse");
    expect(beta).toEqual(expected);
    expect(Object.keys(beta.messages)).toHaveLength(88);
    expect(Object.values(beta.services).flat()).toHaveLength(20);
  });

  it("no v1beta1 type refers to anything in v1alpha1 (or any other package)", () => {
    const refs = allMessages(file_v1beta1_api)
      .flatMap((m) => m.fields)
      .map((f) => f.message ?? f.enum)
      .filter((d) => d !== undefined)
      .map((d) => d.typeName);
    const methods = file_v1beta1_api.services.flatMap((s) => s.methods.flatMap((m) => [m.input.typeName, m.output.typeName]));
    for (const name of [...refs, ...methods]) expect(name).toMatch(/^nri\.pkg\.api\.v1beta1\./);
  });
});
