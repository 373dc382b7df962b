import type { AnswerRecord, CheckResult, ConformanceReport, DialectReport } from "./conformance.js";

/*
 * The conformance report for people (a table per dialect), for jq (JSON) and for CI (JUnit
 * XML: one testsuite per dialect, one testcase per check).
 */

const MARK: Record<CheckResult["status"], string> = { pass: "PASS", fail: "FAIL", skip: "skip" };

function indent(text: string, by: string): string {
  return text
    .split("\n")
    .map((l) => `${by}${l}`)
    .join("\n");
}

/** One call's answer, and its expectation with the differences, as lines. */
function answerLines(a: AnswerRecord): string[] {
  const got = a.lost !== undefined ? `no answer: ${a.lost}` : a.refusal !== undefined && a.answer === undefined ? `refused: ${a.refusal}` : `${JSON.stringify(a.answer ?? {})}${a.refusal === undefined ? "" : ` (rejects: ${a.refusal})`}`;
  const lines = [`${a.method}  ${got}`];
  if (a.expected !== undefined) {
    const e = a.expected;
    const want = "refusal" in e ? `expected a refusal${e.refusal === "" ? "" : ` containing ${JSON.stringify(e.refusal)}`}` : `expected (${e.match}) ${JSON.stringify(e.answer)}`;
    lines.push(`  ${want}${a.diff?.length === 0 ? ", as expected" : ""}`);
    for (const d of a.diff ?? []) lines.push(`  ${d}`);
  }
  return lines;
}

function dialectTable(f: DialectReport): string {
  const reg = f.registration === undefined ? "not registered" : `${f.registration.idx}-${f.registration.name}, registered with ${f.registration.version}`;
  const width = Math.max(...f.checks.map((c) => c.id.length));
  const lines = [`dialect ${f.dialect}: ${f.passed ? "passed" : "FAILED"} (${reg})`];
  for (const c of f.checks) {
    lines.push(`  ${MARK[c.status]}  ${c.id.padEnd(width)}  ${c.title}${c.note === undefined ? "" : ` (${c.note})`}`);
    for (const x of c.failures) {
      lines.push(indent(x.message, `        ${" ".repeat(width)}  `));
      if (x.offending !== undefined) lines.push(indent(JSON.stringify(x.offending, null, 2), `        ${" ".repeat(width)}    `));
    }
  }
  for (const d of f.deprecations) lines.push(`  deprecated: ${d.plugin} ${d.detail}, takes it as StateChange`);
  if (f.answers.length > 0) lines.push("  answers:", ...f.answers.flatMap(answerLines).map((l) => `    ${l}`));
  if (f.stderr !== undefined) lines.push("  the plugin's stderr ended with:", indent(f.stderr.trimEnd(), "    "));
  return lines.join("\n");
}

/** The report as tables, one per dialect, and a closing verdict. */
export function formatTable(r: ConformanceReport): string {
  const failed = r.dialects.flatMap((f) => f.checks.filter((c) => c.status === "fail").map((c) => `${f.dialect}/${c.id}`));
  const verdict = r.passed ? "all checks passed" : `${failed.length} failed: ${failed.join(", ")}`;
  return `plugin ${r.plugin}\n\n${r.dialects.map(dialectTable).join("\n\n")}\n\n${verdict}\n`;
}

/** The report as one JSON document. */
export function formatJson(r: ConformanceReport): string {
  return `${JSON.stringify(r, null, 2)}\n`;
}

function xml(text: string): string {
  return text.replace(/[<>&"']/gu, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]!);
}

/** The report as JUnit XML. */
export function formatJunit(r: ConformanceReport): string {
  const suites = r.dialects.map((f) => {
    const failures = f.checks.filter((c) => c.status === "fail").length;
    const skipped = f.checks.filter((c) => c.status === "skip").length;
    const cases = f.checks.map((c) => {
      const open = `    <testcase classname="nri-wire.test-plugin.${f.dialect}" name="${xml(`${c.id}: ${c.title}`)}">`;
      if (c.status === "skip") return `${open}<skipped message="${xml(c.note ?? "not reached")}"/></testcase>`;
      if (c.status === "pass") return `${open}</testcase>`;
      const body = c.failures.map((x) => (x.offending === undefined ? x.message : `${x.message}\n${JSON.stringify(x.offending, null, 2)}`)).join("\n\n");
      return `${open}\n      <failure message="${xml(c.failures[0]!.message)}">${xml(body)}</failure>\n    </testcase>`;
    });
    const props = f.deprecations.map((d) => `      <property name="deprecation" value="${xml(`${d.plugin} ${d.detail}`)}"/>`);
    const properties = props.length === 0 ? [] : ["    <properties>", ...props, "    </properties>"];
    const stdout = f.answers.length === 0 ? [] : [`    <system-out>${xml(f.answers.flatMap(answerLines).join("\n"))}</system-out>`];
    const stderr = f.stderr === undefined ? [] : [`    <system-err>${xml(f.stderr)}</system-err>`];
    return [`  <testsuite name="${f.dialect}" tests="${f.checks.length}" failures="${failures}" skipped="${skipped}">`, ...properties, ...cases, ...stdout, ...stderr, "  </testsuite>"].join("\n");
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xml(`nri-wire test-plugin: ${r.plugin}`)}">\n${suites.join("\n")}\n</testsuites>\n`;
}
