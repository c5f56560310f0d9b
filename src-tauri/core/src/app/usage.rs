//! What models cost and what they were asked, on the core's side (issue 18): a model's price
//! (the person's word, else what its provider's list says; never guessed), the price table,
//! a conversation's total and the use of every model by day. The [`Usage`] service holds only
//! the database; the window and the command line reach it as `app.usage()`.

use serde::Serialize;

use super::db::Db;
use crate::error::CoreError;
use crate::price::Price;
use crate::store::{ModelPrice, UsageDay, UsageTotal};

/// Use since a time: by day, provider and model, and all of it added up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct UsageReport {
    /// Milliseconds since 1970.
    #[ts(type = "number")]
    pub since: i64,
    pub days: Vec<UsageDay>,
    pub total: UsageTotal,
}

/// Prices and use: what a model costs, what a conversation and each day cost.
#[derive(Clone)]
pub struct Usage {
    db: Db,
}

impl Usage {
    pub(super) fn new(db: Db) -> Self {
        Self { db }
    }

    /// What `model` of the provider `provider` costs, and whose word that is; `None` when
    /// nobody said.
    ///
    /// # Errors
    /// No such provider; the database.
    pub async fn price(
        &self,
        provider: &str,
        model: &str,
    ) -> Result<Option<ModelPrice>, CoreError> {
        let row = self.db.provider_row(provider).await?;
        let found = self
            .db
            .store()?
            .model_price(row.id, model.trim().to_owned())
            .await?;
        Ok(found.map(|(price, said_by)| ModelPrice {
            provider: row.name,
            model: model.trim().to_owned(),
            price,
            said_by,
        }))
    }

    /// Records the person's price for `model` of `provider` (`None` forgets it); returns the
    /// price that counts now.
    ///
    /// # Errors
    /// No such provider; an empty model name; the database.
    pub async fn set_price(
        &self,
        provider: &str,
        model: &str,
        price: Option<Price>,
    ) -> Result<Option<ModelPrice>, CoreError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(crate::input::InvalidInput::new("model", "Name the model.").into());
        }
        let row = self.db.provider_row(provider).await?;
        self.db
            .store()?
            .set_price(row.id, model.to_owned(), price)
            .await?;
        self.price(&row.name, model).await
    }

    /// [`Usage::set_price`] with the price as a person typed it ([`crate::price::typed`]):
    /// the window's form and the command line's flags read it alike.
    ///
    /// # Errors
    /// [`CoreError::Invalid`] naming the field (`input`, `output`, `cached`) that is not an
    /// amount, or the one missing; as [`Usage::set_price`].
    pub async fn set_typed_price(
        &self,
        provider: &str,
        model: &str,
        (input, output, cached): (Option<&str>, Option<&str>, Option<&str>),
    ) -> Result<Option<ModelPrice>, CoreError> {
        let price = crate::price::typed(input, output, cached)
            .map_err(|e| crate::input::InvalidInput::new(e.field(), e.to_string()))?;
        self.set_price(provider, model, price).await
    }

    /// Every model with a price.
    ///
    /// # Errors
    /// The database.
    pub async fn prices(&self) -> Result<Vec<ModelPrice>, CoreError> {
        Ok(self.db.store()?.prices().await?)
    }

    /// A conversation's requests added up: every round of every answer (branches too) and
    /// every description for the status line.
    ///
    /// # Errors
    /// The database.
    pub async fn of_conversation(&self, conversation_id: &str) -> Result<UsageTotal, CoreError> {
        Ok(self
            .db
            .store()?
            .conversation_usage(conversation_id.to_owned())
            .await?)
    }

    /// The use of every model since `since` (milliseconds since 1970), by day (UTC).
    ///
    /// # Errors
    /// The database.
    pub async fn since(&self, since: i64) -> Result<UsageReport, CoreError> {
        let days = self.db.store()?.usage_by_day(since).await?;
        let mut total = UsageTotal::default();
        for day in &days {
            total.requests += day.total.requests;
            total.input_tokens += day.total.input_tokens;
            total.output_tokens += day.total.output_tokens;
            total.cost_pico += day.total.cost_pico;
            total.unpriced += day.total.unpriced;
        }
        Ok(UsageReport { since, days, total })
    }
}
