// A tool card builds its body (arguments pretty-printed, the result) only while it is open, so
// a long chat's collapsed cards cost their summaries. A failed call whose server wants a sign-in
// offers one, and retries the call once after a sign-in from the card (against the real core, a
// test peer over HTTP that wants OAuth, and a scripted browser that signs in).
import { afterEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { cleanup, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ToolCardView from "../src/chat/ToolCardView.svelte";
import { PREVIEW_CHARS, clip } from "../src/chat/ResultDetails.svelte";
import type { ToolCard } from "../src/chat/items";
import type { Stores } from "../src/app/stores";
import type { McpServerStatus } from "../src/lib/types";
import * as ipc from "../src/lib/ipc";
import { httpPeer, installRealBackend, type RealBackend } from "./real-backend";
import type { Channel } from "./tauri-core-mock";
import { newStores, renderWithStores } from "./render-with-stores";

const card: ToolCard = {
  call_id: "call_1", server: "time", tool: "get_current_time", display_name: "time · Get Current Time", arguments: '{"timezone":"Europe/Paris"}',
  state: "done", content: "2026-11-23T12:00:00+01:00", duration_ms: 12, reason: null, progress: null, retry_of: null, description: null,
  full_length: null, result_id: "t1", can_retry: false, answered: false, rich: false, artifacts: [], decided_by: null, task: null, late: null,
};

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("a tool card", () => {
  it("a collapsed tool card builds no body", () => {
    const parse = vi.spyOn(JSON, "parse");
    const view = renderWithStores(ToolCardView, { card });
    expect(view.getByTestId("tool-state").textContent).toBe("Done");
    expect(view.queryByTestId("tool-result")).toBeNull();
    expect(view.container.querySelector(".body")).toBeNull();
    expect(parse).not.toHaveBeenCalled();
  });

  it("builds its body when opened and drops it when closed", async () => {
    const user = userEvent.setup();
    const view = renderWithStores(ToolCardView, { card });
    const summary = view.container.querySelector("summary")!;
    await user.click(summary);
    const result = await view.findByTestId("tool-result");
    expect(result.textContent).toBe("2026-11-23T12:00:00+01:00");
    expect(within(view.container.querySelector(".body")!).getByText(/"timezone": "Europe\/Paris"/)).toBeTruthy();
    await user.click(summary);
    await vi.waitFor(() => expect(view.queryByTestId("tool-result")).toBeNull());
  });

  it("a long result shows its start, says how long the whole is, and reads the whole on demand", async () => {
    const user = userEvent.setup();
    const long = $state<ToolCard>({ ...card, content: "x".repeat(4000), full_length: 52_000 });
    let asked = 0;
    const view = renderWithStores(ToolCardView, {
      card: long,
      onShowWhole: async () => {
        asked++;
        long.content = "x".repeat(52_000);
        long.full_length = null;
      },
    });
    await user.click(view.container.querySelector("summary")!);
    // A preview of what the card holds: its first 2,000 characters, with how long the whole is.
    expect((await view.findByTestId("tool-result-cut")).textContent).toMatch(/first 2,000 of 52,000 characters/);
    expect(view.getByTestId("tool-result").textContent).toHaveLength(2_000);
    await user.click(view.getByTestId("tool-result-whole"));
    await vi.waitFor(() => expect(view.getByTestId("tool-result").textContent).toHaveLength(52_000));
    expect(view.queryByTestId("tool-result-cut")).toBeNull();
    expect(asked).toBe(1);
  });
});

describe("a tool card's result", () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

  async function opened(props: Parameters<typeof renderWithStores<{ card: ToolCard }>>[1]) {
    const user = userEvent.setup();
    const view = renderWithStores(ToolCardView, props);
    await user.click(view.container.querySelector("summary")!);
    await view.findByTestId("tool-result");
    return { user, view };
  }

  it("a long text shows its first 20 lines, and Show all shows the rest inline", async () => {
    const { user, view } = await opened({ card: { ...card, content: lines(100) } });
    const result = view.getByTestId("tool-result");
    expect(result.dataset.view).toBe("text");
    expect(result.textContent).toBe(lines(20));
    expect(view.getByTestId("tool-result-cut").textContent).toMatch(/^\s*The first 20 of 100 lines\.\s*Show all\s*$/);
    await user.click(view.getByTestId("tool-result-whole"));
    expect(view.getByTestId("tool-result").textContent).toBe(lines(100));
    expect(view.queryByTestId("tool-result-cut")).toBeNull();
    // The whole stays shown in the raw form too.
    await user.click(view.getByTestId("tool-result-raw"));
    expect(view.getByTestId("tool-result").textContent).toBe(lines(100));
  });

  it("a text a little over the preview is shown whole, with no Show all", async () => {
    const { view } = await opened({ card: { ...card, content: lines(23) } });
    expect(view.getByTestId("tool-result").textContent).toBe(lines(23));
    expect(view.queryByTestId("tool-result-cut")).toBeNull();
  });

  it("a result Rust cut, with no way to read the whole here, says so and shows what the card holds", async () => {
    const { user, view } = await opened({ card: { ...card, content: "y ".repeat(2_000), full_length: 9_000 } });
    expect(view.getByTestId("tool-result-cut").textContent).toMatch(/first 2,000 of 9,000 characters/);
    await user.click(view.getByTestId("tool-result-whole"));
    expect(view.getByTestId("tool-result").textContent).toBe("y ".repeat(2_000));
    expect(view.getByTestId("tool-result-cut").textContent?.trim()).toBe("The first 4,000 of 9,000 characters.");
    expect(view.queryByTestId("tool-result-whole")).toBeNull();
  });

  it("a JSON list of records is a table, and Raw shows the exact text", async () => {
    const text = '[{"name":"Ada","score":36,"ok":true},{"name":"<b>Grace</b>","score":41,"ok":null}]';
    const { user, view } = await opened({ card: { ...card, content: text } });
    const result = view.getByTestId("tool-result");
    expect(result.dataset.view).toBe("table");
    const table = within(result).getByTestId("structured-table");
    expect([...table.querySelectorAll("th")].map((c) => c.textContent)).toEqual(["name", "score", "ok"]);
    expect([...table.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent))).toEqual([
      ["Ada", "36", "true"],
      ["<b>Grace</b>", "41", "null"],
    ]);
    // Plain text: a value is never markup.
    expect(table.querySelector("b")).toBeNull();

    const raw = view.getByTestId("tool-result-raw");
    expect(raw.getAttribute("aria-pressed")).toBe("false");
    await user.click(raw);
    expect(raw.getAttribute("aria-pressed")).toBe("true");
    const exact = view.getByTestId("tool-result");
    expect(exact.tagName).toBe("PRE");
    expect(exact.dataset.view).toBe("raw");
    expect(exact.textContent).toBe(text);
    expect(view.queryByTestId("structured-table")).toBeNull();
    await user.click(raw);
    expect(view.getByTestId("tool-result").dataset.view).toBe("table");
  });

  it("JSON that is not a list of flat records is a tree; an error stays prose", async () => {
    const { view } = await opened({ card: { ...card, content: '{"city":"Paris","hours":[{"h":1,"t":{"c":3}}]}' } });
    const result = view.getByTestId("tool-result");
    expect(result.dataset.view).toBe("tree");
    expect(result.textContent).toMatch(/city:\s*"Paris"/);
    cleanup();
    const failed = await opened({ card: { ...card, state: "error", content: '{"error":"nope"}' } });
    expect(failed.view.getByText("Error")).toBeTruthy();
    const words = failed.view.getByTestId("tool-result");
    expect(words.dataset.view).toBe("text");
    expect(words.classList.contains("error")).toBe(true);
    expect(words.textContent).toBe('{"error":"nope"}');
  });

  it("a long branch of a tree shows its first 20 entries and Show all", async () => {
    const many = Array.from({ length: 50 }, (_, i) => i);
    const { user, view } = await opened({ card: { ...card, content: JSON.stringify({ many }) } });
    // The tree's first level, then its branch "many", folded (built once opened).
    const branch = view.getByTestId("tool-result").querySelectorAll("details")[1];
    expect(branch.querySelector("summary")?.textContent).toMatch(/many\s*\[50\]/);
    expect(branch.querySelectorAll("li")).toHaveLength(0);
    await user.click(branch.querySelector("summary")!);
    expect(branch.querySelectorAll("li")).toHaveLength(20);
    await user.click(within(branch as HTMLElement).getByTestId("structured-more"));
    expect(branch.querySelectorAll("li")).toHaveLength(50);
    expect(within(branch as HTMLElement).queryByTestId("structured-more")).toBeNull();
  });

  it("long arguments show their start and Show all", async () => {
    const args = JSON.stringify(Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i])));
    const { user, view } = await opened({ card: { ...card, arguments: args } });
    const shown = view.getByTestId("tool-arguments");
    expect(shown.textContent?.split("\n")).toHaveLength(20);
    expect(view.getByTestId("tool-arguments-cut").textContent).toMatch(/The first 20 of 42 lines/);
    await user.click(view.getByTestId("tool-arguments-whole"));
    expect(view.getByTestId("tool-arguments").textContent).toBe(JSON.stringify(JSON.parse(args), null, 2));
    expect(view.queryByTestId("tool-arguments-cut")).toBeNull();
  });
});

describe("a preview's cut", () => {
  it("ends at a line, else near a space, never inside a character", () => {
    expect(clip("short").by).toBeNull();
    const words = "abcdef ".repeat(500);
    const cut = clip(words);
    expect(cut.by).toBe("chars");
    expect(cut.text).toBe(words.slice(0, 1_994));
    expect(clip("y ".repeat(2_000)).text).toHaveLength(2_000);
    const emoji = "a" + "😀".repeat(1_500);
    const inside = clip(emoji);
    expect(inside.text.length).toBeLessThanOrEqual(PREVIEW_CHARS);
    expect(/[\ud800-\udbff]$/.test(inside.text)).toBe(false);
    // Twenty lines, but longer than the preview's characters: cut by characters.
    const wide = Array.from({ length: 30 }, () => "z".repeat(300)).join("\n");
    expect(clip(wide).by).toBe("chars");
  });
});

describe("a tool card with more than text", () => {
  const rich: ToolCard = { ...card, display_name: "everything · Get Tiny Image", content: "Here's the image you requested:", rich: true };
  const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

  function stubBlobs(): { made: Blob[]; revoked: string[] } {
    const made: Blob[] = [];
    const revoked: string[] = [];
    URL.createObjectURL = vi.fn((blob: Blob) => {
      made.push(blob);
      return `blob:test/${made.length}`;
    });
    URL.revokeObjectURL = vi.fn((url: string) => void revoked.push(url));
    return { made, revoked };
  }

  it("shows a tool's image from a blob, larger on click, and its links and structured content when opened", async () => {
    const blobs = stubBlobs();
    const user = userEvent.setup();
    let asked = 0;
    const view = renderWithStores(ToolCardView, {
      card: rich,
      loadView: async () => {
        asked++;
        return {
          parts: [
            { kind: "image", mime_type: "image/png", data: PNG },
            { kind: "link", uri: "https://example.com/a.csv", name: "a.csv", title: "All rows", description: "Every row", mime_type: "text/csv" },
            { kind: "link", uri: "demo://resource/2", name: "two", title: null, description: null, mime_type: null },
          ],
          structured: { temperature: 21.5, conditions: "Sunny", hourly: [1, 2] },
        };
      },
    });
    const image = (await view.findByTestId("tool-image")) as HTMLImageElement;
    expect(image.getAttribute("src")).toBe("blob:test/1");
    expect(blobs.made[0].type).toBe("image/png");
    expect(image.alt).toMatch(/Image from everything · Get Tiny Image: image\/png/);
    // Closed, the card shows the image but builds no body.
    expect(view.queryByTestId("tool-link")).toBeNull();

    await user.click(image);
    const viewer = view.getByTestId("image-viewer");
    expect(viewer.querySelector("img")!.getAttribute("src")).toBe("blob:test/1");
    await user.keyboard("{Escape}");
    expect(view.queryByTestId("image-viewer")).toBeNull();

    await user.click(view.container.querySelector("summary")!);
    const links = await view.findAllByTestId("tool-link");
    expect(links).toHaveLength(2);
    expect(links[0].querySelector("a")!.getAttribute("href")).toBe("https://example.com/a.csv");
    expect(links[0].textContent).toMatch(/All rows.*Every row/s);
    // An address the link dialog cannot open is shown, not linked.
    expect(links[1].querySelector("a")).toBeNull();
    expect(links[1].textContent).toMatch(/demo:\/\/resource\/2/);
    const tree = view.getByTestId("tool-structured");
    expect(tree.textContent).toMatch(/temperature:\s*21.5/);
    expect(tree.textContent).toMatch(/conditions:\s*"Sunny"/);
    expect(asked).toBe(1);

    view.unmount();
    expect(blobs.revoked).toEqual(["blob:test/1"]);
  });

  it("shows structured content once, in its best form, and Raw shows the exact text and the JSON", async () => {
    const user = userEvent.setup();
    const structured = { temperature: 21.5, conditions: "Sunny" };
    const text = JSON.stringify(structured);
    const view = renderWithStores(ToolCardView, { card: { ...rich, content: text }, loadView: async () => ({ parts: [], structured }) });
    await user.click(view.container.querySelector("summary")!);
    const tree = await view.findByTestId("tool-structured");
    expect(tree.textContent).toMatch(/conditions:\s*"Sunny"/);
    // The text is the same data as JSON (as servers send it): not shown twice.
    const result = view.getByTestId("tool-result");
    expect(result.dataset.view).toBe("tree");
    expect(result.querySelector(".prose")).toBeNull();

    await user.click(view.getByTestId("tool-result-raw"));
    expect(view.getByTestId("tool-result").textContent).toBe(text);
    expect(view.getByTestId("tool-structured-raw").textContent).toBe(JSON.stringify(structured, null, 2));
    expect(view.queryByTestId("tool-structured")).toBeNull();
    cleanup();

    // Words beside the structured content are shown with it.
    const worded = renderWithStores(ToolCardView, { card: rich, loadView: async () => ({ parts: [], structured }) });
    await user.click(worded.container.querySelector("summary")!);
    await worded.findByTestId("tool-structured");
    expect(worded.getByTestId("tool-result").textContent).toMatch(/^Here's the image you requested:.*temperature/s);
  });

  it("an SVG is an <img> from a blob, never markup in the page; bad data and other types are named", async () => {
    stubBlobs();
    const svg = btoa('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>');
    const view = renderWithStores(ToolCardView, {
      card: rich,
      loadView: async () => ({
        parts: [
          { kind: "image", mime_type: "image/svg+xml", data: svg },
          { kind: "image", mime_type: "image/png", data: "not base64 at all!" },
          { kind: "unshown", label: "Image: image/x-icon, 3 bytes" },
          { kind: "audio", mime_type: "audio/wav", data: "UklGRg==" },
        ],
        structured: null,
      }),
    });
    await view.findAllByTestId("tool-image");
    expect(view.container.querySelector("svg, script")).toBeNull();
    expect(view.getAllByTestId("tool-image")).toHaveLength(1);
    const unshown = view.getAllByTestId("tool-unshown").map((p) => p.textContent);
    expect(unshown).toEqual([expect.stringMatching(/image\/png.*not valid base64/), "Image: image/x-icon, 3 bytes"]);
    expect(view.getByTestId("tool-audio").getAttribute("src")).toMatch(/^blob:/);
  });

  it("says so when what the result holds cannot be read, and a plain result is never asked for", async () => {
    stubBlobs();
    const failing = renderWithStores(ToolCardView, { card: rich, loadView: async () => Promise.reject({ kind: "not_found", message: "tool call c1 was not found" }) });
    expect((await failing.findByTestId("tool-media-error")).textContent).toMatch(/could not be read: tool call c1 was not found/);
    const loadView = vi.fn();
    renderWithStores(ToolCardView, { card, loadView });
    expect(loadView).not.toHaveBeenCalled();
  });

  it("a long result shows its size in the summary", () => {
    const view = renderWithStores(ToolCardView, { card: { ...card, content: "x".repeat(4000), full_length: 52_000 } });
    expect(view.getByTestId("tool-result-size").textContent).toBe(`${(52_000).toLocaleString()} characters`);
    cleanup();
    const short = renderWithStores(ToolCardView, { card });
    expect(short.queryByTestId("tool-result-size")).toBeNull();
  });
});

/** A remote server “time” that wants an OAuth sign-in (tests/peers/raw_server.py over HTTP with
 *  `--oauth -` and `flags`) and a local “clock” that runs, both added and approved through the
 *  real core; stores that hear Rust's lists. Signing in goes through for real: the scripted
 *  host says yes to Rust's dialog and its browser follows the sign-in page back to the core. */
async function twoServers(...flags: string[]): Promise<{ backend: RealBackend; stores: Stores }> {
  const backend = await installRealBackend();
  const url = await httpPeer("--oauth", "-", ...flags);
  await backend.seed(() => ipc.addMcpServer("time", null, url));
  await backend.addFaultServer("clock");
  await backend.serverIs("time", "needs_sign_in");
  await backend.host({ browser: true });
  const stores = newStores();
  await stores.servers.watchServers();
  await stores.servers.load();
  return { backend, stores };
}

/** The sign-in pages Rust had the browser open, and the yes-or-no questions about them. */
async function signInsAsked(backend: RealBackend): Promise<{ asked: number; opened: number }> {
  const asked = await backend.asked();
  return {
    asked: asked.filter((a) => a.dialog === "allow" && a.title.startsWith("Sign in to “time”")).length,
    opened: asked.filter((a) => a.dialog === "open_url" && a.title.includes("/authorize?")).length,
  };
}

const failed: ToolCard = {
  ...card, state: "error", content: "“time” needs more permission than you gave it: sign in to it again", result_id: "t2", can_retry: true,
};

/** How long the core may take to start a server over HTTP (a few seconds), not a fake's tick. */
const LONG = { timeout: 10_000 };

// The card's wait for a server that runs again is heard from the lists Rust pushes: a sign-in
// restarts the server, which takes the core a few seconds over HTTP.
describe("a failed call whose server wants a sign-in", { timeout: 30_000 }, () => {
  let backend: RealBackend;
  let stores: Stores;

  afterEach(() => {
    vi.useRealTimers();
  });

  it("offers a sign-in only on a failed card of a server that wants one, naming the server as text", async () => {
    ({ backend, stores } = await twoServers());
    const offered = renderWithStores(ToolCardView, { card: failed, onRetry: () => {} }, stores);
    const button = offered.getByTestId("tool-card-sign-in") as HTMLButtonElement;
    expect(button.textContent).toBe("Sign in to “time”");
    expect(button.disabled).toBe(false);
    expect(offered.getByTestId("tool-card-sign-in-why").textContent?.trim()).toBe(
      "“time” needs you to sign in (or to allow more) before this call can run.",
    );
    // Beside the summary, not in it (a button in a summary is lost to keyboards).
    expect(offered.container.querySelector("summary [data-testid=tool-card-sign-in]")).toBeNull();
    cleanup();

    for (const other of [
      { ...failed, state: "done" as const },
      { ...failed, state: "denied" as const, reason: "The user denied this call." },
      { ...failed, server: "clock" },
      { ...failed, server: null },
    ]) {
      const view = renderWithStores(ToolCardView, { card: other, onRetry: () => {} }, stores);
      expect(view.getByTestId("tool-card")).toBeTruthy();
      expect(view.queryByTestId("tool-card-sign-in")).toBeNull();
      expect(view.queryByTestId("tool-card-sign-in-why")).toBeNull();
      cleanup();
    }

    // A server's name is its own text: never markup (Rust takes such a name).
    const hostile = '<img src=x onerror="alert(1)">';
    const url = await httpPeer("--oauth", "-");
    await backend.seed(() => ipc.addMcpServer(hostile, null, url));
    await waitFor(() => expect(stores.servers.stateOf(hostile)?.state).toBe("needs_sign_in"), LONG);
    const named = renderWithStores(ToolCardView, { card: { ...failed, server: hostile } }, stores);
    expect(named.getByTestId("tool-card-sign-in").textContent).toBe(`Sign in to “${hostile}”`);
    expect(named.getByTestId("tool-card-sign-in-why").textContent).toContain(`“${hostile}” needs you to sign in`);
    expect(named.container.querySelector("img")).toBeNull();
  });

  it("signs in, waits for the server to run again, then retries the call once", async () => {
    ({ backend, stores } = await twoServers());
    const user = userEvent.setup();
    backend.delay = (cmd) => (cmd === "sign_in_mcp_server" ? 40 : 0);
    const statesAtRetry: (string | undefined)[] = [];
    const onRetry = vi.fn(() => void statesAtRetry.push(stores.servers.stateOf("time")?.state));
    const view = renderWithStores(ToolCardView, { card: failed, onRetry }, stores);

    await user.click(view.getByTestId("tool-card-sign-in"));
    const button = view.getByTestId("tool-card-sign-in") as HTMLButtonElement;
    expect(button.textContent).toBe("Signing in…");
    expect(button.disabled).toBe(true);
    expect(backend.callsTo("sign_in_mcp_server")).toEqual([{ cmd: "sign_in_mcp_server", args: { name: "time" } }]);
    // Signed in, the server restarts: the card waits for it, and has not retried yet.
    expect((await view.findByTestId("tool-card-sign-in-wait", undefined, LONG)).textContent).toBe("Signed in. Waiting for “time” to run again…");
    expect(await signInsAsked(backend)).toEqual({ asked: 1, opened: 1 });
    expect(view.queryByTestId("tool-card-sign-in")).toBeNull();
    expect(stores.servers.stateOf("time")?.state).toBe("starting");
    expect(onRetry).not.toHaveBeenCalled();

    await waitFor(() => expect(onRetry).toHaveBeenCalledTimes(1), LONG);
    expect(statesAtRetry).toEqual(["running"]);
    expect(view.queryByTestId("tool-card-sign-in-wait")).toBeNull();
    expect(view.queryByTestId("tool-card-sign-in-error")).toBeNull();
    // Later changes of the server do not run the call again: signed out (it asks again), then
    // signed in elsewhere and running.
    await backend.seed(() => ipc.signOutMcpServer("time"));
    await backend.seed(() => ipc.restartMcpServer("time"));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("needs_sign_in"), LONG);
    await backend.seed(() => ipc.signInMcpServer("time"));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"), LONG);
    expect(onRetry).toHaveBeenCalledTimes(1);
    expect(backend.callsTo("sign_in_mcp_server")).toHaveLength(1);
  });

  it("does not retry a call that cannot be retried, or has no Retry now, after the sign-in", async () => {
    ({ backend, stores } = await twoServers());
    const user = userEvent.setup();
    const onRetry = vi.fn();
    const view = renderWithStores(ToolCardView, { card: { ...failed, can_retry: false }, onRetry }, stores);
    await user.click(view.getByTestId("tool-card-sign-in"));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"), LONG);
    await waitFor(() => expect(view.queryByTestId("tool-card-sign-in-wait")).toBeNull(), LONG);
    expect(onRetry).not.toHaveBeenCalled();
    cleanup();

    // No Retry given (a comparison's card, or a run under way): signed in, nothing runs.
    await backend.seed(() => ipc.signOutMcpServer("time"));
    await backend.seed(() => ipc.restartMcpServer("time"));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("needs_sign_in"), LONG);
    const bare = renderWithStores(ToolCardView, { card: failed }, stores);
    await user.click(bare.getByTestId("tool-card-sign-in"));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"), LONG);
    await waitFor(() => expect(bare.queryByTestId("tool-card-sign-in-wait")).toBeNull(), LONG);
    expect(backend.callsTo("sign_in_mcp_server")).toHaveLength(2);
    expect(await signInsAsked(backend)).toEqual({ asked: 2, opened: 2 });
    expect(bare.queryByTestId("tool-card-sign-in")).toBeNull();
  });

  it("shows why a refused sign-in failed, keeps the button for another try, and never retries then", async () => {
    ({ backend, stores } = await twoServers());
    const user = userEvent.setup();
    const onRetry = vi.fn();
    // The person says no at Rust's "open your browser?" dialog.
    await backend.host({ confirm: false });
    const view = renderWithStores(ToolCardView, { card: failed, onRetry }, stores);

    await user.click(view.getByTestId("tool-card-sign-in"));
    expect((await view.findByTestId("tool-card-sign-in-error", undefined, LONG)).textContent).toBe(
      "Signing in to “time” failed: the sign-in was cancelled: its page was not opened",
    );
    const button = view.getByTestId("tool-card-sign-in") as HTMLButtonElement;
    expect(button.disabled).toBe(false);
    expect(button.textContent).toBe("Sign in to “time”");
    expect(stores.servers.stateOf("time")?.state).toBe("needs_sign_in");
    expect(await signInsAsked(backend)).toEqual({ asked: 1, opened: 0 });
    expect(onRetry).not.toHaveBeenCalled();
    // Not in the toast either: the card says it.
    expect(stores.ui.toast).toBeNull();

    // Another try that works: the error goes, and the call runs again once.
    await backend.host({ confirm: true });
    await user.click(button);
    await waitFor(() => expect(onRetry).toHaveBeenCalledTimes(1), LONG);
    expect(view.queryByTestId("tool-card-sign-in-error")).toBeNull();
    expect(backend.callsTo("sign_in_mcp_server")).toHaveLength(2);
    expect(await signInsAsked(backend)).toEqual({ asked: 2, opened: 1 });
  });

  it("drops the button without retrying when the server is signed in elsewhere (the Servers page)", async () => {
    ({ backend, stores } = await twoServers());
    const onRetry = vi.fn();
    const view = renderWithStores(ToolCardView, { card: failed, onRetry }, stores);
    expect(view.getByTestId("tool-card-sign-in")).toBeTruthy();

    await stores.servers.signIn("time");
    await waitFor(() => expect(view.queryByTestId("tool-card-sign-in")).toBeNull(), LONG);
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"), LONG);
    expect(view.queryByTestId("tool-card-sign-in-why")).toBeNull();
    expect(view.queryByTestId("tool-card-sign-in-wait")).toBeNull();
    expect(onRetry).not.toHaveBeenCalled();
    // The failed card keeps its own Retry for the person.
    expect(view.getByTestId("retry-call")).toBeTruthy();
  });

  // A server that never answers `initialize` once signed in stays starting (the core gives it
  // 60 s); edited to a peer that answers, it runs at last.
  it("gives up after 30 s when the server does not run again, says so, and does not retry", async () => {
    ({ backend, stores } = await twoServers("--no-initialize"));
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    const onRetry = vi.fn();
    const view = renderWithStores(ToolCardView, { card: failed, onRetry }, stores);
    await user.click(view.getByTestId("tool-card-sign-in"));
    await view.findByTestId("tool-card-sign-in-wait", undefined, LONG);
    expect(stores.servers.stateOf("time")?.state).toBe("starting");

    await vi.advanceTimersByTimeAsync(29_000);
    expect(view.getByTestId("tool-card-sign-in-wait")).toBeTruthy();
    await vi.advanceTimersByTimeAsync(1_500);
    expect((await view.findByTestId("tool-card-sign-in-error", undefined, LONG)).textContent).toBe(
      "“time” did not run again within 30 s of the sign-in, so the call was not retried.",
    );
    expect(view.queryByTestId("tool-card-sign-in-wait")).toBeNull();

    // It runs at last: the message goes, and the call is still left to the person's Retry.
    const answering = await httpPeer();
    await backend.seed(() => ipc.editMcpServer("time", null, answering));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"), LONG);
    await waitFor(() => expect(view.queryByTestId("tool-card-sign-in-error")).toBeNull(), LONG);
    expect(onRetry).not.toHaveBeenCalled();
  });

  it("a card taken away while its server restarts does not retry its call", async () => {
    ({ backend, stores } = await twoServers("--no-initialize"));
    const user = userEvent.setup();
    const onRetry = vi.fn();
    const view = renderWithStores(ToolCardView, { card: failed, onRetry }, stores);
    await user.click(view.getByTestId("tool-card-sign-in"));
    await view.findByTestId("tool-card-sign-in-wait", undefined, LONG);
    expect(stores.servers.stateOf("time")?.state).toBe("starting");
    view.unmount();
    const answering = await httpPeer();
    await backend.seed(() => ipc.editMcpServer("time", null, answering));
    await waitFor(() => expect(stores.servers.stateOf("time")?.state).toBe("running"), LONG);
    expect(onRetry).not.toHaveBeenCalled();
  });

  // Over HTTP a start that fails is tried again with backoff (1, 2, 4, 8 s) before Rust says
  // `failed`: that list is delivered here as Rust would push it, on the window's own channel,
  // while the real server (which never answers `initialize` once signed in) is still starting.
  it("says why when the server fails to start after the sign-in, and does not retry", async () => {
    ({ backend, stores } = await twoServers("--no-initialize"));
    const user = userEvent.setup();
    const onRetry = vi.fn();
    const view = renderWithStores(ToolCardView, { card: failed, onRetry }, stores);
    await user.click(view.getByTestId("tool-card-sign-in"));
    await view.findByTestId("tool-card-sign-in-wait", undefined, LONG);
    const listening = backend.callsTo("watch_mcp_servers")[0].args?.onChange as Channel<McpServerStatus[]>;
    const now = await backend.seed(() => ipc.listMcpServers());
    listening.onmessage(now.map((s) => (s.name === "time" ? { ...s, state: { state: "failed", reason: "“time” answered 500 to initialize" } } : s)));
    expect((await view.findByTestId("tool-card-sign-in-error")).textContent).toBe(
      "“time” did not start again after the sign-in, so the call was not retried: “time” answered 500 to initialize",
    );
    expect(onRetry).not.toHaveBeenCalled();
  });
});
