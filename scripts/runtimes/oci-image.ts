/**
 * `node --import tsx scripts/runtimes/oci-image.ts [--entrypoint /PATH [--cmd ARG]...] BINARY NAME OUT.tar`:
 * packs one static binary as a one-layer OCI image archive named NAME for this host's platform,
 * with the same writer `nri-wire build` uses for plugin images. By default the binary is `/probe`
 * and the command `/probe pause` (the runtimes under test import it as their sandbox image: there
 * is no registry to pull one from); `--entrypoint` puts it at that path and runs it with the
 * `--cmd` arguments. Prints `NAME INDEX-DIGEST`.
 */
import { renameSync } from "node:fs";
import { parseArgs } from "node:util";
import { writeOciArchive } from "../../src/ship/oci-image.js";
import { hostPlatform } from "../../src/ship/platform.js";

const { values, positionals } = parseArgs({ options: { entrypoint: { type: "string" }, cmd: { type: "string", multiple: true } }, allowPositionals: true, strict: true });
const [bin, name, out] = positionals;
if (bin === undefined || name === undefined || out === undefined) {
  process.stderr.write("usage: oci-image.ts [--entrypoint /PATH [--cmd ARG]...] BINARY NAME OUT.tar\n");
  process.exit(2);
}
const path = values.entrypoint ?? "/probe";
const cmd = values.entrypoint === undefined ? ["pause"] : (values.cmd ?? []);
const written = writeOciArchive(
  {
    name,
    created: 0,
    images: [{ platform: hostPlatform(), layers: [{ files: [{ path, source: bin, mode: 0o755 }], createdBy: `oci-image.ts: ${path}` }], entrypoint: [path], cmd, env: ["PATH=/"] }],
  },
  `${out}.tmp`,
);
renameSync(`${out}.tmp`, out);
process.stdout.write(`${name} ${written.indexDigest}\n`);
