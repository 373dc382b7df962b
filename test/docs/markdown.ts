/**
 * What the docs check reads from Markdown: the documents it covers, their fenced TypeScript
 * blocks with the info string's flags, their relative links and the anchors their headings make.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A fenced ```ts block: where it starts and what its info string asks for. */
export interface CodeBlock {
  /** The document, relative to the root. */
  readonly file: string;
  /** The line of the opening fence, 1-based. */
  readonly line: number;
  readonly code: string;
  /** `ts nocheck`: deliberately partial, not type-checked. */
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

/** The documents the check covers, relative to `root`: README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md. */
export function documents(root: string): string[] {
  const top = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].filter((f) => existsSync(join(root, f)));
  const docs = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`);
  return [...top, ...docs];
}

const FENCE = /^```(\S*)(.*)$/u;

/** Every fenced block whose language is `ts`. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (open === null) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) body.push(lines[i]!);
    if (i === lines.length) throw new Error(`${file}:${start + 1}: code block never closed`);
    if (open[1] !== "ts") continue;
    const flags = open[2]!.trim().split(/\s+/u).filter((f) => f !== "");
    for (const f of flags) if (f !== "nocheck" && f !== "run") throw new Error(`${file}:${start + 1}: unknown code block flag "${f}"`);
    blocks.push({ file, line: start + 1, code: body.join("\n"), nocheck: flags.includes("nocheck"), run: flags.includes("run") });
  }
  return blocks;
}

/** Lines outside fenced blocks, with their numbers: links and headings live there. */
function prose(text: string): [number, string][] {
  const out: [number, string][] = [];
  let inFence = false;
  for (const [i, line] of text.split("\n").entries()) {
    if (line.startsWith("```")) inFence = !inFence;
    else if (!inFence) out.push([i + 1, line]);
  }
  return out;
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
