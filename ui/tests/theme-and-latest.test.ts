import { describe, expect, it } from "vitest";
import { LatestOnly } from "../src/shared/latest";
import { ThemeController } from "../src/app/theme";
import { FakeDarkQuery } from "./test-helpers";

describe("theme", () => {
  it("theme 'system' follows prefers-color-scheme, live", () => {
    const query = new FakeDarkQuery(false);
    const theme = new ThemeController(document.documentElement, query.matchMedia);
    theme.set("system");
    expect(document.documentElement.dataset.theme).toBe("light");
    query.change(true);
    expect(document.documentElement.dataset.theme).toBe("dark");
    query.change(false);
    expect(document.documentElement.dataset.theme).toBe("light");
  });

  it("an explicit theme wins over the system and stops following it", () => {
    const query = new FakeDarkQuery(true);
    const theme = new ThemeController(document.documentElement, query.matchMedia);
    theme.set("system");
    expect(document.documentElement.dataset.theme).toBe("dark");
    theme.set("light");
    expect(document.documentElement.dataset.theme).toBe("light");
    expect(query.listenerCount).toBe(0);
    query.change(true);
    expect(document.documentElement.dataset.theme).toBe("light");
  });

  it("falls back to light when the webview has no matchMedia", () => {
    const theme = new ThemeController(document.documentElement, null);
    theme.set("system");
    expect(document.documentElement.dataset.theme).toBe("light");
  });
});

describe("latest-request guard", () => {
  it("lets only the latest-begun request apply its response", () => {
    const guard = new LatestOnly();
    const first = guard.begin();
    const second = guard.begin();
    expect(first()).toBe(false);
    expect(second()).toBe(true);
  });
});
