import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Its own command (npm run test:cluster, vitest.cluster.config.ts): it builds and runs Kubernetes.
    exclude: ["**/node_modules/**", "test/cluster/**"],
    setupFiles: ["test/support/setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
