import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { main } from "../../src/cli/main.js";
import { TestRuntime } from "../../src/testing/index.js";
import { file, prerequisites } from "../support/prerequisites.js";
import { socketDir } from "../support/socket.js";

/**
 * `nri-wire view` and TestRuntime's `record` in a real browser (Chromium from Debian, driven by
 * playwright-core): the page shows the facts of a recorded session, loads nothing but itself,
 * and logs no console error. Without Chromium the tests are skipped with a notice, except under
 * CI=true, where that is a failure (.ci/run installs it).
 */

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = prerequisites("view", "the browser tests of nri-wire view", [file(CHROMIUM, "Debian's Chromium, which playwright-core drives: apt-get install -y chromium")]).ok;
const VECTORS = join(import.meta.dirname, "../fixtures/vectors");

let browser: Browser | undefined;
beforeAll(async () => {
  if (!hasChromium) return;
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** The page at `file`, opened offline, with every request it made and every console error it logged. */
async function open(file: string): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const context = await browser!.newContext({ offline: true });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  return { page, requests, errors };
}

/** The cells of each row of the table after heading `id`, as the browser renders their text. */
function rows(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tr`, (trs) => trs.slice(1).map((tr) => [...tr.querySelectorAll("td")].map((td) => (td as unknown as { innerText: string }).innerText.trim())));
}

describe("nri-wire view", () => {
  it.runIf(hasChromium)("shows a recorded Go session: who spoke what, every call with its latency, the refusal, the container's owners; offline, no console error", async () => {
    const out = join(socketDir(), "go.html");
    const lines: string[] = [];
    const code = await main(["view", "--out", out, join(VECTORS, "new-runtime--new-plugin.index.json"), join(VECTORS, "new-runtime--legacy-plugin.index.json")], undefined, (l) => lines.push(l), (l) => lines.push(l));
    expect(code).toBe(0);
    const { page, requests, errors } = await open(out);
    expect(await page.locator("h1").innerText()).toBe("NRI session: 2 connections, 34 calls over 319.218 ms");
    expect(await rows(page, "h2#revisions + table")).toEqual([
      ["10-peer-plugin", "new-runtime--new-plugin", "v1alpha1", "v1alpha1", "dedicated", "nri-peer-runtime v0.0.0-peer, NRI v0.12.2", "18", "0"],
      ["10-peer-plugin", "new-runtime--legacy-plugin", "v1alpha1", "v1alpha1", "statechange", "nri-peer-runtime v0.0.0-peer, NRI v0.12.2", "16", "1"],
    ]);
    // One bar per call; RegisterPlugin's request read at 562665 ns, its answer at 1349266 ns (the index).
    expect(await page.locator("svg rect").count()).toBe(34);
    expect(await page.locator("svg rect title").first().textContent()).toBe("10-peer-plugin: RegisterPlugin: 0.787 ms, ok");
    const calls = await rows(page, 'table.calls[data-plugin="10-peer-plugin"]');
    expect(calls[0]).toEqual(["0.000 ms", "plugin", "RegisterPlugin\nrequest\nresponse", "v1alpha1", "", "0.787 ms", "ok"]);
    // The legacy plugin's refusal is marked, in red, in its table and among the problems.
    const refused = page.locator("td.refused", { hasText: "unimplemented: method RunPodSandbox" });
    expect(await refused.count()).toBe(2);
    expect(await refused.first().evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(e).color)).toBe("rgb(176, 0, 32)");
    expect(await page.locator("h2#problems").innerText()).toBe("Refusals and errors (1)");
    expect(await rows(page, "table.owners")).toEqual([
      ["Annotations", "nri-peer/seen", "10-peer-plugin"],
      ["Env", "NRI_PEER_SEEN", "10-peer-plugin"],
    ]);
    expect(requests).toEqual([pathToFileURL(out).href]);
    expect(errors).toEqual([]);
  }, 60_000);

  it.runIf(hasChromium)("shows a TestRuntime's recorded session: each field's owner among three plugins, the validator's refusal", async () => {
    const prefix = join(socketDir(), "session");
    const runtime = await TestRuntime.start({ record: prefix });
    await runtime.startPlugin({ createContainer: (req) => ({ adjust: { env: [{ key: "POD", value: req.pod?.name ?? "" }], annotations: { "example.com/seen": "yes" } } }) }, { name: "env", idx: "10" });
    await runtime.startPlugin({ createContainer: () => ({ adjust: { linux: { resources: { memory: { limit: 1 << 30 } } } } }) }, { name: "mem", idx: "20" });
    await runtime.startPlugin(
      {
        validateContainerAdjustment: (req) => {
          if (req.container?.name === "bad") throw new Error("container bad is not allowed");
        },
      },
      { name: "validator", idx: "90", log: { error: () => undefined } },
    );
    const pod = { id: "pod1", name: "web" };
    await runtime.createContainer({ pod, container: { id: "ctr1", podSandboxId: "pod1", name: "app" } });
    await expect(runtime.createContainer({ pod, container: { id: "ctr2", podSandboxId: "pod1", name: "bad" } })).rejects.toThrow("validator plugin 90-validator failed: rpc error: code = Unknown desc = container bad is not allowed");
    await runtime.stop();
    expect(runtime.captures).toEqual([`${prefix}.index.json`, `${prefix}-2.index.json`, `${prefix}-3.index.json`]);
    const { page, requests, errors } = await open(`${prefix}.html`);
    const who = await rows(page, "h2#revisions + table");
    expect(who.map((r) => [r[0], r[2], r[3], r[5]])).toEqual(
      ["10-env", "20-mem", "90-validator"].map((p) => [p, "v1beta1", "v1beta1", expect.stringMatching(/^nri-wire-test-runtime v\d+\.\d+\.\d+, NRI v0\.12\.5$/u)]),
    );
    expect(await page.locator('h3.container[data-container="ctr1"]').innerText()).toBe("ctr1 (app in pod web)");
    expect(await rows(page, 'h3.container[data-container="ctr1"] ~ table.owners')).toEqual(
      expect.arrayContaining([
        ["Env", "POD", "10-env"],
        ["Annotations", "example.com/seen", "10-env"],
        ["MemLimit", "", "20-mem"],
      ]),
    );
    const problems = await rows(page, "h2#problems + table");
    expect(problems.map((r) => r.slice(1))).toEqual([["90-validator", "ValidateContainerAdjustment", "ctr2", "unknown: container bad is not allowed"]]);
    expect(requests).toEqual([pathToFileURL(`${prefix}.html`).href]);
    expect(errors).toEqual([]);
    // The captures are what nri-wire decode reads.
    expect(JSON.parse(readFileSync(`${prefix}-3.index.json`, "utf8")).format).toBe("nri-capture/v1");
  }, 60_000);
});
