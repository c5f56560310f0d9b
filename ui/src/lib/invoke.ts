//! How the window calls Rust: `call` invokes one command and turns every rejection into an
//! `IpcError`; `channel` hands each message of a Rust channel to a callback. Only the
//! generated client (`commands.ts`) uses them.

import { Channel, invoke } from "@tauri-apps/api/core";
import { IpcError, toIpcError } from "./errors";

/** Outside the Tauri webview (a plain browser) there is nothing to invoke. */
function outsideTheApp(): boolean {
  return typeof window !== "undefined" && !("__TAURI_INTERNALS__" in window);
}

export async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (raw) {
    if (raw instanceof TypeError && outsideTheApp()) {
      throw new IpcError("internal", "Switchboard's backend is not reachable: this page is running outside the app.");
    }
    throw toIpcError(raw);
  }
}

/** A channel whose every message goes to `onMessage`. */
export function channel<T>(onMessage: (message: T) => void): Channel<T> {
  const made = new Channel<T>();
  made.onmessage = onMessage;
  return made;
}
