// A conversation's tools panel: the running servers' tools grouped by server, with this
// conversation's switches, what the switched-on definitions cost in every request, and the rule
// of the policy that decides every call of a tool (allow, ask, block), which the panel sets too.
// Rust decides what is offered (and enforces it); this only shows the switches and flips them,
// reading the list back from Rust after each change. Below them, the skills (issue 61): each one
// switched on for every conversation can be switched off here.

import * as ipc from "../lib/ipc";
import { IpcError } from "../lib/errors";
import type { Attachment, ConversationSkill, ConversationTool, Outcome, ToolSuggestion } from "../lib/types";

export type SwitchState = "on" | "off" | "mixed";

export interface ServerGroup {
  server: string;
  tools: ConversationTool[];
  /** tools switched on and offered (a held-back tool is never offered) */
  on: number;
  state: SwitchState;
  /** estimated tokens of the offered definitions */
  tokens: number;
}

/** Whether a tool reaches the model: switched on and not held back. */
export function offered(tool: ConversationTool): boolean {
  return tool.enabled && !tool.held_back;
}

/** Tools grouped by server, servers and tools in name order. */
export function groupTools(tools: ConversationTool[]): ServerGroup[] {
  const byServer = new Map<string, ConversationTool[]>();
  for (const tool of tools) {
    const list = byServer.get(tool.server) ?? [];
    list.push(tool);
    byServer.set(tool.server, list);
  }
  return [...byServer.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([server, list]) => {
      const sorted = [...list].sort((a, b) => a.display_name.localeCompare(b.display_name));
      const enabled = sorted.filter((t) => t.enabled).length;
      const on = sorted.filter(offered);
      return {
        server,
        tools: sorted,
        on: on.length,
        state: enabled === 0 ? "off" : enabled === sorted.length ? "on" : "mixed",
        tokens: on.reduce((sum, t) => sum + t.estimated_tokens, 0),
      };
    });
}

export class ConversationTools {
  tools = $state<ConversationTool[] | null>(null);
  /** the skills, with whether this conversation may use each; null until read */
  skills = $state.raw<ConversationSkill[] | null>(null);
  busy = $state(false);
  readonly groups = $derived(groupTools(this.tools ?? []));
  readonly offeredCount = $derived((this.tools ?? []).filter(offered).length);
  readonly tokens = $derived(this.groups.reduce((sum, g) => sum + g.tokens, 0));

  constructor(
    readonly conversationId: string,
    private readonly report: (err: unknown) => void,
  ) {}

  async load(): Promise<void> {
    try {
      const [tools, skills] = await Promise.all([
        ipc.listConversationTools(this.conversationId),
        ipc.conversationSkills(this.conversationId),
      ]);
      this.tools = tools;
      this.skills = skills;
    } catch (err) {
      this.report(err);
      this.tools ??= [];
      this.skills ??= [];
    }
  }

  /** Switches a skill on or off in this conversation only. */
  async setSkill(name: string, enabled: boolean): Promise<void> {
    this.busy = true;
    try {
      await ipc.setSkillEnabled(name, enabled, this.conversationId, null);
    } catch (err) {
      this.report(err);
    } finally {
      await this.load();
      this.busy = false;
    }
  }

  /** Switches one tool, or a whole server (`tool` null: its tools' own switches go). */
  async set(server: string, tool: string | null, enabled: boolean): Promise<void> {
    this.busy = true;
    try {
      await ipc.setConversationTool(this.conversationId, server, tool, enabled);
    } catch (err) {
      this.report(err);
    } finally {
      await this.load();
      this.busy = false;
    }
  }

  /**
   * Allow, ask or block every call of one tool whatever its arguments (`outcome` null: no rule
   * of its own), in policy.json, then reads the tools again. Allowing is confirmed in Rust's own
   * dialog first; a "no" there changes nothing and says nothing.
   */
  async setRule(server: string, tool: string, outcome: Outcome | null): Promise<void> {
    this.busy = true;
    try {
      await ipc.setToolPolicy(server, tool, outcome);
    } catch (err) {
      if (!(err instanceof IpcError && err.kind === "not_confirmed")) this.report(err);
    } finally {
      await this.load();
      this.busy = false;
    }
  }

  /** The tools switched off here that fit `files` (seed 002); none if asking failed. */
  async suggest(files: Attachment[]): Promise<ToolSuggestion[]> {
    if (files.length === 0) return [];
    try {
      return await ipc.suggestTools(
        this.conversationId,
        files.map((f) => ({ sha256: f.sha256, name: f.name })),
      );
    } catch (err) {
      this.report(err);
      return [];
    }
  }

  /** Switches the suggested tools on for this conversation. */
  async enable(suggested: ToolSuggestion[]): Promise<void> {
    this.busy = true;
    try {
      for (const s of suggested) await ipc.setConversationTool(this.conversationId, s.server, s.tool, true);
    } catch (err) {
      this.report(err);
    } finally {
      await this.load();
      this.busy = false;
    }
  }

  /** Makes these switches the ones new conversations start with; whether it worked. */
  async makeDefault(): Promise<boolean> {
    this.busy = true;
    try {
      await ipc.setDefaultTools(this.conversationId);
      return true;
    } catch (err) {
      this.report(err);
      return false;
    } finally {
      this.busy = false;
    }
  }
}
