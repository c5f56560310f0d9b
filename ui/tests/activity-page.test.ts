// The Activity page against the real core: the record of every tool call, newest first, read
// through the filters (a server, a decision, a day on), a row opened to its exact arguments (laid
// out, the start of long ones) and its result's hash, older entries a page at a time, and the entries shown exported as JSON
// lines. The record comes from real runs: a model server whose turns call the fault peer's echo
// (under two names), a tool that does not exist, each call allowed or denied as the run says.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));

import { screen, waitFor, within } from "@testing-library/svelte";
import * as ipc from "../src/lib/ipc";
import type { AuditEntry } from "../src/lib/types";
import { ARGUMENTS_SHOWN } from "../src/activity/audit-words";
import { installRealBackend, type RealBackend } from "./real-backend";
import { renderApp } from "./render-app";

let backend: RealBackend;

beforeEach(async () => {
  backend = await installRealBackend();
});

const HOSTILE = "<img src=x onerror=alert(1)>";

/**
 * Four calls in the record, oldest first: fault's echo "one" allowed, fault's echo (of hostile
 * text) denied, a tool that does not exist (not run), and other's echo "two" allowed. The
 * record as Rust reads it, newest first.
 */
async function fourCalls(): Promise<AuditEntry[]> {
  const call = (name: string, text: string) => ({ tools: [{ name, arguments: { text } }] });
  await backend.addProvider("Work", {
    models: [{ id: "m" }],
    turns: [
      call("fault__echo", "one"),
      { answer: ["Done."] },
      call("fault__echo", HOSTILE),
      { answer: ["Done."] },
      call("fault__nope", "three"),
      { answer: ["Done."] },
      call("other__echo", "two"),
      { answer: ["Done."] },
    ],
  });
  await backend.addFaultServer("fault");
  await backend.addFaultServer("other");
  const chat = await backend.seed(() => ipc.createConversation("Audited"));
  await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
  await backend.run(chat.id, "First", undefined, "allow_once");
  await backend.run(chat.id, "Second", undefined, "deny");
  await backend.run(chat.id, "Third", undefined, "allow_once");
  await backend.run(chat.id, "Fourth", undefined, "allow_once");
  const record = await backend.seed(() => ipc.listAudit({}));
  expect(record.map((e) => `${e.server}/${e.tool}/${e.decision}`)).toEqual([
    "other/echo/allowed",
    // A tool that does not exist has no server: its name as the model wrote it.
    "/fault__nope/not_run",
    "fault/echo/denied",
    "fault/echo/allowed",
  ]);
  return record;
}

async function openActivity(pageSize?: number) {
  const view = await renderApp();
  if (pageSize !== undefined) view.stores.activity.pageSize = pageSize;
  await view.user.click(screen.getByTestId("nav-activity"));
  expect(screen.getByTestId("nav-activity").getAttribute("aria-current")).toBe("page");
  // The page is a chunk of its own, loaded the first time it opens.
  await screen.findByTestId("activity-filters");
  return view;
}

const rows = () => screen.queryAllByTestId("activity-row");
const tools = () => rows().map((r) => within(r).getByTestId("activity-tool").textContent);
const decisions = () => rows().map((r) => within(r).getByTestId("activity-decision-cell").textContent);

describe("the Activity page", () => {
  it("lists every call newest first, and opens one to its exact arguments and its result's hash", async () => {
    const record = await fourCalls();
    const { user } = await openActivity();

    await waitFor(() => expect(rows()).toHaveLength(4));
    expect(tools()).toEqual(["other · echo", "fault__nope", "fault · echo", "fault · echo"]);
    expect(decisions()).toEqual(["Allowed", "Not run", "Denied", "Allowed"]);
    expect(rows().map((r) => within(r).getByTestId("activity-origin").textContent)).toEqual(["Model", "Model", "Model", "Model"]);
    expect(screen.getByTestId("activity-count").textContent?.replace(/\s+/g, " ").trim()).toBe("4 calls shown");
    expect(screen.queryByTestId("activity-older")).toBeNull();

    // The newest call that ran: its arguments as sent (laid out), and the hash Rust keeps of its result.
    const newest = rows()[0];
    expect(within(newest).getByTestId("activity-toggle").getAttribute("aria-expanded")).toBe("false");
    await user.click(within(newest).getByTestId("activity-toggle"));
    expect(within(newest).getByTestId("activity-toggle").getAttribute("aria-expanded")).toBe("true");
    const details = screen.getByTestId("activity-details");
    expect(JSON.parse(record[0].arguments)).toEqual({ text: "two" });
    expect(within(details).getByTestId("activity-arguments").textContent).toBe('{\n  "text": "two"\n}');
    expect(within(details).queryByTestId("activity-arguments-cut")).toBeNull();
    expect(record[0].result_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(within(details).getByTestId("activity-sha256").textContent).toBe(record[0].result_sha256);
    expect(details.textContent).toContain("Audited");

    // A model's arguments are text, never markup.
    await user.click(within(rows()[2]).getByTestId("activity-toggle"));
    const denied = screen.getAllByTestId("activity-details")[1];
    expect(within(denied).getByTestId("activity-arguments").textContent).toBe(JSON.stringify(JSON.parse(record[2].arguments), null, 2));
    expect(within(denied).getByTestId("activity-arguments").textContent).toContain(HOSTILE);
    expect(screen.getByTestId("activity-table").querySelector("img")).toBeNull();
    expect(within(denied).getByTestId("activity-sha256").textContent).toBe("No result (it did not run)");
  });

  it("shows the start of arguments of megabytes, and says how much more there is", async () => {
    const long = "x".repeat(3_000_000);
    await backend.addProvider("Work", { models: [{ id: "m" }], turns: [{ tools: [{ name: "fault__echo", arguments: { text: long } }] }, { answer: ["Done."] }] });
    await backend.addFaultServer("fault");
    const chat = await backend.seed(() => ipc.createConversation("Long"));
    await backend.seed(() => ipc.setConversationModel(chat.id, "Work", "m"));
    await backend.run(chat.id, "Go", undefined, "allow_once");
    const { user } = await openActivity();
    await waitFor(() => expect(rows()).toHaveLength(1));

    await user.click(within(rows()[0]).getByTestId("activity-toggle"));
    const details = screen.getByTestId("activity-details");
    const shown = `{\n  "text": "${long}"\n}`;
    expect(within(details).getByTestId("activity-arguments").textContent).toBe(shown.slice(0, ARGUMENTS_SHOWN));
    expect(within(details).getByTestId("activity-arguments-cut").textContent?.replace(/\s+/g, " ").trim()).toBe(
      `… ${(shown.length - ARGUMENTS_SHOWN).toLocaleString("en-US")} more characters not shown. Export JSON lines saves them whole.`,
    );
  });

  it("reads the record through its filters: a server, a decision, a day on", async () => {
    await fourCalls();
    const { user } = await openActivity();
    await waitFor(() => expect(rows()).toHaveLength(4));

    await user.type(screen.getByTestId("activity-server"), "other");
    await waitFor(() => expect(tools()).toEqual(["other · echo"]));
    expect(backend.callsTo("list_audit").at(-1)?.args).toEqual({ filter: { server: "other", limit: 100 } });

    await user.clear(screen.getByTestId("activity-server"));
    await user.selectOptions(screen.getByTestId("activity-decision"), "denied");
    await waitFor(() => expect(decisions()).toEqual(["Denied"]));
    await user.selectOptions(screen.getByTestId("activity-decision"), "not_run");
    await waitFor(() => expect(tools()).toEqual(["fault__nope"]));
    await user.selectOptions(screen.getByTestId("activity-decision"), "");
    await waitFor(() => expect(rows()).toHaveLength(4));

    // From tomorrow on there is nothing; from today on, everything.
    const day = (offset: number) => {
      const d = new Date();
      d.setDate(d.getDate() + offset);
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
    };
    const since = screen.getByTestId("activity-since") as HTMLInputElement;
    await user.type(since, day(1));
    expect((await screen.findByTestId("activity-empty")).textContent).toContain("No tool call matches these filters.");
    const tomorrow = new Date();
    tomorrow.setHours(0, 0, 0, 0);
    tomorrow.setDate(tomorrow.getDate() + 1);
    expect(backend.callsTo("list_audit").at(-1)?.args).toEqual({ filter: { since: tomorrow.getTime(), limit: 100 } });
    await user.clear(since);
    await user.type(since, day(0));
    await waitFor(() => expect(rows()).toHaveLength(4));
  });

  it("reads older calls a page at a time", async () => {
    const record = await fourCalls();
    const { user } = await openActivity(3);
    await waitFor(() => expect(rows()).toHaveLength(3));
    expect(backend.callsTo("list_audit").at(-1)?.args).toEqual({ filter: { limit: 3 } });

    await user.click(screen.getByTestId("activity-older"));
    await waitFor(() => expect(rows()).toHaveLength(4));
    expect(backend.callsTo("list_audit").at(-1)?.args).toEqual({ filter: { limit: 3, before: record[2].seq } });
    expect(rows().map((r) => Number(r.dataset.seq))).toEqual(record.map((e) => e.seq));
    // The last page was not full: nothing older.
    expect(screen.queryByTestId("activity-older")).toBeNull();
  });

  it("says so when nothing was recorded yet, and exports nothing", async () => {
    await openActivity();
    expect((await screen.findByTestId("activity-empty")).textContent).toContain("No tool calls yet.");
    expect((screen.getByTestId("activity-export") as HTMLButtonElement).disabled).toBe(true);
  });

  describe("export", () => {
    const createObjectURL = URL.createObjectURL;
    const revokeObjectURL = URL.revokeObjectURL;
    afterEach(() => {
      URL.createObjectURL = createObjectURL;
      URL.revokeObjectURL = revokeObjectURL;
      vi.restoreAllMocks();
    });

    it("saves the calls shown as JSON lines, one entry a line as Rust sent it", async () => {
      const record = await fourCalls();
      const blobs: Blob[] = [];
      URL.createObjectURL = vi.fn((blob: Blob) => `blob:test/${blobs.push(blob)}`);
      URL.revokeObjectURL = vi.fn();
      const links: HTMLAnchorElement[] = [];
      vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
        links.push(this);
      });
      const { user } = await openActivity();
      await user.selectOptions(screen.getByTestId("activity-decision"), "allowed");
      await waitFor(() => expect(rows()).toHaveLength(2));

      await user.click(screen.getByTestId("activity-export"));
      expect(links).toHaveLength(1);
      expect(links[0].href).toBe("blob:test/1");
      expect(links[0].download).toMatch(/^switchboard-activity-\d{4}-\d{2}-\d{2}\.jsonl$/);
      const text = await blobs[0].text();
      const lines = text.split("\n");
      expect(lines.at(-1)).toBe("");
      expect(lines.slice(0, -1).map((line) => JSON.parse(line))).toEqual(record.filter((e) => e.decision === "allowed"));
      await waitFor(() => expect(URL.revokeObjectURL).toHaveBeenCalledWith("blob:test/1"));
    });
  });
});
