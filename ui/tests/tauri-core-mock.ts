// "@tauri-apps/api/core" as the tests that drive the window mock it: `invoke` a bare mock (which
// installRealBackend in real-backend.ts forwards to the real core) and a `Channel`: numbered and
// written as the page's Tauri writes it (`__CHANNEL__:N`), so the real core's messages reach its
// `onmessage`, which a test may also call itself to deliver frames in an order of its own (a
// stream rendered piece by piece, two channels heard out of order). A test file mocks the module with it in one line (Vitest hoists
// `vi.mock` per file, so each file keeps its own):
//   vi.mock("@tauri-apps/api/core", () => import("./tauri-core-mock"));
// Test-only code.

import { vi } from "vitest";

export const invoke = vi.fn();

let last = 0;
/** Every channel made, by its number, for the real core's messages. */
export const channels = new Map<number, Channel<never>>();

export class Channel<T = unknown> {
  readonly id = ++last;
  onmessage: (event: T) => void = () => {};

  constructor() {
    channels.set(this.id, this as Channel<never>);
  }

  toJSON(): string {
    return `__CHANNEL__:${this.id}`;
  }
}
