// Files into a message, in the whole window against an in-memory backend: Attach… (Rust's
// picker), a pasted image, files dropped on the window (Rust reads them); chips that can be
// removed; why a file was refused; and a send Rust refuses keeps the text and the files.
import { beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn(),
  Channel: class {
    onmessage: (event: unknown) => void = () => {};
  },
}));

import { fireEvent, screen, waitFor, within } from "@testing-library/svelte";
import type { Attachment } from "../src/lib/types";
import type { FakeBackend } from "./fake-backend";
import { installFakeBackend, renderApp } from "./render-app";

let backend: FakeBackend;

beforeEach(() => {
  backend = installFakeBackend();
  backend.addProviderRecord("Work");
  backend.addConversation("Files");
});

const PHOTO: Attachment = { sha256: "a".repeat(64), name: "photo.png", mime: "image/png", size: 2048, kind: "image" };
const TABLE: Attachment = { sha256: "b".repeat(64), name: "scores.csv", mime: "text/plain", size: 19, kind: "text" };

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
    backend.picked = { kept: [PHOTO, TABLE], refused: ["“blob.bin” cannot be attached: it looks like binary data."] };
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toEqual(["Image photo.png 2.0 KB", "Text scores.csv 19 B"]));
    expect(screen.getByTestId("composer-refusals").textContent).toContain("“blob.bin” cannot be attached");
    await user.click(within(screen.getAllByTestId("composer-file")[1]).getByTestId("composer-file-remove"));
    expect(chips()).toEqual(["Image photo.png 2.0 KB"]);
    // Attaching the same file again adds it once.
    backend.picked = { kept: [PHOTO], refused: [] };
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(screen.queryByTestId("composer-refusals")).toBeNull());
    expect(chips()).toEqual(["Image photo.png 2.0 KB"]);
  });

  it("sends the files with the message, clears the box, and shows them on the message", async () => {
    backend.picked = { kept: [PHOTO, TABLE], refused: [] };
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(chips()).toHaveLength(2));
    await user.type(screen.getByTestId("composer-input"), "What is in these?{Enter}");
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1));
    expect(backend.callsTo("send_message")[0]?.args?.attachments).toEqual([
      { sha256: PHOTO.sha256, name: "photo.png" },
      { sha256: TABLE.sha256, name: "scores.csv" },
    ]);
    await waitFor(() => expect(chips()).toEqual([]));
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe("");
    const shown = await screen.findByTestId("message-files");
    expect(shown.textContent).toContain("photo.png");
    expect(shown.textContent).toContain("scores.csv");
  });

  it("files alone can be sent", async () => {
    backend.picked = { kept: [TABLE], refused: [] };
    const user = await openConversation();
    const send = screen.getByTestId("composer-send") as HTMLButtonElement;
    expect(send.disabled).toBe(true);
    await user.click(screen.getByTestId("composer-attach"));
    await waitFor(() => expect(send.disabled).toBe(false));
    await user.click(send);
    await waitFor(() => expect(backend.callsTo("send_message")).toHaveLength(1));
  });

  it("a send Rust refuses for images says why and keeps the text and the files", async () => {
    backend.modelTakesImages = false;
    backend.picked = { kept: [PHOTO], refused: [] };
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
    backend.modelTakesImages = false;
    backend.picked = { kept: [PHOTO], refused: [] };
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
    backend.providers[0].default_model = "gpt-4o";
    backend.modelTakesImages = false;
    backend.picked = { kept: [PHOTO], refused: [] };
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
    expect(backend.imageWords.get("Work/gpt-4o")).toBe(true);
    expect(backend.callsTo("set_model_images")).toHaveLength(0);
    expect(backend.callsTo("model_images").at(-1)?.args).toEqual({ provider: "Work", model: "gpt-4o" });
  });

  it("a file suggests the switched-off tools that fit it, and one click turns them on here", async () => {
    backend.catalogue = [
      { server: "data", tool: "query_csv", wire_name: "data__query_csv", display_name: "Data · Query Csv", description: "SQL over a table.", held_back: false, held_reason: null, estimated_tokens: 40 },
      { server: "data", tool: "plot", wire_name: "data__plot", display_name: "Data · Plot", description: "Plots.", held_back: false, held_reason: null, estimated_tokens: 30 },
    ];
    const id = backend.conversations[0].id;
    backend.toolSwitches[id] = new Map([["data", false]]);
    backend.picked = { kept: [TABLE], refused: [] };
    const user = await openConversation();
    await user.click(screen.getByTestId("composer-attach"));
    const suggestion = await screen.findByTestId("tool-suggestion");
    expect(suggestion.textContent?.replace(/\s+/g, " ")).toContain("A tool that is off fits these files: Data · Query Csv (scores.csv: its name says “csv”)");
    await user.click(within(suggestion).getByTestId("tool-suggestion-enable"));
    await waitFor(() => expect(screen.queryByTestId("tool-suggestion")).toBeNull());
    expect(backend.callsTo("set_conversation_tool").map((c) => c.args)).toEqual([
      { conversationId: id, server: "data", tool: "query_csv", enabled: true },
    ]);
  });

  it("files dropped on the window go to the composer, with a hint while they are over it", async () => {
    await openConversation();
    backend.drop({ type: "over" });
    expect(await screen.findByTestId("composer-drop-hint")).toBeTruthy();
    backend.drop({ type: "left" });
    await waitFor(() => expect(screen.queryByTestId("composer-drop-hint")).toBeNull());
    backend.drop({ type: "over" });
    backend.drop({ type: "dropped", attached: { kept: [TABLE], refused: ["“movie.mkv” is 2.1 GB; a file can be at most 20.0 MB."] } });
    await waitFor(() => expect(chips()).toEqual(["Text scores.csv 19 B"]));
    expect(screen.queryByTestId("composer-drop-hint")).toBeNull();
    expect(screen.getByTestId("composer-refusals").textContent).toContain("movie.mkv");
  });

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
  /** "What is in these?" sent with the photo and the table (both still kept), and its answer; the question's id. */
  function sentWithFiles(): string {
    const id = backend.conversations[0].id;
    backend.addMessages(id, ["What is in these?", "A photo and a table."]);
    backend.messages[id][0].attachments = [PHOTO, TABLE];
    backend.keptFiles.set(PHOTO.sha256, PHOTO);
    backend.keptFiles.set(TABLE.sha256, TABLE);
    return backend.messages[id][0].id;
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
    const messageId = sentWithFiles();
    const user = await startEditing();
    expect(editChips()).toEqual(["Image photo.png 2.0 KB", "Text scores.csv 19 B"]);
    // The form shows the files in place of the message's own list.
    expect(screen.queryByTestId("message-files")).toBeNull();

    await user.click(screen.getByRole("button", { name: "Remove photo.png" }));
    expect(editChips()).toEqual(["Text scores.csv 19 B"]);
    await user.click(screen.getByTestId("edit-send"));
    await waitFor(() => expect(backend.callsTo("edit_message")).toHaveLength(1));
    expect(backend.callsTo("edit_message")[0].args).toMatchObject({
      conversationId: backend.conversations[0].id,
      messageId,
      text: "What is in these?",
      attachments: [{ sha256: TABLE.sha256, name: "scores.csv" }],
    });
    // The message that takes its place shows, as the run starts, with the file that stayed.
    await screen.findByTestId("approval-dialog");
    const shown = screen.getByTestId("message-files");
    expect(shown.textContent).toContain("scores.csv");
    expect(shown.textContent).not.toContain("photo.png");
    expect(screen.queryByTestId("edit-input")).toBeNull();
  });

  it("Send needs text or a file, files alone can go, and Cancel puts every file back", async () => {
    const messageId = sentWithFiles();
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
    expect(backend.callsTo("edit_message")[0].args).toMatchObject({ messageId, text: "", attachments: [{ sha256: PHOTO.sha256, name: "photo.png" }] });
  });
});

describe("the / and @ pickers", () => {
  beforeEach(() => {
    backend.mcpOffers = {
      everything: {
        resources: [{ uri: "demo://resource/static/document/features.md", name: "features.md", description: "The features", mime_type: "text/markdown", size: null }],
        templates: [{ uri_template: "demo://resource/dynamic/text/{resourceId}", name: "Dynamic Text Resource", description: null, mime_type: "text/plain" }],
        prompts: [
          { name: "simple-prompt", title: "Simple Prompt", description: "No arguments", arguments: [] },
          {
            name: "args-prompt",
            title: "Arguments Prompt",
            description: "Two arguments",
            arguments: [
              { name: "city", description: "Name of the city", required: true },
              { name: "state", description: null, required: false },
            ],
          },
        ],
      },
    };
  });

  it("/ in an empty box lists the prompts; one with arguments asks for them, then fills the box", async () => {
    const user = await openConversation();
    await user.type(screen.getByTestId("composer-input"), "/");
    const picker = await screen.findByTestId("composer-picker");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(2));
    await user.type(within(picker).getByTestId("picker-search"), "args{Enter}");
    const form = await screen.findByTestId("picker-arguments");
    const use = within(form).getByTestId("picker-use") as HTMLButtonElement;
    expect(use.disabled).toBe(true);
    await user.type(within(form).getAllByTestId("picker-argument")[0], "Lyon");
    await user.click(use);
    await waitFor(() => expect(screen.queryByTestId("composer-picker")).toBeNull());
    expect((screen.getByTestId("composer-input") as HTMLTextAreaElement).value).toBe("What's weather in Lyon?");
    expect(backend.callsTo("use_prompt")[0]?.args).toEqual({ server: "everything", prompt: "args-prompt", arguments: { city: "Lyon", state: "" } });
  });

  it("@ attaches a resource, or one made from a template's arguments; Esc closes", async () => {
    const user = await openConversation();
    const input = screen.getByTestId("composer-input") as HTMLTextAreaElement;
    await user.type(input, "Read @");
    let picker = await screen.findByTestId("composer-picker");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(2));
    await user.click(within(picker).getAllByTestId("picker-entry")[0]);
    await waitFor(() => expect(chips()).toEqual(["Text features.md 43 B"]));
    expect(input.value).toBe("Read ");
    await user.type(input, "@");
    picker = await screen.findByTestId("composer-picker");
    await user.type(within(picker).getByTestId("picker-search"), "dynamic{Enter}");
    await user.type(await screen.findByTestId("picker-argument"), "7");
    await user.click(screen.getByTestId("picker-use"));
    await waitFor(() => expect(chips()).toHaveLength(2));
    expect(backend.callsTo("attach_resource")[1]?.args).toEqual({ server: "everything", uri: "demo://resource/dynamic/text/7", name: null });
    await user.type(input, " @");
    await screen.findByTestId("composer-picker");
    await user.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByTestId("composer-picker")).toBeNull());
  });

  it("a server's refusal is shown in the picker, and nothing is added", async () => {
    backend.mcpOffers.everything.resources[0].uri = "demo://resource/nowhere/1";
    const user = await openConversation();
    await user.type(screen.getByTestId("composer-input"), "@");
    const picker = await screen.findByTestId("composer-picker");
    await waitFor(() => expect(within(picker).getAllByTestId("picker-entry")).toHaveLength(2));
    await user.click(within(picker).getAllByTestId("picker-entry")[0]);
    expect((await screen.findByTestId("picker-error")).textContent).toContain("Unknown resource");
    expect(chips()).toEqual([]);
  });
});
