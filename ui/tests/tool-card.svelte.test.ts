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
  full_length: null, result_id: "t1", can_retry: false, rich: false, artifacts: [],
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
    const view = render(ToolCardView, {
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

  it("an SVG is an <img> from a blob, never markup in the page; bad data and other types are named", async () => {
    stubBlobs();
    const svg = btoa('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>');
    const view = render(ToolCardView, {
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
    const failing = render(ToolCardView, { card: rich, loadView: async () => Promise.reject({ kind: "not_found", message: "tool call c1 was not found" }) });
    expect((await failing.findByTestId("tool-media-error")).textContent).toMatch(/could not be read: tool call c1 was not found/);
    const loadView = vi.fn();
    render(ToolCardView, { card, loadView });
    expect(loadView).not.toHaveBeenCalled();
  });

  it("a long result shows its size in the summary", () => {
    const view = render(ToolCardView, { card: { ...card, content: "x".repeat(4000), full_length: 52_000 } });
    expect(view.getByTestId("tool-result-size").textContent).toBe(`${(52_000).toLocaleString()} characters`);
    cleanup();
    const short = render(ToolCardView, { card });
    expect(short.queryByTestId("tool-result-size")).toBeNull();
  });
});
