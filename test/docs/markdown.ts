/**
 * What the docs check reads from Markdown: the documents it covers, their fenced blocks with the
 * info string's language and flags, their relative links and the anchors their headings make.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A fenced block (``` or ~~~, at any indentation, as inside a list item): where it starts and what its info string says. */
export interface CodeBlock {
  /** The document, relative to the root. */
  readonly file: string;
  /** The line of the opening fence, 1-based. */
  readonly line: number;
  /** The info string's first word (`ts`, `sh`, `toml`...); "" when there is none. */
  readonly lang: string;
  /** The info string's other words. */
  readonly flags: readonly string[];
  /** The content, without the fence's indentation. */
  readonly code: string;
  /** `nocheck`: not checked, on purpose (the docs check lists these blocks). */
  readonly nocheck: boolean;
  /** `ts run`: executed, and must exit 0 by itself. */
  readonly run: boolean;
}

/** A link to a file or anchor inside the repository. */
export interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** The documents the check covers, relative to `root`: the Markdown pages package.json ships, and CONTRIBUTING.md. */
export function documents(root: string): string[] {
  const files = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] }).files;
  const pages = new Set<string>();
  for (const pattern of files.filter((f) => f.endsWith(".md"))) {
    const slash = pattern.lastIndexOf("/");
    const dir = slash < 0 ? "" : pattern.slice(0, slash);
    const name = new RegExp(`^${pattern.slice(slash + 1).replace(/\./gu, "\\.").replace(/\*/gu, "[^/]*")}$`, "u");
    for (const f of readdirSync(join(root, dir))) if (name.test(f)) pages.add(dir === "" ? f : `${dir}/${f}`);
  }
  if (existsSync(join(root, "CONTRIBUTING.md"))) pages.add("CONTRIBUTING.md");
  return [...pages].sort();
}

/** An opening or closing fence: its indentation, its run of ` or ~, and the info string. */
const FENCE = /^( *)(`{3,}|~{3,})(.*)$/u;

/** The document's fenced blocks and, with their numbers, the lines outside them (prose). */
function scan(file: string, text: string): { blocks: CodeBlock[]; prose: [number, string][] } {
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  const prose: [number, string][] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (open === null || (open[2]![0] === "`" && open[3]!.includes("`"))) {
      prose.push([i + 1, lines[i]!]);
      continue;
    }
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const start = i;
    const body: string[] = [];
    // Closed by a run of the same character at least as long, with nothing after it.
    const close = new RegExp(`^ *${fence[0] === "`" ? "`" : "~"}{${fence.length},} *$`, "u");
    for (i++; i < lines.length && !close.test(lines[i]!); i++) {
      const l = lines[i]!;
      body.push(l.slice(Math.min(indent.length, l.length - l.trimStart().length)));
    }
    if (i === lines.length) throw new Error(`${file}:${start + 1}: code block never closed`);
    const [lang = "", ...flags] = info.trim().split(/\s+/u).filter((f) => f !== "");
    blocks.push({ file, line: start + 1, lang, flags, code: body.join("\n"), nocheck: flags.includes("nocheck"), run: flags.includes("run") });
  }
  return { blocks, prose };
}

/** Every fenced block, whatever its language. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  return scan(file, text).blocks;
}

/** Lines outside fenced blocks, with their numbers: links and headings live there. */
function prose(text: string): [number, string][] {
  return scan("", text).prose;
}

const LINK = /\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/gu;

/** Every link that is not to a URL (http, https, mailto). */
export function links(file: string, text: string): Link[] {
  const out: Link[] = [];
  for (const [line, content] of prose(text)) {
    const withoutCode = content.replace(/`[^`]*`/gu, "");
    for (const m of withoutCode.matchAll(LINK)) {
      const target = m[1]!;
      if (/^[a-z]+:/iu.test(target)) continue;
      out.push({ file, line, target });
    }
  }
  return out;
}

/** The anchors GitHub gives a document's headings (`## Two commands` -> `two-commands`; repeats get -1, -2). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, line] of prose(text)) {
    const h = /^#{1,6}\s+(.*)$/u.exec(line);
    if (h === null) continue;
    const base = h[1]!
      .replace(/`/gu, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/gu, "$1")
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/gu, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Reads a document relative to `root`. */
export function read(root: string, file: string): string {
  return readFileSync(join(root, file), "utf8");
}
