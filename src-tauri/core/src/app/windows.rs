//! Each model's window on the core's side (issue 55): the person's word, else what a refusal
//! taught, else the provider's list, else the dated table of well-known models
//! ([`crate::providers::windows`]); set by the person from the Providers page or
//! `switchboard provider window`.

use super::Providers;
use crate::error::CoreError;
use crate::input::InvalidInput;
use crate::store::{ModelWindow, WindowSource};

/// The smallest and largest window a person may set, in tokens.
pub const WINDOW_RANGE: std::ops::RangeInclusive<u64> = 512..=100_000_000;

impl Providers {
    /// The window of `model` of the provider `provider`, and whose word that is; `None` when
    /// nothing knows it.
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn window(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<Option<ModelWindow>, CoreError> {
        let row = self.db.provider_row(provider).await?;
        let model = model.trim().to_owned();
        if let Some(found) = self
            .db
            .store()?
            .model_window(row.name.clone(), model.clone())
            .await?
        {
            return Ok(Some(found));
        }
        Ok(
            crate::providers::windows::known(&model).map(|tokens| ModelWindow {
                provider: row.name,
                model,
                tokens,
                said_by: WindowSource::Table,
            }),
        )
    }

    /// Records the person's window for `model` of `provider`; `None` forgets it and the one
    /// learned from a refusal (a mistaken one is not kept for ever), leaving the provider
    /// list's and the table's. Returns the window that counts now.
    ///
    /// # Errors
    /// No such provider; an empty model name or a window outside [`WINDOW_RANGE`]; the
    /// database.
    pub async fn set_window(
        &self,
        provider: &str,
        model: &str,
        tokens: Option<u64>,
    ) -> Result<Option<ModelWindow>, CoreError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(InvalidInput::new("model", "Name the model.").into());
        }
        if let Some(tokens) = tokens.filter(|t| !WINDOW_RANGE.contains(t)) {
            return Err(InvalidInput::new(
                "tokens",
                format!(
                    "A window of {tokens} tokens is not one a model has: give {} to {}.",
                    WINDOW_RANGE.start(),
                    WINDOW_RANGE.end()
                ),
            )
            .into());
        }
        let row = self.db.provider_row(provider).await?;
        let store = self.db.store()?;
        store
            .set_model_window(
                row.name.clone(),
                model.to_owned(),
                WindowSource::Person,
                tokens,
            )
            .await?;
        if tokens.is_none() {
            store
                .set_model_window(
                    row.name.clone(),
                    model.to_owned(),
                    WindowSource::Learned,
                    None,
                )
                .await?;
        }
        self.window(&row.name, model).await
    }

    /// Every model with a recorded window (the person's, learned or listed), by provider and
    /// model.
    ///
    /// # Errors
    /// The database.
    pub async fn windows(&self) -> Result<Vec<ModelWindow>, CoreError> {
        Ok(self.db.store()?.model_windows().await?)
    }
}
