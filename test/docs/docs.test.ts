/**
 * The docs cannot drift from the code. Every Markdown page the package ships, and
 * CONTRIBUTING.md, is read with every fenced block (``` and ~~~, indented inside lists too):
 * ```ts blocks type-check against the package as users import it (`nri-wire/...`, resolved to
 * src/ by tsconfig.json's paths) and ```ts run blocks also run and exit 0, ```json blocks parse,
 * ```sh blocks pass `bash -n`; a block of any other language, or one exempt on purpose, says so
 * with `nocheck` in its info string, and the check lists those. Every relative link points at a
 * file that exists and, with a #fragment, at a heading there.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { anchors, type CodeBlock, codeBlocks, documents, links, read } from "./markdown.js";
import { bundle } from "../../src/ship/bundle.js";
import { RETRY_MS } from "../../src/ship/plugin-main.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BLOCKS = join(ROOT, "test/docs/.blocks");
const run = promisify(execFile);

const docs = documents(ROOT);
const blocks = docs.flatMap((f) => codeBlocks(f, read(ROOT, f)));
const ts = blocks.filter((b) => b.lang === "ts");

/** The languages the check verifies, with the flags each may carry; any other block must say `nocheck`. */
const CHECKED: Record<string, readonly string[]> = { ts: ["nocheck", "run"], json: ["nocheck"], sh: ["nocheck"] };
const where = (b: CodeBlock): string => `${b.file}:${b.line}`;

/** The file a block is written to: named after its document and line, so an error points there. */
function blockFile(b: CodeBlock): string {
  return join(BLOCKS, `${b.file.replace(/[/.]/gu, "_")}_L${b.line}.ts`);
}

afterAll(() => rmSync(BLOCKS, { recursive: true, force: true }));

describe("docs", () => {
  it("covers every Markdown page under docs/ (each one shipped), README.md, CHANGELOG.md and CONTRIBUTING.md", () => {
    // docs/api/ is the API reference `npm run docs` generates (not in git).
    const pages = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? (`${dir}/${e.name}` === "docs/api" ? [] : pages(`${dir}/${e.name}`)) : e.name.endsWith(".md") ? [`${dir}/${e.name}`] : [],
      );
    expect(docs).toEqual(["CHANGELOG.md", "CONTRIBUTING.md", "README.md", ...pages("docs")].sort());
    expect(docs.filter((d) => d.startsWith("docs/bench/")).length).toBeGreaterThan(0);
  });

  it("reads every fence style: ``` and ~~~, indented inside a list item, closed by a run at least as long", () => {
    const text = ["- a step:", "", "  ```ts", "  const a = 1;", "    const b = 2;", "  ```", "", "~~~~sh nocheck", "```", "echo hi", "~~~~", "````json", "{}", "```", "````", "", "text with ```inline``` code"].join("\n");
    expect(codeBlocks("x.md", text).map((b) => [b.line, b.lang, b.flags, b.code])).toEqual([
      [3, "ts", [], "const a = 1;\n  const b = 2;"],
      [8, "sh", ["nocheck"], "```\necho hi"],
      [12, "json", [], "{}\n```"],
    ]);
    expect(() => codeBlocks("x.md", "~~~ts\nopen")).toThrow("x.md:1: code block never closed");
  });

  it("every block names its language and is checked, or says nocheck (listed here)", () => {
    const wrong: string[] = [];
    for (const b of blocks) {
      const allowed = CHECKED[b.lang] ?? ["nocheck"];
      if (b.lang === "") wrong.push(`${where(b)}: a block without a language (\`\`\`text nocheck for plain text)`);
      else if (!(b.lang in CHECKED) && !b.nocheck) wrong.push(`${where(b)}: \`\`\`${b.lang} is not a language the check verifies: mark it \`\`\`${b.lang} nocheck`);
      for (const f of b.flags) if (!allowed.includes(f)) wrong.push(`${where(b)}: unknown code block flag "${f}" for ${b.lang}`);
    }
    expect(wrong).toEqual([]);
    const unchecked = blocks.filter((b) => b.nocheck);
    console.log(`docs: ${blocks.length} blocks in ${docs.length} pages; not checked (nocheck): ${unchecked.map((b) => `${where(b)} ${b.lang}`).join(", ")}`);
  });

  it("README.md and docs/ hold TypeScript blocks, few of them exempt from type checking", () => {
    expect(ts.length).toBeGreaterThan(5);
    expect(ts.filter((b) => b.nocheck).length).toBeLessThanOrEqual(ts.length / 4);
  });

  it("every ```json block parses", () => {
    const json = blocks.filter((b) => b.lang === "json" && !b.nocheck);
    expect(json.length).toBeGreaterThan(0);
    for (const b of json) expect(() => JSON.parse(b.code), where(b)).not.toThrow();
  });

  it("every ```sh block is valid shell (bash -n)", async () => {
    const sh = blocks.filter((b) => b.lang === "sh" && !b.nocheck);
    expect(sh.length).toBeGreaterThan(0);
    const bad: string[] = [];
    for (const b of sh) {
      const r = await new Promise<string>((resolve) => {
        const child = execFile("bash", ["-n"], (err, _out, stderr) => resolve(err === null ? "" : stderr.trim()));
        child.stdin!.end(b.code);
      });
      if (r !== "") bad.push(`${where(b)}: ${r}`);
    }
    expect(bad).toEqual([]);
  });

  it("every ```ts block type-checks against nri-wire as users import it", async () => {
    rmSync(BLOCKS, { recursive: true, force: true });
    mkdirSync(BLOCKS, { recursive: true });
    const checked = ts.filter((b) => !b.nocheck);
    for (const b of checked) writeFileSync(blockFile(b), `${b.code}\nexport {};\n`);
    writeFileSync(
      join(BLOCKS, "tsconfig.json"),
      JSON.stringify({
        extends: "../../../tsconfig.json",
        compilerOptions: { noEmit: true, rootDir: "../../.." },
        include: ["*.ts"],
      }),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const out = await run(process.execPath, [tsc, "-p", join(BLOCKS, "tsconfig.json")], { cwd: ROOT }).then(
      (r) => r.stdout,
      (e: { stdout: string }) => e.stdout,
    );
    expect(out.trim()).toBe("");
  }, 300_000);

  const runnable = ts.filter((b) => b.run);
  it.each(runnable.map((b) => [`${b.file}:${b.line}`, b] as const))("the ```ts run block at %s runs and exits 0", async (_, b) => {
    mkdirSync(BLOCKS, { recursive: true });
    const file = blockFile(b);
    writeFileSync(file, `${b.code}\nexport {};\n`);
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ["--import", "tsx", file], { cwd: ROOT }, (err, _out, stderr) => resolve({ code: err === null ? 0 : (child.exitCode ?? null), stderr }));
      onTestFinished(() => void child.kill("SIGKILL"));
    });
    expect(r).toEqual({ code: 0, stderr: "" });
  }, 90_000);

  it("links in the documents the package ships point at files the package ships (absolute URLs for the rest)", () => {
    const files = (JSON.parse(read(ROOT, "package.json")) as { files: string[] }).files;
    const shipped = (path: string): boolean =>
      files.some((f) => (f.includes("*") ? new RegExp(`^${f.replace(/\./gu, "\\.").replace(/\*/gu, "[^/]*")}$`, "u").test(path) : path === f || path.startsWith(`${f}/`)));
    const outside: string[] = [];
    for (const doc of docs.filter(shipped)) {
      for (const l of links(doc, read(ROOT, doc))) {
        const [path = ""] = l.target.split("#", 1);
        const target = path === "" ? doc : relative(ROOT, resolve(ROOT, dirname(doc), decodeURIComponent(path)));
        if (!shipped(target)) outside.push(`${l.file}:${l.line}: ${l.target}`);
      }
    }
    expect(docs.filter(shipped)).toContain("README.md");
    expect(outside).toEqual([]);
  });

  it("docs/api.md lists every entry point with the export count test/fixtures/exports.json pins", () => {
    const pinned = JSON.parse(read(ROOT, "test/fixtures/exports.json")) as Record<string, string[]>;
    const rows = [...read(ROOT, "docs/api.md").matchAll(/^\| `(nri-wire[^`]*)` \|.*\| (\d+) \|$/gmu)].map((m) => [m[1]!, Number(m[2])] as const);
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(pinned).map(([k, v]) => [k, v.length])));
  });

  it("every relative link points at a file that exists, and every #fragment at a heading of it", () => {
    const broken: string[] = [];
    for (const doc of docs) {
      for (const l of links(doc, read(ROOT, doc))) {
        const [path = "", fragment] = l.target.split("#", 2);
        const target = path === "" ? doc : relative(ROOT, resolve(ROOT, dirname(doc), decodeURIComponent(path)));
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${l.file}:${l.line}: ${l.target}: no such file`);
          continue;
        }
        if (fragment === undefined) continue;
        if (!target.endsWith(".md") || statSync(join(ROOT, target)).isDirectory()) {
          broken.push(`${l.file}:${l.line}: ${l.target}: a fragment on a file that is not Markdown`);
        } else if (!anchors(read(ROOT, target)).has(fragment)) {
          broken.push(`${l.file}:${l.line}: ${l.target}: no heading makes #${fragment}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("the README's layout table names every folder of src/", () => {
    const table = read(ROOT, "README.md").split("## Layout")[1]!.split("\n## ")[0]!;
    const folders = readdirSync(join(ROOT, "src"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `\`src/${e.name}\``);
    expect(folders.filter((f) => !table.includes(f))).toEqual([]);
  });
});

/** Numbers the documents state, each checked against what it states. */
describe("docs: stated numbers", () => {
  it("one version: package.json's is CHANGELOG's first, the tarball the README installs, what --version prints", () => {
    const version = (JSON.parse(read(ROOT, "package.json")) as { version: string }).version;
    expect(/^## (\S+)/mu.exec(read(ROOT, "CHANGELOG.md"))?.[1]).toBe(version);
    const readme = read(ROOT, "README.md");
    expect([...readme.matchAll(/nri-wire-(\d+\.\d+\.\d+)\.tgz/gu)].map((m) => m[1])).toEqual([version, version]);
  });

  it("deployment.md's script form is the size of the bundle it is, within 10 %, with and without the optional peers it can carry", async () => {
    const stated = /`--form script` writes the bundle behind a `#!NODE` line instead: a\s+([\d.]+) MiB file\s+\(([\d.]+) MiB\s+with prom-client/u.exec(read(ROOT, "docs/deployment.md"));
    expect(stated, "the sentence stating the script form's size").not.toBeNull();
    const entry = join(ROOT, "examples/env-injector.ts");
    const peers = ["prom-client", "@opentelemetry/sdk-trace", "@opentelemetry/exporter-trace-otlp-http", "@opentelemetry/resources", "@opentelemetry/api"];
    for (const [leaveOut, size] of [[peers, stated![1]], [[], stated![2]]] as const) {
      const { code } = await bundle(entry, { name: "adjuster", idx: "10" }, { leaveOut });
      const mib = Buffer.byteLength(code) / 2 ** 20;
      expect(Math.abs(mib - Number(size)) / mib, `${leaveOut.length === 0 ? "with" : "without"} the optional peers: ${mib.toFixed(3)} MiB`).toBeLessThan(0.1);
    }
  }, 60_000);

  it("deployment.md's reconnection delays are the built executable's", () => {
    const doc = read(ROOT, "docs/deployment.md");
    const { first, last } = RETRY_MS;
    expect(doc).toContain(`\`10-adjuster: nri: cannot connect to /var/run/nri/nri.sock: ...; retrying in ${first * 2} ms\``);
    expect(doc).toContain(`tries again ${first} ms after the connection closed, then waits ${first * 2} ms, ${first * 4} ms and so on, doubling up to ${last / 1000} s`);
  });
});

