// The rules the fake backend still keeps in TypeScript for the tests that run on it, checked
// against Rust's own: what a priced answer costs (golden/costs.json, written by price.rs) and how
// a compared answer's branch is labelled (golden/branch-labels.json, written by store/lanes.rs).
// Each goes when the last test that needs it runs on the real core (real-backend.ts).
import { describe, expect, it } from "vitest";
import { costOf, labelOf } from "./fake-backend";
import golden from "./golden/costs.json";
import labels from "./golden/branch-labels.json";

describe("the fake backend adds up a cost and labels a compared answer as Rust does", () => {
  it("costs what Rust's price costs", () => {
    expect(golden.costs.length).toBeGreaterThan(3);
    for (const c of golden.costs) {
      expect(costOf(c.price, c.input_tokens, c.output_tokens)).toBe(c.cost);
    }
  });

  it("labels a branch of a comparison as Rust does", () => {
    expect(labels.cases.length).toBeGreaterThan(3);
    for (const c of labels.cases) {
      expect(labelOf({ provider: c.provider, model: c.model })).toBe(c.label);
    }
  });
});
