import { configDefaults, defineConfig } from "vitest/config";

/**
 * The suites, one vitest project each:
 * - `unit`: in-process tests and tests against the project's own programs; nothing to build.
 * - `interop`: every test file that builds a Go peer (test/interop and the differential, property
 *   and soak runs against Go).
 * - `runtimes`: containerd and CRI-O built from source and run as root (`npm run test:runtimes`).
 * `npm test` runs `unit` and `interop`; the runtimes change the system and run only when asked,
 * and so does the cluster suite (`npm run test:cluster`).
 */
const INTEROP = [
  "test/interop/**/*.test.ts",
  "test/runtime/adaptation.differential.test.ts",
  "test/runtime/adaptation.property.test.ts",
  "test/bench/soak/soak.test.ts",
];
const RUNTIMES = ["test/runtimes/**/*.test.ts"];
/** Its own command (npm run test:cluster, vitest.cluster.config.ts): it builds and runs Kubernetes. */
const CLUSTER = ["test/cluster/**/*.test.ts"];

export default defineConfig({
  test: {
    setupFiles: ["test/support/setup.ts"],
    // The run's own temporary directory; what the tests leave in it fails the run.
    globalSetup: ["test/support/leftovers.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...INTEROP, ...RUNTIMES, ...CLUSTER],
        },
      },
      { extends: true, test: { name: "interop", include: INTEROP } },
      { extends: true, test: { name: "runtimes", include: RUNTIMES } },
    ],
  },
});
