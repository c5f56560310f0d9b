import { describe, expect, it } from "vitest";
import { choiceValue, chosenModel, parseChoiceValue, pickerGroups, type ModelLists } from "../src/chat/model-choice";
import type { ModelInfo, Provider } from "../src/lib/types";

// Pure functions of the picker's choice: no backend, fake or real.
function models(...ids: string[]): ModelInfo[] {
  return ids.map((id) => ({ id, name: null }));
}

function provider(name: string, default_model: string | null = null): Provider {
  return { id: name, name, kind: "openai", base_url: "https://x.test/v1", default_model, has_key: true, created_at: 1 };
}

const work = provider("Work", "gpt-4o");
const local = provider("Local");
const lists: ModelLists = {
  Work: { state: "ready", models: models("gpt-4o", "o3") },
  Local: { state: "ready", models: models("llama3.2:3b", "qwen3:8b") },
};
const noDefaults = { default_provider: null, default_model: null };

describe("which model a conversation chats with", () => {
  it("is the one picked for the conversation", () => {
    const picked = { provider: "Local", model: "qwen3:8b" };
    expect(chosenModel(picked, [work, local], noDefaults, lists)).toEqual(picked);
  });

  it("is the provider's default model when only the provider was picked", () => {
    expect(chosenModel({ provider: "Work", model: null }, [work, local], noDefaults, lists)).toEqual({
      provider: "Work",
      model: "gpt-4o",
    });
  });

  it("falls back to the Settings defaults when the picked provider was removed", () => {
    const settings = { default_provider: "Local", default_model: null };
    expect(chosenModel({ provider: "Gone", model: "x" }, [work, local], settings, lists)).toEqual({
      provider: "Local",
      model: "llama3.2:3b",
    });
  });

  it("else is the first provider that has a default or a listed model", () => {
    const empty: ModelLists = { Local: { state: "loading", models: [] } };
    expect(chosenModel(null, [local, work], noDefaults, empty)).toEqual({ provider: "Work", model: "gpt-4o" });
    expect(chosenModel(null, [local], noDefaults, empty)).toBeNull();
  });
});

describe("the picker's groups", () => {
  it("put a default or picked model the list lacks before the listed ones, once each", () => {
    const groups = pickerGroups([work, local], lists, { provider: "Local", model: "phi4" });
    expect(groups.map((g) => [g.provider, g.models])).toEqual([
      ["Work", ["gpt-4o", "o3"]],
      ["Local", ["phi4", "llama3.2:3b", "qwen3:8b"]],
    ]);
  });

  it("carry a failure to list and still offer the default model", () => {
    const failed: ModelLists = { Work: { state: "failed", models: [], message: "No route to host." } };
    expect(pickerGroups([work], failed, null)).toEqual([
      { provider: "Work", models: ["gpt-4o"], loading: false, failure: "No route to host." },
    ]);
  });

  it("encode provider and model so that any characters survive", () => {
    const choice = { provider: 'My "lab", 2', model: "org/model:tag" };
    expect(parseChoiceValue(choiceValue(choice))).toEqual(choice);
    expect(parseChoiceValue("")).toBeNull();
    expect(parseChoiceValue("none:Work")).toBeNull();
  });
});
