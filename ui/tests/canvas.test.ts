// The canvas (issue 17, seed 002), in the whole window on the real core: the files
// tools made in a conversation, listed with their type, size and tool, each previewed in the way
// that fits it, saved through Rust's Save As; opened by a tool's result at the file it names,
// by the header's Files or by a tool card; closed with its button or Esc. An HTML file is its
// source until Render, and then a frame with an empty sandbox.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configure, fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import Canvas, { MAX_WIDTH, MIN_WIDTH, STEP, WIDTH_KEY } from "../src/canvas/Canvas.svelte";
import * as ipc from "../src/lib/ipc";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";
import { newStores, renderWithStores } from "./render-with-stores";
import { toolFile } from "./test-helpers";

let backend: RealBackend;
let blobs: Blob[];
let revoked: string[];
const createObjectURL = URL.createObjectURL;
const revokeObjectURL = URL.revokeObjectURL;

beforeEach(async () => {
  backend = await installRealBackend();
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
  resizeWindow(1024);
  localStorage.clear();
});

/** The window's width, as a resize of it would set it (jsdom's is 1024 px). */
function resizeWindow(width: number): void {
  Object.defineProperty(window, "innerWidth", { value: width, configurable: true, writable: true });
  window.dispatchEvent(new Event("resize"));
}

/** A file a tool made: its name, type and text (its record's sha256 is Rust's, once kept). */
interface MadeFile {
  name: string;
  mime: string;
  text: string;
}

const CSV = { name: "scores.csv", mime: "text/csv", text: 'name,score\nAda,36\n"Lovelace, A.",41\n' };
const PAGE = { name: "page.html", mime: "text/html", text: '<h1 id="hi">Hello</h1><script>window.__TAURI_INTERNALS__.invoke("delete_conversation")</script>' };
const NOTES = { name: "notes.md", mime: "text/plain", text: "# Findings\n\nIt is **noon**. <img src=x onerror=alert(1)>" };
const DATA = { name: "data.json", mime: "application/json", text: '{"a":1,"b":[true,null]}' };
const PDF = { name: "report.pdf", mime: "application/pdf", text: "%PDF-1.7 not really" };
const LOGO = { name: "logo.svg", mime: "image/svg+xml", text: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>' };

/** A folder of the test's own, for files the dialogs pick. */
function folder(): string {
  return mkdtempSync(join(tmpdir(), "canvas-"));
}

/**
 * The conversation "Files" (Rust's own import, from a file the open dialog picks), holding one
 * call of files · make whose result carried `files`. Its id, and the files as Rust keeps them.
 */
async function conversationWith(files: (MadeFile | { name: string; mime: string; bytes: Buffer })[]) {
  const at = 1_700_000_000_000;
  const message = (id: string, role: string, content: string, more: Record<string, unknown> = {}) => ({
    id, role, content, created_at: at, status: "complete", ...more,
  });
  const attachments = files.map((f) => {
    const bytes = "bytes" in f ? f.bytes : Buffer.from(f.text);
    return { name: f.name, mime: f.mime, size: bytes.length, data: bytes.toString("base64") };
  });
  const exported = {
    format: "switchboard.conversation", version: 2, exported_at: at,
    conversation: { title: "Files", created_at: at, updated_at: at, provider: null, model: null, system_prompt: "" },
    messages: [
      message("u", "user", "Make me some files"),
      message("a", "assistant", "", { tool_calls: [{ id: "c", name: "files__make", arguments: "{}" }], finish_reason: "tool_calls" }),
      message("t", "tool", "made", { tool_call_id: "c", name: "files__make", attachments }),
      message("b", "assistant", "Made.", { finish_reason: "stop" }),
    ],
    tool_runs: [
      {
        message_id: "a", call_id: "c", server: "files", tool: "make", display_name: "files · Make", arguments: "{}",
        decision: "allowed", decision_scope: "once", started_at: at, finished_at: at, is_error: false, result: "made",
      },
    ],
  };
  const path = join(folder(), "files.json");
  writeFileSync(path, JSON.stringify(exported));
  await backend.host({ file: path });
  const { id } = (await backend.seed(() => ipc.importConversation()))!;
  const kept = await backend.seed(() => ipc.listArtifacts(id));
  const sha = (name: string) => kept.find((a) => a.file.name === name)!.file.sha256;
  return { id, sha };
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
  const file = (await within(canvas).findAllByTestId("canvas-file")).find((f) => f.textContent?.includes(name));
  if (!file) throw new Error(`no file ${name} in the canvas`);
  await user.click(file);
  return within(canvas).findByTestId("canvas-preview");
}

// The panel and papaparse are loaded on first use (dynamic imports, compiled by Vite on first
// load): on a busy machine that takes longer than Testing Library's default second.
configure({ asyncUtilTimeout: 10_000 });

describe("the canvas", { timeout: 30_000 }, () => {
  it("opens at the file a tool's result names, and lists every file the result carried", async () => {
    // The fault peer's report answers with an HTML page and a CSV, asking the canvas to open at the CSV.
    await backend.addProvider("Work", { models: [{ id: "m" }], turns: [{ tools: [{ name: "fault__report", arguments: {} }] }, { answer: ["Here is the **report**."] }] });
    await backend.addFaultServer();
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    const { user } = await openConversation();
    expect(screen.queryByTestId("canvas")).toBeNull();

    await user.type(screen.getByTestId("composer-input"), "Make me a report{Enter}");
    await user.click(within(await screen.findByTestId("approval-dialog")).getByTestId("approval-submit"));

    const canvas = await screen.findByTestId("canvas");
    expect(canvas.tagName).toBe("ASIDE");
    expect(canvas.getAttribute("aria-label")).toBe("Files from tools");
    await waitFor(() => expect(listed(canvas)).toHaveLength(2));
    const kept = await backend.seed(() => ipc.listArtifacts(chat.id));
    const html = kept.find((a) => a.file.name === "report.html")!.file;
    const csv = kept.find((a) => a.file.name === "scores.csv")!.file;
    expect(listed(canvas)).toEqual([`report.html HTML · ${html.size} B · from fault · Report`, "scores.csv CSV table · 36 B · from fault · Report"]);
    const current = within(canvas).getAllByTestId("canvas-file").filter((f) => f.getAttribute("aria-current") === "true");
    expect(current.map((f) => f.dataset.sha256)).toEqual([csv.sha256]);
    expect(await within(canvas).findByTestId("canvas-table")).toBeTruthy();
    expect(screen.getByTestId("canvas-count").textContent).toBe("2");
    // A tool's result opened it, not the person: the focus stays where they were typing.
    expect(document.activeElement).not.toBe(current[0]);
    // Heard live, the files are there once each (the tool message and the result both named them).
    await waitFor(() => expect(screen.getByTestId("message-list").querySelector("strong")?.textContent).toBe("report"));
    expect(listed(canvas)).toHaveLength(2);
  });

  it("lists a conversation's files from Rust when it opens, and Files shows them with their type, size and tool", async () => {
    const { sha } = await conversationWith([CSV, PDF]);
    const { user } = await openConversation();
    await waitFor(() => expect(screen.getByTestId("canvas-count").textContent).toBe("2"));
    const canvas = await openCanvas(user);
    expect(listed(canvas)).toEqual(["scores.csv CSV table · 36 B · from files · Make", "report.pdf PDF · 19 B · from files · Make"]);
    // Opened by the person: the file shown (the newest) has the focus.
    await waitFor(() => expect(document.activeElement?.getAttribute("data-sha256")).toBe(sha("report.pdf")));
    // Files again closes it.
    await user.click(screen.getByTestId("canvas-button"));
    expect(screen.queryByTestId("canvas")).toBeNull();
  });

  it("shows a CSV as a table with its cells, quoted commas kept in their cell", async () => {
    await conversationWith([CSV, PDF]);
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
    await conversationWith([{ name: "big.tsv", mime: "text/plain", text: `n\twhat\n${rows}\n` }]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const table = await within(canvas).findByTestId("canvas-table");
    expect(table.querySelectorAll("tbody tr")).toHaveLength(1_000);
    expect(table.querySelector("tbody tr:last-child td:last-child")?.textContent).toBe("row 999");
    expect(within(canvas).getByTestId("canvas-rows-cut").textContent?.replace(/\s+/g, " ")).toContain("The first 1,000 of 1,204 rows; 204 more are left out");
  });

  it("shows an HTML file as its source, and on Render in a frame whose sandbox allows nothing", async () => {
    await conversationWith([PAGE]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const code = await within(canvas).findByTestId("canvas-code");
    expect(code.textContent).toContain('<script>window.__TAURI_INTERNALS__.invoke("delete_conversation")</script>');
    expect(canvas.querySelector("script, h1#hi, iframe")).toBeNull();

    await user.click(within(canvas).getByTestId("canvas-render"));
    const frame = (await within(canvas).findByTestId("canvas-html-frame")) as HTMLIFrameElement;
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
    await conversationWith([NOTES, DATA, LOGO]);
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
    await conversationWith([PDF]);
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    const none = await within(canvas).findByTestId("canvas-no-preview");
    expect(none.textContent).toContain("No preview for PDFs here — Save As… to open it");
    expect(canvas.querySelector("iframe, embed, object")).toBeNull();
    expect(backend.callsTo("read_artifact")).toHaveLength(0);
    expect(within(canvas).getByTestId("canvas-save")).toBeTruthy();
  });

  it("says why a file too large to preview is not shown, and still saves it", async () => {
    const { id, sha } = await conversationWith([{ name: "huge.txt", mime: "text/plain", text: "x" }]);
    // Rust keeps no file a tool made over 20 MB, and previews any up to 20 MB: its refusal of a
    // larger one is a rule no kept file reaches, so the refusal is scripted, in Rust's words.
    backend.failNext("read_artifact", { kind: "invalid_input", field: "artifact", message: "“huge.txt” is 25.0 MB: too large to preview; save it instead." });
    const target = join(folder(), "huge.txt");
    await backend.host({ file: target });
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    expect((await within(canvas).findByTestId("canvas-preview-error")).textContent).toBe("“huge.txt” is 25.0 MB: too large to preview; save it instead.");
    await user.click(within(canvas).getByTestId("canvas-save"));
    expect((await within(canvas).findByTestId("canvas-saved")).textContent).toBe(`Saved to ${target}`);
    expect(backend.callsTo("save_artifact").map((c) => c.args)).toEqual([{ conversationId: id, sha256: sha("huge.txt") }]);
  });

  it("Save As… says where the file went, nothing when the dialog is closed, and Rust's words when it fails", async () => {
    const { id, sha } = await conversationWith([CSV]);
    const target = join(folder(), "scores.csv");
    await backend.host({ file: target });
    const { user } = await openConversation();
    const canvas = await openCanvas(user);
    await user.click(await within(canvas).findByTestId("canvas-save"));
    expect((await within(canvas).findByTestId("canvas-saved")).textContent).toBe(`Saved to ${target}`);

    // The dialog closed.
    await backend.host({ file: null });
    await user.click(within(canvas).getByTestId("canvas-save"));
    await waitFor(() => expect(backend.callsTo("save_artifact")).toHaveLength(2));
    await waitFor(() => expect(within(canvas).queryByTestId("canvas-saved")).toBeNull());
    expect(within(canvas).queryByTestId("canvas-save-error")).toBeNull();

    // A place that cannot be written: under a file, not a folder. Rust's words, as it says them.
    const unwritable = join(target, "scores.csv");
    await backend.host({ file: unwritable });
    const said = await backend.seed(() => ipc.saveArtifact(id, sha("scores.csv")).then(() => null, (e: { message: string }) => e.message));
    expect(said).toBeTruthy();
    await user.click(within(canvas).getByTestId("canvas-save"));
    expect((await within(canvas).findByTestId("canvas-save-error")).textContent).toBe(said);
  });

  it("closes with Esc and with its button, giving the focus back to Files", async () => {
    await conversationWith([CSV]);
    const { user } = await openConversation();
    let canvas = await openCanvas(user);
    await user.click((await within(canvas).findAllByTestId("canvas-file"))[0]);
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("canvas")).toBeNull());
    expect(document.activeElement).toBe(screen.getByTestId("canvas-button"));
    expect(screen.getByTestId("canvas-button").getAttribute("aria-pressed")).toBe("false");

    canvas = await openCanvas(user);
    await user.click(within(canvas).getByTestId("canvas-close"));
    expect(screen.queryByTestId("canvas")).toBeNull();
  });

  it("a tool card whose result carried files opens the canvas at its first file", async () => {
    const { sha } = await conversationWith([DATA, CSV]);
    const { user } = await openConversation();
    const card = await screen.findByTestId("tool-card");
    const button = within(card).getByTestId("tool-files");
    expect(button.textContent).toBe("2 files");
    await user.click(button);
    const canvas = await screen.findByTestId("canvas");
    await waitFor(() =>
      expect(within(canvas).getAllByTestId("canvas-file").find((f) => f.getAttribute("aria-current") === "true")?.dataset.sha256).toBe(sha("data.json")),
    );
  });

  it("says why the files could not be listed, and lists them when opened again", async () => {
    await conversationWith([CSV]);
    // A failure no rule of Rust's can be made to give here: a locked database.
    const locked = { kind: "io", message: "The database is locked.", field: null } as const;
    backend.failNext("list_artifacts", locked);
    const { user } = await openConversation();
    // Read when the conversation opened, and again when the canvas opens (not listed yet): both fail.
    await waitFor(() => expect(backend.callsTo("list_artifacts")).toHaveLength(1));
    backend.failNext("list_artifacts", locked);
    let canvas = await openCanvas(user);
    expect((await within(canvas).findByTestId("canvas-list-error")).textContent).toBe("The files could not be listed: The database is locked.");
    expect(screen.queryByTestId("error-toast")).toBeNull();
    await user.click(within(canvas).getByTestId("canvas-close"));
    canvas = await openCanvas(user);
    await waitFor(() => expect(listed(canvas)).toHaveLength(1));
    expect(within(canvas).queryByTestId("canvas-list-error")).toBeNull();
  });

  it("takes the side from the tools panel, one side panel at a time", async () => {
    await conversationWith([CSV]);
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

describe("the canvas beside a narrow window", { timeout: 30_000 }, () => {
  it("folds the sidebar while it is open below 1400 px, and brings it back when it closes", async () => {
    await conversationWith([CSV]);
    resizeWindow(1200);
    const { user } = await openConversation();
    const shell = screen.getByTestId("sidebar").parentElement!;
    expect(shell.dataset.sidebar).toBe("shown");
    let canvas = await openCanvas(user);
    await waitFor(() => expect(shell.dataset.sidebar).toBe("folded"));
    // Folded, a rail is left with one way back: the sidebar shows beside the canvas.
    await user.click(screen.getByTestId("show-sidebar"));
    expect(shell.dataset.sidebar).toBe("shown");
    expect(screen.queryByTestId("show-sidebar")).toBeNull();
    await user.click(within(canvas).getByTestId("canvas-close"));
    expect(shell.dataset.sidebar).toBe("shown");

    // Wide enough for all three: nothing folds; narrowed while it is open, the sidebar folds.
    resizeWindow(1440);
    canvas = await openCanvas(user);
    expect(shell.dataset.sidebar).toBe("shown");
    resizeWindow(1399);
    await waitFor(() => expect(shell.dataset.sidebar).toBe("folded"));
    // Another page (no canvas there): the sidebar is back.
    await user.click(screen.getByTestId("nav-settings"));
    await waitFor(() => expect(shell.dataset.sidebar).toBe("shown"));
  });
});

describe("the canvas's width", () => {
  beforeEach(() => {
    localStorage.clear();
    resizeWindow(1200);
  });

  function splitterOf(view: ReturnType<typeof renderWithStores>): HTMLElement {
    return view.getByRole("separator", { name: "Width of the files panel" });
  }

  const now = (splitter: HTMLElement) => Number(splitter.getAttribute("aria-valuenow"));

  it("is set with the arrow keys on the splitter between the chat and the canvas, and remembered", async () => {
    const user = userEvent.setup();
    const view = renderWithStores(Canvas, { conversationId: "c1", onClose: () => {} });
    const splitter = splitterOf(view);
    const panel = view.getByTestId("canvas");
    expect(splitter.getAttribute("aria-orientation")).toBe("vertical");
    expect(splitter.getAttribute("aria-controls")).toBe(panel.id);
    expect(splitter.tabIndex).toBe(0);
    // Its usual width: 38% of the window, within 300–640 px; the chat keeps 400 px.
    expect(now(splitter)).toBe(Math.round(1200 * 0.38));
    expect(Number(splitter.getAttribute("aria-valuemin"))).toBe(MIN_WIDTH);
    expect(Number(splitter.getAttribute("aria-valuemax"))).toBe(1200 - 400);
    expect(panel.style.width).toBe(`${Math.round(1200 * 0.38)}px`);
    expect(localStorage.getItem(WIDTH_KEY)).toBeNull();

    splitter.focus();
    await user.keyboard("{ArrowLeft}");
    expect(now(splitter)).toBe(456 + STEP);
    await user.keyboard("{ArrowRight}{ArrowRight}");
    expect(now(splitter)).toBe(456 - STEP);
    await user.keyboard("{Shift>}{ArrowLeft}{/Shift}");
    expect(now(splitter)).toBe(456 - STEP + 4 * STEP);
    expect(panel.style.width).toBe(`${456 + 3 * STEP}px`);
    expect(localStorage.getItem(WIDTH_KEY)).toBe(String(456 + 3 * STEP));
    await user.keyboard("{Home}");
    expect(now(splitter)).toBe(MIN_WIDTH);
    await user.keyboard("{ArrowRight}");
    expect(now(splitter)).toBe(MIN_WIDTH);
    await user.keyboard("{End}");
    expect(now(splitter)).toBe(800);
    expect(splitter.getAttribute("aria-valuetext")).toBe("800 px");

    // Opened again (another conversation, or after a reload): the width it was given.
    view.unmount();
    const again = renderWithStores(Canvas, { conversationId: "c2", onClose: () => {} });
    expect(now(splitterOf(again))).toBe(800);
    // Never wider than the window leaves room for; the width set is kept for a wider window.
    resizeWindow(1000);
    await waitFor(() => expect(now(splitterOf(again))).toBe(600));
    resizeWindow(1600);
    await waitFor(() => expect(now(splitterOf(again))).toBe(800));
    expect(MAX_WIDTH).toBeGreaterThanOrEqual(800);

    // A double click gives it its usual width back.
    await user.dblClick(splitterOf(again));
    expect(now(splitterOf(again))).toBe(Math.round(Math.min(640, 1600 * 0.38)));
    expect(localStorage.getItem(WIDTH_KEY)).toBeNull();
  });

  it("is dragged with the pointer, and kept once let go", async () => {
    const view = renderWithStores(Canvas, { conversationId: "c1", onClose: () => {} });
    const splitter = splitterOf(view);
    const from = now(splitter);
    await fireEvent.pointerDown(splitter, { button: 0, pointerId: 7, clientX: 700 });
    expect(view.getByTestId("canvas").classList.contains("dragging")).toBe(true);
    expect(document.activeElement).toBe(splitter);
    await fireEvent.pointerMove(splitter, { pointerId: 7, clientX: 620 });
    expect(now(splitter)).toBe(from + 80);
    // Another pointer moves nothing.
    await fireEvent.pointerMove(splitter, { pointerId: 8, clientX: 100 });
    expect(now(splitter)).toBe(from + 80);
    expect(localStorage.getItem(WIDTH_KEY)).toBeNull();
    await fireEvent.pointerMove(splitter, { pointerId: 7, clientX: -2_000 });
    expect(now(splitter)).toBe(800);
    await fireEvent.pointerUp(splitter, { pointerId: 7, clientX: -2_000 });
    expect(view.getByTestId("canvas").classList.contains("dragging")).toBe(false);
    expect(localStorage.getItem(WIDTH_KEY)).toBe("800");
    await fireEvent.pointerMove(splitter, { pointerId: 7, clientX: 700 });
    expect(now(splitter)).toBe(800);
  });
});

describe("the artifacts store", () => {
  it("keeps each file once when a run is replayed to a window that attached again", async () => {
    const chat = await backend.seed(() => ipc.createConversation("Chat"));
    const stores = newStores();
    const file = toolFile(CSV.name, CSV.mime, CSV.text).file;
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

// A real server's result with resource links: fault_server.py --links, added as "docs", whose
// find() answers with three links (one it serves, one it does not have, one on the web).
describe("a link a tool's result returned", { timeout: 30_000 }, () => {
  /** "Links": a question and one call of docs · find, run for real; its ids. */
  async function conversationWithLinks() {
    await backend.addProvider("Work", { models: [{ id: "m" }], turns: [{ tools: [{ name: "docs__find" }] }, { answer: ["Found it."] }] });
    await backend.addFaultServer("docs", "--links");
    const conversation = await backend.seed(() => ipc.createConversation("Links"));
    await backend.seed(() => ipc.setConversationModel(conversation.id, "Work", "m"));
    await backend.run(conversation.id, "Find the Q3 report");
    const detail = await backend.seed(() => ipc.getConversation(conversation.id));
    const [run] = detail.tool_runs;
    return { id: conversation.id, messageId: run.message_id, callId: run.call_id };
  }

  /** Opens the tool card; resolves with it and its link cards. */
  async function openLinks(user: Awaited<ReturnType<typeof openConversation>>["user"]) {
    const card = await screen.findByTestId("tool-card");
    await user.click(card.querySelector("summary")!);
    return { card, links: await within(card).findAllByTestId("tool-link") };
  }

  it("Open in canvas has the server read the link, and the canvas opens at what it kept", async () => {
    const { id, messageId, callId } = await conversationWithLinks();
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
    await waitFor(() => expect(listed(canvas)).toEqual(["q3.md Markdown · 16 B · from docs · Find"]));
    const [kept] = await backend.seed(() => ipc.listArtifacts(id));
    await waitFor(() =>
      expect(within(canvas).getAllByTestId("canvas-file").find((f) => f.getAttribute("aria-current") === "true")?.dataset.sha256).toBe(kept.file.sha256),
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
    await conversationWithLinks();
    const { user } = await openConversation();
    const { links } = await openLinks(user);
    await user.click(within(links[1]).getByTestId("tool-link-open"));
    // The server's own words first (the last output from the server may follow).
    expect((await within(links[1]).findByTestId("tool-link-error")).textContent?.split("\n")[0]).toBe("“docs” failed: Unknown resource: docs://reports/gone.md");
    expect(within(links[1]).getByTestId("tool-link-open").textContent).toBe("Open in canvas");

    // A server's words are text, whatever they hold (no server here says markup: scripted).
    backend.failNext("read_tool_link", { kind: "mcp", message: "“docs” failed: <img src=x onerror=alert(1)><b>no</b>", field: null });
    await user.click(within(links[0]).getByTestId("tool-link-open"));
    const error = await within(links[0]).findByTestId("tool-link-error");
    expect(error.textContent).toBe("“docs” failed: <img src=x onerror=alert(1)><b>no</b>");
    expect(error.querySelector("img, b")).toBeNull();
    expect(screen.queryByTestId("canvas")).toBeNull();
    expect(screen.queryByTestId("error-toast")).toBeNull();
    // Read again once it works, the error goes.
    await user.click(within(links[0]).getByTestId("tool-link-open"));
    await screen.findByTestId("canvas");
    await waitFor(() => expect(within(links[0]).queryByTestId("tool-link-error")).toBeNull());
  });
});
