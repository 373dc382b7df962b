/**
 * What an image without a base needs to know of an engine's ELF files, read from the bytes
 * (no `ldd`, which runs the file's loader and so works only for the host's architecture): the
 * machine, the loader (PT_INTERP), the libraries it names (DT_NEEDED); and stripping, which drops
 * the sections a process never maps (symbols, debug information) from the end of the file.
 * 64-bit little-endian files only: what amd64 and arm64 engines are.
 */

/** A section header, as the file has it. */
interface Section {
  readonly name: number;
  readonly type: number;
  readonly flags: bigint;
  readonly offset: number;
  readonly size: number;
  /** The 64 bytes of the header. */
  readonly raw: Uint8Array;
}

/** A program header's type and where its bytes are. */
interface Segment {
  readonly type: number;
  readonly offset: number;
  readonly vaddr: number;
  readonly filesz: number;
}

const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NEEDED = 1;
const DT_STRTAB = 5;
const SHT_NOBITS = 8;
const SHF_ALLOC = 2n;

/** An ELF file's headers, parsed. */
export interface ElfFile {
  /** e_machine: 62 x86-64, 183 AArch64. */
  readonly machine: number;
  /** The loader it names (PT_INTERP); undefined for a static file or a library. */
  readonly interpreter: string | undefined;
  /** The libraries it names (DT_NEEDED), in order. */
  readonly needed: readonly string[];
}

/** Whether `bytes` start like an ELF file. */
export function isElf(bytes: Uint8Array): boolean {
  return bytes.length >= 64 && bytes[0] === 0x7f && bytes[1] === 0x45 && bytes[2] === 0x4c && bytes[3] === 0x46;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Throws unless `bytes` is a 64-bit little-endian ELF file; `what` names it in the error. */
function checkElf(bytes: Uint8Array, what: string): DataView {
  if (!isElf(bytes)) throw new Error(`elf: ${what}: not an ELF file`);
  if (bytes[4] !== 2 || bytes[5] !== 1) throw new Error(`elf: ${what}: not a 64-bit little-endian ELF file`);
  return view(bytes);
}

function num(v: bigint, what: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`elf: ${what}: offset ${v} out of range`);
  return Number(v);
}

function segments(bytes: Uint8Array, d: DataView, what: string): Segment[] {
  const phoff = num(d.getBigUint64(32, true), what);
  const size = d.getUint16(54, true);
  const count = d.getUint16(56, true);
  const out: Segment[] = [];
  for (let i = 0; i < count; i++) {
    const at = phoff + i * size;
    if (at + 56 > bytes.length) throw new Error(`elf: ${what}: program header ${i} beyond the end of the file`);
    out.push({ type: d.getUint32(at, true), offset: num(d.getBigUint64(at + 8, true), what), vaddr: num(d.getBigUint64(at + 16, true), what), filesz: num(d.getBigUint64(at + 32, true), what) });
  }
  return out;
}

function sections(bytes: Uint8Array, d: DataView, what: string): Section[] {
  const shoff = num(d.getBigUint64(40, true), what);
  const size = d.getUint16(58, true);
  const count = d.getUint16(60, true);
  if (size !== 64 && count > 0) throw new Error(`elf: ${what}: section header size ${size}, expected 64`);
  const out: Section[] = [];
  for (let i = 0; i < count; i++) {
    const at = shoff + i * 64;
    if (at + 64 > bytes.length) throw new Error(`elf: ${what}: section header ${i} beyond the end of the file`);
    out.push({
      name: d.getUint32(at, true),
      type: d.getUint32(at + 4, true),
      flags: d.getBigUint64(at + 8, true),
      offset: num(d.getBigUint64(at + 24, true), what),
      size: num(d.getBigUint64(at + 32, true), what),
      raw: bytes.slice(at, at + 64),
    });
  }
  return out;
}

/** The NUL-terminated string at `at`. */
function cString(bytes: Uint8Array, at: number): string {
  let end = at;
  while (end < bytes.length && bytes[end] !== 0) end++;
  return Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString("utf8");
}

/** Parses the headers of an ELF file; `what` names it in errors. */
export function readElf(bytes: Uint8Array, what: string): ElfFile {
  const d = checkElf(bytes, what);
  const segs = segments(bytes, d, what);
  const interp = segs.find((s) => s.type === PT_INTERP);
  const interpreter = interp === undefined ? undefined : cString(bytes, interp.offset);
  const needed: string[] = [];
  const dyn = segs.find((s) => s.type === PT_DYNAMIC);
  if (dyn !== undefined) {
    const entries: [number, bigint][] = [];
    for (let at = dyn.offset; at + 16 <= dyn.offset + dyn.filesz; at += 16) {
      const tag = Number(d.getBigInt64(at, true));
      if (tag === 0) break;
      entries.push([tag, d.getBigUint64(at + 8, true)]);
    }
    const strtab = entries.find(([t]) => t === DT_STRTAB)?.[1];
    if (strtab !== undefined) {
      // DT_STRTAB is an address: the loaded segment holding it says where it is in the file.
      const addr = num(strtab, what);
      const seg = segs.find((s) => s.type === 1 && addr >= s.vaddr && addr < s.vaddr + s.filesz);
      if (seg === undefined) throw new Error(`elf: ${what}: the dynamic string table is in no loaded segment`);
      const base = seg.offset + (addr - seg.vaddr);
      for (const [tag, value] of entries) if (tag === DT_NEEDED) needed.push(cString(bytes, base + num(value, what)));
    }
  }
  return { machine: d.getUint16(18, true), interpreter, needed };
}

/**
 * The file without its non-allocated sections (symbol tables, debug information, comments): what
 * `strip` removes, with nothing a process maps changed. Only when those sections all come after
 * everything mapped and after every section kept (as linkers lay them out), so that the kept part
 * is a prefix of the file and keeps its section numbers; otherwise the file is returned as it is.
 * The section names and headers follow, rewritten.
 */
export function stripElf(bytes: Uint8Array, what: string): Uint8Array {
  const d = checkElf(bytes, what);
  const secs = sections(bytes, d, what);
  const shstrndx = d.getUint16(62, true);
  const names = secs[shstrndx];
  if (names === undefined) return bytes;
  const keep = secs.filter((s, i) => i === 0 || (s.flags & SHF_ALLOC) !== 0n);
  if (keep.length === secs.length - 1 && secs.at(-1) === names) return bytes;
  // The kept sections must be the first ones, so that no section number changes.
  for (let i = 0; i < keep.length; i++) if (keep[i] !== secs[i]) return bytes;
  let cut = 0;
  for (const s of segments(bytes, d, what)) cut = Math.max(cut, s.offset + s.filesz);
  for (const s of keep) if (s.type !== SHT_NOBITS) cut = Math.max(cut, s.offset + s.size);
  for (const s of secs.slice(keep.length)) if (s.type !== SHT_NOBITS && s.size > 0 && s.offset < cut) return bytes;

  // New section names: those kept, then .shstrtab's own.
  const nameBytes: number[] = [0];
  const nameAt = (name: string): number => {
    const at = nameBytes.length;
    nameBytes.push(...Buffer.from(name, "utf8"), 0);
    return at;
  };
  const headers = keep.map((s, i) => {
    const h = new Uint8Array(s.raw);
    if (i > 0) view(h).setUint32(0, nameAt(cString(bytes, names.offset + s.name)), true);
    return h;
  });
  const shstrName = nameAt(".shstrtab");
  const strOff = cut;
  const shoff = Math.ceil((strOff + nameBytes.length) / 8) * 8;
  const total = shoff + (headers.length + 1) * 64;
  const out = new Uint8Array(total);
  out.set(bytes.subarray(0, cut));
  out.set(nameBytes, strOff);
  const shstr = new Uint8Array(64);
  const v = view(shstr);
  v.setUint32(0, shstrName, true);
  v.setUint32(4, 3, true); // SHT_STRTAB
  v.setBigUint64(24, BigInt(strOff), true);
  v.setBigUint64(32, BigInt(nameBytes.length), true);
  v.setBigUint64(48, 1n, true); // sh_addralign
  headers.push(shstr);
  for (const [i, h] of headers.entries()) out.set(h, shoff + i * 64);
  const o = view(out);
  o.setBigUint64(40, BigInt(shoff), true);
  o.setUint16(60, headers.length, true);
  o.setUint16(62, headers.length - 1, true);
  return out;
}
