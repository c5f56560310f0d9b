//! [`App`], the composition root: the one object the window and the command line hold. Built
//! from paths, a secret store, a settings source and whether servers' forms have someone to
//! show them, it owns the database (or why it could not be opened), the keychain, the config
//! files, the MCP supervisor, the runs under way (one per conversation, awaited at shutdown),
//! pending approvals and forms. Every operation a window or a script can ask for is one of its
//! methods or of a service it hands out — `app.usage()` ([`Usage`]: prices and use),
//! `app.profiles()` ([`Profiles`]), `app.providers()` ([`Providers`]: providers, keys, clients,
//! models, windows) — each service holding only what it needs ([`db`]'s `Db`, [`keychain`]'s
//! `Keychain`, the clients' time limits); input checked and errors typed. [`quit_signal`] is
//! when either adapter ends it.
//!
//! It must not know about windows, IPC or the terminal: adapters pass in an [`EventSink`] per
//! run and a [`Confirm`](crate::policy::confirm::Confirm) per question.
//!
//! By idea: [`home`] opens the database and hands out the services; [`conversations`],
//! [`drafts`], [`attachments`], [`artifacts`] and [`links`] are what a person keeps, with the
//! services [`providers`] (and [`connections`], [`windows`]), [`profiles`], [`projects`],
//! [`memory`] and [`usage`] ([`names`] checks profiles' and projects' names);
//! [`turns`] prepares a turn and [`runs`] keeps it going ([`compare`] several at once; [`roots`]
//! lends a project's folders to the servers its turn uses);
//! [`servers`] is the MCP servers and the flows that ask about them ([`registry`] and
//! [`bundles`] add them, [`offers`], [`apps`] and [`proposals`] are what they offer); this file
//! is the runs' entry points, approvals, forms and the end.

mod apps;
mod artifacts;
mod attachments;
mod bundles;
mod compact;
mod compare;
mod connections;
mod conversations;
mod db;
mod drafts;
mod home;
mod kept;
mod keychain;
mod links;
mod local_models;
mod memory;
mod names;
mod offers;
mod policy;
mod profiles;
mod projects;
mod proposals;
mod providers;
mod registry;
mod roots;
mod runs;
mod schedules;
mod servers;
mod skills;
mod tasks;
mod tool_modes;
mod turns;
mod usage;
mod windows;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

pub use crate::events::CallRef;
pub use artifacts::{ConversationArtifact, ToolLink, MAX_PREVIEW_BYTES};
pub use attachments::ToolSuggestion;
pub use bundles::{BundleInstallRequest, DropEvent, OfferedBundle};
pub use compare::CompareRequest;
pub use connections::{ConnectionFailure, ConnectionReport, LocalServer};
pub use conversations::Conversations;
pub use drafts::{ComparedModel, Draft, MAX_COMPARED, MAX_DRAFT_CHARS};
pub use home::{
    AppStatus, ConversationDetail, KeychainStatus, NewProvider, DEFAULT_TITLE, MAX_IMPORT_BYTES,
    MAX_TITLE_CHARS, MESSAGE_PAGE,
};
pub use local_models::PullProgress;
pub use memory::{check_fact, Memories, MAX_FACT_CHARS};
pub use offers::{OffersOf, PromptUse};
pub use policy::{PolicyMark, PolicyView};
pub use profiles::{ImportedProfile, ProfileChoice, Profiles, MAX_PROFILE_NAME_CHARS};
pub use projects::{
    project_prompt, AddedFiles, ExportedFile, FilesProgress, ImportedProject, ProjectExport,
    ProjectInput, ProjectPrompt, Projects, MAX_PROJECT_NAME_CHARS,
};
pub use providers::Providers;
pub use registry::{InstallRequest, Installed};
pub use runs::{Feed, RunHandle, Runs};
pub use schedules::{Asker, DueOutcome, StartedRun, RUNS_SHOWN};
pub use servers::{
    CommandParts, ImportSource, McpServerStatus, McpServerView, ServerSandbox, ToolAcceptance,
    ToolReview, Transport,
};
pub use skills::{ConversationSkill, ShownScript, SkillDetail};
pub use tasks::FollowedTask;
pub use tool_modes::{ToolModeChoice, ToolModeSource};
pub use turns::{system_prompt, ConversationTool, ToolSelection, TurnRequest};
pub use usage::{Usage, UsageReport};
pub use windows::WINDOW_RANGE;

use home::{new_title, read_import_file, write_text_file};

use crate::agent::{self, ApprovalAnswer, Approver, Decision, PendingApprovals, RunServices};
use crate::error::CoreError;
use crate::error::DatabaseUnavailable;
use crate::events::{EventSink, RunEvent, StopReason};
use crate::mcp::elicitation::ElicitationBroker;
use crate::mcp::host::McpHost;
use crate::paths::AppPaths;
use crate::policy::confirm::{Allowance, Confirm, StandingTool};
use crate::providers::HttpOptions;
use crate::secrets::SecretStore;
use crate::settings::{Settings, SettingsError, SettingsSource};
use crate::store::{Conversation, OpenCheck, Store};

/// What an [`App`] is built from.
pub struct AppConfig {
    pub paths: AppPaths,
    pub secrets: Arc<dyn SecretStore>,
    pub settings: Arc<dyn SettingsSource>,
    /// Someone can be shown servers' forms (the window): elicitation is declared to servers
    /// and forms go through [`App::forms`]. Without, it is not declared.
    pub shows_forms: bool,
    /// Where the supervisor records its servers' process groups; `None`: the app's own file
    /// (only the process holding the home's instance lock may use that one).
    pub pid_file: Option<PathBuf>,
    /// How much of the database is checked when it opens: every page, unless this process
    /// only reads (a command line verb that lists, shows, searches or exports).
    pub check: OpenCheck,
    /// Time limits and retries of provider clients (tests use short ones).
    pub http: HttpOptions,
    /// Where model servers running on this computer are looked for, as (preset id, base URL);
    /// `None`: the presets' own addresses (Ollama's 127.0.0.1:11434, LM Studio's :1234). A test
    /// gives its own, or none, so it never meets a server of the machine's.
    pub local_servers: Option<Vec<(String, String)>>,
    /// The PATH servers' programs are looked for on; `None`: the login shell's, then the
    /// app's own ([`App::server_search_path`]).
    pub search_path: Option<std::ffi::OsString>,
}

impl AppConfig {
    /// The command line's app: no forms, its own record of process groups.
    pub fn headless(
        paths: AppPaths,
        secrets: Arc<dyn SecretStore>,
        settings: Arc<dyn SettingsSource>,
    ) -> AppConfig {
        let pid_file = paths.data_dir.join(format!(
            "{}{}.json",
            crate::mcp::host::CLI_RECORDS_PREFIX,
            std::process::id()
        ));
        AppConfig {
            paths,
            secrets,
            settings,
            shows_forms: false,
            pid_file: Some(pid_file),
            check: OpenCheck::Pages,
            http: HttpOptions::default(),
            local_servers: None,
            search_path: None,
        }
    }
}

/// How often the window looks whether another process (the command line, a `run-due`, a
/// `tasks follow`) wrote to the database: a cheap look at its version ([`App::others_wrote`]).
const OTHERS_LOOK_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

pub struct App {
    paths: AppPaths,
    /// The database, or why it could not be opened (every storage operation reports it).
    db: db::Db,
    /// Conversations and what they hold ([`App::conversations`]).
    conversations: Conversations,
    /// Prices and use ([`App::usage`]).
    usage: Usage,
    /// The person's profiles ([`App::profiles`]).
    profiles: Profiles,
    /// The person's projects ([`App::projects`]).
    projects: Projects,
    /// The facts kept across conversations ([`App::memory`]).
    memories: Memories,
    /// The keychain (every call off the runtime).
    keychain: keychain::Keychain,
    /// Providers ([`App::providers`]).
    providers: Providers,
    /// The login shell's `PATH` merged with the app's, read once when a server first starts.
    search_path: tokio::sync::OnceCell<std::ffi::OsString>,
    host: McpHost,
    settings: Arc<dyn SettingsSource>,
    /// Tool-call approvals the window answers ([`App::answer_approval`]).
    approvals: Arc<PendingApprovals>,
    forms: ElicitationBroker,
    runs: Runs,
    pid_file: PathBuf,
    /// Bumped when the app changes a server's configuration (approved, switched, removed), so
    /// the server watcher sends the list again even when no process changed.
    config_changes: tokio::sync::watch::Sender<u64>,
    /// The window's server watcher, replaced when a (reloaded) window asks again.
    server_watcher: std::sync::Mutex<CancellationToken>,
    /// Bumped when a schedule or one of its runs changes here, so the window's watcher sends
    /// the count of runs waiting for an approval again ([`App::watch_schedules`]).
    schedule_changes: tokio::sync::watch::Sender<u64>,
    /// The window's schedules watcher, replaced when a (reloaded) window asks again.
    schedule_watcher: std::sync::Mutex<CancellationToken>,
    /// Cancelled at shutdown: watchers end.
    quitting: CancellationToken,
    /// Settings are read, changed and written by one caller at a time (a save from the window
    /// and a removed provider's cleared default must not undo each other).
    settings_writes: tokio::sync::Mutex<()>,
    /// policy.json is read, changed and written by one caller at a time.
    policy_writes: tokio::sync::Mutex<()>,
    /// The policy as last compiled, with the files it was compiled from ([`App::policy`]).
    compiled_policy: policy::CompiledPolicy,
    /// The MCP App pages the shell serves ([`App::open_app`]).
    app_pages: apps::AppPages,
    /// How often the apps shown call their servers' tools ([`App::app_call_tool`]).
    app_calls: apps::AppCallPace,
    /// Bundles the person chose in the window, by the token the window names them with
    /// ([`App::offer_bundle`]): the webview never names a file to install.
    offered_bundles: kept::Kept<Arc<crate::mcp::bundle::Bundle>>,
    /// Servers proposed by `switchboard://` links ([`App::propose`]).
    proposals: proposals::Proposals,
    /// The person's requests for one running call, and tasks handed over to be followed
    /// outside their runs ([`App::control_call`], [`App::start_task_follower`]).
    controls: agent::controls::CallControls,
    /// A project's folders lent to the servers its running turns use.
    root_loans: roots::RootLoans,
    /// The digests of skills' files, kept while they look the same.
    skill_digests: crate::skills::DigestCache,
    /// The conversation of each late result of a task kept here ([`App::watch_tasks`]).
    task_ends: tokio::sync::broadcast::Sender<String>,
    /// The window's tasks watcher, replaced when a (reloaded) window asks again.
    task_watcher: std::sync::Mutex<CancellationToken>,
}

impl App {
    /// Opens the database (one that cannot be opened is remembered, not an error: see
    /// [`App::database_error`]) and builds the app around it.
    pub async fn open(config: AppConfig) -> Arc<App> {
        let db = home::open_store(&config.paths, config.check).await;
        App::build(db, config).await
    }

    /// Builds the app around a store already open (tests give one in memory).
    pub async fn with_store(store: Store, config: AppConfig) -> Arc<App> {
        App::build(Ok(store), config).await
    }

    /// Servers recorded in the pid file by a run that was killed are stopped first; answers a
    /// crash left streaming are marked interrupted.
    async fn build(db: Result<Store, DatabaseUnavailable>, config: AppConfig) -> Arc<App> {
        let own_pid_file = servers::pid_file_of(&config.paths);
        let pid_file = config.pid_file.unwrap_or_else(|| own_pid_file.clone());
        let forms = ElicitationBroker::default();
        let mut host = McpHost::new(pid_file.clone()).await;
        crate::mcp::host::stop_left_by_gone_processes(
            &config.paths.data_dir,
            &pid_file,
            &own_pid_file,
        )
        .await;
        if config.shows_forms {
            host = host.with_elicitor(Arc::new(forms.clone()));
        }
        let db = db::Db::new(db);
        let app = Arc::new(App {
            paths: config.paths,
            db: db.clone(),
            conversations: Conversations::new(db.clone()),
            usage: Usage::new(db.clone()),
            profiles: Profiles::new(db.clone()),
            projects: Projects::new(db.clone()),
            memories: Memories::new(db.clone()),
            keychain: keychain::Keychain::new(Arc::clone(&config.secrets)),
            providers: Providers::new(
                db,
                keychain::Keychain::new(config.secrets),
                config.http,
                config.local_servers,
            ),
            search_path: tokio::sync::OnceCell::new_with(config.search_path),
            host,
            settings: config.settings,
            approvals: Arc::default(),
            forms,
            runs: Runs::default(),
            pid_file,
            config_changes: tokio::sync::watch::Sender::new(0),
            server_watcher: std::sync::Mutex::new(CancellationToken::new()),
            schedule_changes: tokio::sync::watch::Sender::new(0),
            schedule_watcher: std::sync::Mutex::new(CancellationToken::new()),
            quitting: CancellationToken::new(),
            settings_writes: tokio::sync::Mutex::new(()),
            policy_writes: tokio::sync::Mutex::new(()),
            compiled_policy: policy::CompiledPolicy::default(),
            app_pages: apps::AppPages::default(),
            app_calls: apps::AppCallPace::default(),
            offered_bundles: kept::Kept::new(bundles::OFFERED_KEPT),
            proposals: proposals::Proposals::default(),
            controls: agent::controls::CallControls::default(),
            root_loans: roots::RootLoans::default(),
            skill_digests: crate::skills::DigestCache::default(),
            task_ends: tokio::sync::broadcast::channel(64).0,
            task_watcher: std::sync::Mutex::new(CancellationToken::new()),
        });
        app.recover_after_crash().await;
        app.pin_tools_as_listed();
        app
    }

    pub fn host(&self) -> &McpHost {
        &self.host
    }

    /// Servers' forms waiting for the person (the window listens and answers).
    pub fn forms(&self) -> &ElicitationBroker {
        &self.forms
    }

    /// Whether another process wrote to the database since `seen` (the version last seen,
    /// brought up to date; `None` at first, which counts as written).
    pub(crate) async fn others_wrote(&self, seen: &mut Option<i64>) -> bool {
        let Ok(store) = self.store() else {
            return false;
        };
        let Ok(version) = store.data_version().await else {
            return false;
        };
        let moved = *seen != Some(version);
        *seen = Some(version);
        moved
    }

    // ---- settings ---------------------------------------------------------------------

    pub fn settings(&self) -> Settings {
        self.settings.load()
    }

    /// Checks and saves the settings; returns them as saved. A default provider that is no
    /// longer there (removed while the window still showed it) is cleared, as removing it
    /// clears it: a save cannot bring it back.
    ///
    /// # Errors
    /// A value out of range (naming the field), or they cannot be written.
    pub async fn update_settings(
        &self,
        settings: Settings,
        confirm: &dyn crate::policy::confirm::Confirm,
    ) -> Result<Settings, CoreError> {
        let mut settings = settings.validated().map_err(SettingsError::from)?;
        let _one_at_a_time = self.settings_writes.lock().await;
        // A shorter audit record deletes entries: the person confirms it, not the webview.
        let from_days = self.settings().audit_retention_days;
        let to_days = settings.audit_retention_days;
        if to_days < from_days
            && !confirm
                .allow(&crate::policy::confirm::Allowance::ShorterAuditRecord {
                    from_days,
                    to_days,
                })
                .await
        {
            return Err(CoreError::NotConfirmed {
                what: "the shorter record of tool calls".into(),
            });
        }
        if let (Some(named), Ok(providers)) = (
            settings.default_provider.as_deref(),
            self.providers.list().await,
        ) {
            if !providers
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(named.trim()))
            {
                settings.default_provider = None;
                settings.default_model = None;
            }
        }
        self.settings.save(&settings)?;
        tracing::info!("settings saved");
        Ok(settings)
    }

    /// Removes a provider and its key; a default model in Settings that named it is cleared,
    /// so the next new conversation asks for a model instead of failing.
    ///
    /// # Errors
    /// No such provider; the keychain; the database; the settings cannot be written.
    pub async fn remove_provider(&self, name: &str) -> Result<(), CoreError> {
        let _one_at_a_time = self.settings_writes.lock().await;
        self.providers.remove_with_key(name).await?;
        let mut settings = self.settings.load();
        let named_it = settings
            .default_provider
            .as_deref()
            .is_some_and(|p| p.trim().eq_ignore_ascii_case(name.trim()));
        if named_it {
            settings.default_provider = None;
            settings.default_model = None;
            self.settings.save(&settings)?;
            tracing::info!(
                provider = name.trim(),
                "the default provider was removed; default cleared"
            );
        }
        Ok(())
    }

    // ---- conversations -----------------------------------------------------------------

    /// Creates a conversation from `profile` (the default profile, when there is one, unless
    /// another or none is chosen): its system prompt, model, tool switches and limits. With no
    /// profile it is told Settings' default system prompt and has the default switches.
    /// `system_prompt`, when given, replaces whichever prompt it would be told.
    ///
    /// # Errors
    /// As [`Conversations::create`]; no such profile.
    pub async fn create_conversation(
        &self,
        title: Option<&str>,
        system_prompt: Option<&str>,
        profile: &crate::app::ProfileChoice,
    ) -> Result<Conversation, CoreError> {
        use crate::app::ProfileChoice;
        let profile = match profile {
            ProfileChoice::Named(key) => Some(key.clone()),
            ProfileChoice::Default => self.store()?.default_profile().await?.map(|p| p.id),
            ProfileChoice::None => None,
        };
        let Some(profile) = profile else {
            let prompt = match system_prompt {
                Some(prompt) => prompt.to_owned(),
                None => self.settings.load().default_system_prompt,
            };
            // A system prompt the person gave (the command line's --system) is their work.
            let kept = title.is_some_and(|t| !crate::text::is_blank(t)) || system_prompt.is_some();
            return self.conversations().create_kept(title, &prompt, kept).await;
        };
        let made = self.profiles().create_conversation(title, &profile).await?;
        match system_prompt {
            Some(prompt) => {
                self.conversations()
                    .set_system_prompt(&made.id, prompt)
                    .await
            }
            None => Ok(made),
        }
    }

    // ---- runs -------------------------------------------------------------------------

    /// Prepares a turn (checking everything before anything is saved) and starts it on its own
    /// task; every event goes to `sink`, the last being `run_finished`. Its approvals are the
    /// window's to answer ([`App::answer_approval`]).
    ///
    /// # Errors
    /// [`CoreError::RunUnderWay`] while the conversation answers; [`CoreError::Quitting`];
    /// what [`App::prepare_turn`] refuses.
    pub async fn start_turn(
        self: &Arc<Self>,
        request: TurnRequest,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunHandle, CoreError> {
        let approver = Arc::clone(&self.approvals) as Arc<dyn Approver>;
        self.start_turn_answered_by(request, sink, approver).await
    }

    /// [`App::start_turn`] for the message a conversation's composer held: once the turn has
    /// started, the draft kept for that composer goes, so a message sent never comes back as a
    /// draft (the window empties its box as well, but may be closed before it says so).
    ///
    /// # Errors
    /// As [`App::start_turn`]; the draft stays then.
    pub async fn send_composed(
        self: &Arc<Self>,
        request: TurnRequest,
        sink: Arc<dyn EventSink>,
    ) -> Result<RunHandle, CoreError> {
        let conversation_id = request.conversation_id.clone();
        let handle = self.start_turn(request, sink).await?;
        self.forget_draft(&conversation_id).await;
        Ok(handle)
    }

    /// [`App::start_turn`] with its approvals answered by `approver` (the terminal, or a fixed
    /// answer).
    ///
    /// # Errors
    /// As [`App::start_turn`].
    pub async fn start_turn_answered_by(
        self: &Arc<Self>,
        request: TurnRequest,
        sink: Arc<dyn EventSink>,
        approver: Arc<dyn Approver>,
    ) -> Result<RunHandle, CoreError> {
        self.runs.check_free(&request.conversation_id)?;
        let branch_from = request.branch_from.clone();
        let setup = self.prepare_turn(request, &self.settings.load()).await?;

        let (run_id, conversation_id) = (setup.run_id.clone(), setup.conversation_id.clone());
        let app = Arc::clone(self);
        self.runs.start(
            &run_id,
            &conversation_id,
            sink,
            move |cancel, feed| async move {
                let Ok(store) = app.store() else {
                    return StopReason::Error;
                };
                // Checked by prepare_turn; the old branch is set aside only once the run owns
                // the conversation, so nothing else can start there meanwhile.
                if let Some(at) = branch_from {
                    if let Err(e) = store.branch_off(setup.conversation_id.clone(), at).await {
                        feed.send(RunEvent::RunFinished {
                            reason: StopReason::Error,
                            message: Some(format!("The conversation could not branch: {e}")),
                        });
                        return StopReason::Error;
                    }
                }
                let services = RunServices {
                    store,
                    tools: &app.host,
                    approver: approver.as_ref(),
                    sink: feed.as_ref(),
                    controls: &app.controls,
                };
                app.run_lending_roots(setup, services, cancel).await
            },
        )
    }

    /// The token of a window's watcher that takes `slot` (the servers', the schedules', the
    /// tasks'): the watcher it replaces (a window before its reload) stops, and this one stops
    /// at quit too.
    fn replace_watcher(&self, slot: &std::sync::Mutex<CancellationToken>) -> CancellationToken {
        let stop = self.quitting.child_token();
        let previous = std::mem::replace(
            &mut *slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
            stop.clone(),
        );
        previous.cancel();
        stop
    }

    /// Stops a run (its stream and every running call); a run that ended is left alone.
    pub fn stop_run(&self, run_id: &str) {
        self.runs.stop(run_id);
    }

    /// Deletes a conversation; a run under way there is stopped first and waited for, so
    /// nothing of it is written after the conversation is gone.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn delete_conversation(&self, id: &str) -> Result<(), CoreError> {
        self.runs.stop_in(id).await;
        Ok(self.store()?.delete_conversation(id.to_owned()).await?)
    }

    /// Shows branch `position` (from 0) of the branch point where `message_id` is the first
    /// message shown. Refused while the conversation answers.
    ///
    /// # Errors
    /// [`CoreError::RunUnderWay`]; no such message, point or branch; the database.
    pub async fn switch_branch(
        &self,
        conversation_id: &str,
        message_id: &str,
        position: i64,
    ) -> Result<crate::store::SwitchedBranch, CoreError> {
        self.runs.check_free(conversation_id)?;
        let store = self.store()?;
        let switched = store
            .switch_branch(conversation_id.to_owned(), message_id.to_owned(), position)
            .await?;
        self.answer_with_model_of(conversation_id, &switched.point.message_id)
            .await?;
        Ok(switched)
    }

    /// Shows message `message_id` (a search hit), switching to the branch that holds it when
    /// it is not shown; returns its number. Refused while the conversation answers.
    ///
    /// # Errors
    /// [`CoreError::RunUnderWay`]; no such message in the conversation or its branches; the
    /// database.
    pub async fn reveal_message(
        &self,
        conversation_id: &str,
        message_id: &str,
    ) -> Result<i64, CoreError> {
        self.runs.check_free(conversation_id)?;
        let (seq, switched) = self
            .store()?
            .reveal_message(conversation_id.to_owned(), message_id.to_owned())
            .await?;
        if let Some(switched) = switched {
            self.answer_with_model_of(conversation_id, &switched.point.message_id)
                .await?;
        }
        Ok(seq)
    }

    /// An answer picked among a comparison's (or any answer by another model) makes its model
    /// the one that answers next: `first` is the first message of the branch now shown.
    async fn answer_with_model_of(
        &self,
        conversation_id: &str,
        first: &str,
    ) -> Result<(), CoreError> {
        let store = self.store()?;
        let first = store
            .get_message(conversation_id.to_owned(), first.to_owned())
            .await?;
        if let (crate::store::Role::Assistant, Some(provider), Some(model)) =
            (first.role, first.provider, first.model)
        {
            if self
                .store()?
                .find_provider(provider.clone())
                .await?
                .is_some()
            {
                store
                    .set_conversation_model(conversation_id.to_owned(), Some(provider), Some(model))
                    .await?;
            }
        }
        Ok(())
    }

    /// Deletes the question `message_id` and everything that answered it (see
    /// [`crate::store::Store::delete_turn`]); returns the ids of the messages deleted. Refused
    /// while the conversation answers: the run reads and writes what would go.
    ///
    /// # Errors
    /// [`CoreError::RunUnderWay`]; no such question; the database.
    pub async fn delete_turn(
        &self,
        conversation_id: &str,
        message_id: &str,
    ) -> Result<Vec<String>, CoreError> {
        self.runs.check_free(conversation_id)?;
        Ok(self
            .store()?
            .delete_turn(conversation_id.to_owned(), message_id.to_owned())
            .await?)
    }

    /// Gives `sink` the run under way in `conversation_id`, from its start, then live; the
    /// run's id, or `None` when nothing runs there.
    pub fn attach(&self, conversation_id: &str, sink: Arc<dyn EventSink>) -> Option<String> {
        self.runs.attach(conversation_id, sink)
    }

    /// The window's answer to an approval request. Only the calls it asked about can be
    /// answered: the loop checks. An answer that would stop asking about a tool (for this
    /// conversation, or always) is first put to `confirm` (outside the webview), naming each
    /// tool; if the person does not confirm, nothing is answered and the request still waits.
    ///
    /// # Errors
    /// [`CoreError::NotFound`] when nothing waits for it (the run ended, or it was answered);
    /// [`CoreError::NotConfirmed`] when the person did not confirm a standing approval.
    pub async fn answer_approval(
        &self,
        request_id: &str,
        answers: Vec<ApprovalAnswer>,
        confirm: &dyn Confirm,
    ) -> Result<(), CoreError> {
        let gone = || CoreError::NotFound {
            what: "that approval: it is no longer waiting (the run ended or was answered)".into(),
        };
        let (conversation_id, calls) = self.approvals.asked(request_id).ok_or_else(gone)?;
        let mut tools: Vec<StandingTool> = Vec::new();
        for answer in &answers {
            let everywhere = match answer.decision {
                Decision::AllowConversation => false,
                Decision::AllowAlways => true,
                Decision::AllowOnce | Decision::Deny => continue,
            };
            let Some(call) = calls.iter().find(|c| c.call_id == answer.call_id) else {
                continue;
            };
            let tool = StandingTool {
                server: call.server.clone(),
                tool: call.tool.clone(),
                everywhere,
            };
            if !tools.contains(&tool) {
                tools.push(tool);
            }
        }
        if !tools.is_empty() {
            let conversation = self.conversation_title(&conversation_id).await;
            let allowance = Allowance::StandingApproval {
                conversation,
                tools,
            };
            if !confirm.allow(&allowance).await {
                return Err(CoreError::NotConfirmed {
                    what: "that these tools may run without asking".into(),
                });
            }
        }
        if self.approvals.answer(request_id, answers) {
            Ok(())
        } else {
            Err(gone())
        }
    }

    /// The person's word on a result put to them before the model reads it.
    ///
    /// # Errors
    /// Not found: nothing waits for that review (the run ended, or it was answered).
    pub fn answer_result_review(
        &self,
        request_id: &str,
        verdict: crate::agent::approval::ReviewVerdict,
    ) -> Result<(), CoreError> {
        if self.approvals.answer_review(request_id, verdict) {
            Ok(())
        } else {
            Err(CoreError::NotFound {
                what: "that result: it is no longer waiting for you (the run ended or it was answered)"
                    .into(),
            })
        }
    }

    /// Puts a conversation in or out of auto-approve; turning it on is first put to `confirm`
    /// (outside the webview).
    ///
    /// # Errors
    /// [`CoreError::NotConfirmed`] when the person did not confirm; not found; the database.
    pub async fn set_auto_approve(
        &self,
        conversation_id: &str,
        on: bool,
        confirm: &dyn Confirm,
    ) -> Result<(), CoreError> {
        if on {
            let conversation = self
                .store()?
                .get_conversation(conversation_id.to_owned())
                .await?;
            let allowance = Allowance::AutoApprove {
                conversation: conversation.title,
            };
            if !confirm.allow(&allowance).await {
                return Err(CoreError::NotConfirmed {
                    what: "that every tool may run without asking in this conversation".into(),
                });
            }
        }
        Ok(self
            .store()?
            .set_auto_approve(conversation_id.to_owned(), on)
            .await?)
    }

    /// A conversation's title for a question, or a plain word when it cannot be read.
    async fn conversation_title(&self, id: &str) -> String {
        let read = match self.store() {
            Ok(store) => store.get_conversation(id.to_owned()).await.ok(),
            Err(_) => None,
        };
        read.map_or_else(|| "this conversation".into(), |c| c.title)
    }

    /// The person's answer to a server's form, checked against the form.
    ///
    /// # Errors
    /// [`CoreError::NotFound`] when the form is no longer open; [`CoreError::Invalid`] (field
    /// `form`) when the values do not fit it, and the form then stays open.
    pub fn answer_form(
        &self,
        id: &str,
        answer: crate::mcp::elicitation::ElicitationAnswer,
    ) -> Result<(), CoreError> {
        self.forms.answer(id, answer).map_err(form_error)
    }

    /// Opens the page of the URL-mode request `id` in the person's browser once they said yes
    /// to `confirm` outside the webview (they clicked Open; the address was checked when the
    /// request arrived), and answers it `accept`. `Ok(false)`: they said no, and the request
    /// stays open.
    ///
    /// # Errors
    /// No such page is open; the browser could not be started.
    pub async fn visit_form_page(
        &self,
        id: &str,
        confirm: &dyn crate::policy::confirm::Confirm,
        open: &(dyn Fn(&str) -> std::io::Result<()> + Sync),
    ) -> Result<bool, CoreError> {
        let visit = self.forms.visit(id).map_err(form_error)?;
        let server = self
            .forms
            .open()
            .into_iter()
            .find(|r| r.id == id)
            .map(|r| r.server)
            .unwrap_or_default();
        let asked = crate::policy::confirm::Allowance::FormPage {
            server,
            url: visit.url.clone(),
        };
        if !confirm.allow(&asked).await {
            return Ok(false);
        }
        open(&visit.url).map_err(|e| CoreError::Io {
            what: "the browser".into(),
            detail: e.to_string(),
        })?;
        self.answer_form(
            id,
            crate::mcp::elicitation::ElicitationAnswer::Accept {
                content: serde_json::Map::new(),
            },
        )?;
        Ok(true)
    }

    // ---- the end ----------------------------------------------------------------------

    /// Stops every run (each saves what it had and ends `cancelled`) and waits for them, then
    /// stops every server; all within `deadline`, after which what is left is killed.
    pub async fn shutdown(&self, deadline: Duration) {
        let started = Instant::now();
        // A task a call waits for is not cancelled with its run: it is followed again at the
        // next start (a remote server's; a local one stops with the app, and says it lost it).
        self.controls
            .go_on_without_tasks(deadline.min(Duration::from_secs(2)))
            .await;
        self.quitting.cancel();
        self.runs.shutdown(deadline).await;
        let left = deadline
            .saturating_sub(started.elapsed())
            .max(Duration::from_secs(1));
        self.host.shutdown(left).await;
        if !self.runs_the_homes_servers() {
            // A command line's own record, empty now.
            let _ = std::fs::remove_file(&self.pid_file);
        }
    }
}

/// A server's request that is no longer open is not found (the window drops it quietly); an
/// answer that does not fit, or a visit to a form, is the person's input to fix.
fn form_error(e: crate::mcp::elicitation::FormError) -> CoreError {
    use crate::mcp::elicitation::FormError;
    match e {
        FormError::Closed => CoreError::NotFound {
            what: "that request: it is no longer open (its server stopped asking)".into(),
        },
        FormError::Unfit(_) | FormError::NotAPage => {
            crate::error::InvalidInput::new("form", e.to_string()).into()
        }
    }
}

/// Resolves when the app is asked to quit by a signal: SIGTERM or SIGINT (Unix), Ctrl-C
/// (Windows). Never, when the signals cannot be listened to. The window and the command line
/// both end on it.
pub async fn quit_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending::<()>().await,
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod home_tests;
#[cfg(test)]
mod tests;
