// The one rule the fake backend still keeps in TypeScript for the tests that run on it, checked
// against Rust's own: how a compared answer's branch is labelled (golden/branch-labels.json,
// written by store/lanes.rs). It goes when the last test that needs it runs on the real core
// (real-backend.ts).
import { describe, expect, it } from "vitest";
import { labelOf } from "./fake-backend";
import labels from "./golden/branch-labels.json";

describe("the fake backend labels a compared answer as Rust does", () => {
  it("labels a branch of a comparison as Rust does", () => {
    expect(labels.cases.length).toBeGreaterThan(3);
    for (const c of labels.cases) {
      expect(labelOf({ provider: c.provider, model: c.model })).toBe(c.label);
    }
  });
});
