import { type JsonValue, fromJson, toJson } from "@bufbuild/protobuf";
import { ContainerAdjustmentSchema, CreateContainerRequestSchema, CreateContainerResponseSchema, Field, OwningPluginsSchema, type OwningPlugins, ValidateContainerAdjustmentRequestSchema } from "../../gen/v1beta1/api_pb.js";
import { readCapture } from "../capture/capture-file.js";
import { type SessionCall, type SessionCalls, sessionCalls } from "../capture/session-calls.js";
import { CreateContainerResult } from "../runtime/create-result.js";
import { errorText } from "../internal/error-text.js";

/*
 * One self-contained HTML page of a recorded session (one capture per plugin connection): who
 * spoke which revision, a timeline of every call per plugin with its latency, each container's
 * final adjustment with the plugin owning each field, and every refusal and error. No script,
 * no outside resource (its Content-Security-Policy forbids them): it opens offline, anywhere.
 */

function esc(text: string): string {
  return text.replace(/[<>&"']/gu, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&#39;" })[c]!);
}

function ms(ns: number): string {
  return `${(ns / 1e6).toFixed(3)} ms`;
}

function obj(v: JsonValue | undefined): Record<string, JsonValue> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v : undefined;
}

/** What answered a call, in words. */
function outcome(c: SessionCall): string {
  if (c.latencyNs === undefined) return "no answer";
  return c.status === undefined ? "ok" : `${c.status.name}: ${c.status.message}`;
}

function outcomeClass(c: SessionCall): string {
  return c.latencyNs === undefined ? "lost" : c.status === undefined ? "ok" : "refused";
}

/** The call's name as the table shows it: `StateChange (= RunPodSandbox)`. */
function callName(c: SessionCall): string {
  return c.translatesTo === undefined ? c.method : `${c.method} (= ${c.translatesTo})`;
}

/** The container a call is about, when its request names one. */
function containerOf(c: SessionCall): string | undefined {
  const id = obj(obj(c.request)?.container)?.id;
  return typeof id === "string" ? id : undefined;
}

/** `10-a` before `9-b`? No: by index as a number, then name, as runtimes order plugins. */
function byPluginOrder(a: string, b: string): number {
  const [ia = "", ...na] = a.split("-");
  const [ib = "", ...nb] = b.split("-");
  return Number(ia) - Number(ib) || na.join("-").localeCompare(nb.join("-"));
}

interface ContainerView {
  readonly id: string;
  readonly name: string;
  readonly pod: string;
  /** Each plugin's answer to its CreateContainer. */
  readonly answers: { plugin: string; call: SessionCall }[];
  adjust?: JsonValue;
  owners?: OwningPlugins;
  /** Where the adjustment and owners come from. */
  source?: string;
  problem?: string;
}

/** The final adjustment of each created container: the runtime's own (a validator saw it) or merged here as the Go runtime merges. */
function containers(sessions: readonly SessionCalls[]): ContainerView[] {
  const byId = new Map<string, ContainerView>();
  for (const s of sessions) {
    for (const c of s.calls) {
      if (c.caller !== "runtime" || c.method !== "CreateContainer") continue;
      const id = containerOf(c);
      if (id === undefined) continue;
      const ctr = obj(obj(c.request)?.container);
      const pod = obj(obj(c.request)?.pod);
      let v = byId.get(id);
      if (v === undefined) {
        v = { id, name: typeof ctr?.name === "string" ? ctr.name : "", pod: typeof pod?.name === "string" ? pod.name : typeof pod?.id === "string" ? pod.id : "", answers: [] };
        byId.set(id, v);
      }
      v.answers.push({ plugin: s.plugin ?? s.session, call: c });
    }
  }
  for (const v of byId.values()) {
    v.answers.sort((a, b) => byPluginOrder(a.plugin, b.plugin));
    // A validator was sent the runtime's merged adjustment and its owners: the runtime's own word.
    const validated = sessions.flatMap((s) => s.calls).filter((c) => c.method === "ValidateContainerAdjustment" && containerOf(c) === v.id && c.request !== undefined);
    const last = validated.at(-1);
    if (last !== undefined) {
      try {
        const req = fromJson(ValidateContainerAdjustmentRequestSchema, last.request!, { ignoreUnknownFields: true });
        v.adjust = req.adjust === undefined ? {} : toJson(ContainerAdjustmentSchema, req.adjust);
        v.owners = req.owners ?? fromJson(OwningPluginsSchema, {});
        v.source = "as the runtime sent it to the validators";
      } catch (e) {
        v.problem = `the validation request does not decode: ${errorText(e)}`;
      }
      continue;
    }
    const first = v.answers[0]!.call;
    try {
      const result = new CreateContainerResult(fromJson(CreateContainerRequestSchema, first.request ?? {}, { ignoreUnknownFields: true }));
      for (const a of v.answers) {
        if (a.call.status !== undefined || a.call.latencyNs === undefined) continue;
        result.apply(a.plugin, fromJson(CreateContainerResponseSchema, a.call.response ?? {}, { ignoreUnknownFields: true }));
      }
      v.adjust = obj(toJson(CreateContainerResponseSchema, result.response()))?.adjust ?? {};
      v.owners = result.owners();
      v.source = "merged from the plugins' answers as the Go runtime merges them";
    } catch (e) {
      v.problem = `the answers do not merge: ${errorText(e)}`;
    }
  }
  return [...byId.values()];
}

/** One row per owned field of container `id`: field, key, owning plugin. */
function ownerRows(owners: OwningPlugins | undefined, id: string): [string, string, string][] {
  const f = owners?.owners[id];
  if (f === undefined) return [];
  const rows: [string, string, string][] = [];
  for (const [field, plugin] of Object.entries(f.simple)) rows.push([Field[Number(field)] ?? `field ${field}`, "", plugin]);
  for (const [field, compound] of Object.entries(f.compound)) {
    for (const [key, plugin] of Object.entries(compound.owners)) rows.push([Field[Number(field)] ?? `field ${field}`, key, plugin]);
  }
  return rows;
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.calls td:nth-child(5) { max-width: 16em; overflow-wrap: anywhere; }
.ok { color: #1a6b1a; } .refused { color: #b00020; font-weight: 600; } .lost { color: #a65e00; font-weight: 600; }
rect.ok { fill: #4a90d9; } rect.refused { fill: #d0021b; } rect.lost { fill: #f5a623; }
pre { background: #f8f8f8; padding: .5em; overflow-x: auto; margin: .3em 0; }
svg { background: #fafafa; border: 1px solid #eee; }
`;

/**
 * The session view of the captures whose index files are `indexPaths` (one per plugin
 * connection, as `nri-wire record` or a TestRuntime with `record` writes them): one HTML page,
 * self-contained and without script. Throws naming a capture that cannot be read.
 */
export function sessionView(indexPaths: readonly string[]): string {
  const sessions = indexPaths.map((p) => sessionCalls(readCapture(p)));
  const all = sessions.flatMap((s) => s.calls);
  const t0 = all.reduce((m, c) => (c.startNs < m ? c.startNs : m), all[0]?.startNs ?? 0n);
  const end = all.reduce((m, c) => Math.max(m, Number(c.startNs - t0) + (c.latencyNs ?? 0)), 0);
  const span = Math.max(end, 1);
  const name = (s: SessionCalls): string => s.plugin ?? `${s.session} (not registered)`;
  const out: string[] = [];
  out.push(
    "<!DOCTYPE html>",
    '<html lang="en"><head><meta charset="utf-8">',
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
    `<title>NRI session: ${esc(sessions.map(name).join(", "))}</title><style>${STYLE}</style></head><body>`,
    `<h1>NRI session: ${sessions.length} connection${sessions.length === 1 ? "" : "s"}, ${all.length} calls over ${ms(end)}</h1>`,
  );

  out.push('<h2 id="revisions">Who spoke what</h2><table><tr><th>plugin</th><th>capture</th><th>plugin registered in</th><th>runtime called in</th><th>event calls</th><th>runtime</th><th>calls</th><th>refused or lost</th></tr>');
  for (const s of sessions) {
    const bad = s.calls.filter((c) => outcomeClass(c) !== "ok").length;
    const rt = s.runtime === undefined ? "" : `${s.runtime.name} ${s.runtime.version}${s.runtime.nriVersion === "" ? "" : `, NRI ${s.runtime.nriVersion}`}`;
    out.push(
      `<tr><td>${esc(name(s))}</td><td>${esc(s.session)}</td><td>${esc(s.pluginRevision ?? "")}</td><td>${esc(s.runtimeRevision ?? "")}</td><td>${esc(s.eventCalls ?? "")}</td><td>${esc(rt)}</td><td class="num">${s.calls.length}</td><td class="num${bad > 0 ? " refused" : ""}">${bad}</td></tr>`,
    );
  }
  out.push("</table>");

  out.push(`<h2 id="timeline">Timeline</h2><p>Every call per plugin from the first call of the session (0) to the last answer (${ms(end)}); a bar spans a call's request and its answer, as recorded.</p>`);
  const rowH = 22;
  const labelW = 170;
  out.push(`<svg role="img" aria-label="timeline" width="${labelW + 820}" height="${sessions.length * rowH + 24}" viewBox="0 0 ${labelW + 820} ${sessions.length * rowH + 24}">`);
  for (const [i, s] of sessions.entries()) {
    const y = i * rowH + 4;
    out.push(`<text x="4" y="${y + 14}" font-size="12">${esc(name(s))}</text>`);
    for (const c of s.calls) {
      const x = labelW + (Number(c.startNs - t0) / span) * 800;
      const w = Math.max(((c.latencyNs ?? span - Number(c.startNs - t0)) / span) * 800, 2);
      out.push(`<rect class="${outcomeClass(c)}" x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${rowH - 6}"><title>${esc(`${name(s)}: ${callName(c)}: ${c.latencyNs === undefined ? "no answer" : ms(c.latencyNs)}, ${outcome(c)}`)}</title></rect>`);
    }
  }
  out.push(`<text x="${labelW}" y="${sessions.length * rowH + 20}" font-size="11">0</text><text x="${labelW + 800}" y="${sessions.length * rowH + 20}" font-size="11" text-anchor="end">${esc(ms(end))}</text></svg>`);
  for (const s of sessions) {
    out.push(`<h3>${esc(name(s))}</h3><table class="calls" data-plugin="${esc(name(s))}"><tr><th>at</th><th>caller</th><th>call</th><th>revision</th><th>container</th><th>latency</th><th>answer</th></tr>`);
    for (const c of s.calls) {
      const details = [c.request === undefined ? "" : `<details><summary>request</summary><pre>${esc(JSON.stringify(c.request, null, 2))}</pre></details>`, c.response === undefined ? "" : `<details><summary>response</summary><pre>${esc(JSON.stringify(c.response, null, 2))}</pre></details>`].join("");
      out.push(
        `<tr><td class="num">${ms(Number(c.startNs - t0))}</td><td>${c.caller}</td><td>${esc(callName(c))}${details}</td><td>${esc(c.revision ?? "")}</td><td>${esc(containerOf(c) ?? "")}</td><td class="num">${c.latencyNs === undefined ? "" : ms(c.latencyNs)}</td><td class="${outcomeClass(c)}">${esc(outcome(c))}</td></tr>`,
      );
    }
    out.push("</table>");
    for (const d of s.damage) out.push(`<p class="refused">damage at offset ${d.offset} (${d.dir}): ${esc(d.error ?? "")}</p>`);
  }

  out.push('<h2 id="containers">Containers</h2>');
  const views = containers(sessions);
  if (views.length === 0) out.push("<p>No container was created in this session.</p>");
  for (const v of views) {
    out.push(`<h3 class="container" data-container="${esc(v.id)}">${esc(v.id)}${v.name === "" ? "" : ` (${esc(v.name)}${v.pod === "" ? "" : ` in pod ${esc(v.pod)}`})`}</h3>`);
    out.push("<table><tr><th>plugin</th><th>CreateContainer answer</th><th>latency</th></tr>");
    for (const a of v.answers) out.push(`<tr><td>${esc(a.plugin)}</td><td class="${outcomeClass(a.call)}">${esc(outcome(a.call))}</td><td class="num">${a.call.latencyNs === undefined ? "" : ms(a.call.latencyNs)}</td></tr>`);
    out.push("</table>");
    if (v.problem !== undefined) {
      out.push(`<p class="refused">${esc(v.problem)}</p>`);
      continue;
    }
    const rows = ownerRows(v.owners, v.id);
    out.push(`<p>Final adjustment, ${esc(v.source ?? "")}; each field with the plugin that owns it:</p>`);
    if (rows.length === 0) out.push("<p>No plugin adjusted it.</p>");
    else {
      out.push('<table class="owners"><tr><th>field</th><th>key</th><th>owner</th></tr>');
      for (const [field, key, plugin] of rows) out.push(`<tr><td>${esc(field)}</td><td>${esc(key)}</td><td>${esc(plugin)}</td></tr>`);
      out.push("</table>");
    }
    out.push(`<pre>${esc(JSON.stringify(v.adjust ?? {}, null, 2))}</pre>`);
  }

  const problems = sessions.flatMap((s) => s.calls.filter((c) => outcomeClass(c) !== "ok").map((c) => ({ s, c })));
  out.push(`<h2 id="problems">Refusals and errors (${problems.length})</h2>`);
  if (problems.length === 0) out.push("<p>None: every call was answered OK.</p>");
  else {
    out.push("<table><tr><th>at</th><th>plugin</th><th>call</th><th>container</th><th>answer</th></tr>");
    for (const { s, c } of problems) out.push(`<tr><td class="num">${ms(Number(c.startNs - t0))}</td><td>${esc(name(s))}</td><td>${esc(callName(c))}</td><td>${esc(containerOf(c) ?? "")}</td><td class="${outcomeClass(c)}">${esc(outcome(c))}</td></tr>`);
    out.push("</table>");
  }
  out.push("</body></html>", "");
  return out.join("\n");
}
