import type { LogLines } from "./diff-lines.js";

/**
 * Texts of the Go runtime (containerd/nri v0.12.5 pkg/adaptation) that tests of nri-wire's
 * runtime assert without running Go: each is picked from the Go driver's output on a scenario
 * of diff-scenarios.ts (or from `diff-peer texts`) and recorded in
 * test/fixtures/go-texts/runtime.json. The differential test checks on every run that the
 * recording is what Go prints; `NRI_WIRE_UPDATE_GO_TEXTS=1 npx vitest run
 * test/interop/adaptation.diff.test.ts` records it again. Tests read it with goText().
 */

/** The Go driver's output on a scenario: its lines parsed, the runtime's logs by level. */
export interface GoOutput {
  readonly lines: readonly Record<string, unknown>[];
  readonly logs: LogLines;
}

/** The error of the `n`th event (from 1) that failed. */
const failedEvent =
  (n: number) =>
  (o: GoOutput): string | undefined =>
    o.lines.filter((l) => typeof l.event === "string" && typeof l.error === "string")[n - 1]?.error as string | undefined;

/** The `n`th line (from 1) logged at `level` that mentions all of `words` (a locator: the text is Go's). */
const logged =
  (level: string, n: number, ...words: string[]) =>
  (o: GoOutput): string | undefined =>
    (o.logs[level] ?? []).filter((l) => words.every((w) => l.includes(w)))[n - 1];

/** The Go texts, by key: the scenario that shows each and where in its output. */
export const GO_TEXTS = {
  "event: a plugin timed out, fail_request": { scenario: "failure-policy-fail-request", pick: failedEvent(1) },
  "warn: a plugin timed out, proceeding": { scenario: "failure-policy-default", pick: logged("warn", 1) },
  "error: a plugin timed out, closing it": { scenario: "failure-policy-default", pick: logged("error", 1) },
  "warn: a plugin timed out on RunPodSandbox, proceeding": { scenario: "failure-policy-other-events", pick: logged("warn", 1, "RunPodSandbox") },
  "event: a plugin's error": { scenario: "plugin-errors", pick: failedEvent(1) },
  "event: a plugin's error on StopPodSandbox": { scenario: "plugin-errors", pick: failedEvent(6) },
  "info: a plugin's connection closed": { scenario: "plugin-exits-between-events", pick: logged("info", 1, "10-gone", "closed") },
  "event: a connection lost during the event, fail_request": { scenario: "plugin-exits-during-event", pick: failedEvent(1) },
  "event: a validator rejected": { scenario: "validators", pick: failedEvent(1) },
  "event: a validator rejected without a reason": { scenario: "validators", pick: failedEvent(2) },
  "event: a validator's error": { scenario: "validators", pick: failedEvent(3) },
  "event: a validator timed out, keep_connected": { scenario: "validator-failure-policy", pick: failedEvent(1) },
  "event: a validator timed out": { scenario: "validator-failure-policy", pick: failedEvent(2) },
  "event: the default validator refused an OCI hook": { scenario: "default-validator-hooks", pick: failedEvent(1) },
  "start: the synchronize callback failed": { scenario: "start-sync-error", pick: (o: GoOutput) => (o.lines.find((l) => typeof l.start === "object")?.start as { error?: string } | undefined)?.error },
} as const satisfies Record<string, { scenario: string; pick: (o: GoOutput) => string | undefined }>;

/** Go's own error texts a runtime passes on, printed by `diff-peer texts`. */
export const GO_OWN_TEXTS = ["canceled", "deadlineExceeded"] as const;

/** A key of the recording. */
export type GoTextKey = keyof typeof GO_TEXTS | `go: ${(typeof GO_OWN_TEXTS)[number]}`;
