// The policy (issue 59) as the window reaches it: the person's policy.json and the
// organisation's rules as Rust last read them (each rule in Rust's words), and the changes the
// window makes: a rule added (the one an approval offers to make), taken away, the untrusted and
// reviewed marks, the whole file replaced from Settings' editor. Rust checks every change whole
// and puts a change that lets calls run without asking (a rule that allows added, one that
// blocked or asked taken away, a mark taken off) to the person in its own native dialog first:
// a "no" there is not an error here (`"declined"`). Only the latest-issued read or
// change is applied (`LatestOnly`), so a slow read never hides what was just changed.

import * as ipc from "../lib/ipc";
import { IpcError, errorText } from "../lib/errors";
import { LatestOnly } from "../shared/latest";
import type { Outcome, PolicyMark, PolicyView, Rule, Target } from "../lib/types";

/** What became of a change Rust asks the person about: made, or not confirmed in its dialog. */
export type Confirmed = "made" | "declined";

export class PoliciesStore {
  /** the policy as last read or changed; null until first read */
  view = $state.raw<PolicyView | null>(null);
  /** the last read failed (a file Rust cannot read or with a bad rule: its message says where) */
  loadError = $state<string | null>(null);

  readonly #guard = new LatestOnly();

  async load(): Promise<void> {
    const isLatest = this.#guard.begin();
    try {
      const view = await ipc.getPolicy();
      if (!isLatest()) return;
      this.view = view;
      this.loadError = null;
    } catch (err) {
      if (!isLatest()) return;
      this.loadError = errorText(err);
    }
  }

  /** Runs a change and shows the policy it left; "declined" when the person said no in Rust's
   *  dialog. Any other failure is thrown. */
  async #change(change: () => Promise<PolicyView>): Promise<Confirmed> {
    const isLatest = this.#guard.begin();
    try {
      const view = await change();
      if (isLatest()) {
        this.view = view;
        this.loadError = null;
      }
      return "made";
    } catch (err) {
      if (err instanceof IpcError && err.kind === "not_confirmed") return "declined";
      throw err;
    }
  }

  /**
   * Adds `rule` to policy.json (an equal one is not added twice). One that lets calls run
   * without asking is put to the person in Rust's dialog first.
   * @throws IpcError (a bad rule, or one the organisation's policy overrules: where and why)
   */
  addRule(rule: Rule): Promise<Confirmed> {
    return this.#change(() => ipc.addPolicyRule(rule));
  }

  /**
   * Takes away the person's rule at `index` (0-based, in the file's order); one that blocked or
   * asked is put to the person in Rust's dialog first.
   * @throws IpcError (no such rule, the file)
   */
  removeRule(index: number): Promise<Confirmed> {
    return this.#change(() => ipc.removePolicyRule(index));
  }

  /**
   * Allow, ask or block a server's tools (`tool` null) or one tool whatever their arguments;
   * `outcome` null takes that rule away. Allowing (or taking away a block or an ask) is
   * confirmed in Rust's dialog first.
   * @throws IpcError (overruled by the organisation's policy, the file)
   */
  setTool(server: string, tool: string | null, outcome: Outcome | null): Promise<Confirmed> {
    return this.#change(() => ipc.setToolPolicy(server, tool, outcome));
  }

  /**
   * Puts a server (or one of its tools) on the untrusted or the reviewed list, or takes it off
   * (which Rust puts to the person in its dialog first).
   * @throws IpcError (no server named, the file)
   */
  setMark(mark: PolicyMark, target: Target, on: boolean): Promise<Confirmed> {
    return this.#change(() => ipc.setPolicyMark(mark, target, on));
  }

  /**
   * Replaces policy.json with `text`, checked whole; new allowing rules are confirmed in Rust's
   * dialog first.
   * @throws IpcError whose message says where in the text and why it was refused
   */
  replace(text: string): Promise<Confirmed> {
    return this.#change(() => ipc.replacePolicy(text));
  }
}
