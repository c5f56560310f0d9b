//! The error handling the app's forms share: the field → message record shown
//! beside the fields, the form's own error line, the busy flag, and the submit
//! flow around them (check the draft, focus the first field in error, save,
//! show a failure beside its field or on the form's line). The save is passed
//! in, so this module sends nothing itself; it touches the DOM only to focus a
//! field inside the form it is given.

import { tick } from "svelte";
import { errorText, IpcError } from "../lib/errors";
import type { FieldErrors } from "./validation";

export interface FormErrorsOptions {
  /** The form's field names (their `name` attributes) in focus order: the first one in error gets focus. */
  fields: readonly string[];
  /** The form element, once it is mounted. */
  form: () => HTMLFormElement | undefined;
  /** The field that shows an error Rust reported on `field`, when the names differ. */
  fieldFor?: (field: string) => string;
  /** Runs whenever the messages are cleared (an edit, a new submit): for a form's own "Saved" note. */
  onClear?: () => void;
}

/** `errors` without `field`'s message; `errors` itself when `field` has none. */
export function withoutError(errors: FieldErrors, field: string): FieldErrors {
  if (!errors[field]) return errors;
  const { [field]: _removed, ...rest } = errors;
  return rest;
}

export class FormErrors {
  /** Field name → message, shown beside that field. */
  fields = $state<FieldErrors>({});
  /** A failure that belongs to no field, shown on the form's error line. */
  form = $state<string | null>(null);
  /** A save is running; another submit is ignored until it ends. */
  busy = $state(false);

  readonly #options: FormErrorsOptions;

  constructor(options: FormErrorsOptions) {
    this.#options = options;
  }

  /** `field` was edited: its message and the form's error line go. */
  edited(field: string): void {
    this.fields = withoutError(this.fields, field);
    this.#clearMessages();
  }

  /** After the DOM has caught up, focuses the first field in error, if any. */
  async #focusFirst(): Promise<void> {
    await tick();
    const first = this.#options.fields.find((field) => this.fields[field]);
    if (first) this.#options.form()?.querySelector<HTMLElement>(`[name="${first}"]`)?.focus();
  }

  /**
   * Handles a submit event: stops the browser's own submit, shows what
   * `validate` finds (focusing the first such field) and otherwise runs
   * `save`. A save that fails with an `IpcError` on one of the form's fields
   * shows that message beside the field; any other failure goes on the form's
   * error line. A submit while a save is running does nothing.
   */
  async submit(event: SubmitEvent, validate: () => FieldErrors, save: () => Promise<void>): Promise<void> {
    event.preventDefault();
    if (this.busy) return;
    this.#clearMessages();
    this.fields = validate();
    if (Object.keys(this.fields).length > 0) {
      await this.#focusFirst();
      return;
    }
    this.busy = true;
    try {
      await save();
    } catch (err) {
      await this.#showFailure(err);
    } finally {
      this.busy = false;
    }
  }

  async #showFailure(err: unknown): Promise<void> {
    const fieldError = this.#fieldErrorOf(err);
    if (fieldError) {
      this.fields = fieldError;
      await this.#focusFirst();
    } else {
      this.form = errorText(err);
    }
  }

  /** An `IpcError` on one of this form's fields as that field's message; null for any other failure. */
  #fieldErrorOf(err: unknown): FieldErrors | null {
    if (!(err instanceof IpcError) || !err.field) return null;
    const field = this.#options.fieldFor?.(err.field) ?? err.field;
    return this.#options.fields.includes(field) ? { [field]: err.message } : null;
  }

  #clearMessages(): void {
    this.form = null;
    this.#options.onClear?.();
  }
}
