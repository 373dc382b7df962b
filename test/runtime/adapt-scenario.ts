import { spawn } from "node:child_process";
import { expect } from "vitest";
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import {
  CreateContainerRequestSchema,
  CreateContainerResponseSchema,
  StopContainerRequestSchema,
  StopContainerResponseSchema,
  UpdateContainerRequestSchema,
  UpdateContainerResponseSchema,
  ValidateContainerAdjustmentRequestSchema,
  type ValidateContainerAdjustmentRequest,
  ValidateContainerAdjustmentResponseSchema,
} from "../../gen/v1beta1/api_pb.js";
import { CreateContainerResult } from "../../src/runtime/create-result.js";
import { DEFAULT_VALIDATOR, type DefaultValidatorConfig, defaultValidator, type ValidatorHandler } from "../../src/runtime/default-validator.js";
import { AdaptationError } from "../../src/runtime/errors.js";
import { StopContainerResult, UpdateContainerResult } from "../../src/runtime/update-result.js";
import { addValidationPlugin, completeValidationRequest, validationRejection, validationRequest } from "../../src/runtime/validation.js";

/**
 * One event through scripted plugins, the input of both the Go judge (test/interop/adapt-peer)
 * and `runTs`. Requests and replies are protobuf JSON.
 */
export interface Scenario {
  event: "CreateContainer" | "UpdateContainer" | "StopContainer";
  request: JsonValue;
  plugins: ScriptedPlugin[];
  defaultValidator?: DefaultValidatorConfig;
}

/** A plugin answering with a fixed reply (null: no reply) or error, and maybe validating. */
export interface ScriptedPlugin {
  idx: string;
  name: string;
  /** Whether it handles the event at all (default true). */
  handles?: boolean;
  reply?: JsonValue;
  error?: string;
  validate?: { reject: boolean; reason: string };
}

/** What happened: what each plugin and scripted validator received, the response or the error. */
export interface Outcome {
  received: { plugin: string; request: JsonValue }[];
  validations: { plugin: string; request: JsonValue }[];
  response: JsonValue | null;
  error: string | null;
}

/** The TypeScript side's outcome, plus every rejection (Go reports whichever validator finished first). */
export interface TsOutcome extends Outcome {
  rejections: string[];
}

interface Participant {
  idx: string;
  name: string;
  script?: ScriptedPlugin;
  validator?: ValidatorHandler;
}

/** Runs a scenario through nri-wire's merge engine the way the Go runtime drives its own. */
export function runTs(s: Scenario): TsOutcome {
  const out: TsOutcome = { received: [], validations: [], response: null, error: null, rejections: [] };
  const participants: Participant[] = [];
  if (s.defaultValidator?.enable === true) participants.push({ ...DEFAULT_VALIDATOR, validator: defaultValidator(s.defaultValidator) });
  for (const p of s.plugins) {
    const v = p.validate;
    const handler: ValidatorHandler | undefined =
      v === undefined ? undefined : () => fromJson(ValidateContainerAdjustmentResponseSchema, { reject: v.reject, reason: v.reason });
    participants.push({ idx: p.idx, name: p.name, script: p, ...(handler === undefined ? {} : { validator: handler }) });
  }
  participants.sort((a, b) => (a.idx < b.idx ? -1 : a.idx > b.idx ? 1 : 0));
  const handling = participants.filter((p) => p.script !== undefined && p.script.handles !== false);

  try {
    switch (s.event) {
      case "CreateContainer": {
        const req = fromJson(CreateContainerRequestSchema, s.request);
        const result = new CreateContainerResult(req);
        const validators = participants.filter((p) => p.validator !== undefined);
        const vreq = validators.length > 0 ? validationRequest(req) : undefined;
        for (const p of participants) {
          if (vreq !== undefined) addValidationPlugin(vreq, p.idx, p.name);
          if (!handling.includes(p)) continue;
          out.received.push({ plugin: id(p), request: toJson(CreateContainerRequestSchema, req) });
          result.apply(id(p), reply(p.script!, (j) => fromJson(CreateContainerResponseSchema, j)));
        }
        if (vreq !== undefined) {
          completeValidationRequest(vreq, result);
          validate(out, validators, vreq);
          if (out.error !== null) return out;
        }
        out.response = toJson(CreateContainerResponseSchema, result.response());
        return out;
      }
      case "UpdateContainer": {
        const req = fromJson(UpdateContainerRequestSchema, s.request);
        const result = new UpdateContainerResult(req);
        for (const p of handling) {
          out.received.push({ plugin: id(p), request: toJson(UpdateContainerRequestSchema, req) });
          result.apply(id(p), reply(p.script!, (j) => fromJson(UpdateContainerResponseSchema, j)));
        }
        out.response = toJson(UpdateContainerResponseSchema, result.response());
        return out;
      }
      case "StopContainer": {
        const req = fromJson(StopContainerRequestSchema, s.request);
        const result = new StopContainerResult();
        for (const p of handling) {
          out.received.push({ plugin: id(p), request: toJson(StopContainerRequestSchema, req) });
          result.apply(id(p), reply(p.script!, (j) => fromJson(StopContainerResponseSchema, j)));
        }
        out.response = toJson(StopContainerResponseSchema, result.response());
        return out;
      }
    }
  } catch (err) {
    if (!(err instanceof AdaptationError) && !(err instanceof PluginFailure)) throw err;
    out.error = err.message;
    return out;
  }
}

/** A scripted plugin's own error: the Go runtime returns it unchanged and the event fails. */
class PluginFailure extends Error {}

function reply<T>(p: ScriptedPlugin, decode: (j: JsonValue) => T): T | undefined {
  if (p.error !== undefined) throw new PluginFailure(p.error);
  return p.reply === undefined || p.reply === null ? undefined : decode(p.reply);
}

function id(p: { idx: string; name: string }): string {
  return `${p.idx}-${p.name}`;
}

/** Validators in invocation order; the first rejection fails the event (Go: the first to finish). */
function validate(out: TsOutcome, validators: Participant[], vreq: ValidateContainerAdjustmentRequest): void {
  for (const v of validators) {
    if (v.script !== undefined) out.validations.push({ plugin: id(v), request: toJson(ValidateContainerAdjustmentRequestSchema, vreq) });
    const rejection = validationRejection(id(v), v.validator!(vreq));
    if (rejection !== undefined) out.rejections.push(rejection.message);
  }
  out.error = out.rejections[0] ?? null;
}

/** Runs scenarios through the Go judge, one process for the whole batch. */
export async function runGo(bin: string, scenarios: readonly Scenario[]): Promise<Outcome[]> {
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  child.stdin.end(scenarios.map((s) => JSON.stringify(s)).join("\n") + "\n");
  const code = await exited;
  if (code !== 0) throw new Error(`adapt-peer: exit ${code}: ${stderr}`);
  const lines = stdout.split("\n").filter((l) => l !== "");
  if (lines.length !== scenarios.length) throw new Error(`adapt-peer: ${lines.length} outcomes for ${scenarios.length} scenarios: ${stderr}`);
  return lines.map((l) => JSON.parse(l) as Outcome);
}

/**
 * An outcome with Go's random orders made stable: namespaces a plugin received (Go rebuilds
 * them from a map), runs of removal-marker mounts in a reply (appended in map order),
 * validations (validators run concurrently) and the names the default validator joins from a map.
 */
export function canonical(o: Outcome): Outcome {
  const c = structuredClone(o);
  for (const r of [...c.received, ...c.validations]) sortNamespaces(r.request);
  c.validations.sort((a, b) => (a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0));
  for (const v of c.validations) sortMarkerRuns(obj(obj(v.request)?.adjust)?.mounts);
  sortMarkerRuns(obj(obj(c.response)?.adjust)?.mounts);
  if (c.error !== null) c.error = canonicalError(c.error);
  return c;
}

/** Compares with Go: equal after canonicalization; with several rejections, Go's is one of ours. */
export function expectSameAsGo(ts: TsOutcome, goOutcome: Outcome): void {
  const { rejections, ...mine } = ts;
  const a = canonical(mine);
  const b = canonical(goOutcome);
  if (a.error !== b.error && b.error !== null && rejections.length > 1 && rejections.includes(goOutcome.error!)) b.error = a.error;
  expect(a).toEqual(b);
}

/** The default validator's map-ordered name lists, sorted. */
export function canonicalError(e: string): string {
  const m = /^(.*attempted restricted (?:namespace|sysctl) adjustment by plugin\(s\) )(.*)$/su.exec(e);
  return m === null ? e : m[1]! + m[2]!.split(", ").sort().join(", ");
}

function obj(v: JsonValue | undefined): Record<string, JsonValue> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

function sortNamespaces(req: JsonValue): void {
  const linux = obj(obj(obj(req)?.container)?.linux);
  const ns = linux?.namespaces;
  if (Array.isArray(ns)) ns.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function sortMarkerRuns(mounts: JsonValue | undefined): void {
  if (!Array.isArray(mounts)) return;
  const isMarker = (m: JsonValue) => String(obj(m)?.destination ?? "").startsWith("-");
  for (let i = 0; i < mounts.length; ) {
    if (!isMarker(mounts[i]!)) {
      i++;
      continue;
    }
    let j = i;
    while (j < mounts.length && isMarker(mounts[j]!)) j++;
    const run = mounts.slice(i, j).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    mounts.splice(i, j - i, ...run);
    i = j;
  }
}
