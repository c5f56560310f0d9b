//! [`Providers`], the service of providers as a person manages them: added, changed, their keys
//! kept in the keychain (never anywhere else) and handed only to code that talks to the
//! provider; [`super::connections`] and [`super::windows`] are the rest of its methods.

use secrecy::{ExposeSecret, SecretString};

use super::db::Db;
use super::keychain::Keychain;
use super::NewProvider;
use crate::error::{CoreError, InvalidInput};
use crate::provider_config::{
    validate_base_url, validate_model, validate_name, Provider, ProviderKind,
};
use crate::providers::HttpOptions;
use crate::secrets::provider_account;
use crate::store::{ProviderRow, StoreError};
use crate::text::one_line;

/// Providers as a person manages them, and the clients, model lists and windows that come
/// from them. Removal is [`super::App::remove_provider`]'s (it clears Settings too), which calls
/// [`Providers::remove_with_key`]. Holds the database, the keychain and the clients' time limits; reached as
/// `app.providers()`.
#[derive(Clone)]
pub struct Providers {
    pub(super) db: Db,
    pub(super) keychain: Keychain,
    /// Time limits and retries of every provider client it builds.
    pub(super) http: HttpOptions,
    /// Where local model servers are looked for ([`super::AppConfig::local_servers`]).
    pub(super) local: Option<Vec<(String, String)>>,
    /// Models being fetched, by provider and model ([`super::local_models`]).
    pub(super) pulls: Pulls,
}

/// The downloads under way, each with what stops it.
pub(super) type Pulls = std::sync::Arc<
    std::sync::Mutex<
        std::collections::HashMap<(String, String), tokio_util::sync::CancellationToken>,
    >,
>;

impl Providers {
    pub(super) fn new(
        db: Db,
        keychain: Keychain,
        http: HttpOptions,
        local: Option<Vec<(String, String)>>,
    ) -> Self {
        Self {
            db,
            keychain,
            http,
            local,
            pulls: Pulls::default(),
        }
    }

    async fn view(&self, row: ProviderRow) -> Result<Provider, CoreError> {
        let account = provider_account(&row.name);
        let has_key = self.keychain.run(move |s| s.get(&account)).await?.is_some();
        to_provider(row, has_key)
    }

    /// Every provider, with whether a key is stored (asked of the keychain once per provider).
    /// When the keychain is unreachable, providers are still listed, shown without keys.
    ///
    /// # Errors
    /// The database is unavailable or a query failed.
    pub async fn list(&self) -> Result<Vec<Provider>, CoreError> {
        let rows = self.db.store()?.list_providers().await?;
        let accounts: Vec<String> = rows.iter().map(|r| provider_account(&r.name)).collect();
        let has_keys = self
            .keychain
            .run(move |s| {
                accounts
                    .iter()
                    .map(|a| s.get(a).map(|k| k.is_some()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "cannot ask the keychain which providers have keys");
                vec![false; rows.len()]
            });
        rows.into_iter()
            .zip(has_keys)
            .map(|(row, has_key)| to_provider(row, has_key))
            .collect()
    }

    /// Adds a provider. With a key, the key is stored in the keychain first; if that fails,
    /// nothing is saved at all.
    ///
    /// # Errors
    /// Invalid input (naming the field), a taken name, an unreachable keychain, the database.
    pub async fn add(&self, new: NewProvider) -> Result<Provider, CoreError> {
        let name = validate_name(&new.name)?;
        let kind = match new.kind.as_deref().map(str::trim) {
            None | Some("") => {
                return Err(
                    InvalidInput::new("kind", "Choose what kind of provider this is.").into(),
                )
            }
            Some(k) => ProviderKind::parse(k).ok_or_else(|| {
                InvalidInput::new(
                    "kind",
                    format!("Unknown provider kind “{}”.", one_line(k, 40)),
                )
            })?,
        };
        let base_url = validate_base_url(kind, new.base_url.as_deref())?;
        let default_model = validate_model(new.default_model.as_deref())?;
        let store = self.db.store()?;
        let key = new.api_key.filter(|k| !k.expose_secret().trim().is_empty());
        // The row first: inserting it claims the name atomically, so two adds of one name can
        // never write (or roll back) each other's key.
        let row = store
            .insert_provider(
                name.clone(),
                kind.as_str().to_owned(),
                base_url,
                default_model,
            )
            .await?
            .ok_or_else(|| name_taken(&name))?;
        let has_key = key.is_some();
        if let Some(key) = key {
            let account = provider_account(&row.name);
            let stored = self
                .keychain
                .run(move |s| s.set(&account, &key))
                .await
                .map_err(CoreError::key_not_saved);
            if let Err(e) = stored {
                // Nothing half-saved: the provider goes again with its key.
                let _ = store.delete_provider(row.id.clone()).await;
                return Err(e);
            }
        }
        tracing::info!(provider = %row.name, kind = kind.as_str(), has_key, "provider added");
        to_provider(row, has_key)
    }

    /// Changes a provider's base URL and default model; `None` keeps a value as it is, an
    /// empty string returns it to the default (the kind's URL; no model).
    ///
    /// # Errors
    /// Invalid input, not found, the database.
    pub async fn update(
        &self,
        name: &str,
        base_url: Option<&str>,
        default_model: Option<&str>,
    ) -> Result<Provider, CoreError> {
        let row = self.db.provider_row(name).await?;
        let kind = ProviderKind::parse(&row.kind).ok_or_else(|| unknown_kind(&row))?;
        let base_url = match base_url {
            Some(url) => validate_base_url(kind, Some(url))?,
            None => row.base_url.clone(),
        };
        let default_model = match default_model {
            Some(model) => validate_model(Some(model))?,
            None => row.default_model.clone(),
        };
        if !crate::net::same_origin_urls(&row.base_url, &base_url) {
            // A key goes only to the address it was entered for: moving the address to another
            // host (or scheme, or port) removes it first, so the webview cannot redirect it.
            let account = provider_account(&row.name);
            self.keychain
                .run(move |s| s.delete(&account))
                .await
                .map_err(|e| CoreError::Conflict {
                    field: "base_url",
                    message: format!(
                        "The address was not changed: its stored key could not be removed \
                         first ({e}), and a key goes only to the address it was entered for."
                    ),
                })?;
            tracing::info!(provider = %row.name, "provider moved to another address; its key was removed");
        }
        let row = self
            .db
            .store()?
            .update_provider(row.id, base_url, default_model)
            .await?;
        self.view(row).await
    }

    /// Stores or replaces a provider's key in the keychain.
    ///
    /// # Errors
    /// A blank key, not found, an unreachable keychain.
    pub async fn set_key(&self, name: &str, key: SecretString) -> Result<Provider, CoreError> {
        if key.expose_secret().trim().is_empty() {
            return Err(InvalidInput::new("api_key", "Paste the API key first.").into());
        }
        let row = self.db.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.keychain
            .run(move |s| s.set(&account, &key))
            .await
            .map_err(CoreError::key_not_saved)?;
        tracing::info!(provider = %row.name, "provider key stored in the keychain");
        to_provider(row, true)
    }

    /// # Errors
    /// Not found, an unreachable keychain.
    pub async fn delete_key(&self, name: &str) -> Result<Provider, CoreError> {
        let row = self.db.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.keychain.run(move |s| s.delete(&account)).await?;
        tracing::info!(provider = %row.name, "provider key deleted from the keychain");
        to_provider(row, false)
    }

    /// Removes a provider and its key. The key goes first, so a failure leaves the provider
    /// listed (and removable again) rather than an orphaned key in the keychain.
    ///
    /// # Errors
    /// Not found, an unreachable keychain, the database.
    pub(super) async fn remove_with_key(&self, name: &str) -> Result<(), CoreError> {
        let row = self.db.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.keychain.run(move |s| s.delete(&account)).await?;
        self.db.store()?.delete_provider(row.id).await?;
        tracing::info!(provider = %row.name, "provider removed");
        Ok(())
    }

    /// The key of a provider, for code that talks to it; never for the UI.
    ///
    /// # Errors
    /// Not found, an unreachable keychain.
    pub async fn key(&self, name: &str) -> Result<Option<SecretString>, CoreError> {
        let row = self.db.provider_row(name).await?;
        let account = provider_account(&row.name);
        self.keychain.run(move |s| s.get(&account)).await
    }
}

fn name_taken(name: &str) -> CoreError {
    CoreError::Conflict {
        field: "name",
        message: format!("A provider named “{name}” already exists."),
    }
}

pub(super) fn unknown_kind(row: &ProviderRow) -> CoreError {
    CoreError::Store(StoreError::InvalidRow {
        detail: format!("provider “{}” has an unknown kind “{}”", row.name, row.kind),
    })
}

fn to_provider(row: ProviderRow, has_key: bool) -> Result<Provider, CoreError> {
    let kind = ProviderKind::parse(&row.kind).ok_or_else(|| unknown_kind(&row))?;
    Ok(Provider {
        id: row.id,
        name: row.name,
        kind,
        base_url: row.base_url,
        default_model: row.default_model,
        has_key,
        created_at: row.created_at,
    })
}
