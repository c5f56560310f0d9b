// Small builders and stand-ins the tests share, whichever backend they run on (none of them is a
// backend). Test-only code.

import type { Attachment, ModelInfo, ProfileFields } from "../src/lib/types";

/** A controllable `prefers-color-scheme: dark` query. */
export class FakeDarkQuery {
  matches: boolean;
  media = "(prefers-color-scheme: dark)";
  #listeners = new Set<() => void>();

  constructor(dark = false) {
    this.matches = dark;
  }

  addEventListener(_type: string, listener: () => void): void {
    this.#listeners.add(listener);
  }

  removeEventListener(_type: string, listener: () => void): void {
    this.#listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** The OS switched between light and dark. */
  change(dark: boolean): void {
    this.matches = dark;
    for (const listener of this.#listeners) listener();
  }

  matchMedia = (): MediaQueryList => this as unknown as MediaQueryList;
}

/** Model infos with these ids (no display names). */
export function models(...ids: string[]): ModelInfo[] {
  return ids.map((id) => ({ id, name: null }));
}

/** A profile's fields as Rust's `ProfileFields::default()`: no prompt, Settings' model and limits, every tool on. */
export function emptyProfileFields(): ProfileFields {
  return { system_prompt: "", provider: null, model: null, max_rounds: null, tool_timeout_secs: null, run_time_limit_secs: null, tools: [] };
}

/** A file a tool produced, with its bytes (base64). */
export interface ToolFile {
  file: Attachment;
  data: string;
}

/** A tool's file of `name` and type `mime` holding `text` (its size the text's length in UTF-8). */
export function toolFile(name: string, mime: string, text: string, kind: Attachment["kind"] = "text"): ToolFile {
  const bytes = new TextEncoder().encode(text);
  const sha256 = Array.from(name + text).reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7).toString(16).padStart(64, "f");
  return { file: { sha256, name, mime, size: bytes.length, kind }, data: btoa(String.fromCharCode(...bytes)) };
}
