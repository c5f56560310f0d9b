// A tool card builds its body (arguments pretty-printed, the result) only while it is open, so
// a long chat's collapsed cards cost their summaries.
import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, render, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import ToolCardView from "../src/components/ToolCardView.svelte";
import type { ToolCard } from "../src/lib/chat.svelte";

const card: ToolCard = {
  call_id: "call_1", server: "time", display_name: "time · Get Current Time", arguments: '{"timezone":"Europe/Paris"}',
  state: "done", content: "2026-11-23T12:00:00+01:00", duration_ms: 12, reason: null, progress: null, retry_of: null, description: null,
  full_length: null, result_id: "t1", can_retry: false,
};

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("a tool card", () => {
  it("a collapsed tool card builds no body", () => {
    const parse = vi.spyOn(JSON, "parse");
    const view = render(ToolCardView, { card });
    expect(view.getByTestId("tool-state").textContent).toBe("Done");
    expect(view.queryByTestId("tool-result")).toBeNull();
    expect(view.container.querySelector(".body")).toBeNull();
    expect(parse).not.toHaveBeenCalled();
  });

  it("builds its body when opened and drops it when closed", async () => {
    const user = userEvent.setup();
    const view = render(ToolCardView, { card });
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
    const view = render(ToolCardView, {
      card: long,
      onShowWhole: async () => {
        asked++;
        long.content = "x".repeat(52_000);
        long.full_length = null;
      },
    });
    await user.click(view.container.querySelector("summary")!);
    expect((await view.findByTestId("tool-result-cut")).textContent).toMatch(/first 4,000 of 52,000 characters/);
    await user.click(view.getByTestId("tool-result-whole"));
    await vi.waitFor(() => expect(view.getByTestId("tool-result").textContent).toHaveLength(52_000));
    expect(view.queryByTestId("tool-result-cut")).toBeNull();
    expect(asked).toBe(1);
  });
});
