// tests/setup.ts watches console.warn in every test (a Svelte warning fails the test that made
// it). A plain warning must pass through, in every test of a file: the watch once called the
// previous test's watch, so a warning late in a file ran out of stack (a CI run, session 42).
import { expect, it } from "vitest";

for (let n = 1; n <= 30; n++) {
  it(`lets a plain warning through in test ${n} of a file`, () => {
    expect(() => console.warn("a plain warning from a library", n)).not.toThrow();
  });
}
