// Files into a message, in the whole window against the real core: Attach… (Rust's picker, the
// person's choice scripted), a pasted image, files dropped on the window (Rust reads them);
// chips that can be removed; why a file was refused (Rust judges each file by its bytes); a
// send Rust refuses keeps the text and the files; the "/" and "@" pickers over a real MCP
// server (server-everything).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { Attachment, Conversation } from "../src/lib/types";
import { installRealBackend, peer, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;
let chat: Conversation;
let folder: string;

/** A PNG's signature and then nothing much: Rust judges a file by its first bytes. 2 KB. */
const PHOTO_BYTES = new Uint8Array(2048);
PHOTO_BYTES.set([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10]);
const TABLE_BYTES = new TextEncoder().encode("team,score\nblue,12\n"); // 19 B
const BLOB_BYTES = new Uint8Array([0, 1, 2, 3, 0, 255]);

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

const PHOTO = { sha256: sha256(PHOTO_BYTES), name: "photo.png" };
const TABLE = { sha256: sha256(TABLE_BYTES), name: "scores.csv" };

/** The files on disk the picker can pick. */
let files: { photo: string; table: string; blob: string };

beforeEach(async () => {
  backend = await installRealBackend();
  await backend.addProvider("Work", { answer: ["Seen."] });
  const made = await backend.seed(() => ipc.createConversation("Files"));
  // A model known to take images.
  chat = await backend.seed(() => ipc.setConversationModel(made.id, "Work", "gpt-4o"));
  folder = mkdtempSync(join(tmpdir(), "attachments-"));
  const write = (name: string, bytes: Uint8Array) => {
    const path = join(folder, name);
    writeFileSync(path, bytes);
    return path;
  };
  files = { photo: write("photo.png", PHOTO_BYTES), table: write("scores.csv", TABLE_BYTES), blob: write("blob.bin", BLOB_BYTES) };
});

afterEach(() => {
  rmSync(folder, { recursive: true, force: true });
});

/** What the person picks at Rust's file picker from now on. */
async function pick(...paths: string[]) {
  await backend.host({ files: paths });
}

/** The conversation's model from now on: one not known to take images. */
async function textOnlyModel() {
  await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "text-only"));
}

function chips(): string[] {
  return screen.queryAllByTestId("composer-file").map((c) => c.textContent?.replace(/\s+/g, " ").replace("×", "").trim() ?? "");
}

async function openConversation(): Promise<Awaited<ReturnType<typeof renderApp>>["user"]> {
  const { user } = await renderApp();
  await user.click(screen.getAllByTestId("conversation-item")[0]);
  await screen.findByTestId("composer-input");
  return user;
}

describe("attaching files", () => {
  it("Attach… adds what Rust kept as chips, says why a file was refused, and a chip can be removed", async () => {
    await pick(files.photo, files.table, files.blob);
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toEqual(["Image photo.png 2.0 KB", "Text scores.csv 19 B"]));
    expect(screen.getByTestId("composer-refusals").textContent).toContain("“blob.bin” cannot be attached");
    expect((await backend.asked()).map((a) => a.dialog)).toEqual(["choose_files"]);
    await user.click(within(screen.getAllByTestId("composer-file")[1]).getByTestId("composer-file-remove"));
    expect(chips()).toEqual(["Image photo.png 2.0 KB"]);
    // Attaching the same file again adds it once.
    await pick(files.photo);
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(screen.queryByTestId("composer-refusals")).toBeNull());
    expect(chips()).toEqual(["Image photo.png 2.0 KB"]);
  }, 20_000);

  it("sends the files with the message, clears the box, and shows them on the message", async () => {
    await pick(files.photo, files.table);
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toHaveLength(2));
    await user.type(screen.getByTestId("composer-input"), "What is in these?{Enter}");
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1));
    expect(backend.callsTo("send_message")[0]?.args?.attachments).toEqual([PHOTO, TABLE]);
    await waitFor(() => expect(chips()).toEqual([]));
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe("");
    const shown = await screen.findByTestId("message-files");
    expect(shown.textContent).toContain("photo.png");
    expect(shown.textContent).toContain("scores.csv");
    // Rust kept them on the message.
    const detail = await backend.seed(() => ipc.getConversation(chat.id));
    expect(detail.messages.find((m) => m.role === "user")?.attachments?.map((a) => a.name)).toEqual(["photo.png", "scores.csv"]);
  }, 20_000);

  it("files alone can be sent", async () => {
    await pick(files.table);
    const user = await openConversation();
    const send = screen.getByTestId("composer-send") as HTMLButtonElement;
    expect(send.disabled).toBe(true);
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(send.disabled).toBe(false));
    await user.click(send);
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1));
    await waitFor(() => expect(chips()).toEqual([]));
  });

  it("a send Rust refuses for images says why and keeps the text and the files", async () => {
    await textOnlyModel();
    await pick(files.photo);
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toHaveLength(1));
    await user.type(screen.getByTestId("composer-input"), "Describe it{Enter}");
    expect((await screen.findByTestId("images-refused")).textContent).toContain("not known to take images");
    await user.click(screen.getByRole("button", { name: "Keep them here" }));
    expect(screen.queryByTestId("images-refused")).toBeNull();
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe("Describe it");
    expect(chips()).toEqual(["Image photo.png 2.0 KB"]);
    expect(backend.callsTo("allow_model_images")).toHaveLength(0);
  });

  it("the person can say the model takes images, and the same message goes", async () => {
    await textOnlyModel();
    await pick(files.photo);
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toHaveLength(1));
    await user.type(screen.getByTestId("composer-input"), "Describe it{Enter}");
    await screen.findByTestId("images-refused");
    await user.click(screen.getByRole("button", { name: "It takes images: send" }));
    await waitFor(() => expect(backend.callsTo("allow_model_images")).toHaveLength(1));
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(2));
    await waitFor(() => expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe(""));
    expect(chips()).toEqual([]);
  });

  it("once the person says the model takes images, the composer's images switch for it is on", async () => {
    await textOnlyModel();
    await pick(files.photo);
    const user = await openConversation();
    const switch_ = await screen.findByTestId("model-images");
    await waitFor(() => expect(switch_.getAttribute("aria-pressed")).toBe("false"));
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toHaveLength(1));
    await user.type(screen.getByTestId("composer-input"), "Describe it{Enter}");
    await screen.findByTestId("images-refused");
    await user.click(screen.getByRole("button", { name: "It takes images: send" }));
    await waitFor(() => expect(screen.getByTestId("model-images").getAttribute("aria-pressed")).toBe("true"));
    expect(screen.getByTestId("model-images").title).toBe("This model is given images — click if it does not take them");
    // Rust kept the word for that model (the dialog's command, not the switch's).
    expect(await backend.seed(() => ipc.modelImages("Work", "text-only"))).toBe(true);
    expect(backend.callsTo("set_model_images")).toHaveLength(0);
    expect(backend.callsTo("model_images").at(-1)?.args).toEqual({ provider: "Work", model: "text-only" });
  });

  it("a file suggests the switched-off tools that fit it, and one click turns them on here", async () => {
    await backend.addFaultServer();
    // The peer's tools are all off here.
    await backend.seed(() => ipc.setConversationTool(chat.id, "fault", null, false));
    await pick(files.table);
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    const suggestion = await screen.findByTestId("tool-suggestion");
    expect(suggestion.textContent?.replace(/\s+/g, " ")).toContain("A tool that is off fits these files: fault · Report (scores.csv: its description says “csv”)");
    await user.click(within(suggestion).getByTestId("tool-suggestion-enable"));
    await waitFor(() => expect(screen.queryByTestId("tool-suggestion")).toBeNull());
    expect(backend.callsTo("set_conversation_tool").map((c) => c.args)).toEqual([
      { conversationId: chat.id, server: "fault", tool: "report", enabled: true },
    ]);
    // Rust switched it on, and only it (the card goes as the click is taken: the switch is
    // written a moment later, so its list is read until it says so — failed once in a loaded run).
    await waitFor(async () => {
      const on = (await backend.seed(() => ipc.listConversationTools(chat.id))).filter((t) => t.enabled).map((t) => t.tool);
      expect(on).toEqual(["report"]);
    });
  }, 20_000);

  it("a pasted image is kept as bytes (never a path); pasted binary data is refused with the reason", async () => {
    await openConversation();
    const input = screen.getByTestId("composer-input");
    const png = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0, 0])], "", { type: "image/png" });
    await fireEvent.paste(input, { clipboardData: { files: [png] } });
    await waitFor(() => expect(chips()).toEqual(["Image pasted.png 10 B"]));
    expect(backend.callsTo("attach_pasted")[0]?.args?.name).toBe("pasted.png");
    const junk = new File([new Uint8Array([0, 1, 2])], "junk.bin", { type: "application/octet-stream" });
    await fireEvent.paste(input, { clipboardData: { files: [junk] } });
    await waitFor(() => expect(screen.getByTestId("composer-refusals").textContent).toContain("“junk.bin” cannot be attached"));
    expect(chips()).toEqual(["Image pasted.png 10 B"]);
  });
});

describe("editing a message that carried files", () => {
  let model: string;

  /** "What is in these?" sent with the photo and the table (both still kept), and its answer
   *  (the next answer is held until the test releases it); the question's id. */
  async function sentWithFiles(): Promise<string> {
    model = await backend.addProvider("Editing", { turns: [{ answer: ["A photo and a table."] }, { answer: ["Seen again."], hold: true }] });
    await backend.seed(() => ipc.setConversationModel(chat.id, "Editing", "gpt-4o"));
    await pick(files.photo, files.table);
    const attached = await backend.seed(() => ipc.chooseAttachments());
    expect(attached.kept.map((a: Attachment) => a.name)).toEqual(["photo.png", "scores.csv"]);
    await backend.run(chat.id, "What is in these?", [PHOTO, TABLE]);
    const detail = await backend.seed(() => ipc.getConversation(chat.id));
    return detail.messages.find((m) => m.role === "user")!.id;
  }

  function editChips(): string[] {
    return screen.queryAllByTestId("edit-file").map((c) => c.textContent?.replace(/\s+/g, " ").replace("×", "").trim() ?? "");
  }

  async function startEditing(): Promise<Awaited<ReturnType<typeof openConversation>>> {
    const user = await openConversation();
    await screen.findByTestId("message-files");
    await user.click(screen.getByTestId("edit-message"));
    await screen.findByTestId("edit-input");
    return user;
  }

  it("shows the message's files as chips; one taken off, the rest go with the edit and on the message sent", async () => {
    const messageId = await sentWithFiles();
    const user = await startEditing();
    expect(editChips()).toEqual(["Image photo.png 2.0 KB", "Text scores.csv 19 B"]);
    // The form shows the files in place of the message's own list.
    expect(screen.queryByTestId("message-files")).toBeNull();

    await user.click(screen.getByRole("button", { name: "Remove photo.png" }));
    expect(editChips()).toEqual(["Text scores.csv 19 B"]);
    await user.click(screen.getByTestId("edit-send"));
    await waitFor(() => expect(backend.callsTo("edit_message")).toHaveLength(1));
    expect(backend.callsTo("edit_message")[0].args).toMatchObject({
      conversationId: chat.id,
      messageId,
      text: "What is in these?",
      attachments: [TABLE],
    });
    // The message that takes its place shows, while the run is under way (its answer held),
    // with the file that stayed.
    await waitFor(() => expect(screen.getByTestId("message-files").textContent).toContain("scores.csv"));
    const shown = screen.getByTestId("message-files");
    expect(shown.textContent).not.toContain("photo.png");
    expect(screen.queryByTestId("edit-input")).toBeNull();
    expect(screen.queryByText("Seen again.")).toBeNull();
    await backend.release(model);
    await screen.findByText("Seen again.");
  }, 20_000);

  it("Send needs text or a file, files alone can go, and Cancel puts every file back", async () => {
    const messageId = await sentWithFiles();
    const user = await startEditing();
    const send = screen.getByTestId("edit-send") as HTMLButtonElement;
    await user.clear(screen.getByTestId("edit-input"));
    expect(send.disabled).toBe(false);
    await user.click(screen.getByRole("button", { name: "Remove photo.png" }));
    await user.click(screen.getByRole("button", { name: "Remove scores.csv" }));
    expect(editChips()).toEqual([]);
    expect(send.disabled).toBe(true);

    await user.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.queryByTestId("edit-input")).toBeNull();
    expect(screen.getByTestId("message-files").textContent).toMatch(/photo\.png.*scores\.csv/s);
    expect(backend.callsTo("edit_message")).toHaveLength(0);

    await user.click(screen.getByTestId("edit-message"));
    expect((await screen.findByTestId("edit-input") as HTMLTextAreaElement).value).toBe("What is in these?");
    expect(editChips()).toEqual(["Image photo.png 2.0 KB", "Text scores.csv 19 B"]);
    await user.clear(screen.getByTestId("edit-input"));
    await user.click(screen.getByRole("button", { name: "Remove scores.csv" }));
    await user.click(screen.getByTestId("edit-send"));
    await waitFor(() => expect(backend.callsTo("edit_message")).toHaveLength(1));
    expect(backend.callsTo("edit_message")[0].args).toMatchObject({ messageId, text: "", attachments: [PHOTO] });
    await backend.release(model);
  }, 20_000);
});

describe("the / and @ pickers", () => {
  beforeEach(async () => {
    // server-everything: prompts (one with arguments), documents as resources, and resource
    // templates.
    await backend.addServer("everything", peer("mcp-server-everything", "stdio"));
  });

  /** The prompts, resources and templates Rust lists for the running server. */
  async function offers() {
    const running = await backend.seed(() => ipc.listRunningOffers());
    const everything = running.find((o) => o.server === "everything");
    expect(everything).toBeTruthy();
    return everything!.offers;
  }

  it("/ in an empty box lists the prompts; one with arguments asks for them, then fills the box", async () => {
    const { prompts } = await offers();
    expect(prompts.map((p) => p.name)).toContain("args-prompt");
    const user = await openConversation();
    await user.type(screen.getByTestId("composer-input"), "/");
    const picker = await screen.findByTestId("composer-picker");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(prompts.length));
    await user.type(within(picker).getByTestId("picker-search"), "args{Enter}");
    const form = await screen.findByTestId("picker-arguments");
    const use = within(form).getByTestId("picker-use") as HTMLButtonElement;
    expect(use.disabled).toBe(true);
    await user.type(within(form).getAllByTestId("picker-argument")[0], "Lyon");
    await user.click(use);
    await waitFor(() => expect(screen.queryByTestId("composer-picker")).toBeNull());
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe("What's weather in Lyon?");
    expect(backend.callsTo("use_prompt")[0]?.args).toEqual({ server: "everything", prompt: "args-prompt", arguments: { city: "Lyon", state: "" } });
  }, 20_000);

  it("@ attaches a resource, or one made from a template's arguments; Esc closes", async () => {
    const { resources, templates } = await offers();
    const features = resources.find((r) => r.name === "features.md");
    expect(features).toBeTruthy();
    const user = await openConversation();
    const input = screen.getByTestId("composer-input") as HTMLTextAreaElement;
    await user.type(input, "Read @");
    let picker = await screen.findByTestId("composer-picker");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(resources.length + templates.length));
    await user.type(within(picker).getByTestId("picker-search"), "features.md");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(1));
    await user.click(within(picker).getAllByTestId("picker-entry")[0]);
    await waitFor(() => expect(chips()).toHaveLength(1));
    expect(chips()[0]).toMatch(/^Text features\.md \d+(\.\d)? KB$/);
    expect(backend.callsTo("attach_resource")[0]?.args).toMatchObject({ server: "everything", uri: features!.uri });
    expect(input.value).toBe("Read ");
    await user.type(input, "@");
    picker = await screen.findByTestId("composer-picker");
    // The picker lists the servers' offers again: Enter picks once the search found the one.
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(resources.length + templates.length));
    await user.type(within(picker).getByTestId("picker-search"), "dynamic text");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(1));
    await user.keyboard("{Enter}");
    await user.type(await screen.findByTestId("picker-argument"), "7");
    await user.click(screen.getByTestId("picker-use"));
    await waitFor(() => expect(chips()).toHaveLength(2));
    expect(backend.callsTo("attach_resource")[1]?.args).toEqual({ server: "everything", uri: "demo://resource/dynamic/text/7", name: null });
    await user.type(input, " @");
    await screen.findByTestId("composer-picker");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("composer-picker")).toBeNull());
  }, 20_000);

  it("a server's refusal is shown in the picker, and nothing is added", async () => {
    const { resources, templates } = await offers();
    const user = await openConversation();
    await user.type(screen.getByTestId("composer-input"), "@");
    const picker = await screen.findByTestId("composer-picker");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(resources.length + templates.length));
    // The text template takes a positive number only: the server refuses 0.
    await user.type(within(picker).getByTestId("picker-search"), "dynamic text");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(1));
    await user.keyboard("{Enter}");
    await user.type(await screen.findByTestId("picker-argument"), "0");
    await user.click(screen.getByTestId("picker-use"));
    expect((await screen.findByTestId("picker-error")).textContent).toContain("Unknown resource");
    expect(chips()).toEqual([]);
  }, 20_000);
});

// Rust tells the window of files dragged over it and dropped on it (what it kept of them, and
// why it refused the others) through the listener the window leaves, fed as the desktop shell
// feeds it from the window's drag and drop.
describe("dropping files on the window", () => {
  it("files dropped on the window go to the composer, with a hint while they are over it", async () => {
    const user = await openConversation();
    // The window listens once it has started.
    await vi.waitFor(async () => expect(await backend.drop("over")).toBe(true));
    expect(await screen.findByTestId("composer-drop-hint")).toBeTruthy();
    await backend.drop("left");
    await waitFor(() => expect(screen.queryByTestId("composer-drop-hint")).toBeNull());
    await backend.drop("over");
    await screen.findByTestId("composer-drop-hint");
    await backend.drop({ paths: [files.table, files.blob] });
    await waitFor(() => expect(chips()).toEqual(["Text scores.csv 19 B"]));
    expect(screen.queryByTestId("composer-drop-hint")).toBeNull();
    expect(screen.getByTestId("composer-refusals").textContent).toContain("“blob.bin” cannot be attached");
    // Nothing was asked: a drop needs no dialog.
    expect(await backend.asked()).toEqual([]);
    // What goes with the message is what Rust kept.
    await user.click(screen.getByTestId("composer-send"));
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1));
    expect(backend.callsTo("send_message")[0]?.args?.attachments).toEqual([TABLE]);
  });
});
