import { YamlError } from "../errors.js";

/**
 * Reads a YAML list of strings the way Go's `yaml.Unmarshal(data, &[]string{})` (go.yaml.in/yaml
 * v3) does, for the forms a pod annotation holds: a flow list (`[a, "b"]`, over several lines if
 * need be), a block list (`- a` lines), an empty or null document (no list). Scalars of any type
 * become their text; null items are dropped. Type errors carry yaml.v3's text; YAML this reader does
 * not cover (anchors, tags, nested or multi-line items, documents markers) is refused with a
 * `yaml: nri-wire reads only flat lists of scalars` error rather than guessed at.
 */
export function parseYamlStringList(text: string): string[] | undefined {
  const lines = text.split(/\r\n|\r|\n/u).map(stripComment);
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first < 0) return undefined;
  const head = lines[first]!;
  const lineNo = first + 1;
  const trimmed = head.trim();
  if (trimmed.startsWith("[")) return flowList(lines.slice(first).join("\n"), lineNo);
  if (trimmed === "-" || trimmed.startsWith("- ")) return blockList(lines.slice(first), lineNo);
  if (lines.slice(first + 1).some((l) => l.trim() !== "")) unsupported();
  if (isMappingLine(trimmed)) typeError(lineNo, "!!map", undefined, "[]string");
  const s = scalar(trimmed);
  if (s.tag === "!!null") return undefined;
  return typeError(lineNo, s.tag, s.value, "[]string");
}

interface Scalar {
  tag: string;
  value: string;
}

function flowList(text: string, lineNo: number): string[] {
  const body = text.trim();
  const close = findClose(body);
  if (close < 0) throw new YamlError(`yaml: line ${lineNo}: did not find expected ',' or ']'`);
  if (body.slice(close + 1).trim() !== "") unsupported();
  const inner = body.slice(1, close).replace(/\n/gu, " ");
  const items = splitItems(inner);
  if (items.length > 0 && items[items.length - 1]!.trim() === "") items.pop(); // a trailing comma
  return items.flatMap((item) => itemValue(item.trim(), lineNo, true) ?? []);
}

function blockList(lines: string[], lineNo: number): string[] {
  const indent = lines[0]!.length - lines[0]!.trimStart().length;
  const out: string[] = [];
  for (const line of lines) {
    if (line.trim() === "") continue;
    const ind = line.length - line.trimStart().length;
    const t = line.trim();
    if (ind !== indent || !(t === "-" || t.startsWith("- "))) unsupported();
    const v = itemValue(t.slice(1).trim(), lineNo, false);
    if (v !== undefined) out.push(v);
  }
  return out;
}

/** An item's text, or undefined for a null item (Go's decoder skips those). */
function itemValue(item: string, lineNo: number, flow: boolean): string | undefined {
  if (item === "") {
    if (flow) throw new YamlError("yaml: did not find expected node content");
    return undefined;
  }
  if (item.startsWith("[") || item.startsWith("- ") || item === "-") typeError(lineNo, "!!seq", undefined, "string");
  if (item.startsWith("{") || isMappingLine(item)) typeError(lineNo, "!!map", undefined, "string");
  const s = scalar(item);
  return s.tag === "!!null" ? undefined : s.value;
}

function scalar(t: string): Scalar {
  if (t.startsWith("'")) {
    if (!t.endsWith("'") || t.length < 2) unsupported();
    return { tag: "!!str", value: t.slice(1, -1).replace(/''/gu, "'") };
  }
  if (t.startsWith('"')) {
    if (!t.endsWith('"') || t.length < 2) unsupported();
    return { tag: "!!str", value: unescapeDouble(t.slice(1, -1)) };
  }
  if (/^[&*!|>%@`]/u.test(t)) unsupported();
  return { tag: resolveTag(t), value: t };
}

/** yaml.v3's resolution of a plain scalar's tag (YAML 1.2 core schema). */
function resolveTag(t: string): string {
  if (t === "~" || t === "null" || t === "Null" || t === "NULL") return "!!null";
  if (/^(true|True|TRUE|false|False|FALSE)$/u.test(t)) return "!!bool";
  if (/^[-+]?([0-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+)$/u.test(t)) return "!!int";
  if (/^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$/u.test(t)) return "!!float";
  if (/^[-+]?\.(inf|Inf|INF)$/u.test(t) || /^\.(nan|NaN|NAN)$/u.test(t)) return "!!float";
  return "!!str";
}

function typeError(line: number, tag: string, value: string | undefined, into: string): never {
  let v = "";
  if (value !== undefined) v = [...value].length > 10 ? ` \`${[...value].slice(0, 7).join("")}...\`` : ` \`${value}\``;
  throw new YamlError(`yaml: unmarshal errors:\n  line ${line}: cannot unmarshal ${tag}${v} into ${into}`);
}

function unsupported(): never {
  throw new YamlError("yaml: nri-wire reads only flat lists of scalars");
}

function isMappingLine(t: string): boolean {
  if (t.startsWith("'") || t.startsWith('"') || t.startsWith("[") || t.startsWith("{")) return false;
  return /:(\s|$)/u.test(t);
}

/**
 * Walks `s` calling `visit` with each character outside quotes (the quote marks are not passed;
 * inside double quotes a backslash escapes the next character) until `visit` returns true.
 * Returns the index it stopped at, or -1.
 */
function scanUnquoted(s: string, visit: (c: string, i: number) => boolean): number {
  let quote = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote !== "") {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
    } else if (c === "'" || c === '"') quote = c;
    else if (visit(c, i)) return i;
  }
  return -1;
}

/** Drops a comment: `#` at the start or after whitespace, outside quotes. */
function stripComment(line: string): string {
  const at = scanUnquoted(line, (c, i) => c === "#" && (i === 0 || /\s/u.test(line[i - 1]!)));
  return at < 0 ? line : line.slice(0, at);
}

/** The index of the `]` closing the list opened at 0, skipping quoted text; -1 if none. */
function findClose(s: string): number {
  let depth = 0;
  return scanUnquoted(s, (c) => {
    if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") return --depth === 0;
    return false;
  });
}

/** Splits a flow list's inside at top-level commas. */
function splitItems(s: string): string[] {
  if (s.trim() === "") return [];
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  scanUnquoted(s, (c, i) => {
    if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
    else if (c === "," && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
    return false;
  });
  out.push(s.slice(start));
  return out;
}

const ESCAPES: Readonly<Record<string, string>> = {
  "0": "\0", a: "\x07", b: "\b", t: "\t", "\t": "\t", n: "\n", v: "\v", f: "\f", r: "\r", e: "\x1b",
  " ": " ", '"': '"', "/": "/", "\\": "\\", N: "\u0085", _: "\u00a0", L: "\u2028", P: "\u2029",
};

function unescapeDouble(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = s[++i];
    if (e === undefined) unsupported();
    const simple = ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const width = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    const hex = s.slice(i + 1, i + 1 + width);
    if (width === 0 || !new RegExp(`^[0-9a-fA-F]{${width}}$`, "u").test(hex)) unsupported();
    out += String.fromCodePoint(parseInt(hex, 16));
    i += width;
  }
  return out;
}
