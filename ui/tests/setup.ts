// Runs before every test file: a clean <html> (no theme left over), and no Svelte dev warning let
// through. Svelte reports a misuse it finds at run time (a binding to a prop its parent did not
// bind, a state read outside its owner, …) with console.warn and goes on; here such a warning
// fails the test that caused it, so it is seen when it is made rather than lost in the output.
// A wait for the page (findBy…, waitFor, vi.waitFor) gives the real core 10 s, not the 1 s
// Testing Library and Vitest give by default:
// on a loaded machine a round trip through Rust and its peers can take longer than 1 s (a
// bundle's install failed so once in a full run beside a cargo build).
import { configure } from "@testing-library/svelte";
import { afterEach, beforeEach, vi } from "vitest";

configure({ asyncUtilTimeout: 10_000 });
// vi.waitFor's own default is 1 s as well: the same 10 s for it, unless a test says otherwise
// (two fresh-clone runs beside each other failed so on the Servers page).
const viWaitFor = vi.waitFor.bind(vi);
vi.waitFor = ((callback: Parameters<typeof vi.waitFor>[0], options?: Parameters<typeof vi.waitFor>[1]) =>
  viWaitFor(callback, typeof options === "number" ? options : { timeout: 10_000, ...options })) as typeof vi.waitFor;

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
