//! The window's commands, each declared once. A command is one `async fn` inside a
//! [`commands!`] block of its area's file: from that declaration come the shell's dispatch by
//! name ([`find`]), the permission the window is granted (the names in `core/commands.txt`,
//! which the shell's `build.rs` turns into the capability's one permission set), and the
//! window's typed client (`ui/src/lib/commands.ts`); the `bindings` test writes both files and
//! fails while they and Rust disagree. What a command needs from the window's side (a native
//! dialog, a channel back to the page, the updater) it asks the [`Host`] for, so the bodies
//! never see Tauri and run the same under any host.
//!
//! Owns: the declaration macro, the call context ([`Cx`]), the [`Host`] seam, typed channels
//! ([`Sink`]), and how a call's arguments are read and its answer written.

mod app;
mod apps;
mod artifacts;
mod attachments;
mod chat;
mod conversations;
mod mcp;
mod memory;
mod policy;
mod profiles;
mod projects;
mod providers;
mod schedules;
mod settings;
mod shell_command;
mod skills;
mod transfer;
mod updates;
mod usage;

use std::future::Future;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::app::DropEvent;
use crate::error::ErrorKind;
use crate::policy::confirm::Confirm;
use crate::updates::{UpdateProgress, UpdateStatus};
use crate::{App, IpcError};

pub use apps::{page_address, SCHEME as APP_PAGE_SCHEME};
pub use schedules::ScheduleRunStarted;

/// A command's arguments as the window sent them: one object, keys in camelCase.
pub type Args = Map<String, Value>;

/// A call under way: resolves with the answer as JSON text, or the error the window is given.
pub type Pending = Pin<Box<dyn Future<Output = Result<String, IpcError>> + Send>>;

/// Sends one message (JSON text) to the page; `false` once nobody listens.
pub type RawSink = Arc<dyn Fn(String) -> bool + Send + Sync>;

/// Writes a type in TypeScript.
pub type TsType = fn(&ts_rs::Config) -> String;

/// What one command is: its name, what it says of itself, how its arguments and answer are
/// written in TypeScript, and how it is called.
pub struct Command {
    pub name: &'static str,
    pub doc: &'static str,
    /// Each argument's name (snake_case, as in Rust) and its TypeScript type.
    pub args: &'static [(&'static str, TsType)],
    pub ret: TsType,
    pub call: fn(Cx, Args) -> Pending,
}

/// What a command runs with: the app, the host it was called through, and the label of the
/// window that called it.
#[derive(Clone)]
pub struct Cx {
    pub app: Arc<App>,
    pub host: Arc<dyn Host>,
    pub window: String,
}

/// The window's side, as commands need it: native dialogs (drawn by Rust, never by the page),
/// channels back to the page, files dropped on the window, the app's own updates. The desktop
/// shell answers with Tauri; a test host answers as a script says.
#[async_trait::async_trait]
pub trait Host: Send + Sync {
    /// The app's version, as the shell was built.
    fn version(&self) -> &'static str;
    /// Where the person says yes or no.
    fn confirm(&self) -> Arc<dyn Confirm>;
    /// The page's channel `id` (`__CHANNEL__:N`); `None` when it names none.
    fn channel(&self, id: &str) -> Option<RawSink>;
    /// Opens `url` in the person's browser (or mail program), already checked and confirmed:
    /// a link the person clicked, a server's page, a sign-in page.
    fn open_url(&self, url: &str) -> std::io::Result<()> {
        crate::mcp::oauth::open_in_browser(url)
    }
    /// A file dialog: `save` suggests a name to write under, otherwise a file to open; `filter`
    /// names the kind of file and its extension. `None` when the person closed it.
    async fn choose_file(
        &self,
        title: &str,
        save: Option<&str>,
        filter: (&str, &str),
    ) -> Option<PathBuf>;
    /// The open dialog for several files of any kind; empty when closed.
    async fn choose_files(&self, title: &str) -> Vec<PathBuf>;
    /// The folder dialog; `None` when closed.
    async fn choose_folder(&self, title: &str) -> Option<PathBuf>;
    /// Files dragged over the window are told to `sink` from now on.
    fn listen_for_drops(&self, sink: Sink<DropEvent>);
    /// Asks the update address whether there is a newer release.
    async fn check_for_update(&self) -> Result<UpdateStatus, IpcError>;
    /// Downloads and installs the release the last check found; its version.
    async fn install_update(&self, progress: Sink<UpdateProgress>) -> Result<String, IpcError>;
    /// Quits (stopping everything as at any quit) and starts again.
    fn restart(&self);
    /// Quits, stopping everything as at any quit.
    fn quit(&self);
    /// Opens `folder` in the person's file manager.
    fn show_folder(&self, folder: &std::path::Path) -> std::io::Result<()> {
        open::that_detached(folder)
    }
    /// Where Claude Desktop keeps its settings for this person (`None`: no such place).
    fn claude_desktop_config(&self) -> Option<PathBuf> {
        crate::mcp::config::claude_desktop_config_path()
    }
    /// What the `switchboard` command's place depends on: this program's file, the person's
    /// home and login shell, and the PATH a new terminal has (`login_path`, the login shell's).
    ///
    /// # Errors
    /// When this program's own file cannot be found.
    fn surroundings(
        &self,
        login_path: std::ffi::OsString,
    ) -> Result<crate::shell_command::Surroundings, crate::shell_command::ShellCommandError> {
        let mut around = crate::shell_command::Surroundings::of_process()?;
        around.path = login_path;
        Ok(around)
    }
}

/// A typed channel to the page: the `Channel<T>` the window passed.
pub struct Sink<T> {
    raw: RawSink,
    of: PhantomData<fn(T)>,
}

impl<T> Clone for Sink<T> {
    fn clone(&self) -> Self {
        Self {
            raw: Arc::clone(&self.raw),
            of: PhantomData,
        }
    }
}

impl<T: Serialize> Sink<T> {
    /// A sink over `raw`.
    pub fn new(raw: RawSink) -> Self {
        Self {
            raw,
            of: PhantomData,
        }
    }

    /// Sends `item`; `false` once the page stopped listening.
    pub fn send(&self, item: &T) -> bool {
        match serde_json::to_string(item) {
            Ok(text) => (self.raw)(text),
            Err(e) => {
                tracing::warn!(error = %e, "a message to the window could not be written");
                false
            }
        }
    }
}

/// A secret the window sends (an API key): read as a string, kept as a [`SecretString`].
///
/// [`SecretString`]: secrecy::SecretString
pub struct Secret(pub secrecy::SecretString);

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Secret(s.into()))
    }
}

impl ts_rs::TS for Secret {
    type WithoutGenerics = Self;
    type OptionInnerType = Self;
    fn name(_: &ts_rs::Config) -> String {
        "string".into()
    }
    fn inline(cfg: &ts_rs::Config) -> String {
        Self::name(cfg)
    }
}

/// How an argument is read from the call (by its camelCase key) and written in TypeScript.
pub trait Arg: Sized {
    fn take(args: &mut Args, name: &'static str, cx: &Cx) -> Result<Self, IpcError>;
    fn ts(cfg: &ts_rs::Config) -> String;
}

impl<T: DeserializeOwned + ts_rs::TS> Arg for T {
    fn take(args: &mut Args, name: &'static str, _: &Cx) -> Result<Self, IpcError> {
        let value = args.remove(&camel(name)).unwrap_or(Value::Null);
        serde_json::from_value(value).map_err(|e| bad_argument(name, &e.to_string()))
    }
    fn ts(cfg: &ts_rs::Config) -> String {
        T::name(cfg)
    }
}

impl<T: Serialize + ts_rs::TS> Arg for Sink<T> {
    fn take(args: &mut Args, name: &'static str, cx: &Cx) -> Result<Self, IpcError> {
        let raw = match args.remove(&camel(name)) {
            Some(Value::String(id)) => cx.host.channel(&id),
            _ => None,
        };
        raw.map(Sink::new)
            .ok_or_else(|| bad_argument(name, "it is not a channel"))
    }
    fn ts(cfg: &ts_rs::Config) -> String {
        format!("Channel<{}>", T::name(cfg))
    }
}

/// How an answer is written for the window, and in TypeScript.
pub trait Ret {
    fn encode(&self) -> Result<String, IpcError>;
    fn ts(cfg: &ts_rs::Config) -> String;
}

impl<T: Serialize + ts_rs::TS> Ret for T {
    fn encode(&self) -> Result<String, IpcError> {
        serde_json::to_string(self).map_err(|e| IpcError {
            kind: ErrorKind::Io,
            message: format!("The answer could not be written: {e}"),
            field: None,
        })
    }
    fn ts(cfg: &ts_rs::Config) -> String {
        T::name(cfg)
    }
}

fn bad_argument(name: &'static str, why: &str) -> IpcError {
    IpcError {
        kind: ErrorKind::InvalidInput,
        message: format!("The window sent a bad `{name}`: {why}."),
        field: Some(name),
    }
}

/// `conversation_id` → `conversationId`: how the window names an argument.
pub fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Declares commands: each `async fn name(cx, arg: Type, …) -> Answer { body }` becomes a
/// function of that name returning `Result<Answer, IpcError>` and an entry of the area's
/// `COMMANDS`, which reads each argument by its camelCase key and writes the answer as JSON.
macro_rules! commands {
    ($(
        $(#[doc = $doc:literal])*
        async fn $name:ident($cx:ident $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty $body:block
    )*) => {
        $(
            $(#[doc = $doc])*
            #[allow(clippy::unused_async, unused_variables)]
            pub async fn $name($cx: &$crate::ipc::Cx $(, $arg: $ty)*) -> Result<$ret, $crate::IpcError> $body
        )*

        pub(super) const COMMANDS: &[$crate::ipc::Command] = &[$(
            $crate::ipc::Command {
                name: stringify!($name),
                doc: concat!($($doc, "\n",)* ""),
                args: &[$((stringify!($arg), <$ty as $crate::ipc::Arg>::ts)),*],
                ret: <$ret as $crate::ipc::Ret>::ts,
                #[allow(unused_mut, unused_variables)]
                call: |cx, mut args| Box::pin(async move {
                    $( let $arg = <$ty as $crate::ipc::Arg>::take(&mut args, stringify!($arg), &cx)?; )*
                    $crate::ipc::Ret::encode(&$name(&cx $(, $arg)*).await?)
                }),
            }
        ),*];
    };
}
pub(crate) use commands;

/// Every area's commands.
const AREAS: &[&[Command]] = &[
    app::COMMANDS,
    apps::COMMANDS,
    artifacts::COMMANDS,
    attachments::COMMANDS,
    chat::COMMANDS,
    conversations::COMMANDS,
    mcp::COMMANDS,
    memory::COMMANDS,
    policy::COMMANDS,
    profiles::COMMANDS,
    projects::COMMANDS,
    providers::COMMANDS,
    schedules::COMMANDS,
    settings::COMMANDS,
    shell_command::COMMANDS,
    skills::COMMANDS,
    transfer::COMMANDS,
    updates::COMMANDS,
    usage::COMMANDS,
];

/// Every command the window may call.
pub fn all() -> impl Iterator<Item = &'static Command> {
    AREAS.iter().flat_map(|area| area.iter())
}

/// The command called `name`, if the window has one.
pub fn find(name: &str) -> Option<&'static Command> {
    all().find(|c| c.name == name)
}

impl Command {
    /// Runs the command with the window's `args` (an object; anything else is no arguments).
    pub fn run(&self, cx: Cx, args: Value) -> Pending {
        let args = match args {
            Value::Object(map) => map,
            _ => Args::new(),
        };
        (self.call)(cx, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_arguments_are_named_as_the_window_names_them() {
        let mut names: Vec<_> = all().map(|c| c.name).collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a command is declared twice");
        assert!(count > 100, "{count}");
        assert_eq!(camel("conversation_id"), "conversationId");
        assert_eq!(camel("sha256"), "sha256");
        assert_eq!(camel("on_event"), "onEvent");
    }

    #[test]
    fn an_invalid_field_serialises_as_kind_message_and_field() {
        use crate::{CoreError, InvalidInput};
        let err: IpcError = CoreError::from(InvalidInput::new("base_url", "bad URL")).into();
        assert_eq!(
            serde_json::to_value(err).unwrap(),
            serde_json::json!({"kind": "invalid_input", "message": "bad URL", "field": "base_url"})
        );
    }
}
