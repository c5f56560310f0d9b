//! What a failed command looks like in the UI: `IpcError` (kind, message,
//! field, straight from Rust's `CommandError`) and `toIpcError`, which turns
//! anything a command rejected with into one. No IPC here, so components may
//! read errors without reaching for `ipc.ts`.

/** A command failed. `kind` and `field` come straight from the Rust `CommandError`. */
export class IpcError extends Error {
  readonly kind: string;
  readonly field: string | null;

  constructor(kind: string, message: string, field: string | null = null) {
    super(message);
    this.name = "IpcError";
    this.kind = kind;
    this.field = field;
  }
}

/** What a caught value says, for a line of text: an `Error`'s message, anything else as text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function fromCommandError(value: Record<string, unknown>): IpcError | null {
  if (typeof value.message !== "string") return null;
  const kind = typeof value.kind === "string" && value.kind !== "" ? value.kind : "internal";
  const field = typeof value.field === "string" && value.field !== "" ? value.field : null;
  return new IpcError(kind, value.message, field);
}

/**
 * Turns whatever `invoke` rejected with into an `IpcError`: the usual
 * `{kind, message, field?}` object, a plain string (or a string holding that
 * object as JSON), an `Error`, or anything else.
 */
export function toIpcError(raw: unknown): IpcError {
  if (raw instanceof IpcError) return raw;
  if (typeof raw === "string") {
    const text = raw.trim();
    if (text.startsWith("{")) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (isRecord(parsed)) {
          const err = fromCommandError(parsed);
          if (err) return err;
        }
      } catch {
        // not JSON: use the text as it is
      }
    }
    return new IpcError("internal", raw);
  }
  if (raw instanceof Error) return new IpcError("internal", raw.message);
  if (isRecord(raw)) {
    const err = fromCommandError(raw);
    if (err) return err;
  }
  return new IpcError("internal", String(raw));
}
