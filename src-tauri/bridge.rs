//! Where the core meets Tauri: the settings in tauri-plugin-store's `settings.json`, the native
//! dialog that answers [`Confirm`]'s questions (drawn by Rust, never by the webview, which
//! renders hostile text), the native file dialogs, and files dropped on the window. Nothing
//! here decides anything: the flows are the core's.

use std::sync::Arc;

use switchboard_core::policy::confirm::{Allowance, Confirm, ServerApprovalRequest, ToolChange};
use switchboard_core::settings::{Settings, SettingsError, SettingsSource};
use tauri::{AppHandle, Manager, Wry};
use tauri_plugin_dialog::DialogExt;
#[cfg(not(target_os = "linux"))]
use tauri_plugin_dialog::{MessageDialogButtons, MessageDialogKind};
use tauri_plugin_store::Store;

/// The settings as the store plugin keeps them (it owns the file while the window is open).
pub struct StoreSettings(pub Arc<Store<Wry>>);

impl SettingsSource for StoreSettings {
    fn load(&self) -> Settings {
        Settings::from_entries(&self.0.entries().into_iter().collect())
    }

    fn save(&self, settings: &Settings) -> Result<(), SettingsError> {
        for (key, value) in settings.to_entries() {
            self.0.set(key, value);
        }
        self.0
            .save()
            .map_err(|e| SettingsError::Save(e.to_string()))
    }
}

/// A dialog's buttons, the first one saying yes. On Linux (GTK) `_` marks the mnemonic (Alt+
/// that letter presses it); elsewhere it is taken out. Escape always says no.
type Buttons = (&'static str, &'static str);

const START_SERVER: Buttons = ("_Approve and start", "_Don't start");
const ACCEPT_TOOL: Buttons = ("_Accept the change", "_Keep it held back");
const STOP_ASKING: Buttons = ("_Stop asking", "_Keep asking");
const RUN_WITHOUT_ASKING: Buttons = ("_Run without asking", "_Keep asking");
const OPEN_SIGN_IN: Buttons = ("_Open the sign-in page", "_Cancel");
const OPEN_LINK: Buttons = ("_Open", "_Cancel");
const RUN_FOR_APP: Buttons = ("_Run", "_Cancel");
const OPEN_FORM_PAGE: Buttons = ("_Open the page", "_Cancel");
const PUT_ON_PATH: Buttons = ("_Put it there", "_Cancel");
const ADD_RULES: Buttons = ("_Add the rule", "_Cancel");
const SHORTEN_RECORD: Buttons = ("_Shorten the record", "_Cancel");

#[cfg(not(target_os = "linux"))]
fn label(text: &str) -> String {
    if cfg!(target_os = "linux") {
        text.to_owned()
    } else {
        text.replace('_', "")
    }
}

/// Native warning dialogs over the main window.
#[derive(Clone)]
pub struct NativeConfirm(pub AppHandle);

#[async_trait::async_trait]
impl Confirm for NativeConfirm {
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool {
        let (what, recognise) = if request.remote {
            ("connect to", "an address")
        } else if request.sandboxed {
            (
                "run this command, in the sandbox it shows, for",
                "a command",
            )
        } else {
            ("run this command, with your permissions, for", "a command")
        };
        let question = Question {
            title: format!("Start the MCP server “{}”?", request.server),
            lead: format!("Switchboard will {what} the MCP server “{}”:", request.server),
            detail: Some(Detail {
                text: request.command_line.clone(),
                diff: false,
            }),
            tail: Some(format!(
                "Approve only {recognise} you recognise. If mcp.json changes, you will be asked again."
            )),
            buttons: START_SERVER,
        };
        self.ask(question).await
    }

    async fn accept_tool(&self, change: &ToolChange) -> bool {
        let question = Question {
            title: change.title(),
            lead: change.lead(),
            detail: Some(Detail {
                text: change.shown_diff(),
                diff: true,
            }),
            tail: None,
            buttons: ACCEPT_TOOL,
        };
        self.ask(question).await
    }

    async fn allow(&self, allowance: &Allowance) -> bool {
        let buttons = match allowance {
            Allowance::StandingApproval { .. } => STOP_ASKING,
            Allowance::AutoApprove { .. } => RUN_WITHOUT_ASKING,
            Allowance::SignIn { .. } => OPEN_SIGN_IN,
            Allowance::OpenLink { .. } => OPEN_LINK,
            Allowance::AppToolCall { .. } => RUN_FOR_APP,
            Allowance::FormPage { .. } => OPEN_FORM_PAGE,
            Allowance::ShellCommand { .. } => PUT_ON_PATH,
            Allowance::PolicyRules { .. } => ADD_RULES,
            Allowance::ShorterAuditRecord { .. } => SHORTEN_RECORD,
        };
        let question = Question {
            title: allowance.title(),
            lead: allowance.message(),
            detail: None,
            tail: None,
            buttons,
        };
        self.ask(question).await
    }
}

impl NativeConfirm {
    /// Two buttons; resolves true for the first. Closing it (Escape) is the second, which is
    /// also the default. On Linux, GTK's own dialog (`gtk_dialog.rs`): parented, its detail
    /// scrolled; elsewhere the plugin's, parented to the main window, its text in one piece.
    async fn ask(&self, question: Question) -> bool {
        let question = question.without_nul();
        let (answer, answered) = tokio::sync::oneshot::channel();
        #[cfg(target_os = "linux")]
        crate::gtk_dialog::ask(&self.0, question, answer);
        #[cfg(not(target_os = "linux"))]
        {
            let mut text = question.lead;
            if let Some(detail) = question.detail {
                text = format!("{text}\n\n{}", detail.text);
            }
            if let Some(tail) = question.tail {
                text = format!("{text}\n\n{tail}");
            }
            let (yes, no) = question.buttons;
            let mut dialog = self
                .0
                .dialog()
                .message(dialog_text(&text))
                .title(question.title)
                .kind(MessageDialogKind::Warning)
                .buttons(MessageDialogButtons::OkCancelCustom(label(yes), label(no)));
            if let Some(window) = self.0.get_webview_window("main") {
                dialog = dialog.parent(&window);
            }
            dialog.show(move |approved| {
                let _ = answer.send(approved);
            });
        }
        answered.await.unwrap_or(false)
    }
}

#[cfg(not(target_os = "linux"))]
/// What a dialog asks (on Linux, `gtk_dialog.rs` draws it).
struct Question {
    title: String,
    lead: String,
    detail: Option<Detail>,
    tail: Option<String>,
    buttons: Buttons,
}

#[cfg(not(target_os = "linux"))]
struct Detail {
    text: String,
    #[allow(dead_code)]
    diff: bool,
}

#[cfg(target_os = "linux")]
use crate::gtk_dialog::{Detail, Question};

impl Question {
    /// Every text with its NULs shown as ␀: the C strings a dialog is given would end there.
    fn without_nul(self) -> Self {
        let clean = |text: String| text.replace('\0', NUL_SHOWN);
        Self {
            title: clean(self.title),
            lead: clean(self.lead),
            detail: self.detail.map(|d| Detail {
                text: clean(d.text),
                diff: d.diff,
            }),
            tail: self.tail.map(clean),
            buttons: self.buttons,
        }
    }
}

/// What stands for a NUL in a dialog: the C string GTK is given would end there (and rfd
/// panics on one).
const NUL_SHOWN: &str = "\u{2400}";

/// `text` as a native dialog shows it as written. On GTK, rfd hands the message to
/// `gtk_message_dialog_format_secondary_text` as a printf format: a `%s` in a server's text or
/// a link would read memory and a `%n` abort the app (glibc: "%n in writable segment"), so each
/// `%` is doubled there.
#[cfg(not(target_os = "linux"))]
fn dialog_text(text: &str) -> String {
    let text = text.replace('\0', NUL_SHOWN);
    if cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd"
    )) {
        text.replace('%', "%%")
    } else {
        text
    }
}

/// A native file dialog over the main window; `None` when the person closed it. `save` asks
/// where to write (suggesting `file_name`), otherwise which file to open. `filter` names the
/// kind of file and its extension.
pub async fn choose_file(
    app: &AppHandle,
    title: &str,
    save: Option<&str>,
    filter: (&str, &str),
) -> Option<std::path::PathBuf> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    let mut dialog = app
        .dialog()
        .file()
        .set_title(title.replace('\0', NUL_SHOWN))
        .add_filter(filter.0, &[filter.1]);
    if let Some(window) = app.get_webview_window("main") {
        dialog = dialog.set_parent(&window);
    }
    let send = move |path: Option<tauri_plugin_dialog::FilePath>| {
        let _ = answer.send(path.and_then(|p| p.into_path().ok()));
    };
    match save {
        Some(name) => dialog
            .set_file_name(name.replace('\0', NUL_SHOWN))
            .save_file(send),
        None => dialog.pick_file(send),
    }
    answered.await.ok().flatten()
}

/// A native file dialog titled `title`, over the main window when there is one.
fn file_dialog(app: &AppHandle, title: &str) -> tauri_plugin_dialog::FileDialogBuilder<tauri::Wry> {
    let dialog = app
        .dialog()
        .file()
        .set_title(title.replace('\0', NUL_SHOWN));
    match app.get_webview_window("main") {
        Some(window) => dialog.set_parent(&window),
        None => dialog,
    }
}

/// The native folder dialog over the main window; `None` when the person closed it.
pub async fn choose_folder(app: &AppHandle, title: &str) -> Option<std::path::PathBuf> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    file_dialog(app, title).pick_folder(move |path| {
        let _ = answer.send(path.and_then(|p| p.into_path().ok()));
    });
    answered.await.ok().flatten()
}

/// The native open dialog for several files (any kind); empty when the person closed it.
pub async fn choose_files(app: &AppHandle, title: &str) -> Vec<std::path::PathBuf> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    file_dialog(app, title).pick_files(move |paths| {
        let paths = paths
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| p.into_path().ok())
            .collect();
        let _ = answer.send(paths);
    });
    answered.await.unwrap_or_default()
}

/// Files dragged over the window: Rust reads the dropped paths (the page never sees them),
/// keeps each file, and tells the window what was kept and what was refused.
pub fn on_drag_drop(app: &AppHandle, event: &tauri::DragDropEvent) {
    use switchboard_core::app::DropEvent;
    let state = app.state::<crate::state::AppState>();
    match event {
        tauri::DragDropEvent::Enter { .. } | tauri::DragDropEvent::Over { .. } => {
            state.tell_drop(DropEvent::Over);
        }
        tauri::DragDropEvent::Leave => state.tell_drop(DropEvent::Left),
        tauri::DragDropEvent::Drop { paths, .. } => {
            let (app, paths) = (app.clone(), paths.clone());
            tauri::async_runtime::spawn(async move {
                let state = app.state::<crate::state::AppState>();
                for told in state.app().await.take_dropped(paths).await {
                    state.tell_drop(told);
                }
            });
        }
        _ => {}
    }
}
