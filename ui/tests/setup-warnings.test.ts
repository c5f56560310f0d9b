// tests/setup.ts watches console.warn in every test (a Svelte warning fails the test that made
// it). A plain warning must pass through, in every test of a file: the watch once called the
// previous test's watch, so a warning late in a file ran out of stack (a CI run, session 42).
// It also gives vi.waitFor the same 10 s as Testing Library's waits.
import { describe, expect, it, vi } from "vitest";

for (let n = 1; n <= 30; n++) {
  it(`lets a plain warning through in test ${n} of a file`, () => {
    expect(() => console.warn("a plain warning from a library", n)).not.toThrow();
  });
}

describe("vi.waitFor", () => {
  it("waits up to 10 s unless told otherwise, as Testing Library's waits do", async () => {
    const start = Date.now();
    await vi.waitFor(() => {
      if (Date.now() - start < 1_500) throw new Error("not yet");
    });
    expect(Date.now() - start).toBeGreaterThanOrEqual(1_500);
    await expect(vi.waitFor(() => expect(false).toBe(true), { timeout: 200 })).rejects.toThrow();
  });
});
