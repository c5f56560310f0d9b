//! How each model is given tools (issue 58), on the core's side: the person's word, else what
//! Switchboard learned of the model, else its API's own tool calling; set by the person from
//! the command line (`switchboard provider tools`) and the window. A run reads it once, at its
//! start ([`Providers::tool_mode`]), and a prompted model's client is wrapped
//! ([`crate::providers::prompted::Prompted`]).

use std::sync::Arc;

use serde::Serialize;

use super::Providers;
use crate::error::CoreError;
use crate::input::InvalidInput;
use crate::providers::prompted::{Constraint, Prompted};
use crate::providers::{Provider, ToolMode};

/// Whose word a model's [`ToolMode`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolModeSource {
    /// The person set it.
    Person,
    /// Switchboard learned it from the model's server (what it says the model can do, or its
    /// refusal of native tools).
    Learned,
    /// Nothing was said: its API's own tool calling.
    Default,
}

/// How a model is given tools, and whose word that is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ToolModeChoice {
    pub mode: ToolMode,
    pub source: ToolModeSource,
    /// What would apply without the person's word: what was learned, else native.
    pub automatic: ToolMode,
}

impl Providers {
    /// How `model` of the provider `provider` is given tools.
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn tool_mode(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<ToolModeChoice, CoreError> {
        let row = self.db.provider_row(provider).await?;
        let (person, learned) = self
            .db
            .store()?
            .tool_mode(row.id, model.trim().to_owned())
            .await?;
        let (person, learned) = (
            person.as_deref().and_then(ToolMode::parse),
            learned.as_deref().and_then(ToolMode::parse),
        );
        let automatic = learned.unwrap_or(ToolMode::Native);
        let (mode, source) = match (person, learned) {
            (Some(mode), _) => (mode, ToolModeSource::Person),
            (None, Some(mode)) => (mode, ToolModeSource::Learned),
            (None, None) => (ToolMode::Native, ToolModeSource::Default),
        };
        Ok(ToolModeChoice {
            mode,
            source,
            automatic,
        })
    }

    /// Records the person's word on how `model` of `provider` is given tools; `None` forgets it
    /// (what was learned, or native, applies again). Returns what applies now.
    ///
    /// # Errors
    /// No model named; no such provider; the database.
    pub async fn set_tool_mode(
        &self,
        provider: &str,
        model: &str,
        mode: Option<ToolMode>,
    ) -> Result<ToolModeChoice, CoreError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(InvalidInput::new("model", "Name the model.").into());
        }
        let row = self.db.provider_row(provider).await?;
        self.db
            .store()?
            .set_tool_mode(row.id, model.to_owned(), false, mode.map(ToolMode::as_str))
            .await?;
        self.tool_mode(provider, model).await
    }

    /// How the provider's server can hold a prompted model's answer to the call format: an
    /// OpenAI-compatible one may take a grammar (llama.cpp does; one that refuses it is asked
    /// again without), Ollama a JSON schema for a required call.
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn constraint(&self, provider: &str) -> Result<Constraint, CoreError> {
        use crate::provider_config::ProviderKind;
        let kind = self.db.provider_row(provider).await?.kind;
        Ok(match ProviderKind::parse(&kind) {
            Some(ProviderKind::OpenaiCompatible) => Constraint::Grammar,
            Some(ProviderKind::Ollama) => Constraint::JsonFormat,
            _ => Constraint::None,
        })
    }

    /// A client for `model` of `provider` as the model is given tools: wrapped to call them in
    /// text when it is prompted, and to send none when it is off (a run still offers
    /// Switchboard's own tools, such as `read_result`, to every model).
    ///
    /// # Errors
    /// As [`Providers::client`] and [`Providers::tool_mode`].
    pub async fn client_for(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<(Arc<dyn Provider>, ToolModeChoice), CoreError> {
        let client = self.client(provider).await?;
        let mode = self.tool_mode(provider, model).await?;
        let constraint = self.constraint(provider).await?;
        let client: Arc<dyn Provider> = match mode.mode {
            ToolMode::Prompted => Arc::new(Prompted::held_to(client, constraint)),
            ToolMode::Off => Arc::new(Prompted::without_tools(client)),
            ToolMode::Native => client,
        };
        Ok((client, mode))
    }
}
