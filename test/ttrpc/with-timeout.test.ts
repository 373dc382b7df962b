import { describe, expect, it } from "vitest";
import { withTimeout } from "../../src/ttrpc/with-timeout.js";
import { activeResources } from "../support/wait.js";

describe("withTimeout", () => {
  it("settles as the work does and leaves no timer behind", async () => {
    const before = activeResources().Timeout ?? 0;
    await expect(withTimeout(Promise.resolve(7), 60_000, () => new Error("late"))).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error("own")), 60_000, () => new Error("late"))).rejects.toThrow("own");
    expect(activeResources().Timeout ?? 0).toBe(before);
  });

  it("rejects with the timeout's error, made once the time is up, when the work does not settle", async () => {
    let made = 0;
    const never = new Promise<number>(() => undefined);
    await expect(withTimeout(never, 1, () => new Error(`timed out (${++made})`))).rejects.toThrow("timed out (1)");
    expect(made).toBe(1);
  });
});
