//! What models cost and what they were asked (issue 18): each model's price (the person's word
//! over what the provider's list says), and one row per request a model answered — an answer's
//! round or a tool call described for the status line — with its tokens and, where a price was
//! known, its cost in pico-dollars. Rows outlive their conversation: the Usage page and
//! `switchboard usage` read them by day, provider and model.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::{now_ms, Cached, Store, StoreError};
use crate::price::Price;

/// Whose word a price is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PriceSource {
    /// The person set it.
    Person,
    /// The provider's model list says it.
    Provider,
}

impl std::fmt::Display for PriceSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Person => "you",
            Self::Provider => "its provider",
        })
    }
}

/// One model's price, as the price table shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ModelPrice {
    pub provider: String,
    pub model: String,
    pub price: Price,
    pub said_by: PriceSource,
}

/// Why a model was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum UsagePurpose {
    /// A round of an answer.
    Answer,
    /// A tool call put in words for the status line.
    Description,
    /// Earlier messages summarised to fit the model's window.
    Summary,
}

impl UsagePurpose {
    fn as_str(self) -> &'static str {
        match self {
            Self::Answer => "answer",
            Self::Description => "description",
            Self::Summary => "summary",
        }
    }
}

/// One request a model answered, to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUsage {
    pub conversation_id: Option<String>,
    pub message_id: Option<String>,
    pub provider: String,
    pub model: String,
    pub purpose: UsagePurpose,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// Of the input tokens, those read from the provider's prompt cache.
    pub cached_input_tokens: i64,
    /// `None` when the model had no price.
    pub cost_pico: Option<i64>,
}

/// Requests, tokens and cost added up (of a conversation, or of one day, provider and model).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, ts_rs::TS)]
pub struct UsageTotal {
    #[ts(type = "number")]
    pub requests: i64,
    #[ts(type = "number")]
    pub input_tokens: i64,
    #[ts(type = "number")]
    pub output_tokens: i64,
    /// The cost of the requests whose model had a price.
    #[ts(type = "number")]
    pub cost_pico: i64,
    /// Requests whose model had no price (their tokens are counted, their cost is not).
    #[ts(type = "number")]
    pub unpriced: i64,
    /// Of the input tokens, those read from the provider's prompt cache.
    #[ts(type = "number")]
    pub cached_input_tokens: i64,
}

/// One day's use of one model (days in UTC).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct UsageDay {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub provider: String,
    pub model: String,
    #[serde(flatten)]
    #[ts(flatten)]
    pub total: UsageTotal,
}

const TOTALS: &str = "COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), \
     COALESCE(SUM(cost_pico), 0), COUNT(*) - COUNT(cost_pico), COALESCE(SUM(cached_input_tokens), 0)";

fn total_from(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<UsageTotal> {
    Ok(UsageTotal {
        requests: row.get(at)?,
        input_tokens: row.get(at + 1)?,
        output_tokens: row.get(at + 2)?,
        cost_pico: row.get(at + 3)?,
        unpriced: row.get(at + 4)?,
        cached_input_tokens: row.get(at + 5)?,
    })
}

fn price_from(text: Option<String>) -> Option<Price> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

fn price_text(price: &Price) -> String {
    serde_json::to_string(price).unwrap_or_default()
}

impl Store {
    /// What `model` of the provider `provider_id` costs, and whose word that is.
    ///
    /// # Errors
    /// A failed query.
    pub async fn model_price(
        &self,
        provider_id: String,
        model: String,
    ) -> Result<Option<(Price, PriceSource)>, StoreError> {
        self.call(move |conn| {
            let row: Option<(Option<String>, Option<String>)> = conn
                .query_row(
                    "SELECT price, listed_price FROM provider_models \
                     WHERE provider_id = ?1 AND model = ?2",
                    [&provider_id, &model],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )
                .optional()?;
            Ok(row.and_then(|(said, listed)| {
                price_from(said)
                    .map(|p| (p, PriceSource::Person))
                    .or_else(|| price_from(listed).map(|p| (p, PriceSource::Provider)))
            }))
        })
        .await
    }

    /// Records the person's price for `model` (`None` forgets it: the list's, if any, counts).
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_price(
        &self,
        provider_id: String,
        model: String,
        price: Option<Price>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO provider_models (provider_id, model, price) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (provider_id, model) DO UPDATE SET price = excluded.price",
                params![provider_id, model, price.as_ref().map(price_text)],
            )?;
            Ok(())
        })
        .await
    }

    /// Records what a provider's model list says its models cost (the person's own price,
    /// [`Store::set_price`], still wins).
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_listed_prices(
        &self,
        provider_id: String,
        listed: Vec<(String, Price)>,
    ) -> Result<(), StoreError> {
        if listed.is_empty() {
            return Ok(());
        }
        self.call(move |conn| {
            let tx = conn.transaction()?;
            for (model, price) in &listed {
                tx.execute(
                    "INSERT INTO provider_models (provider_id, model, listed_price) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (provider_id, model) DO UPDATE SET listed_price = excluded.listed_price",
                    params![provider_id, model, price_text(price)],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Every model with a price, by provider and model.
    ///
    /// # Errors
    /// A failed query.
    pub async fn prices(&self) -> Result<Vec<ModelPrice>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT p.name, m.model, m.price, m.listed_price FROM provider_models m \
                 JOIN providers p ON p.id = m.provider_id \
                 WHERE m.price IS NOT NULL OR m.listed_price IS NOT NULL \
                 ORDER BY p.name COLLATE NOCASE, m.model",
            )?;
            let rows = stmt.query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?,
                    row.get::<_, Option<String>>(3)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (provider, model, said, listed) = row?;
                let found = price_from(said)
                    .map(|p| (p, PriceSource::Person))
                    .or_else(|| price_from(listed).map(|p| (p, PriceSource::Provider)));
                if let Some((price, said_by)) = found {
                    out.push(ModelPrice {
                        provider,
                        model,
                        price,
                        said_by,
                    });
                }
            }
            Ok(out)
        })
        .await
    }

    /// Records one request a model answered.
    ///
    /// # Errors
    /// A failed query.
    pub async fn record_usage(&self, usage: NewUsage) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute_cached(
                "INSERT INTO usage (at, conversation_id, message_id, provider, model, purpose, \
                 input_tokens, output_tokens, cost_pico, cached_input_tokens) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    now_ms(),
                    usage.conversation_id,
                    usage.message_id,
                    usage.provider,
                    usage.model,
                    usage.purpose.as_str(),
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cost_pico,
                    usage.cached_input_tokens,
                ],
            )?;
            Ok(())
        })
        .await
    }

    /// A conversation's requests added up (every round, every description, every branch).
    ///
    /// # Errors
    /// A failed query.
    pub async fn conversation_usage(
        &self,
        conversation_id: String,
    ) -> Result<UsageTotal, StoreError> {
        self.call(move |conn| {
            Ok(conn.query_row_cached(
                &format!("SELECT {TOTALS} FROM usage WHERE conversation_id = ?1"),
                [&conversation_id],
                |row| total_from(row, 0),
            )?)
        })
        .await
    }

    /// Use since `since_ms` (milliseconds since 1970) by day (UTC), provider and model, oldest
    /// day first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn usage_by_day(&self, since_ms: i64) -> Result<Vec<UsageDay>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT date(at / 1000, 'unixepoch') AS day, provider, model, {TOTALS} FROM usage \
                 WHERE at >= ?1 GROUP BY day, provider, model ORDER BY day, provider, model"
            ))?;
            let rows = stmt.query_map([since_ms], |row| {
                Ok(UsageDay {
                    day: row.get(0)?,
                    provider: row.get(1)?,
                    model: row.get(2)?,
                    total: total_from(row, 3)?,
                })
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }
}
