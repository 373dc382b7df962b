/**
 * `node --import tsx scripts/runtimes/oci-image.ts BINARY NAME OUT.tar`: packs one static binary
 * as a one-layer OCI image archive named NAME, whose default command is `/probe pause`, with the
 * same writer `nri-wire build` uses for plugin images. The runtimes under test import it: there
 * is no registry to pull a sandbox image from. Prints `NAME MANIFEST-DIGEST`.
 */
import { renameSync } from "node:fs";
import { writeOciArchive } from "../../src/ship/oci-image.js";

const [bin, name, out] = process.argv.slice(2);
if (bin === undefined || name === undefined || out === undefined) {
  process.stderr.write("usage: oci-image.ts BINARY NAME OUT.tar\n");
  process.exit(2);
}
const written = writeOciArchive({ files: [{ path: "/probe", source: bin, mode: 0o755 }], entrypoint: ["/probe"], cmd: ["pause"], env: ["PATH=/"], name }, `${out}.tmp`);
renameSync(`${out}.tmp`, out);
process.stdout.write(`${name} ${written.manifestDigest}\n`);
