//! Each model's window (issue 55), kept beside its price in `provider_models`, with whose word
//! it is: the person's (Providers page, `switchboard provider window`), one learned from the
//! provider's own refusal of a request over it, or what the provider's model list says. The
//! person's word wins, then what was learned (it is what the model actually took), then the
//! list; [`crate::providers::windows::known`] answers for a model none of them has.

use rusqlite::{params, OptionalExtension};
use serde::Serialize;

use super::{Store, StoreError};

/// Whose word a window is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// The person set it.
    Person,
    /// The provider refused a request over it and said how large it is.
    Learned,
    /// The provider's model list (or the model's own metadata) says it.
    Provider,
    /// Switchboard's dated table of well-known models.
    Table,
}

impl std::fmt::Display for WindowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Person => "you",
            Self::Learned => "the provider, when it refused a longer request",
            Self::Provider => "its provider's model list",
            Self::Table => "Switchboard's table of well-known models",
        })
    }
}

/// One model's window: how many tokens a request to it may hold, and whose word that is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ModelWindow {
    pub provider: String,
    pub model: String,
    #[ts(type = "number")]
    pub tokens: u64,
    pub said_by: WindowSource,
}

/// The column a source's word is kept in.
fn column(source: WindowSource) -> Option<&'static str> {
    match source {
        WindowSource::Person => Some("window_person"),
        WindowSource::Learned => Some("window_learned"),
        WindowSource::Provider => Some("window_listed"),
        WindowSource::Table => None,
    }
}

fn chosen(
    person: Option<i64>,
    learned: Option<i64>,
    listed: Option<i64>,
) -> Option<(u64, WindowSource)> {
    let positive = |v: Option<i64>| v.and_then(|n| u64::try_from(n).ok()).filter(|n| *n > 0);
    positive(person)
        .map(|n| (n, WindowSource::Person))
        .or_else(|| positive(learned).map(|n| (n, WindowSource::Learned)))
        .or_else(|| positive(listed).map(|n| (n, WindowSource::Provider)))
}

impl Store {
    /// The window recorded for `model` of the provider named `provider`, and whose word it is.
    ///
    /// # Errors
    /// A failed query.
    pub async fn model_window(
        &self,
        provider: String,
        model: String,
    ) -> Result<Option<ModelWindow>, StoreError> {
        self.call(move |conn| {
            let row: Option<(Option<i64>, Option<i64>, Option<i64>)> = conn
                .query_row(
                    "SELECT m.window_person, m.window_learned, m.window_listed \
                     FROM provider_models m JOIN providers p ON p.id = m.provider_id \
                     WHERE p.name = ?1 AND m.model = ?2",
                    [&provider, &model],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
                )
                .optional()?;
            Ok(row
                .and_then(|(a, b, c)| chosen(a, b, c))
                .map(|(tokens, said_by)| ModelWindow {
                    provider,
                    model,
                    tokens,
                    said_by,
                }))
        })
        .await
    }

    /// Records `source`'s word on the window of `model` of the provider named `provider`
    /// (`None` forgets it). Nothing happens for an unknown provider.
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_model_window(
        &self,
        provider: String,
        model: String,
        source: WindowSource,
        tokens: Option<u64>,
    ) -> Result<(), StoreError> {
        let Some(column) = column(source) else {
            return Ok(());
        };
        let tokens = tokens.and_then(|t| i64::try_from(t).ok());
        self.call(move |conn| {
            conn.execute(
                &format!(
                    "INSERT INTO provider_models (provider_id, model, {column}) \
                     SELECT id, ?2, ?3 FROM providers WHERE name = ?1 \
                     ON CONFLICT (provider_id, model) DO UPDATE SET {column} = excluded.{column}"
                ),
                params![provider, model, tokens],
            )?;
            Ok(())
        })
        .await
    }

    /// Remembers that `model` of the provider named `provider` refused the provider's own tool
    /// search: later runs offer Switchboard's from the start.
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_tool_search_refused(
        &self,
        provider: String,
        model: String,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO provider_models (provider_id, model, refused_tool_search) \
                 SELECT id, ?2, 1 FROM providers WHERE name = ?1 \
                 ON CONFLICT (provider_id, model) DO UPDATE SET refused_tool_search = 1",
                params![provider, model],
            )?;
            Ok(())
        })
        .await
    }

    /// Whether `model` of the provider named `provider` refused the provider's own tool search.
    ///
    /// # Errors
    /// A failed query.
    pub async fn tool_search_refused(
        &self,
        provider: String,
        model: String,
    ) -> Result<bool, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT m.refused_tool_search FROM provider_models m \
                     JOIN providers p ON p.id = m.provider_id WHERE p.name = ?1 AND m.model = ?2",
                    params![provider, model],
                    |row| row.get::<_, Option<i64>>(0),
                )
                .optional()?
                .flatten()
                .is_some_and(|n| n != 0))
        })
        .await
    }

    /// Records what the model list of the provider named `provider` says of its models'
    /// windows.
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_listed_windows(
        &self,
        provider: String,
        listed: Vec<(String, u64)>,
    ) -> Result<(), StoreError> {
        if listed.is_empty() {
            return Ok(());
        }
        self.call(move |conn| {
            let tx = conn.transaction()?;
            for (model, tokens) in &listed {
                tx.execute(
                    "INSERT INTO provider_models (provider_id, model, window_listed) \
                     SELECT id, ?2, ?3 FROM providers WHERE name = ?1 \
                     ON CONFLICT (provider_id, model) DO UPDATE SET window_listed = excluded.window_listed",
                    params![provider, model, i64::try_from(*tokens).unwrap_or(i64::MAX)],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Every model with a recorded window, by provider and model.
    ///
    /// # Errors
    /// A failed query.
    pub async fn model_windows(&self) -> Result<Vec<ModelWindow>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT p.name, m.model, m.window_person, m.window_learned, m.window_listed \
                 FROM provider_models m JOIN providers p ON p.id = m.provider_id \
                 ORDER BY p.name COLLATE NOCASE, m.model",
            )?;
            let rows = stmt.query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<i64>>(2)?,
                    row.get::<_, Option<i64>>(3)?,
                    row.get::<_, Option<i64>>(4)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (provider, model, a, b, c) = row?;
                if let Some((tokens, said_by)) = chosen(a, b, c) {
                    out.push(ModelWindow {
                        provider,
                        model,
                        tokens,
                        said_by,
                    });
                }
            }
            Ok(out)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_word_wins_then_what_was_learned_then_the_list() {
        assert_eq!(
            chosen(Some(4096), Some(8192), Some(128_000)),
            Some((4096, WindowSource::Person))
        );
        assert_eq!(
            chosen(None, Some(8192), Some(128_000)),
            Some((8192, WindowSource::Learned))
        );
        assert_eq!(
            chosen(None, None, Some(128_000)),
            Some((128_000, WindowSource::Provider))
        );
        assert_eq!(chosen(Some(0), None, None), None);
    }
}
