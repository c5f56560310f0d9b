// What the forms share: field errors, the form's error line, focus, and the submit flow.
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { render, screen } from "@testing-library/svelte";
import FieldMessage from "../src/shared/FieldMessage.svelte";
import { FormErrors, withoutError, type FormErrorsOptions } from "../src/shared/form-errors.svelte";
import { IpcError } from "../src/lib/ipc";

const FIELDS = ["name", "kind", "limit_minutes"];

/** A mounted form with one input per field, and a FormErrors over it. */
function formWithErrors(options: Partial<FormErrorsOptions> = {}) {
  const form = document.createElement("form");
  for (const name of FIELDS) {
    const input = document.createElement("input");
    input.name = name;
    form.append(input);
  }
  document.body.append(form);
  onTestFinished(() => form.remove());
  const onClear = vi.fn();
  const errors = new FormErrors({ fields: FIELDS, form: () => form, onClear, ...options });
  const input = (name: string) => form.querySelector(`[name="${name}"]`);
  return { form, errors, onClear, input };
}

function submitEvent(): SubmitEvent {
  return new Event("submit", { cancelable: true }) as SubmitEvent;
}

function deferred() {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("clearing a field's error", () => {
  it("drops only that field's message, and leaves the record alone when it has none", () => {
    const errors = { name: "Enter a name.", kind: "Choose a kind." };
    expect(withoutError(errors, "name")).toEqual({ kind: "Choose a kind." });
    expect(errors).toEqual({ name: "Enter a name.", kind: "Choose a kind." });
    expect(withoutError(errors, "limit_minutes")).toBe(errors);
  });

  it("editing a field clears its message and the form's error line, and tells the form", () => {
    const { errors, onClear } = formWithErrors();
    errors.fields = { name: "Enter a name.", kind: "Choose a kind." };
    errors.form = "The keychain is locked.";
    errors.edited("name");
    expect(errors.fields).toEqual({ kind: "Choose a kind." });
    expect(errors.form).toBeNull();
    expect(onClear).toHaveBeenCalledTimes(1);
  });
});

describe("submitting", () => {
  it("shows what the check finds, focuses the first field in error in field order, and saves nothing", async () => {
    const { errors, input } = formWithErrors();
    const save = vi.fn(async () => {});
    const event = submitEvent();
    await errors.submit(event, () => ({ limit_minutes: "Too long.", kind: "Choose a kind." }), save);
    expect(event.defaultPrevented).toBe(true);
    expect(errors.fields).toEqual({ limit_minutes: "Too long.", kind: "Choose a kind." });
    expect(document.activeElement).toBe(input("kind"));
    expect(save).not.toHaveBeenCalled();
    expect(errors.busy).toBe(false);
  });

  it("clears the old messages, saves once, and ignores a second submit while the save runs", async () => {
    const { errors, onClear } = formWithErrors();
    errors.fields = { name: "Enter a name." };
    errors.form = "Something failed.";
    const pending = deferred();
    const save = vi.fn(() => pending.promise);

    const first = errors.submit(submitEvent(), () => ({}), save);
    expect(errors.fields).toEqual({});
    expect(errors.form).toBeNull();
    expect(onClear).toHaveBeenCalledTimes(1);
    expect(errors.busy).toBe(true);

    const second = submitEvent();
    await errors.submit(second, () => ({}), save);
    expect(second.defaultPrevented).toBe(true);
    expect(save).toHaveBeenCalledTimes(1);

    pending.resolve();
    await first;
    expect(errors.busy).toBe(false);
    expect(errors.form).toBeNull();
  });

  it("shows a failure on one of the form's fields beside that field, named as the form names it, and focuses it", async () => {
    const { errors, input } = formWithErrors({
      fieldFor: (field) => (field === "limit_secs" ? "limit_minutes" : field),
    });
    await errors.submit(
      submitEvent(),
      () => ({}),
      async () => {
        throw new IpcError("invalid_input", "Out of range.", "limit_secs");
      },
    );
    expect(errors.fields).toEqual({ limit_minutes: "Out of range." });
    expect(errors.form).toBeNull();
    expect(document.activeElement).toBe(input("limit_minutes"));
    expect(errors.busy).toBe(false);
  });

  it("puts any other failure on the form's error line", async () => {
    const { errors } = formWithErrors();
    const failures: [unknown, string][] = [
      [new IpcError("keychain", "The keychain is locked."), "The keychain is locked."],
      [new IpcError("invalid_input", "No such field here.", "color"), "No such field here."],
      [new TypeError("boom"), "boom"],
      ["plain text", "plain text"],
    ];
    for (const [failure, shown] of failures) {
      await errors.submit(
        submitEvent(),
        () => ({}),
        async () => {
          throw failure;
        },
      );
      expect(errors.form).toBe(shown);
      expect(errors.fields).toEqual({});
    }
  });
});

describe("the line under a field", () => {
  it("shows the error instead of the hint, with the ids aria-describedby points at", () => {
    const { rerender } = render(FieldMessage, {
      props: { id: "f-limit", field: "limit", hint: "Whole run, 1–10." },
    });
    expect(screen.getByText("Whole run, 1–10.").id).toBe("f-limit-hint");
    expect(screen.queryByTestId("error-limit")).toBeNull();

    rerender({ id: "f-limit", field: "limit", error: "Too long.", hint: "Whole run, 1–10." });
    const error = screen.getByTestId("error-limit");
    expect(error.textContent).toBe("Too long.");
    expect(error.id).toBe("f-limit-error");
    expect(screen.queryByText("Whole run, 1–10.")).toBeNull();
  });

  it("shows nothing when there is neither", () => {
    const { container } = render(FieldMessage, { props: { id: "f-name", field: "name" } });
    expect(container.textContent).toBe("");
  });
});
