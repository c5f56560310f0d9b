//! Preparing a turn of the tool loop: which provider and model answer, which tools this
//! conversation offers (its switches, held-back pins, the command line's `--tools`), what the
//! person decided about servers and tools, and the limits from Settings. Running it is
//! [`crate::agent::run`]'s job; this module only gathers and checks.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::{App, DEFAULT_TITLE, MAX_TITLE_CHARS};
use crate::agent::{RetryCall, RunLimits, RunSetup, ServerRules, ToolSource, TurnStart};
use crate::error::{CoreError, InvalidInput};
use crate::events::CallRef;
use crate::mcp::catalogue::{Catalogue, CatalogueTool, ListedTool};
use crate::policy::pins::ToolStatus;
use crate::policy::{self, Standing};
use crate::providers::ToolCall;
use crate::settings::Settings;
use crate::store::Role;
use crate::store::{new_id, StandingApproval, Store, ToolToggle};
use crate::text::one_line;

/// Which of the offered tools a run may use (the command line's `--tools`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolSelection {
    #[default]
    All,
    None,
    /// Servers (`time`) or tools (`time__get_current_time`, the name models see) by name.
    Only(Vec<String>),
}

impl ToolSelection {
    /// Whether a tool of `server` may be chosen: the server named, or one of its tools by the
    /// name models see (`<server>__<tool>`).
    pub fn takes_from(&self, server: &str) -> bool {
        match self {
            ToolSelection::All => true,
            ToolSelection::None => false,
            ToolSelection::Only(names) => {
                let prefix = crate::mcp::catalogue::wire_name(server, "");
                names
                    .iter()
                    .any(|n| n.eq_ignore_ascii_case(server) || n.starts_with(&prefix))
            }
        }
    }

    /// Whether `tool` is offered: its server named, or the tool by the name models see.
    pub fn offers(&self, tool: &CatalogueTool) -> bool {
        match self {
            ToolSelection::All => true,
            ToolSelection::None => false,
            ToolSelection::Only(names) => names
                .iter()
                .any(|n| n.eq_ignore_ascii_case(&tool.server) || n == &tool.wire_name),
        }
    }
}

/// What a caller asks for one turn.
#[derive(Debug, Clone, Default)]
pub struct TurnRequest {
    pub conversation_id: String,
    /// The new message; `None` runs again from the conversation as it is (Retry).
    pub text: Option<String>,
    /// Files kept already ([`App::keep_attachment`]) that the new message carries.
    pub attachments: Vec<crate::attachments::AttachmentRef>,
    /// Overrides the conversation's choice (the command line's `--provider` / `--model`).
    pub provider: Option<String>,
    pub model: Option<String>,
    pub tools: ToolSelection,
    /// Overrides Settings' max rounds (the command line's `--max-rounds`).
    pub max_rounds: Option<u32>,
    /// A failed call to run again (its card's Retry) instead of a message; `text` is `None`.
    pub retry_call: Option<CallRef>,
    /// Starts a new branch at this message first, keeping the old one: with `text`, a question
    /// of yours edited and sent again; without, an answer asked for again (the first message
    /// after a question).
    pub branch_from: Option<String>,
    /// The model must call a tool in its first answer (the command line's `--require-tool`),
    /// for a task the person knows needs one; a prompted model's answer is then constrained to
    /// a call where its server takes a grammar. Ignored when no tool is offered.
    pub require_tool: bool,
}

/// A conversation's tools as the tools panel shows them.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ConversationTool {
    pub server: String,
    pub tool: String,
    pub wire_name: String,
    pub display_name: String,
    pub description: String,
    /// On for this conversation (its own switch, else its server's, else on).
    pub enabled: bool,
    /// Not offered: changed since pinned (until accepted on the Servers page), or left out of
    /// its server's list ([`crate::mcp::server::HeldBackTool`]).
    pub held_back: bool,
    /// Why it is held back, for the person.
    pub held_reason: Option<String>,
    /// Rough tokens its definition costs in every request (characters / 4).
    pub estimated_tokens: usize,
    /// The rule that decides every call of it whatever its arguments (allow, ask, block), of
    /// the person's policy.json or the organisation's; a blocked tool is never offered.
    pub rule: Option<crate::policy::rules::RuleHit>,
}

/// The call a failed call's Retry makes: the same tool (under the name it is offered by now)
/// with the same arguments, and an id of its own.
///
/// # Errors
/// No such call; a call that did not fail, never reached a tool, has arguments that are not a
/// JSON object, or whose tool is not offered in this conversation now; the database.
async fn retry_call(
    store: &Store,
    conversation_id: &str,
    at: CallRef,
    offered: &[CatalogueTool],
) -> Result<RetryCall, CoreError> {
    let run = store
        .get_tool_run(conversation_id.to_owned(), at.message_id, at.call_id)
        .await?;
    let refuse = |why: String| -> CoreError { InvalidInput::new("call", why).into() };
    if let Some(why) = run.retry_refusal() {
        return Err(refuse(why));
    }
    let Some(tool) = offered
        .iter()
        .find(|t| t.server.eq_ignore_ascii_case(&run.server) && t.tool == run.tool)
    else {
        return Err(refuse(format!(
            "“{}” is not offered in this conversation now: its server is not running, its switch is off in the tools panel, or it changed and waits for review on the Servers page.",
            run.display_name
        )));
    };
    // A model's call ids are at most 40 characters at OpenAI: 6 + 32.
    let id = format!("retry_{}", new_id().replace('-', ""));
    let call = ToolCall::new(id, tool.wire_name.clone(), run.arguments.clone());
    // A retry of a retry names the call the chain began with, whose card it answers.
    let of = run.retry_of.unwrap_or(CallRef {
        message_id: run.message_id,
        call_id: run.call_id,
    });
    Ok(RetryCall { of, call })
}

/// Titles a conversation still called [`DEFAULT_TITLE`] by its first message (a message of
/// files alone by its first file).
async fn title_by_first_message(
    store: &Store,
    conversation: &crate::store::Conversation,
    text: &str,
    attachments: &[crate::attachments::Attachment],
) -> Result<(), CoreError> {
    if conversation.title != DEFAULT_TITLE {
        return Ok(());
    }
    let about = match (text.trim(), attachments.first()) {
        ("", Some(file)) => file.name.as_str(),
        _ => text,
    };
    let title = one_line(about, AUTO_TITLE_CHARS.min(MAX_TITLE_CHARS));
    if !title.is_empty() {
        store
            .rename_conversation(conversation.id.clone(), title)
            .await?;
    }
    Ok(())
}

/// What the model is told first: the conversation's system prompt (its profile's), then its
/// project's instructions (`project`, see [`super::project_prompt`]), then each offered
/// server's instructions under the server's name (`servers`: name and instructions, in
/// order); `None` when there is none of them.
pub fn system_prompt(
    conversation: &str,
    project: Option<String>,
    servers: &[(String, String)],
) -> Option<String> {
    let mut parts: Vec<String> = Vec::with_capacity(servers.len() + 2);
    if !conversation.trim().is_empty() {
        parts.push(conversation.trim_end().to_owned());
    }
    parts.extend(project);
    for (server, text) in servers {
        if !text.trim().is_empty() {
            // A server's words to the model, like a tool's description: no tag characters.
            parts.push(format!(
                "## Instructions from the MCP server “{server}”\n\n{}",
                crate::text::without_tags(text.trim())
            ));
        }
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The longest title a first message gives a new conversation.
const AUTO_TITLE_CHARS: usize = 60;

impl App {
    /// Gathers everything a turn needs and checks it, before anything is saved.
    ///
    /// # Errors
    /// Not found (conversation, provider); no provider or model chosen; an empty message; a
    /// provider whose key is missing; the database.
    pub async fn prepare_turn(
        &self,
        mut request: TurnRequest,
        settings: &Settings,
    ) -> Result<RunSetup, CoreError> {
        let tools: &dyn ToolSource = &self.host;
        let store = self.store()?;
        let conversation = store
            .get_conversation(request.conversation_id.clone())
            .await?;
        let attachments = self
            .judge_attachments(std::mem::take(&mut request.attachments))
            .await?;
        let text = match request.text.as_deref().map(str::trim) {
            // Files alone are a message too.
            Some("") if attachments.is_empty() => {
                return Err(InvalidInput::new("text", "Write a message first.").into())
            }
            Some(_) => request.text.clone(),
            None if !attachments.is_empty() => {
                return Err(InvalidInput::new(
                    "attachments",
                    "Files go with a new message, not a retry.",
                )
                .into())
            }
            None => None,
        };
        // Read once: both the retry check and the first-message title need it. A lane of a
        // comparison answers what its conversation holds.
        let is_empty = store
            .list_messages(
                conversation
                    .lane_of
                    .clone()
                    .unwrap_or_else(|| conversation.id.clone()),
            )
            .await?
            .is_empty();
        if text.is_none() && is_empty {
            return Err(InvalidInput::new("text", "There is nothing to retry yet.").into());
        }
        if let Some(at) = &request.branch_from {
            let (role, before) = store
                .role_and_previous(conversation.id.clone(), at.clone())
                .await?;
            match (&text, role, before) {
                (Some(_), Role::User, _) | (None, Role::Assistant, Some(Role::User)) => {}
                (Some(_), ..) => {
                    return Err(InvalidInput::new(
                        "message",
                        "Only a message of yours can be edited.",
                    )
                    .into())
                }
                (None, ..) => {
                    return Err(InvalidInput::new(
                        "message",
                        "Only the answer to a message of yours can be written again.",
                    )
                    .into())
                }
            }
            if request.retry_call.is_some() {
                return Err(
                    InvalidInput::new("message", "Retry a call or branch, not both.").into(),
                );
            }
        }
        if text.is_some() && request.retry_call.is_some() {
            return Err(
                InvalidInput::new("text", "Send a message or retry a call, not both.").into(),
            );
        }
        let (provider_name, model) = self.choose_model(&conversation, &request, settings).await?;
        let (provider, tool_mode) = self.providers.client_for(&provider_name, &model).await?;
        let media = self.model_media(&provider_name, &model).await?;
        super::attachments::check_media(&attachments, &media, &model)?;
        let price = self
            .usage
            .price(&provider_name, &model)
            .await?
            .map(|p| p.price);

        let (tools_offered, panel) = self.conversation_catalogue(&conversation.id).await?;
        // Said at the run's start: the tools its servers have that the model is not offered.
        let held_back = panel
            .into_iter()
            .filter(|t| t.held_back)
            .map(|t| (t.display_name, t.held_reason.unwrap_or_default()))
            .collect();
        // A model set to use no tools is offered none.
        let mut offered: Vec<_> = tools_offered
            .into_iter()
            .filter(|t| {
                tool_mode.mode != crate::providers::ToolMode::Off && request.tools.offers(t)
            })
            .collect();
        let policy = self.policy()?;
        // A tool a rule blocks outright is never offered; a call naming it is told the rule.
        let mut blocked = HashMap::new();
        offered.retain(|t| match policy.blocked(&t.server, &t.tool) {
            Some(hit) => {
                blocked.insert(t.wire_name.clone(), hit.said);
                false
            }
            None => true,
        });
        // The model can read the resources of the servers whose tools it is offered (a
        // server whose every tool is blocked offers none).
        let with_resources: Vec<String> = tools
            .resource_servers()
            .into_iter()
            .filter(|s| offered.iter().any(|t| &t.server == s))
            .collect();
        if let Some(read) = crate::agent::builtin::read_resource_tool(&with_resources) {
            crate::agent::builtin::add(&mut offered, read);
        }

        let start = match (&text, request.retry_call) {
            (Some(text), _) => TurnStart::Message {
                text: text.clone(),
                attachments: attachments.clone(),
            },
            (None, None) => TurnStart::Again,
            (None, Some(at)) => {
                TurnStart::RetryCall(retry_call(store, &conversation.id, at, &offered).await?)
            }
        };
        let mut rules = self.server_rules();
        let standing = self.standing_in(&conversation).await?;
        // The profile the conversation follows sets its limits where it says.
        let settings = &self
            .profiles()
            .settings_for(&conversation, settings)
            .await?;
        let mut limits = RunLimits {
            max_rounds: request.max_rounds.unwrap_or(settings.max_rounds),
            run_time_limit: Duration::from_secs(u64::from(settings.run_time_limit_secs)),
            tool_timeout: Duration::from_secs(u64::from(settings.tool_timeout_secs)),
            describe_within: settings
                .describe_calls
                .then_some(crate::settings::DESCRIBE_WITHIN),
            ..RunLimits::default()
        };
        limits.max_rounds = limits.max_rounds.clamp(1, 100);
        // A tool's result gets its share of the model's window, when the window is known.
        let window = self.providers.window(&provider_name, &model).await?;
        if let Some(window) = &window {
            limits.max_model_chars = limits
                .max_model_chars
                .min(crate::mcp::results::share_of_window(window.tokens));
        }
        // The skills the model may load: listed (names and descriptions) in `load_skill`'s
        // description, within a share of the window. A model given no tools is given none.
        let skills = if tool_mode.mode == crate::providers::ToolMode::Off {
            crate::skills::RunSkills::default()
        } else {
            let mut skills = self.run_skills(&conversation.id).await?;
            // A server's skills only from a server whose tools this turn offers, and whose
            // resources no rule blocks: switching a server off switches its skills off.
            let read = crate::agent::builtin::READ_RESOURCE;
            skills.served.retain(|_, s| {
                offered.iter().any(|t| t.server == s.server)
                    && policy.blocked(&s.server, read).is_none()
            });
            let served = &skills.served;
            skills.skills.retain(|s| {
                matches!(s.origin, crate::skills::SkillOrigin::Folder { .. })
                    || served.contains_key(&s.name)
            });
            skills
        };
        let listed: Vec<&crate::skills::Skill> = skills.skills.iter().collect();
        let room = crate::skills::catalogue_room(window.as_ref().map(|w| w.tokens));
        if let Some(load) = crate::agent::builtin::load_skill_tool(&listed, room) {
            crate::agent::builtin::add(&mut offered, load);
        }
        // The scripts the person allowed, of the skills on here.
        let runnable: Vec<&crate::skills::Skill> = listed
            .iter()
            .copied()
            .filter(|s| s.scripts == crate::skills::scripts::ScriptsAllowed::On)
            .collect();
        if let Some(run) = crate::agent::builtin::run_script_tool(&runnable, room) {
            crate::agent::builtin::add(&mut offered, run);
        }
        let load_window = window
            .as_ref()
            .filter(|w| w.said_by != crate::store::WindowSource::Table)
            .map(|w| w.tokens);
        // A prompted model reads every tool it is given in its prompt: none is left for a
        // search of the provider's own.
        let provider_searches_tools = tool_mode.mode == crate::providers::ToolMode::Native
            && self.db.provider_row(&provider_name).await?.kind
                == crate::provider_config::ProviderKind::Anthropic.as_str()
            && crate::providers::formats::anthropic::searches_tools(&model)
            && !store
                .tool_search_refused(provider_name.clone(), model.clone())
                .await?;
        let favoured = store
            .most_used_tools(
                conversation.id.clone(),
                crate::agent::builtin::SERVER.to_owned(),
                crate::agent::offer::KEPT,
            )
            .await?;

        if let Some(text) = &text {
            if is_empty {
                title_by_first_message(store, &conversation, text, &attachments).await?;
            }
        }
        let instructions: Vec<(String, String)> = {
            let mut servers: Vec<&str> = offered.iter().map(|t| t.server.as_str()).collect();
            servers.sort_unstable();
            servers.dedup();
            servers
                .into_iter()
                .filter_map(|server| {
                    tools
                        .instructions(server)
                        .map(|text| (server.to_owned(), text))
                })
                .collect()
        };
        let constraint = self.providers.constraint(&provider_name).await?;
        // The project's instructions and files; its files' search when it has any.
        let project = self.projects().of_conversation(&conversation.id).await?;
        let memory = self.memory_for(project.as_ref());
        let question = match (&text, project.is_some() || memory.is_some()) {
            (Some(text), _) => Some(text.clone()),
            (None, true) => {
                let asked_in = conversation.lane_of.as_ref().unwrap_or(&conversation.id);
                store.last_question(asked_in.clone()).await?
            }
            (None, false) => None,
        };
        // The project's folders stand for every server's own roots in its turns.
        let project_roots = project
            .as_ref()
            .map(super::roots::project_folders)
            .unwrap_or_default();
        if !project_roots.is_empty() {
            for tool in &offered {
                rules.entry(tool.server.clone()).or_default();
            }
            for rule in rules.values_mut() {
                rule.roots.clone_from(&project_roots);
            }
        }
        let window_tokens = window.as_ref().map(|w| w.tokens);
        let mut project_prompt = match &project {
            Some(project) => {
                self.projects()
                    .prompt_for(project, question.as_deref(), window_tokens)
                    .await?
            }
            None => super::ProjectPrompt::default(),
        };
        // The memory in use: the facts relevant to the question (a sixteenth of the window at
        // most), and `remember` to keep more.
        if let Some(scope) = &memory {
            let room = crate::knowledge::share_chars(window_tokens) / 4;
            if let Some((part, given)) = self
                .memory_prompt(scope, project.as_ref(), question.as_deref(), room)
                .await?
            {
                project_prompt.used.facts = given.into_iter().map(|f| f.text).collect();
                project_prompt.text = Some(match project_prompt.text.take() {
                    Some(before) => format!("{before}\n\n{part}"),
                    None => part,
                });
            }
            if tool_mode.mode != crate::providers::ToolMode::Off {
                crate::agent::builtin::add(&mut offered, crate::agent::builtin::remember_tool());
            }
        }
        if let (Some(project), true) = (&project, project_prompt.has_files) {
            if tool_mode.mode != crate::providers::ToolMode::Off {
                crate::agent::builtin::add(
                    &mut offered,
                    crate::agent::builtin::search_files_tool(&project.name),
                );
            }
        }
        Ok(RunSetup {
            run_id: new_id(),
            conversation_id: conversation.id,
            start,
            provider,
            provider_name,
            model,
            system: system_prompt(
                &conversation.system_prompt,
                project_prompt.text,
                &instructions,
            ),
            media,
            files: self.attachment_files(),
            tools: offered,
            rules,
            policy,
            blocked,
            standing,
            history_from: conversation.lane_of.clone(),
            auto_approve: conversation.auto_approve,
            limits,
            price,
            held_back,
            load_window,
            keep_alive: Some(settings.keep_alive.clone()).filter(|k| !k.is_empty()),
            tool_mode: tool_mode.mode,
            require_tool: request.require_tool,
            constraint,
            window: window.map(|w| w.tokens),
            favoured,
            provider_searches_tools,
            skills,
            project_id: project.map(|p| p.id),
            memory,
            settings: Some(std::sync::Arc::clone(&self.settings)),
            project_roots,
            given: project_prompt.used,
        })
    }

    /// Writes a message of the person's into a conversation (its files judged first, and
    /// checked against what each of the `models` (provider, model) takes; the conversation
    /// titled by it when it is the first), for the models of a comparison to answer.
    ///
    /// # Errors
    /// An empty message; a file refused, or one a model cannot be given; no such
    /// conversation; the database.
    pub async fn ask_question(
        &self,
        conversation_id: &str,
        text: &str,
        attachments: Vec<crate::attachments::AttachmentRef>,
        models: &[(String, String)],
    ) -> Result<crate::store::Message, CoreError> {
        let store = self.store()?;
        let conversation = store.get_conversation(conversation_id.to_owned()).await?;
        let attachments = self.judge_attachments(attachments).await?;
        for (provider, model) in models {
            let media = self.model_media(provider, model).await?;
            super::attachments::check_media(&attachments, &media, model)?;
        }
        if text.trim().is_empty() && attachments.is_empty() {
            return Err(InvalidInput::new("text", "Write a message first.").into());
        }
        let is_empty = store
            .list_messages(conversation.id.clone())
            .await?
            .is_empty();
        if is_empty {
            title_by_first_message(store, &conversation, text, &attachments).await?;
        }
        Ok(store
            .append_message(
                conversation.id,
                crate::store::NewMessage {
                    attachments,
                    ..crate::store::NewMessage::text(crate::store::Role::User, text)
                },
            )
            .await?)
    }

    /// The provider and model: the request's, else the conversation's, else Settings'
    /// default, else the only provider there is; the model likewise, else the provider's own
    /// default model.
    pub(crate) async fn choose_model(
        &self,
        conversation: &crate::store::Conversation,
        request: &TurnRequest,
        settings: &Settings,
    ) -> Result<(String, String), CoreError> {
        let providers = self.store()?.list_providers().await?;
        let named = request
            .provider
            .clone()
            .or_else(|| conversation.provider.clone())
            // A default that names a provider no longer there (removed from the command
            // line, or by hand) is no default.
            .or_else(|| {
                settings
                    .default_provider
                    .clone()
                    .filter(|p| providers.iter().any(|r| r.name.eq_ignore_ascii_case(p)))
            })
            .or_else(|| (providers.len() == 1).then(|| providers[0].name.clone()));
        let Some(name) = named else {
            return Err(InvalidInput::new(
                "provider",
                if providers.is_empty() {
                    "Add a model provider first (Providers page)."
                } else {
                    "Choose a model for this conversation (the picker under the message box)."
                },
            )
            .into());
        };
        let row = self.db.provider_row(&name).await?;
        let same =
            |other: Option<&String>| other.is_some_and(|p| p.eq_ignore_ascii_case(&row.name));
        let model = request
            .model
            .clone()
            .or_else(|| {
                conversation
                    .model
                    .clone()
                    .filter(|_| same(conversation.provider.as_ref()))
            })
            .or_else(|| {
                settings
                    .default_model
                    .clone()
                    .filter(|_| same(settings.default_provider.as_ref()))
            })
            .or_else(|| row.default_model.clone())
            .ok_or_else(|| {
                InvalidInput::new(
                    "model",
                    format!("Choose a model of “{}” for this conversation.", row.name),
                )
            })?;
        Ok((row.name, model))
    }

    /// Every running server's tools under the names models see, with this conversation's
    /// switches and each tool's pin; returns the offered tools and the panel's view of all.
    /// Reads only: new tools are pinned by the app as their server lists them.
    ///
    /// # Errors
    /// The database.
    pub async fn conversation_catalogue(
        &self,
        conversation_id: &str,
    ) -> Result<
        (
            Vec<crate::mcp::catalogue::CatalogueTool>,
            Vec<ConversationTool>,
        ),
        CoreError,
    > {
        let servers = ToolSource::tools(&self.host);
        let mut held_back = HashSet::new();
        for (server, listed) in &servers {
            for review in self.mcp_review_tools(server, listed).await? {
                if matches!(review.status, ToolStatus::Changed { .. }) {
                    held_back.insert((server.clone(), review.tool));
                }
            }
        }
        let catalogue = Catalogue::build(
            servers
                .iter()
                .map(|(name, listed)| (name.as_str(), listed.as_slice() as &[ListedTool])),
        );
        let toggles = self
            .store()?
            .tool_toggles(conversation_id.to_owned())
            .await?;
        let offered: Vec<_> = policy::offered(catalogue.tools(), &held_back, &toggles)
            .into_iter()
            .cloned()
            .collect();
        let on: HashSet<&str> = offered.iter().map(|t| t.wire_name.as_str()).collect();
        // A policy file with a bad rule is said when a run starts; the panel shows no rules.
        let rules = self.policy().unwrap_or_default();
        let rule_of = |server: &str, tool: &str| {
            rules
                .blocked(server, tool)
                .or_else(|| rules.rule_for(server, tool, None, None))
        };
        let mut panel: Vec<ConversationTool> = catalogue
            .tools()
            .iter()
            .map(|t| {
                let held = held_back.contains(&(t.server.clone(), t.tool.clone()));
                ConversationTool {
                    server: t.server.clone(),
                    tool: t.tool.clone(),
                    wire_name: t.wire_name.clone(),
                    display_name: t.display_name.clone(),
                    description: t.description.clone(),
                    enabled: held || on.contains(t.wire_name.as_str()),
                    held_back: held,
                    held_reason: held.then(|| {
                        "it changed since it was first seen; review the change on the Servers page"
                            .to_owned()
                    }),
                    estimated_tokens: (t.wire_name.len()
                        + t.description.len()
                        + t.input_schema.to_string().len())
                    .div_ceil(4),
                    rule: rule_of(&t.server, &t.tool),
                }
            })
            .collect();
        // Tools their servers listed but that cannot be offered at all: said, never offered.
        panel.extend(
            ToolSource::held_back(&self.host)
                .into_iter()
                .map(|(server, held)| ConversationTool {
                    wire_name: crate::mcp::catalogue::wire_name(&server, &held.tool),
                    display_name: crate::text::tool_display_name(&server, &held.tool, None),
                    server,
                    tool: held.tool,
                    description: String::new(),
                    enabled: false,
                    held_back: true,
                    held_reason: Some(held.reason),
                    estimated_tokens: 0,
                    rule: None,
                }),
        );
        Ok((offered, panel))
    }

    /// What the policy says about a call an MCP App asks for from a tool card: the tool
    /// `tool` of the app's own server `server`, in `conversation_id`. The same pipeline as a
    /// model's call (the person's standing approvals, the server's trust, auto-approve, a
    /// destructive tool asking every time), after the same gates: the tool must be listed by
    /// the running server, not held back since it changed, and not switched off in the
    /// conversation. A tool meant for its app alone is judged as any other.
    ///
    /// # Errors
    /// Not found (no such tool on the server); the database.
    pub async fn app_call_verdict(
        &self,
        conversation_id: &str,
        server: &str,
        tool: &str,
        arguments: Option<&serde_json::Value>,
    ) -> Result<(crate::mcp::catalogue::CatalogueTool, policy::Judgement), CoreError> {
        let refused = |why: &str| policy::Judgement {
            verdict: policy::Verdict::Deny(why.to_owned()),
            by: why.to_owned(),
            rule: None,
        };
        let not_found = || CoreError::NotFound {
            what: format!(
                "the tool “{}” of “{}”",
                one_line(tool, 80),
                one_line(server, 80)
            ),
        };
        let servers = ToolSource::tools(&self.host);
        let (_, listed) = servers
            .iter()
            .find(|(name, _)| name == server)
            .ok_or_else(not_found)?;
        let mut one = listed
            .iter()
            .find(|t| t.name == tool)
            .cloned()
            .ok_or_else(not_found)?;
        one.app_only = false;
        let changed = self
            .mcp_review_tools(server, std::slice::from_ref(&one))
            .await?
            .into_iter()
            .any(|review| matches!(review.status, ToolStatus::Changed { .. }));
        let catalogue = Catalogue::build([(server, std::slice::from_ref(&one))]);
        let Some(entry) = catalogue.tools().first().cloned() else {
            return Err(not_found());
        };
        if changed {
            return Ok((
                entry,
                refused(
                    "it changed since you first saw it; accept the change on the Servers page first",
                ),
            ));
        }
        let store = self.store()?;
        let toggles = store.tool_toggles(conversation_id.to_owned()).await?;
        if policy::offered(std::slice::from_ref(&entry), &HashSet::new(), &toggles).is_empty() {
            return Ok((entry, refused("it is switched off in this conversation")));
        }
        let conversation = store.get_conversation(conversation_id.to_owned()).await?;
        let standing = self.standing_in(&conversation).await?;
        let mut rules = self.server_rules().remove(server).unwrap_or_default();
        if let Some(project) = self.projects().of_conversation(conversation_id).await? {
            let folders = super::roots::project_folders(&project);
            if !folders.is_empty() {
                rules.roots = folders;
            }
        }
        let policy = self.policy()?;
        let facts = policy::CallFacts {
            tool: &entry,
            trust: rules.trust,
            auto_approve: conversation.auto_approve,
            standing: &standing,
            arguments,
            policy: &policy,
            roots: &rules.roots,
            tainted_by: &[],
        };
        let judged = policy::judge(&facts);
        Ok((entry, judged))
    }

    /// Each server's trust and call timeout from mcp.json (an unreadable file means defaults).
    fn server_rules(&self) -> HashMap<String, ServerRules> {
        match self.load_mcp() {
            Ok(file) => file
                .servers
                .iter()
                .map(|(name, entry)| {
                    (
                        name.clone(),
                        ServerRules {
                            trust: entry.trust.unwrap_or_default(),
                            timeout: entry.timeout_seconds.map(Duration::from_secs),
                            roots: entry.root_folders(),
                        },
                    )
                })
                .collect(),
            Err(e) => {
                tracing::warn!(error = %e, "mcp.json unreadable; tool calls use default rules");
                HashMap::new()
            }
        }
    }

    /// Switches a server (`tool` `None`) or one tool on or off for a conversation.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn set_conversation_tool(
        &self,
        conversation_id: &str,
        toggle: ToolToggle,
    ) -> Result<(), CoreError> {
        Ok(self
            .store()?
            .set_tool_toggle(conversation_id.to_owned(), toggle)
            .await?)
    }

    /// Makes a conversation's tool switches the default set every new conversation starts with.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn set_default_tools_from(&self, conversation_id: &str) -> Result<(), CoreError> {
        Ok(self
            .store()?
            .set_default_tools_from(conversation_id.to_owned())
            .await?)
    }

    /// What stands for a conversation: its own grants (a lane's are its conversation's) and
    /// the ones given for always.
    async fn standing_in(
        &self,
        conversation: &crate::store::Conversation,
    ) -> Result<Standing, CoreError> {
        let approvals = self.store()?.list_tool_approvals().await?;
        Ok(Standing::in_conversation(&approvals, conversation))
    }

    /// Every standing approval of a tool, for the Settings list.
    ///
    /// # Errors
    /// The database.
    pub async fn tool_approvals(&self) -> Result<Vec<StandingApproval>, CoreError> {
        Ok(self.store()?.list_tool_approvals().await?)
    }

    /// Takes a standing approval back.
    ///
    /// # Errors
    /// Not found; the database.
    pub async fn revoke_tool_approval(
        &self,
        server: &str,
        tool: &str,
        conversation_id: Option<&str>,
    ) -> Result<(), CoreError> {
        let removed = self
            .store()?
            .remove_tool_approval(
                server.to_owned(),
                tool.to_owned(),
                conversation_id.map(str::to_owned),
            )
            .await?;
        if removed {
            Ok(())
        } else {
            Err(CoreError::NotFound {
                what: format!("an approval of “{server} · {tool}”"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ToolSelection;

    #[test]
    fn a_selection_takes_from_the_servers_it_names_by_name_or_by_a_tools_wire_name() {
        let only = ToolSelection::Only(vec!["Time".into(), "my_fs__read_file".into()]);
        assert!(only.takes_from("time"));
        assert!(
            only.takes_from("my fs"),
            "the wire name's server part is sanitised"
        );
        assert!(!only.takes_from("everything"));
        assert!(
            !only.takes_from("my"),
            "a prefix of a server's name is not the server"
        );
        assert!(ToolSelection::All.takes_from("everything"));
        assert!(!ToolSelection::None.takes_from("time"));
    }
}
