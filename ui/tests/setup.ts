// Runs before every test file: a clean <html> (no theme left over), and no Svelte dev warning let
// through. Svelte reports a misuse it finds at run time (a binding to a prop its parent did not
// bind, a state read outside its owner, …) with console.warn and goes on; here such a warning
// fails the test that caused it, so it is seen when it is made rather than lost in the output.
// A wait for the page (findBy…, waitFor) gives the real core 10 s, not Testing Library's 1 s:
// on a loaded machine a round trip through Rust and its peers can take longer than 1 s (a
// bundle's install failed so once in a full run beside a cargo build).
import { configure } from "@testing-library/svelte";
import { afterEach, beforeEach, vi } from "vitest";

configure({ asyncUtilTimeout: 10_000 });

let svelteWarnings: string[] = [];
/** console.warn as the file found it. Taken once: a spy that called "the console.warn of
 *  now" would call the previous test's spy, and so on, until a warning late in a file ran out
 *  of stack (seen once in a CI run, hiding the warning itself). */
const warn = console.warn.bind(console);
let watching: { mockRestore(): void } | null = null;

beforeEach(() => {
  svelteWarnings = [];
  watching = vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => {
    const first = args[0];
    if (typeof first === "string" && first.includes("[svelte]")) svelteWarnings.push(first);
    warn(...args);
  });
});

afterEach(() => {
  watching?.mockRestore();
  watching = null;
  delete document.documentElement.dataset.theme;
  const seen = svelteWarnings;
  svelteWarnings = [];
  if (seen.length > 0) throw new Error(`Svelte warned during the test:\n${seen.join("\n")}`);
});
