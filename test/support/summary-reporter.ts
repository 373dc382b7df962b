import type { Reporter, TestModule } from "vitest/node";

/** Prints one closing line, `tests: N passed, N failed, N skipped`, after the default report. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      if (m.state() === "failed" && [...m.children.allTests()].length === 0) failed++;
    }
    console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
