// The canvas (issue 17, seed 002), in the whole window against an in-memory backend: the files
// tools made in a conversation, listed with their type, size and tool, each previewed in the way
// that fits it, saved through Rust's Save As; opened by a tool's result at the file it names,
// by the header's Files or by a tool card; closed with its button or Esc. An HTML file is its
// source until Render, and then a frame with an empty sandbox.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { configure, screen, waitFor, within } from "@testing-library/svelte";
import type { FakeBackend, ToolFile } from "./fake-backend";
import { toolFile } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";
import { newStores } from "./render-with-stores";

let backend: FakeBackend;
let blobs: Blob[];
let revoked: string[];
const createObjectURL = URL.createObjectURL;
const revokeObjectURL = URL.revokeObjectURL;

beforeEach(() => {
  backend = installFakeBackend();
  backend.addProviderRecord("Work");
  sessionStorage.clear();
  // jsdom has no blob addresses: these stand in, and count what was made and revoked.
  blobs = [];
  revoked = [];
  URL.createObjectURL = vi.fn((blob: Blob) => `blob:test/${blobs.push(blob)}`);
  URL.revokeObjectURL = vi.fn((url: string) => void revoked.push(url));
});

afterEach(() => {
  URL.createObjectURL = createObjectURL;
  URL.revokeObjectURL = revokeObjectURL;
});

const CSV = toolFile("scores.csv", "text/csv", "name,score\nAda,36\n\"Lovelace, A.\",41\n");
const PAGE = toolFile("page.html", "text/html", '<h1 id="hi">Hello</h1><script>window.__TAURI_INTERNALS__.invoke("delete_conversation")</script>');
const NOTES = toolFile("notes.md", "text/plain", "# Findings\n\nIt is **noon**. <img src=x onerror=alert(1)>");
const DATA = toolFile("data.json", "application/json", '{"a":1,"b":[true,null]}');
const PDF = toolFile("report.pdf", "application/pdf", "%PDF-1.7 not really", "pdf");
const LOGO = toolFile("logo.svg", "image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "image");

/** The conversation "Files", holding one call whose result carried `files`. */
function conversationWith(files: ToolFile[]): string {
  const conversation = backend.addConversation("Files");
  backend.addMessages(conversation.id, ["Make me some files"]);
  backend.addToolFiles(conversation.id, files);
  return conversation.id;
}

async function openConversation() {
  const app = await renderApp();
  await app.user.click(screen.getAllByTestId("conversation-item")[0]);
  await screen.findByTestId("composer-input");
  return app;
}

/** Opens the canvas with the header's Files button; resolves with the panel once it has loaded. */
async function openCanvas(user: Awaited<ReturnType<typeof openConversation>>["user"]): Promise<HTMLElement> {
  await user.click(screen.getByTestId("canvas-button"));
  return screen.findByTestId("canvas");
}

function listed(canvas: HTMLElement): string[] {
  return within(canvas)
    .queryAllByTestId("canvas-file")
    .map((f) => f.textContent?.replace(/\s+/g, " ").trim() ?? "");
}

async function choose(canvas: HTMLElement, user: Awaited<ReturnType<typeof openConversation>>["user"], name: string): Promise<HTMLElement> {
  const file = within(canvas)
    .getAllByTestId("canvas-file")
    .find((f) => f.textContent?.includes(name));
  if (!file) throw new Error(`no file ${name} in the canvas`);
  await user.click(file);
  return within(canvas).findByTestId("canvas-preview");
}

// The panel and papaparse are loaded on first use (dynamic imports, compiled by Vite on first
// load): on a busy machine that takes longer than Testing Library's default second.
configure({ asyncUtilTimeout: 10_000 });

describe("the canvas", { timeout: 30_000 }, () => {
  it("opens at the file a tool's result names, and lists every file the result carried", async () => {
    backend.addConversation("Chat");
    backend.toolFiles = [NOTES, CSV, DATA];
    backend.toolOpensCanvas = CSV.file.sha256;
    const { user } = await openConversation();
    expect(screen.queryByTestId("canvas")).toBeNull();

    await user.type(screen.getByTestId("composer-input"), "What time is it?{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));

    const canvas = await screen.findByTestId("canvas");
    expect(canvas.tagName).toBe("ASIDE");
    expect(canvas.getAttribute("aria-label")).toBe("Files from tools");
    await waitFor(() => expect(listed(canvas)).toHaveLength(3));
    expect(listed(canvas)).toEqual([
      "notes.md Markdown · 56 B · from time__get_current_time",
      "scores.csv CSV table · 36 B · from time__get_current_time",
      "data.json JSON · 23 B · from time__get_current_time",
    ]);
    const current = within(canvas).getAllByTestId("canvas-file").filter((f) => f.getAttribute("aria-current") === "true");
    expect(current.map((f) => f.dataset.sha256)).toEqual([CSV.file.sha256]);
    expect(await within(canvas).findByTestId("canvas-table")).toBeTruthy();
    expect(screen.getByTestId("canvas-count").textContent).toBe("3");
    // A tool's result opened it, not the person: the focus stays where they were typing.
    expect(document.activeElement).not.toBe(current[0]);
    // Heard live, the files are there once each (the tool message and the result both named them).
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("noon"));
    expect(listed(canvas)).toHaveLength(3);
  });

  it("lists a conversation's files from Rust when it opens, and Files shows them with their type, size and tool", async () => {
    conversationWith([CSV, PDF]);
    const { user } = await openConversation();
    await waitFor(() => expect(screen.getByTestId("canvas-count").textContent).toBe("2"));
    const canvas = await openCanvas(user);
    expect(listed(canvas)).toEqual(["scores.csv CSV table · 36 B · from files__make", "report.pdf PDF · 19 B · from files__make"]);
    // Opened by the person: the file shown (the newest) has the focus.
    await waitFor(() => expect(document.activeElement?.getAttribute("data-sha256")).toBe(PDF.file.sha256));
    // Files again closes it.
    await user.click(screen.getByTestId("canvas-button"));
    expect(screen.queryByTestId("canvas")).toBeNull();
  });

  it("shows a CSV as a table with its cells, quoted commas kept in their cell", async () => {
    conversationWith([CSV, PDF]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const preview = await choose(canvas, user, "scores.csv");
    const table = await within(preview).findByTestId("canvas-table");
    expect([...table.querySelectorAll("th")].map((c) => c.textContent)).toEqual(["name", "score"]);
    expect([...table.querySelectorAll("tbody tr")].map((r) => [...r.querySelectorAll("td")].map((c) => c.textContent))).toEqual([
      ["Ada", "36"],
      ["Lovelace, A.", "41"],
    ]);
    expect(within(preview).queryByTestId("canvas-rows-cut")).toBeNull();
  });

  it("shows the first 1,000 rows of a longer table and says how many are left out", async () => {
    const rows = Array.from({ length: 1_204 }, (_, i) => `${i}\trow ${i}`).join("\n");
    conversationWith([toolFile("big.tsv", "text/plain", `n\twhat\n${rows}\n`)]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const table = await within(canvas).findByTestId("canvas-table");
    expect(table.querySelectorAll("tbody tr")).toHaveLength(1_000);
    expect(table.querySelector("tbody tr:last-child td:last-child")?.textContent).toBe("row 999");
    expect(within(canvas).getByTestId("canvas-rows-cut").textContent?.replace(/\s+/g, " ")).toContain("The first 1,000 of 1,204 rows; 204 more are left out");
  });

  it("shows an HTML file as its source, and on Render in a frame whose sandbox allows nothing", async () => {
    conversationWith([PAGE]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const code = await within(canvas).findByTestId("canvas-code");
    expect(code.textContent).toContain('<script>window.__TAURI_INTERNALS__.invoke("delete_conversation")</script>');
    expect(canvas.querySelector("script, h1#hi, iframe")).toBeNull();

    await user.click(within(canvas).getByTestId("canvas-render"));
    const frame = within(canvas).getByTestId("canvas-html-frame") as HTMLIFrameElement;
    expect(frame.tagName).toBe("IFRAME");
    expect(frame.hasAttribute("sandbox")).toBe(true);
    expect(frame.getAttribute("sandbox")).toBe("");
    // No token at all: no allow-scripts, no allow-same-origin, nothing.
    expect(frame.getAttribute("sandbox")?.split(/\s+/).filter(Boolean)).toEqual([]);
    expect(frame.getAttribute("referrerpolicy")).toBe("no-referrer");
    expect(frame.hasAttribute("src")).toBe(false);
    expect(frame.getAttribute("title")).toBe("page.html, rendered");
    // Its own text, after a policy that keeps it off the network.
    const doc = frame.getAttribute("srcdoc") ?? "";
    expect(doc).toMatch(/^<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    expect(doc).toContain('<h1 id="hi">Hello</h1>');
    // Nothing of it is in the window's own document.
    expect(document.querySelector("h1#hi")).toBeNull();
    expect(canvas.querySelector("script")).toBeNull();

    await user.click(within(canvas).getByTestId("canvas-source"));
    expect(within(canvas).queryByTestId("canvas-html-frame")).toBeNull();
    expect(backend.callsTo("delete_conversation")).toHaveLength(0);
  });

  it("renders Markdown sanitised, pretty-prints JSON, and shows an SVG only as an image from a blob", async () => {
    conversationWith([NOTES, DATA, LOGO]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);

    let preview = await choose(canvas, user, "notes.md");
    const markdown = await within(preview).findByTestId("canvas-markdown");
    expect(markdown.querySelector("h1")?.textContent).toBe("Findings");
    expect(markdown.querySelector("strong")?.textContent).toBe("noon");
    expect(markdown.querySelector("img")).toBeNull();

    preview = await choose(canvas, user, "data.json");
    await waitFor(() => expect(within(preview).getByTestId("canvas-code").textContent).toBe('{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}'));

    preview = await choose(canvas, user, "logo.svg");
    const image = (await within(preview).findByTestId("canvas-image")) as HTMLImageElement;
    expect(image.getAttribute("src")).toMatch(/^blob:test\//);
    expect(image.alt).toBe("logo.svg (SVG image, 71 B)");
    expect(blobs.at(-1)?.type).toBe("image/svg+xml");
    expect(canvas.querySelector("svg script, script")).toBeNull();

    // Another file shown: the image's blob address goes.
    const url = image.getAttribute("src");
    await choose(canvas, user, "notes.md");
    await waitFor(() => expect(revoked).toContain(url));
  });

  it("has no preview for a PDF (its bytes are not read) but Save As…", async () => {
    conversationWith([PDF]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const none = await within(canvas).findByTestId("canvas-no-preview");
    expect(none.textContent).toContain("No preview for PDFs here — Save As… to open it");
    expect(canvas.querySelector("iframe, embed, object")).toBeNull();
    expect(backend.callsTo("read_artifact")).toHaveLength(0);
    expect(within(canvas).getByTestId("canvas-save")).toBeTruthy();
  });

  it("says why a file too large to preview is not shown, and still saves it", async () => {
    const big = toolFile("huge.txt", "text/plain", "x");
    big.file.size = 25 * 1024 * 1024;
    const id = conversationWith([big]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    expect((await within(canvas).findByTestId("canvas-preview-error")).textContent).toBe("“huge.txt” is 25.0 MB: too large to preview; save it instead.");
    await user.click(within(canvas).getByTestId("canvas-save"));
    expect((await within(canvas).findByTestId("canvas-saved")).textContent).toBe("Saved to /home/someone/Downloads/huge.txt");
    expect(backend.callsTo("save_artifact").map((c) => c.args)).toEqual([{ conversationId: id, sha256: big.file.sha256 }]);
  });

  it("Save As… says where the file went, nothing when the dialog is closed, and Rust's words when it fails", async () => {
    conversationWith([CSV]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    await user.click(within(canvas).getByTestId("canvas-save"));
    expect((await within(canvas).findByTestId("canvas-saved")).textContent).toBe("Saved to /home/someone/Downloads/scores.csv");

    backend.saveAs = null;
    await user.click(within(canvas).getByTestId("canvas-save"));
    await waitFor(() => expect(backend.callsTo("save_artifact")).toHaveLength(2));
    await waitFor(() => expect(within(canvas).queryByTestId("canvas-saved")).toBeNull());
    expect(within(canvas).queryByTestId("canvas-save-error")).toBeNull();

    backend.failures.set("save_artifact", { kind: "io", message: "Could not write /readonly/scores.csv: permission denied", field: null });
    await user.click(within(canvas).getByTestId("canvas-save"));
    expect((await within(canvas).findByTestId("canvas-save-error")).textContent).toBe("Could not write /readonly/scores.csv: permission denied");
  });

  it("closes with Esc and with its button, giving the focus back to Files", async () => {
    conversationWith([CSV]);
    const { user } = await openConversation();
    let canvas = await openCanvas(user);
    await user.click(within(canvas).getAllByTestId("canvas-file")[0]);
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("canvas")).toBeNull());
    expect(document.activeElement).toBe(screen.getByTestId("canvas-button"));
    expect(screen.getByTestId("canvas-button").getAttribute("aria-pressed")).toBe("false");

    canvas = await openCanvas(user);
    await user.click(within(canvas).getByTestId("canvas-close"));
    expect(screen.queryByTestId("canvas")).toBeNull();
  });

  it("a tool card whose result carried files opens the canvas at its first file", async () => {
    conversationWith([DATA, CSV]);
    const { user } = await openConversation();
    const card = await screen.findByTestId("tool-card");
    const button = within(card).getByTestId("tool-files");
    expect(button.textContent).toBe("2 files");
    await user.click(button);
    const canvas = await screen.findByTestId("canvas");
    await waitFor(() =>
      expect(within(canvas).getAllByTestId("canvas-file").find((f) => f.getAttribute("aria-current") === "true")?.dataset.sha256).toBe(DATA.file.sha256),
    );
  });

  it("says why the files could not be listed, and lists them when opened again", async () => {
    conversationWith([CSV]);
    backend.failures.set("list_artifacts", { kind: "io", message: "The database is locked.", field: null });
    const { user } = await openConversation();
    let canvas = await openCanvas(user);
    expect((await within(canvas).findByTestId("canvas-list-error")).textContent).toBe("The files could not be listed: The database is locked.");
    expect(screen.queryByTestId("error-toast")).toBeNull();
    backend.failures.delete("list_artifacts");
    await user.click(within(canvas).getByTestId("canvas-close"));
    canvas = await openCanvas(user);
    await waitFor(() => expect(listed(canvas)).toHaveLength(1));
    expect(within(canvas).queryByTestId("canvas-list-error")).toBeNull();
  });

  it("takes the side from the tools panel, one side panel at a time", async () => {
    conversationWith([CSV]);
    const { user } = await openConversation();
    await user.click(screen.getByTestId("tools-button"));
    expect(screen.getByTestId("tools-panel")).toBeTruthy();
    await openCanvas(user);
    expect(screen.queryByTestId("tools-panel")).toBeNull();
    await user.click(screen.getByTestId("tools-button"));
    expect(screen.queryByTestId("canvas")).toBeNull();
    expect(screen.getByTestId("tools-panel")).toBeTruthy();
  });
});

describe("the artifacts store", () => {
  it("keeps each file once when a run is replayed to a window that attached again", async () => {
    const chat = backend.addConversation("Chat");
    const stores = newStores();
    const file = CSV.file;
    const events = [
      { type: "answer_started", message: { id: "a1", conversation_id: chat.id, role: "assistant" } },
      { type: "tool_call_proposed", call: { call_id: "0", message_id: "a1", wire_name: "data__export", server: "data", tool: "export", display_name: "data · Export", arguments: "{}", retry_of: null } },
      { type: "message_saved", message: { id: "t1", conversation_id: chat.id, role: "tool", tool_call_id: "0", name: "data__export", attachments: [file], created_at: 5 } },
      { type: "tool_finished", call_id: "0", is_error: false, content: "ok", full_length: null, duration_ms: 1, can_retry: false, rich: false, artifacts: [file], open_canvas: null },
    ] as Parameters<typeof stores.artifacts.heard>[1][];
    for (const event of [...events, ...events]) stores.artifacts.heard(chat.id, event);
    expect(stores.artifacts.of(chat.id).files.map((f) => [f.message_id, f.call_id, f.tool, f.file.name])).toEqual([["t1", "0", "data__export", "scores.csv"]]);
    expect(stores.artifacts.of(chat.id).open).toBe(false);

    // Heard in the result before its tool message: the message fills it in, still once.
    const later = toolFile("later.txt", "text/plain", "later").file;
    stores.artifacts.heard(chat.id, { ...events[3], call_id: "1", artifacts: [later], open_canvas: later.sha256 } as (typeof events)[number]);
    expect(stores.artifacts.of(chat.id).open).toBe(true);
    expect(stores.artifacts.shown(chat.id)?.file.name).toBe("later.txt");
    stores.artifacts.heard(chat.id, { type: "message_saved", message: { ...(events[2] as { message: object }).message, id: "t2", tool_call_id: "1", attachments: [later] } } as (typeof events)[number]);
    expect(stores.artifacts.of(chat.id).files.map((f) => [f.message_id, f.file.name])).toEqual([
      ["t1", "scores.csv"],
      ["t2", "later.txt"],
    ]);
  });
});

describe("a link a tool's result returned", { timeout: 30_000 }, () => {
  const REPORT = toolFile("q3.md", "text/markdown", "# Q3\n\nUp **4%**.");

  /** "Links": a question and one call whose result returned three links (only the first can be read). */
  function conversationWithLinks() {
    const conversation = backend.addConversation("Links");
    backend.addMessages(conversation.id, ["Find the Q3 report"]);
    const call = backend.addToolLinks(conversation.id, [
      { kind: "link", uri: "docs://reports/q3.md", name: "q3.md", title: "Q3 report", description: "The quarter", mime_type: "text/markdown" },
      { kind: "link", uri: "docs://reports/gone.md", name: "gone.md", title: null, description: null, mime_type: null },
      { kind: "link", uri: "https://example.com/q3.csv", name: "q3.csv", title: null, description: null, mime_type: "text/csv" },
    ]);
    backend.linkFiles["docs://reports/q3.md"] = [REPORT];
    return { id: conversation.id, ...call };
  }

  /** Opens the tool card; resolves with it and its link cards. */
  async function openLinks(user: Awaited<ReturnType<typeof openConversation>>["user"]) {
    const card = await screen.findByTestId("tool-card");
    await user.click(card.querySelector("summary")!);
    return { card, links: await within(card).findAllByTestId("tool-link") };
  }

  it("Open in canvas has the server read the link, and the canvas opens at what it kept", async () => {
    const { id, messageId, callId } = conversationWithLinks();
    backend.delay = (cmd) => (cmd === "read_tool_link" ? 1_000 : 0);
    const { user } = await openConversation();
    const { card, links } = await openLinks(user);
    expect(links.map((l) => within(l).getByTestId("tool-link-open").textContent)).toEqual(["Open in canvas", "Open in canvas", "Open in canvas"]);
    // A web address still opens through the app's link dialog.
    expect(links[2].querySelector("a")?.getAttribute("href")).toBe("https://example.com/q3.csv");
    expect(within(card).queryByTestId("tool-files")).toBeNull();

    const button = within(links[0]).getByTestId("tool-link-open") as HTMLButtonElement;
    await user.click(button);
    expect(button.textContent).toBe("Reading…");
    expect(button.disabled).toBe(true);
    const canvas = await screen.findByTestId("canvas");
    await waitFor(() => expect(listed(canvas)).toEqual(["q3.md Markdown · 16 B · from docs__find"]));
    await waitFor(() =>
      expect(within(canvas).getAllByTestId("canvas-file").find((f) => f.getAttribute("aria-current") === "true")?.dataset.sha256).toBe(REPORT.file.sha256),
    );
    expect((await within(canvas).findByTestId("canvas-markdown")).querySelector("strong")?.textContent).toBe("4%");
    expect(backend.callsTo("read_tool_link").map((c) => c.args)).toEqual([{ conversationId: id, messageId, callId, uri: "docs://reports/q3.md" }]);
    await waitFor(() => expect(button.textContent).toBe("Open in canvas"));
    expect(button.disabled).toBe(false);
    // The call's card counts the file its link gave, and so does the header.
    expect(within(card).getByTestId("tool-files").textContent).toBe("1 file");
    expect(screen.getByTestId("canvas-count").textContent).toBe("1");
    expect(within(links[0]).queryByTestId("tool-link-error")).toBeNull();
  });

  it("says under the link's card why it could not be read, as plain text, and opens nothing", async () => {
    conversationWithLinks();
    const { user } = await openConversation();
    const { links } = await openLinks(user);
    await user.click(within(links[1]).getByTestId("tool-link-open"));
    expect((await within(links[1]).findByTestId("tool-link-error")).textContent).toBe("“docs” failed: Unknown resource: docs://reports/gone.md");
    expect(within(links[1]).getByTestId("tool-link-open").textContent).toBe("Open in canvas");

    backend.failures.set("read_tool_link", { kind: "mcp", message: "“docs” failed: <img src=x onerror=alert(1)><b>no</b>", field: null });
    await user.click(within(links[0]).getByTestId("tool-link-open"));
    const error = await within(links[0]).findByTestId("tool-link-error");
    expect(error.textContent).toBe("“docs” failed: <img src=x onerror=alert(1)><b>no</b>");
    expect(error.querySelector("img, b")).toBeNull();
    expect(screen.queryByTestId("canvas")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
    // Read again once it works, the error goes.
    backend.failures.delete("read_tool_link");
    await user.click(within(links[0]).getByTestId("tool-link-open"));
    await screen.findByTestId("canvas");
    await waitFor(() => expect(within(links[0]).queryByTestId("tool-link-error")).toBeNull());
  });
});
