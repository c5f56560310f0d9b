//! Talking to configured providers outside a chat: a client built from the stored provider and
//! the key read from the keychain at that moment, "Test connection", the model list for the
//! picker, and finding a model server already running on this computer (the first-start
//! offer). Streaming a chat is the tool loop's business, through [`Providers::client`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Providers;
use crate::error::{CoreError, ErrorKind};
use crate::provider_config::{preset_by_id, ProviderKind};
use crate::providers::{connect, HttpOptions, ModelInfo, Provider, ProviderError, ProviderFailure};
use crate::secrets::provider_account;

/// What "Test connection" found: the models, or exactly what failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ConnectionReport {
    pub ok: bool,
    pub elapsed_ms: u64,
    pub models: Vec<ModelInfo>,
    /// `None` when it worked; else what kind of failure: the provider's, or the app's own (the
    /// keychain…).
    pub error_kind: Option<ConnectionFailure>,
    /// One sentence for a person.
    pub message: String,
}

/// Why a connection test failed: the provider's answer, or something of the app's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(untagged)]
pub enum ConnectionFailure {
    Provider(ProviderFailure),
    App(ErrorKind),
}

/// A model server answering on its usual local address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct LocalServer {
    pub preset_id: &'static str,
    pub label: &'static str,
    pub kind: ProviderKind,
    pub base_url: String,
    pub models: Vec<ModelInfo>,
    /// The model to start with: the first that looks like a chat model (not an embedding or
    /// reranking model, which cannot answer), if any.
    pub suggested_model: Option<String>,
}

/// Model names of local servers that are for embeddings or reranking, not chat.
fn is_chat_model(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    !["embed", "minilm", "bge-", "rerank", "nomic-bert"]
        .iter()
        .any(|word| id.contains(word))
}

/// The local servers offered at first start, by preset: Ollama's and LM Studio's defaults.
pub const LOCAL_OFFER_PRESETS: [&str; 2] = ["ollama", "lm_studio"];

/// Short limits for probing loopback: a server that is there answers in milliseconds.
fn probe_options() -> HttpOptions {
    HttpOptions {
        connect_timeout: Duration::from_millis(400),
        read_timeout: Duration::from_millis(1500),
        max_retries: 0,
        retry_base_delay: Duration::ZERO,
    }
}

impl Providers {
    /// A client for the named provider, with its key read from the keychain now. A provider
    /// that can work without a key (Ollama, OpenAI-compatible hosts) still works when the
    /// keychain cannot be asked.
    ///
    /// # Errors
    /// Not found; the database; the keychain (for kinds that need a key); a missing key.
    pub async fn client(&self, name: &str) -> Result<Arc<dyn Provider>, CoreError> {
        let row = self.db.provider_row(name).await?;
        let kind =
            ProviderKind::parse(&row.kind).ok_or_else(|| super::providers::unknown_kind(&row))?;
        let account = provider_account(&row.name);
        let key = match self.keychain.run(move |s| s.get(&account)).await {
            Ok(key) => key,
            Err(e) if !kind.info().needs_key => {
                tracing::warn!(provider = %row.name, error = %e, "keychain unreachable; trying without a key");
                None
            }
            Err(e) => return Err(e),
        };
        Ok(connect::client(kind, &row.base_url, key, self.http)?)
    }

    /// The models the named provider offers, sorted.
    ///
    /// # Errors
    /// As [`Providers::client`], then [`CoreError::Provider`] for what the provider said.
    pub async fn models(&self, name: &str) -> Result<Vec<ModelInfo>, CoreError> {
        let client = self.client(name).await?;
        let models = client.list_models().await?;
        self.remember_listing(name, &models).await;
        if let Err(e) = self.learn_tool_modes(name, &models).await {
            tracing::warn!(provider = name, error = %e, "what the model list says of tool calling was not kept");
        }
        Ok(models)
    }

    /// Keeps what a model list said of its models' images, prices and windows, for
    /// [`App::model_media`], [`super::Usage::price`] and [`Providers::window`] (the person's
    /// word still wins).
    async fn remember_listing(&self, provider: &str, models: &[ModelInfo]) {
        let images: Vec<(String, bool)> = models
            .iter()
            .filter_map(|m| Some((m.id.clone(), m.takes_images?)))
            .collect();
        let prices: Vec<(String, crate::price::Price)> = models
            .iter()
            .filter_map(|m| Some((m.id.clone(), m.price?)))
            .collect();
        let windows: Vec<(String, u64)> = models
            .iter()
            .filter_map(|m| Some((m.id.clone(), m.window?)))
            .collect();
        if images.is_empty() && prices.is_empty() && windows.is_empty() {
            return;
        }
        let kept = async {
            let row = self.db.provider_row(provider).await?;
            let store = self.db.store()?;
            store.set_listed_images(row.id.clone(), images).await?;
            store.set_listed_prices(row.id, prices).await?;
            store.set_listed_windows(row.name, windows).await?;
            Ok::<_, CoreError>(())
        };
        if let Err(e) = kept.await {
            tracing::warn!(provider, error = %e, "what the model list says of images, prices and windows was not kept");
        }
    }

    /// Asks the named provider for its models and reports what happened, failures included.
    ///
    /// # Errors
    /// Only when there is nothing to test: no such provider, or the database is unavailable.
    pub async fn test(&self, name: &str) -> Result<ConnectionReport, CoreError> {
        let started = Instant::now();
        let outcome = match self.client(name).await {
            Ok(client) => client.list_models().await.map_err(CoreError::Provider),
            Err(e @ (CoreError::Secret(_) | CoreError::Provider(_))) => Err(e),
            Err(other) => return Err(other),
        };
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Ok(models) = &outcome {
            self.remember_listing(name, models).await;
        }
        let report = match outcome {
            Ok(models) => ConnectionReport {
                ok: true,
                elapsed_ms,
                message: match models.len() {
                    0 => format!("Connected in {elapsed_ms} ms, but the provider lists no models."),
                    1 => format!("Connected in {elapsed_ms} ms: 1 model."),
                    n => format!("Connected in {elapsed_ms} ms: {n} models."),
                },
                models,
                error_kind: None,
            },
            Err(e) => ConnectionReport {
                ok: false,
                elapsed_ms,
                models: Vec::new(),
                error_kind: Some(match &e {
                    CoreError::Provider(p) => ConnectionFailure::Provider(p.kind()),
                    other => ConnectionFailure::App(other.kind()),
                }),
                message: e.to_string(),
            },
        };
        tracing::info!(provider = %name, ok = report.ok, elapsed_ms, kind = ?report.error_kind, "connection tested");
        Ok(report)
    }

    /// Model servers answering on their default local ports that no configured provider points
    /// at yet. Takes at most about two seconds, whatever is listening.
    pub async fn detect_local(&self) -> Vec<LocalServer> {
        let configured: Vec<String> = match self.db.store() {
            Ok(store) => store
                .list_providers()
                .await
                .map(|rows| rows.into_iter().map(|r| r.base_url).collect())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        let places: Vec<(&'static str, String)> = match &self.local {
            Some(given) => given
                .iter()
                .filter_map(|(id, url)| Some((preset_by_id(id)?.id, url.clone())))
                .collect(),
            None => LOCAL_OFFER_PRESETS
                .iter()
                .filter_map(|id| preset_by_id(id))
                .map(|p| (p.id, p.base_url.to_owned()))
                .collect(),
        };
        let candidates = places
            .into_iter()
            .filter(|(_, base_url)| !configured.iter().any(|url| url == base_url));
        probe_local_servers(candidates).await
    }
}

/// Asks each `(preset id, base URL)` for its models at once; those that answer are returned,
/// in the order given.
pub async fn probe_local_servers(
    candidates: impl IntoIterator<Item = (&'static str, String)>,
) -> Vec<LocalServer> {
    let probes = candidates.into_iter().filter_map(|(id, base_url)| {
        let preset = preset_by_id(id)?;
        Some(async move {
            let client = connect::client(preset.kind, &base_url, None, probe_options()).ok()?;
            match client.list_models().await {
                Ok(models) => Some(LocalServer {
                    preset_id: preset.id,
                    label: preset.label,
                    kind: preset.kind,
                    base_url,
                    suggested_model: models
                        .iter()
                        .map(|m| m.id.clone())
                        .find(|id| is_chat_model(id)),
                    models,
                }),
                Err(ProviderError::Network(_)) => None,
                Err(e) => {
                    tracing::debug!(server = preset.id, error = %e, "a local port answered, but not as the server expected");
                    None
                }
            }
        })
    });
    futures_util::future::join_all(probes)
        .await
        .into_iter()
        .flatten()
        .collect()
}
