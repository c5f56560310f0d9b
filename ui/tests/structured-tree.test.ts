// A tool result's structured data as a tree (StructuredTree.svelte): a folded branch builds
// nothing under its line, so deep data costs the DOM only the levels the person opened.
import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import StructuredTree from "../src/chat/StructuredTree.svelte";
import type { JsonValue } from "../src/lib/types";

afterEach(() => cleanup());

/** An object `depth` levels deep with `width` keys at every level (`width ** depth` leaves). */
function deep(width: number, depth: number): JsonValue {
  if (depth === 0) return "leaf";
  return Object.fromEntries(Array.from({ length: width }, (_, i) => [`k${i}`, deep(width, depth - 1)]));
}

/** The elements under `root`. */
const elements = (root: Element) => root.querySelectorAll("*").length;

/** The branch `key` directly under `branch` (a `details`). */
function child(branch: Element, key: string): HTMLDetailsElement {
  const found = [...branch.querySelectorAll(":scope > ul > li > details")].find(
    (d) => d.querySelector(":scope > summary > .key")?.textContent === key,
  );
  if (!found) throw new Error(`no branch ${key}`);
  return found as HTMLDetailsElement;
}

describe("a tree of structured data", () => {
  it("builds a folded level's line only: deep JSON costs the levels opened", async () => {
    const user = userEvent.setup();
    // 20 keys at each of 4 levels: 160,000 leaves, were every level built.
    const { container } = render(StructuredTree, { value: deep(20, 4) });
    const root = container.querySelector("details") as HTMLDetailsElement;
    expect(root.open).toBe(true);
    // The first level is open: its 20 branches, each a folded line (details, summary, key, count).
    const branches = root.querySelectorAll(":scope > ul > li > details");
    expect(branches).toHaveLength(20);
    for (const branch of branches) {
      expect((branch as HTMLDetailsElement).open).toBe(false);
      expect(branch.querySelector("ul, li, .leaf")).toBeNull();
    }
    const folded = elements(container);
    expect(folded).toBeLessThan(20 * 6);

    // Opening one branch builds its 20 lines, no deeper.
    const k3 = child(root, "k3");
    await user.click(k3.querySelector("summary")!);
    expect(k3.open).toBe(true);
    expect(k3.querySelectorAll(":scope > ul > li > details")).toHaveLength(20);
    expect(k3.querySelectorAll(":scope details details")).toHaveLength(0);
    const one = elements(container);
    expect(one - folded).toBeLessThan(20 * 6);

    // Down to a leaf: each level opened adds its own lines only.
    let branch = k3;
    for (const key of ["k0"]) {
      branch = child(branch, key);
      await user.click(branch.querySelector("summary")!);
    }
    const leaves = branch.querySelectorAll(":scope > ul > li > details");
    expect(leaves).toHaveLength(20);
    await user.click(leaves[7].querySelector("summary")!);
    expect(leaves[7].querySelectorAll(":scope > ul > li > .leaf")).toHaveLength(20);
    expect(leaves[7].querySelector(".leaf")?.textContent?.replace(/\s+/g, " ").trim()).toBe('k0: "leaf"');
    expect(elements(container)).toBeLessThan(one + 2 * 20 * 6);

    // Folding a branch drops what was built under it.
    await user.click(k3.querySelector("summary")!);
    expect(k3.open).toBe(false);
    expect(k3.querySelector("ul")).toBeNull();
    expect(elements(container)).toBe(folded);
  });

  it("a wide level shows its first 20 entries when opened, and Show all the rest", async () => {
    const user = userEvent.setup();
    const { container, getByTestId, queryByTestId } = render(StructuredTree, {
      value: { many: Array.from({ length: 50 }, (_, i) => ({ i, deeper: [i] })) },
    });
    const many = child(container.querySelector("details")!, "many");
    // Folded: no entry and no Show all built.
    expect(many.querySelectorAll("li")).toHaveLength(0);
    expect(queryByTestId("structured-more")).toBeNull();
    await user.click(many.querySelector("summary")!);
    expect(many.querySelectorAll(":scope > ul > li")).toHaveLength(20);
    await user.click(getByTestId("structured-more"));
    expect(many.querySelectorAll(":scope > ul > li")).toHaveLength(50);
    // Folded and opened again, it still shows them all (the person asked once).
    await user.click(many.querySelector("summary")!);
    await user.click(many.querySelector("summary")!);
    expect(many.querySelectorAll(":scope > ul > li")).toHaveLength(50);
  });
});
