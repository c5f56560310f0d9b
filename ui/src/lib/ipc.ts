//! The only module that talks to the Rust side: one typed async function per command,
//! generated from Rust's declarations (`commands.ts`, written by switchboard-core's `bindings`
//! test: arguments in Rust's order, those that may be null at the end optional, a callback for
//! each channel); every rejection becomes an `IpcError` (defined in `errors.ts`, re-exported
//! here). Components never call `invoke` nor this module themselves (house style, point 14):
//! they go through the stores (one per domain, each in its feature's folder, built together in
//! `app/stores.ts`), which go through here.

export * from "./commands";
export { IpcError, toIpcError } from "./errors";
export type { CommandError } from "./types";
