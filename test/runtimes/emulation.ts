import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const BINFMT = "/proc/sys/fs/binfmt_misc";

/** Debian's qemu-user-static registration of an architecture: its magic and mask (`\x..` escapes). */
function debianEntry(arch: string): { magic: string; mask: string } {
  const conf = readFileSync(`/usr/lib/binfmt.d/qemu-${arch}.conf`, "utf8").trim();
  // :name:type:offset:magic:mask:interpreter:flags
  const [, , , , magic, mask] = conf.split(":");
  if (magic === undefined || mask === undefined) throw new Error(`runtimes: cannot read /usr/lib/binfmt.d/qemu-${arch}.conf`);
  return { magic, mask };
}

/** The magic of an entry as /proc shows it (hex), from its `\x..` form. */
function hex(escaped: string): string {
  return escaped.replace(/\\x([0-9a-f]{2})/gi, "$1").toLowerCase();
}

/**
 * Makes the kernel run `arch`'s executables through `qemu` (binfmt_misc, with the F flag: the
 * interpreter is opened now, so it also works inside containers and chroots), unless an enabled
 * entry does already. Returns what puts the host back: the entry removed, binfmt_misc unmounted
 * if it was mounted here.
 */
export function registerQemu(arch: string, qemu: string): () => void {
  let mounted = false;
  if (!existsSync(join(BINFMT, "register"))) {
    execFileSync("mount", ["-t", "binfmt_misc", "binfmt_misc", BINFMT]);
    mounted = true;
  }
  const { magic, mask } = debianEntry(arch);
  const already = readdirSync(BINFMT).some((e) => {
    if (e === "register" || e === "status") return false;
    const text = readFileSync(join(BINFMT, e), "utf8");
    return text.startsWith("enabled") && text.includes(`magic ${hex(magic)}`);
  });
  const name = `nriw-qemu-${arch}`;
  if (!already) writeFileSync(join(BINFMT, "register"), `:${name}:M::${magic}:${mask}:${qemu}:F`);
  return () => {
    if (!already && existsSync(join(BINFMT, name))) writeFileSync(join(BINFMT, name), "-1");
    if (mounted) execFileSync("umount", [BINFMT]);
  };
}
