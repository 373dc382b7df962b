import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** Runs test/support/observed-pair.ts with `hidden` packages impossible to find; its stdout lines. */
async function pair(hidden: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--import", "./test/support/hide-peers.mjs", "test/support/observed-pair.ts"], {
    cwd: ROOT,
    env: { ...process.env, NRI_WIRE_HIDE_PEERS: hidden },
    timeout: 60_000,
  });
  return stdout.split("\n").filter((l) => l !== "");
}

describe("optional peers missing", () => {
  it("metrics and traces asked for without prom-client and @opentelemetry/api: one line each, and events are served", async () => {
    expect(await pair("prom-client,@opentelemetry/api")).toEqual([
      "runtime error: nri: runtime rt: traces need @opentelemetry/api, an optional peer dependency of nri-wire that is not installed: npm install @opentelemetry/api; going on without them",
      "runtime error: nri: runtime rt: prometheus metrics need prom-client, an optional peer dependency of nri-wire that is not installed: npm install prom-client; going on without them",
      "plugin error: nri: plugin 10-p: traces need @opentelemetry/api, an optional peer dependency of nri-wire that is not installed: npm install @opentelemetry/api; going on without them",
      "plugin error: nri: plugin 10-p: prometheus metrics need prom-client, an optional peer dependency of nri-wire that is not installed: npm install prom-client; going on without them",
      'event: {"seen":"yes"}',
    ]);
  });

  it("with both installed, nothing is logged", async () => {
    expect(await pair("")).toEqual(['event: {"seen":"yes"}']);
  });
});
