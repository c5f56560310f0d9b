// "@tauri-apps/api/core" as the tests that drive the window mock it: `invoke` a bare mock (which
// installFakeBackend in render-app.ts answers from a FakeBackend) and a `Channel` whose messages
// a test delivers through `onmessage` itself. A test file mocks the module with it in one line
// (Vitest hoists `vi.mock` per file, so each file keeps its own):
//   vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));
// Test-only code.

import { vi } from "vitest";

export const invoke = vi.fn();

export class Channel<T = unknown> {
  onmessage: (event: T) => void = () => {};
}
