//! The window's commands served to the UI's tests: the same `ipc` dispatch the desktop shell
//! runs, over newline-delimited JSON on a TCP port of 127.0.0.1 (bound to port 0; the port is
//! printed as `ipc_serve: listening on 127.0.0.1:PORT`). Each connection is a session of its
//! own: a real [`App`] over a fresh temporary home, with keys in memory and a scripted host
//! standing in for the person at the native dialogs.
//!
//! ```text
//! → {"id":1,"cmd":"list_conversations","args":{}}
//! ← {"id":1,"ok":[…]}                      or {"id":1,"err":{"kind":…,"message":…,"field":…}}
//! ← {"channel":3,"message":{…}}            what a command sends on the page's Channel 3
//! → {"id":2,"host":{"confirm":false}}      what the person answers from now on
//! → {"id":3,"asked":true}                  ← every question the dialogs were asked so far
//! → {"id":4,"provider":{"models":[{"id":"gpt-4o"}],"answer":["Hel","lo"]}}
//! ← {"id":4,"ok":"http://127.0.0.1:PORT"}  a model server of the OpenAI API's shape: its
//!                                          `/models` lists `models` as given, each chat
//!                                          completion streams the pieces of `answer` (or
//!                                          the next of `turns`, with tool calls: `Turn`)
//! → {"id":5,"release":"http://127.0.0.1:PORT"}   lets one held turn end
//! → {"id":6,"received":"http://127.0.0.1:PORT"}  ← the chat completions' request bodies
//! → {"id":7,"drop":"over"}                 a drag over the window ("over", "left", or
//!                                          {"paths":[…]} dropped), as the shell tells it
//! → {"id":8,"reopen":{"keychainUnreachable":"…","databaseBroken":true,
//!    "localServers":{"ollama":"http://127.0.0.1:PORT"},"searchPath":["/usr/bin"]}}
//!                                          the app again over the same home (a new one
//!                                          for a broken database), opened so
//! → {"id":9,"link":"switchboard://…"}      ← what the link proposes, shown to the window
//! → {"id":10,"host":{"browser":true,"update":{"state":"available",…},"download":[…],
//!    "installFails":"bad_signature"}}      pages opened are followed; the update address
//!                                          and the release's download, as the shell's
//!                                          updater would find them
//! → {"id":11,"home":true}                  ← the session's home (the person's, for the
//!                                          `switchboard` command's place — `Terminal` —
//!                                          and Claude Desktop's settings under .config)
//! → {"id":12,"dateUsage":[1773482400000,…]}  the requests recorded, dated then (oldest first)
//! ```
//!
//! The process ends when its standard input closes (the test runner that started it went).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use switchboard_core::app::DropEvent;
use switchboard_core::ipc::{self, Cx, Host, RawSink, Sink};
use switchboard_core::policy::confirm::{Allowance, Confirm, ServerApprovalRequest, ToolChange};
use switchboard_core::providers::HttpOptions;
use switchboard_core::secrets::MemoryStore;
use switchboard_core::settings::MemorySettings;
use switchboard_core::shell_command::{ShellCommandError, Surroundings};
use switchboard_core::store::OpenCheck;
use switchboard_core::updates::{UpdateError, UpdateProgress, UpdateStatus};
use switchboard_core::{App, AppConfig, AppPaths, CoreError, IpcError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    println!("ipc_serve: listening on {}", listener.local_addr()?);
    std::thread::spawn(|| {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    loop {
        let (socket, _) = listener.accept().await?;
        tokio::spawn(async move {
            if let Err(e) = session(socket).await {
                eprintln!("ipc_serve: a session ended: {e}");
            }
        });
    }
}

/// What the person does at the native dialogs and in the browser, and what the shell's updater
/// finds, as the test says (a field it does not know is refused).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
struct Script {
    /// Every yes-or-no question.
    confirm: bool,
    /// The file a save or open dialog picks (`null`: closed).
    file: Option<PathBuf>,
    /// The files the several-files dialog picks.
    files: Vec<PathBuf>,
    /// The folder the folder dialog picks (`null`: closed).
    folder: Option<PathBuf>,
    /// Whether the browser follows a page on this computer it is asked to open (`GET`,
    /// redirects followed: a test peer's sign-in page sends it straight back to the app with a
    /// code); otherwise, and for any other page, the page is only noted.
    browser: bool,
    /// What the update address answers a check (`null`: this build names none).
    update: Option<UpdateStatus>,
    /// What installing the release found reports as it downloads, then why it fails, if it does.
    download: Vec<UpdateProgress>,
    install_fails: Option<UpdateError>,
    /// What the `switchboard` command's place depends on.
    terminal: Terminal,
}

/// This program, the person's home, the PATH and the login shell a new terminal has, as the
/// shell-command commands see them. A path starting `~/` is under the session's home: nothing
/// outside it is read or changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Terminal {
    /// This program's file (made, as a program that does nothing, when it is not there).
    exe: String,
    /// The person's home (made when it is not there).
    home: String,
    /// The PATH's folders, in order.
    path: Vec<String>,
    shell: Option<String>,
}

impl Default for Terminal {
    fn default() -> Self {
        Self {
            exe: "~/opt/Switchboard/switchboard".into(),
            home: "~/".into(),
            path: vec!["~/.local/bin".into()],
            shell: Some("/bin/bash".into()),
        }
    }
}

impl Terminal {
    /// Why this terminal would reach outside the session's home, if it would: every place it
    /// names starts `~/` and never climbs out with `..`.
    fn check(&self) -> Result<(), String> {
        let places = [&self.exe, &self.home].into_iter().chain(&self.path);
        for place in places {
            let inside = place.strip_prefix("~/").is_some_and(|rest| {
                Path::new(rest)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
            });
            if !inside && place != "~/" {
                return Err(format!(
                    "terminal: “{place}” is not under the session's home (write it ~/…)"
                ));
            }
        }
        if cfg!(not(unix)) {
            // Windows puts the command on the user's PATH in the registry, whatever the
            // surroundings say: no test may change the machine's.
            return Err("terminal: only on Linux and macOS".into());
        }
        Ok(())
    }

    fn surroundings(&self, session: &Path) -> Result<Surroundings, ShellCommandError> {
        let under = |p: &str| match p.strip_prefix("~/") {
            Some(rest) => session.join(rest),
            None => PathBuf::from(p),
        };
        let made = |path: &Path, result: std::io::Result<()>| {
            result.map_err(|source| ShellCommandError::Io {
                path: path.display().to_string(),
                source,
            })
        };
        let home = under(&self.home);
        made(&home, std::fs::create_dir_all(&home))?;
        let exe = under(&self.exe);
        if !exe.exists() {
            let file = exe
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&exe, b"#!/bin/sh\n"))
                .and_then(|()| executable(&exe));
            made(&exe, file)?;
        }
        Ok(Surroundings {
            exe,
            appimage: None,
            home: Some(home),
            path: std::env::join_paths(self.path.iter().map(|p| under(p))).map_err(|e| {
                ShellCommandError::Io {
                    path: "the PATH".into(),
                    source: std::io::Error::other(e),
                }
            })?,
            shell: self.shell.clone(),
        })
    }
}

impl Default for Script {
    fn default() -> Self {
        Self {
            confirm: true,
            file: None,
            files: Vec::new(),
            folder: None,
            browser: false,
            update: None,
            download: Vec::new(),
            install_fails: None,
            terminal: Terminal::default(),
        }
    }
}

/// One session's host: the scripted person, the connection's channels, what was asked.
struct ScriptedHost {
    script: Mutex<Script>,
    asked: Arc<Mutex<Vec<Value>>>,
    out: mpsc::UnboundedSender<String>,
    drops: Mutex<Option<Sink<DropEvent>>>,
    /// What the last update check found (an install takes only that release).
    checked: Mutex<Option<UpdateStatus>>,
    /// The person's home: the session's.
    home: PathBuf,
}

impl ScriptedHost {
    fn script(&self) -> Script {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn ask(&self, dialog: &str, title: String, message: String) -> Script {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(json!({"dialog": dialog, "title": title, "message": message}));
        self.script()
    }
}

/// The scripted person's yes or no, each question recorded.
struct ScriptedConfirm(Arc<ScriptedHost>);

#[async_trait::async_trait]
impl Confirm for ScriptedConfirm {
    async fn approve_server(&self, request: &ServerApprovalRequest) -> bool {
        let title = format!("Start the MCP server “{}”?", request.server);
        self.0
            .ask("approve_server", title, request.command_line.clone())
            .confirm
    }

    async fn accept_tool(&self, change: &ToolChange) -> bool {
        self.0
            .ask("accept_tool", change.title(), change.message())
            .confirm
    }

    async fn allow(&self, allowance: &Allowance) -> bool {
        self.0
            .ask("allow", allowance.title(), allowance.message())
            .confirm
    }
}

/// The host the commands see: a handle on the session's [`ScriptedHost`].
struct HostOf(Arc<ScriptedHost>);

#[async_trait::async_trait]
impl Host for HostOf {
    fn version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }

    fn confirm(&self) -> Arc<dyn Confirm> {
        Arc::new(ScriptedConfirm(Arc::clone(&self.0)))
    }

    fn channel(&self, id: &str) -> Option<RawSink> {
        let n: u64 = id.strip_prefix("__CHANNEL__:")?.parse().ok()?;
        let out = self.0.out.clone();
        Some(Arc::new(move |message| {
            out.send(format!("{{\"channel\":{n},\"message\":{message}}}"))
                .is_ok()
        }))
    }

    fn open_url(&self, url: &str) -> std::io::Result<()> {
        let follows = self
            .0
            .ask("open_url", url.to_owned(), String::new())
            .browser;
        // Only pages on this computer (a test peer's): the tests reach nothing else.
        let here = reqwest::Url::parse(url)
            .is_ok_and(|page| matches!(page.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")));
        if follows && here {
            let page = url.to_owned();
            tokio::spawn(async move {
                let browser = switchboard_core::net::client_builder()
                    .timeout(Duration::from_secs(30))
                    .build();
                let followed = match browser {
                    Ok(browser) => browser.get(&page).send().await.map(drop),
                    Err(e) => Err(e),
                };
                if let Err(e) = followed {
                    eprintln!("ipc_serve: the browser could not follow {page}: {e}");
                }
            });
        }
        Ok(())
    }

    async fn choose_file(
        &self,
        title: &str,
        save: Option<&str>,
        _filter: (&str, &str),
    ) -> Option<PathBuf> {
        let suggested = save.unwrap_or_default().to_owned();
        let file = self
            .0
            .ask("choose_file", title.to_owned(), suggested)
            .file?;
        Some(match save {
            Some(name) if file.is_dir() => file.join(name),
            _ => file,
        })
    }

    async fn choose_files(&self, title: &str) -> Vec<PathBuf> {
        self.0
            .ask("choose_files", title.to_owned(), String::new())
            .files
    }

    async fn choose_folder(&self, title: &str) -> Option<PathBuf> {
        self.0
            .ask("choose_folder", title.to_owned(), String::new())
            .folder
    }

    fn listen_for_drops(&self, sink: Sink<DropEvent>) {
        *self.0.drops.lock().unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    async fn check_for_update(&self) -> Result<UpdateStatus, IpcError> {
        let found = self
            .0
            .script()
            .update
            .unwrap_or(UpdateStatus::NotConfigured {
                current: self.version().to_owned(),
            });
        *self
            .0
            .checked
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(found.clone());
        Ok(found)
    }

    /// As the shell's updater: only the release the last check found, only by a copy that
    /// can replace itself; the download's progress, then the script's failure if it has one.
    async fn install_update(&self, progress: Sink<UpdateProgress>) -> Result<String, IpcError> {
        let checked = self
            .0
            .checked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let refused = |e: UpdateError| Err(CoreError::from(e).into());
        let version = match checked {
            Some(UpdateStatus::Available {
                installable: false,
                version,
                ..
            }) => return refused(UpdateError::NotInstallable(version)),
            Some(UpdateStatus::Available { version, .. }) => version,
            _ => return refused(UpdateError::NothingChecked),
        };
        let script = self.0.script();
        for chunk in &script.download {
            progress.send(chunk);
        }
        match script.install_fails {
            Some(e) => refused(e),
            None => Ok(version),
        }
    }

    fn restart(&self) {
        self.0.ask("restart", String::new(), String::new());
    }

    fn quit(&self) {
        self.0.ask("quit", String::new(), String::new());
    }

    /// Recorded, never opened: the tests run no file manager.
    fn show_folder(&self, folder: &std::path::Path) -> std::io::Result<()> {
        self.0
            .ask("show_folder", folder.display().to_string(), String::new());
        Ok(())
    }

    /// Under the session's home, as on Linux: `~/.config/Claude/claude_desktop_config.json`.
    fn claude_desktop_config(&self) -> Option<PathBuf> {
        Some(
            self.0
                .home
                .join(".config/Claude/claude_desktop_config.json"),
        )
    }

    fn surroundings(&self, _login_path: OsString) -> Result<Surroundings, ShellCommandError> {
        self.0.script().terminal.surroundings(&self.0.home)
    }
}

/// How a session's app is opened: a keychain that cannot be reached (with what it says), a
/// database that cannot be opened (its file is not SQLite).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
struct Opening {
    keychain_unreachable: Option<String>,
    database_broken: bool,
    /// Where the app looks for model servers running on this computer, by preset id
    /// (`ollama`, `lm_studio`): a test's model servers. Without, it looks nowhere (never at
    /// the machine's own 127.0.0.1:11434).
    local_servers: std::collections::BTreeMap<String, String>,
    /// The PATH servers' programs are looked for on (`null`: the login shell's and this
    /// process's, as the desktop app's).
    search_path: Option<Vec<PathBuf>>,
}

/// What outlives a session's app when it is opened again: the keys and the settings.
#[derive(Clone, Default)]
struct Kept {
    secrets: Arc<MemoryStore>,
    settings: Arc<MemorySettings>,
}

/// The app over `home` with what the session `kept`, opened as `opening` says.
async fn open_app(home: &std::path::Path, kept: &Kept, opening: &Opening) -> Arc<App> {
    let paths = AppPaths::under_home(home.to_path_buf());
    if opening.database_broken {
        let _ = std::fs::create_dir_all(&paths.data_dir);
        let _ = std::fs::write(paths.database_file(), b"this is not a database");
    }
    let secrets: Arc<dyn switchboard_core::secrets::SecretStore> =
        match &opening.keychain_unreachable {
            Some(detail) => Arc::new(MemoryStore::unreachable(detail.clone())),
            None => kept.secrets.clone(),
        };
    App::open(AppConfig {
        paths,
        secrets,
        settings: kept.settings.clone(),
        shows_forms: true,
        pid_file: None,
        check: OpenCheck::Pages,
        http: HttpOptions::default(),
        local_servers: Some(opening.local_servers.clone().into_iter().collect()),
        search_path: opening
            .search_path
            .as_ref()
            .map(|dirs| std::env::join_paths(dirs).unwrap_or_default()),
    })
    .await
}

/// One connection: a fresh app over a temporary home, until the test closes it.
async fn session(socket: TcpStream) -> std::io::Result<()> {
    let home = tempfile::tempdir()?;
    let mut homes: Vec<tempfile::TempDir> = Vec::new();
    let kept = Kept::default();
    let mut app = open_app(home.path(), &kept, &Opening::default()).await;
    let (read, mut write) = socket.into_split();
    let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(mut line) = outgoing.recv().await {
            line.push('\n');
            if write.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let host = Arc::new(ScriptedHost {
        script: Mutex::default(),
        asked: Arc::default(),
        out: out.clone(),
        drops: Mutex::default(),
        checked: Mutex::default(),
        home: home.path().to_path_buf(),
    });
    let mut servers: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    let mut models: std::collections::HashMap<String, Arc<ModelServer>> = Default::default();
    let mut lines = BufReader::new(read).lines();
    // The test closed the connection, or it broke: either way the session ends here.
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            eprintln!("ipc_serve: not JSON: {line}");
            continue;
        };
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        if let Some(script) = request.get("host") {
            let answer = match merged(host.script(), script) {
                Ok(now) => {
                    *host.script.lock().unwrap_or_else(PoisonError::into_inner) = now;
                    json!({"id": id, "ok": null})
                }
                Err(e) => json!({"id": id, "err": {"kind": "invalid_input", "message": e}}),
            };
            let _ = out.send(answer.to_string());
        } else if let Some(script) = request.get("provider") {
            let answer = match model_server(script.clone()).await {
                Ok((address, server, task)) => {
                    servers.push(task);
                    models.insert(address.clone(), server);
                    json!({"id": id, "ok": address})
                }
                Err(e) => {
                    json!({"id": id, "err": {"kind": "invalid_input", "message": e.to_string()}})
                }
            };
            let _ = out.send(answer.to_string());
        } else if let Some(address) = request.get("release").and_then(Value::as_str) {
            let known = models.get(address).map(|server| server.gate.add_permits(1));
            let _ = out.send(json!({"id": id, "ok": known.is_some()}).to_string());
        } else if let Some(address) = request.get("received").and_then(Value::as_str) {
            let received = models.get(address).map(|server| {
                server
                    .received
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone()
            });
            let answer = match received {
                Some(received) => json!({"id": id, "ok": received}),
                None => {
                    json!({"id": id, "err": {"kind": "not_found", "message": format!("no model server at {address}")}})
                }
            };
            let _ = out.send(answer.to_string());
        } else if let Some(opening) = request.get("reopen") {
            // The app the session began with goes (as the desktop app quits), and one opened
            // as asked takes its place over the same home — or, for a broken database, over a
            // home of its own: the old app's connection (held by its listeners until the session
            // ends) would otherwise keep reading, and later write back, the database it had.
            let opened = serde_json::from_value::<Opening>(opening.clone())
                .map_err(|e| e.to_string())
                .and_then(|o| match &o.search_path {
                    Some(dirs) => std::env::join_paths(dirs)
                        .map(|_| o)
                        .map_err(|e| format!("searchPath: {e}")),
                    None => Ok(o),
                });
            let answer = match opened {
                Err(e) => {
                    json!({"id": id, "err": {"kind": "invalid_input", "message": e.to_string()}})
                }
                Ok(opening) => {
                    app.shutdown(Duration::from_secs(2)).await;
                    if opening.database_broken {
                        match tempfile::tempdir() {
                            Ok(dir) => homes.push(dir),
                            Err(e) => eprintln!("ipc_serve: no home for the broken database: {e}"),
                        }
                    }
                    let here = homes.last().map_or(home.path(), tempfile::TempDir::path);
                    app = open_app(here, &kept, &opening).await;
                    json!({"id": id, "ok": null})
                }
            };
            let _ = out.send(answer.to_string());
        } else if let Some(drop) = request.get("drop") {
            // What the shell does with a drag over the window (`bridge::on_drag_drop`).
            let told = match drop {
                Value::String(s) if s == "over" => vec![DropEvent::Over],
                Value::String(s) if s == "left" => vec![DropEvent::Left],
                other => match serde_json::from_value::<Vec<PathBuf>>(other["paths"].clone()) {
                    Ok(paths) => app.take_dropped(paths).await,
                    Err(e) => {
                        let message =
                            format!("a drop is \"over\", \"left\" or {{\"paths\": […]}}: {e}");
                        let refused =
                            json!({"id": id, "err": {"kind": "invalid_input", "message": message}});
                        let _ = out.send(refused.to_string());
                        continue;
                    }
                },
            };
            let sink = host
                .drops
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let listened = sink.is_some();
            if let Some(sink) = sink {
                for event in &told {
                    sink.send(event);
                }
            }
            let _ = out.send(json!({"id": id, "ok": listened}).to_string());
        } else if let Some(link) = request.get("link").and_then(Value::as_str) {
            // A `switchboard://` link the system handed the app (the shell's `propose`).
            let answer = match app.propose(link) {
                Ok(shown) => json!({"id": id, "ok": shown}),
                Err(e) => json!({"id": id, "err": IpcError::from(e)}),
            };
            let _ = out.send(answer.to_string());
        } else if let Some(dates) = request.get("dateUsage") {
            // Requests the app recorded, dated as if made then (Rust dates each by its clock).
            let here = homes.last().map_or(home.path(), tempfile::TempDir::path);
            let database = AppPaths::under_home(here.to_path_buf()).database_file();
            let answer = match date_usage(&database, dates) {
                Ok(dated) => json!({"id": id, "ok": dated}),
                Err(e) => json!({"id": id, "err": {"kind": "invalid_input", "message": e}}),
            };
            let _ = out.send(answer.to_string());
        } else if request.get("home").is_some() {
            let _ = out.send(json!({"id": id, "ok": home.path()}).to_string());
        } else if request.get("asked").is_some() {
            let asked = host
                .asked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let _ = out.send(json!({"id": id, "ok": asked}).to_string());
        } else {
            let name = request["cmd"].as_str().unwrap_or_default().to_owned();
            let args = request.get("args").cloned().unwrap_or(Value::Null);
            let cx = Cx {
                app: Arc::clone(&app),
                host: Arc::new(HostOf(Arc::clone(&host))),
                window: "main".to_owned(),
            };
            let out = out.clone();
            tokio::spawn(async move {
                let answer = match ipc::find(&name) {
                    Some(command) => command.run(cx, args).await,
                    None => Err(IpcError {
                        kind: switchboard_core::ErrorKind::NotFound,
                        message: format!("command {name} not found"),
                        field: None,
                    }),
                };
                let line = match answer {
                    Ok(text) => format!("{{\"id\":{id},\"ok\":{text}}}"),
                    Err(e) => json!({"id": id, "err": e}).to_string(),
                };
                let _ = out.send(line);
            });
        }
    }
    app.shutdown(Duration::from_secs(2)).await;
    for server in models.values() {
        // A turn still held ends (its client is gone by now).
        server.gate.close();
    }
    for server in servers {
        server.abort();
    }
    // Listeners the window left (proposals, forms) hold the writer's sender for as long as the
    // app lives, so the writer is stopped rather than awaited; the home is removed as it drops.
    writer.abort();
    Ok(())
}

/// `script` with what `given` sets (the fields it names; the others stay), or why `given` is
/// not part of a script.
fn merged(script: Script, given: &Value) -> Result<Script, String> {
    let mut now = serde_json::to_value(script).map_err(|e| e.to_string())?;
    match (&mut now, given) {
        (Value::Object(now), Value::Object(given)) => {
            for (key, value) in given {
                now.insert(key.clone(), value.clone());
            }
        }
        _ => return Err(format!("a host script is an object, not {given}")),
    }
    let merged: Script = serde_json::from_value(now).map_err(|e| e.to_string())?;
    merged.terminal.check()?;
    Ok(merged)
}

/// Dates the requests recorded in `database`, oldest first, at `dates` (milliseconds since
/// 1970, one for each); how many were dated.
fn date_usage(database: &Path, dates: &Value) -> Result<usize, String> {
    let dates: Vec<i64> = serde_json::from_value(dates.clone()).map_err(|e| e.to_string())?;
    let db = rusqlite::Connection::open(database).map_err(|e| e.to_string())?;
    db.busy_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    let ids: Vec<i64> = db
        .prepare("SELECT rowid FROM usage ORDER BY rowid")
        .and_then(|mut rows| rows.query_map([], |row| row.get(0))?.collect())
        .map_err(|e| e.to_string())?;
    if ids.len() != dates.len() {
        return Err(format!(
            "{} requests are recorded, {} dates given",
            ids.len(),
            dates.len()
        ));
    }
    for (id, at) in ids.iter().zip(&dates) {
        db.execute("UPDATE usage SET at = ?1 WHERE rowid = ?2", [at, id])
            .map_err(|e| e.to_string())?;
    }
    Ok(ids.len())
}

/// Marks `file` as a program (a terminal finds only those on its PATH).
fn executable(file: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755))?;
    }
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// A model server of the OpenAI API's shape on 127.0.0.1:0, as `script` says (see [`Turn`]):
/// `models` (the `/models` list's entries, as given), and what each chat completion answers —
/// `turns` in order (the last one again once they run out), or the one turn the script itself
/// is (`answer`, `status`…).
struct ModelServer {
    /// What `/models` lists (entries as given), and its answer when the script sets a status.
    models: Value,
    listing: Turn,
    /// What each chat completion answers, in order; the last one again once they run out.
    turns: Vec<Turn>,
    /// The chat completions' request bodies, in the order they came.
    received: Mutex<Vec<Value>>,
    /// A turn that holds waits here for a `release`.
    gate: tokio::sync::Semaphore,
}

/// What one chat completion answers: `status` (an HTTP status instead, with `message`), else a
/// stream of the pieces of `answer`, then the `tools` it calls (`name`, `arguments`), then
/// `usage` (`input`, `output` tokens) and its end; `hold` waits for a `release` before the end
/// (one sent while nothing is held is kept for the next; a turn whose client went takes none).
/// A field it does not know is refused when the server is made. Only `POST …/chat/completions`,
/// `/models` and Ollama's `/api/tags` (the same models) are routes; anything else is answered
/// 404 and uses no turn.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Turn {
    /// Answered only to requests for this model (a comparison's lanes ask one server for
    /// several). Once any turn names one, each model takes its own turns (those naming it, and
    /// those naming none) in order; otherwise the turns go in the order requests come.
    model: Option<String>,
    status: Option<u16>,
    message: Option<String>,
    answer: Vec<String>,
    tools: Vec<CalledTool>,
    usage: Option<Usage>,
    hold: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CalledTool {
    name: String,
    /// No arguments given: `{}`, as a model calling a tool that takes none sends.
    #[serde(default = "no_arguments")]
    arguments: Value,
}

fn no_arguments() -> Value {
    json!({})
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Usage {
    input: u64,
    output: u64,
}

impl ModelServer {
    /// The server `script` describes (see [`Turn`]), or why the script is not one.
    fn new(mut script: Value) -> Result<Self, serde_json::Error> {
        let models = script
            .as_object_mut()
            .and_then(|s| s.remove("models"))
            .unwrap_or(json!([]));
        let turns = script.as_object_mut().and_then(|s| s.remove("turns"));
        let listing: Turn = serde_json::from_value(script)?;
        let turns = match turns {
            Some(turns) => serde_json::from_value::<Vec<Turn>>(turns)?,
            None => Vec::new(),
        };
        Ok(Self {
            models,
            listing,
            turns,
            received: Mutex::default(),
            gate: tokio::sync::Semaphore::new(0),
        })
    }

    /// The turn of the chat completion for `model` that comes `n`th of all, and `nth_of_model`
    /// of that model's.
    fn turn(&self, model: &str, n: usize, nth_of_model: usize) -> &Turn {
        if !self.turns.iter().any(|t| t.model.is_some()) {
            return match self.turns.len() {
                0 => &self.listing,
                len => &self.turns[n.min(len - 1)],
            };
        }
        let n = nth_of_model;
        let theirs: Vec<&Turn> = self
            .turns
            .iter()
            .filter(|t| t.model.as_deref().is_none_or(|m| m == model))
            .collect();
        match theirs.len() {
            0 => &self.listing,
            len => theirs[n.min(len - 1)],
        }
    }
}

/// Starts a model server as `script` says; its address, and the task serving it.
async fn model_server(
    script: Value,
) -> std::io::Result<(String, Arc<ModelServer>, tokio::task::JoinHandle<()>)> {
    let server = Arc::new(ModelServer::new(script)?);
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = format!("http://{}", listener.local_addr()?);
    let serving = Arc::clone(&server);
    let task = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let server = Arc::clone(&serving);
            tokio::spawn(async move {
                let _ = answer_model_request(socket, &server).await;
            });
        }
    });
    Ok((address, server, task))
}

/// Reads one request and answers it as the script says, then closes the connection.
async fn answer_model_request(socket: TcpStream, server: &ModelServer) -> std::io::Result<()> {
    let mut reader = BufReader::new(socket);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        if head.is_empty() {
            head = line;
        }
    }
    let mut body = vec![0; length];
    tokio::io::AsyncReadExt::read_exact(&mut reader, &mut body).await?;
    let mut socket = reader.into_inner();
    let listing = head.contains("/models");
    // Ollama's own list (`/api/tags`), of the same models.
    if head.contains("/api/tags") {
        let names: Vec<Value> = server
            .models
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| json!({"name": m["id"]}))
            .collect();
        let list = json!({"models": names}).to_string();
        return respond(&mut socket, 200, "application/json", &list).await;
    }
    let completion = head.starts_with("POST ") && head.contains("/chat/completions");
    if !listing && !completion {
        return respond(
            &mut socket,
            404,
            "text/plain",
            "not a route of this model server",
        )
        .await;
    }
    let turn = if listing {
        &server.listing
    } else {
        let mut received = server
            .received
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let model = body["model"].as_str().unwrap_or_default().to_owned();
        received.push(body);
        let asked = received
            .iter()
            .filter(|b| b["model"] == model.as_str())
            .count();
        server.turn(&model, received.len() - 1, asked - 1)
    };
    if let Some(status) = turn.status {
        let message = turn.message.as_deref().unwrap_or("refused");
        let error = json!({"error": {"message": message}}).to_string();
        return respond(&mut socket, status, "application/json", &error).await;
    }
    if listing {
        let list = json!({"data": server.models}).to_string();
        return respond(&mut socket, 200, "application/json", &list).await;
    }
    // The stream's length is not known ahead (a held turn), so it ends when the connection does.
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    socket.write_all(head.as_bytes()).await?;
    let event = |chunk: Value| format!("data: {chunk}\n\n");
    let mut events = String::new();
    for piece in &turn.answer {
        events.push_str(&event(
            json!({"choices": [{"index": 0, "delta": {"content": piece}}]}),
        ));
    }
    for (index, tool) in turn.tools.iter().enumerate() {
        let call = json!({"index": index, "id": format!("call_{index}"), "type": "function",
            "function": {"name": tool.name, "arguments": tool.arguments.to_string()}});
        events.push_str(&event(
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]}),
        ));
    }
    socket.write_all(events.as_bytes()).await?;
    socket.flush().await?;
    if turn.hold {
        // Until a release, or until the client goes (a stopped run): a turn nobody waits for
        // must not take the release meant for the next one.
        let mut nothing = [0u8; 1];
        tokio::select! {
            permit = server.gate.acquire() => {
                if let Ok(permit) = permit {
                    permit.forget();
                }
            }
            _ = tokio::io::AsyncReadExt::read(&mut socket, &mut nothing) => return Ok(()),
        }
    }
    let reason = if turn.tools.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut end = event(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}));
    if let Some(usage) = &turn.usage {
        end.push_str(&event(json!({"choices": [],
            "usage": {"prompt_tokens": usage.input, "completion_tokens": usage.output}})));
    }
    end.push_str("data: [DONE]\n\n");
    socket.write_all(end.as_bytes()).await?;
    socket.shutdown().await
}

/// A whole answer of `status` with `text`.
async fn respond(
    socket: &mut TcpStream,
    status: u16,
    kind: &str,
    text: &str,
) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        if status == 200 { "OK" } else { "Refused" },
        text.len()
    );
    socket.write_all(response.as_bytes()).await?;
    socket.shutdown().await
}
