import { defineConfig } from "vitest/config";

/** `npm run test:cluster`: the single-node cluster suite alone (`npm test` leaves it out). */
export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    fileParallelism: false,
    reporters: ["default"],
  },
});
